package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The rules of list.go: the list's query, filters, sorting and paging (docs/api.md, "Listing"),
// proved on parseListQuery, listQuery's totalPages, window and links, encodeList, userStore.list and
// sortUsers.

// listBody is the list envelope decoded; the paging fields are nil when absent.
type listBody struct {
	Data       []user `json:"data"`
	Total      *int   `json:"total"`
	Page       *int64 `json:"page"`
	PerPage    *int64 `json:"per_page"`
	TotalPages *int64 `json:"total_pages"`
}

// list gets a list and decodes it, failing unless it is 200.
func (s *testServer) list(t testing.TB, query string) (listBody, *httptest.ResponseRecorder) {
	t.Helper()
	w := s.do("GET", "/api/users"+query, "", asReader...)
	wantStatus(t, w, http.StatusOK)
	var body listBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Data == nil || body.Total == nil {
		t.Fatalf("%s is not a list envelope with data and total", w.Body)
	}
	return body, w
}

// idsOf returns the ids of users, in their order.
func idsOf(users []user) []int64 {
	list := []int64{}
	for _, u := range users {
		list = append(list, u.ID)
	}
	return list
}

// parsed is a list query that parseListQuery takes, failing the test if it does not.
func parsed(t *testing.T, rawQuery string) listQuery {
	t.Helper()
	q, err := parseListQuery(rawQuery)
	if err != nil {
		t.Fatalf("parseListQuery(%q): %v", rawQuery, err)
	}
	return q
}

// storeWith is a store holding these users, with the ids 1 to n in their order.
func storeWith(t *testing.T, users ...user) *userStore {
	t.Helper()
	s := newUserStore()
	for _, u := range users {
		if _, err := s.commit(createChange(u.Name, u.Email)); err != nil {
			t.Fatalf("creating %+v: %v", u, err)
		}
	}
	return s
}

// numbered is n users named "User 1" to "User n", with the e-mails user1@example.com and on.
func numbered(n int) []user {
	users := make([]user, n)
	for i := range users {
		users[i] = user{Name: fmt.Sprint("User ", i+1), Email: fmt.Sprintf("user%d@example.com", i+1)}
	}
	return users
}

// listOf is the answer of the store to a list query, decoded.
func listOf(t *testing.T, s *userStore, rawQuery string) listBody {
	t.Helper()
	var body listBody
	if err := json.Unmarshal(s.list(parsed(t, rawQuery)).body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestBadListParameterIs400NamingIt(t *testing.T) {
	const (
		badPage    = "page must be a whole number from 1 up, such as page=2"
		badPerPage = "per_page must be a whole number from 1 to 100, such as per_page=20"
		badSort    = "sort must be id, name or email, with - before it for descending order, such as sort=-name"
		emptyEmail = "email must not be empty: give the address to look for, such as email=ann@example.com"
	)
	unknown := func(name string) string {
		return `unknown query parameter "` + name + `": the list takes page, per_page, q, email and sort`
	}
	twice := func(name string) string { return `the query parameter "` + name + `" is given more than once` }
	tests := []struct{ query, message string }{
		{"page=0", badPage},
		{"page=-1", badPage},
		{"page=01", badPage},
		{"page=%2B1", badPage},
		{"page=1.0", badPage},
		{"page=abc", badPage},
		{"page=", badPage},
		{"page=9223372036854775808", badPage},
		{"per_page=0", badPerPage},
		{"per_page=101", badPerPage},
		{"per_page=abc", badPerPage},
		{"per_page=010", badPerPage},
		{"per_page=", badPerPage},
		{"sort=age", badSort},
		{"sort=", badSort},
		{"sort=%2Bname", badSort},
		{"sort=Name", badSort},
		{"sort=--id", badSort},
		{"email=", emptyEmail},
		{"pgae=2", unknown("pgae")},
		{"limit=10", unknown("limit")},
		{"Page=2", unknown("Page")},
		{strings.Repeat("p", 41) + "=1", unknown(strings.Repeat("p", 40) + "...")},
		{"page=1&page=2", twice("page")},
		{"page=1&page=1", twice("page")},
		{"q=a&q=b", twice("q")},
		{"sort=id&sort=name", twice("sort")},
		{"q=ann&email=a@example.com&email=b@example.com", twice("email")},
		// Parameters are judged in the order of their names, so a query always gets the same message.
		{"sort=age&page=0", badPage},
		{"pgae=2&page=0", badPage},
		{"zzz=1&sort=age", badSort},
		{"sort=age&per_page=0&pgae=2&page=0&email=", emptyEmail},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			for range 10 { // whatever order a map gives the names in
				_, err := parseListQuery(tt.query)
				wantAPIError(t, err, http.StatusBadRequest, tt.message)
			}
		})
	}
	for _, malformed := range []string{"page=%zz", "q=%", "page=1;per_page=2"} {
		_, err := parseListQuery(malformed)
		if e, ok := err.(*apiError); !ok || e.status != http.StatusBadRequest || !strings.HasPrefix(e.message, "the query string is malformed: ") {
			t.Errorf("parseListQuery(%q): %v, want a 400 that says the query string is malformed", malformed, err)
		}
	}
}

// Without page or per_page the list is not paged; either one pages it, and the other takes its
// default. q, email and sort are kept as given, for the Link header.
func TestListQueryTakesDefaultsAndKeepsTheOtherParameters(t *testing.T) {
	tests := []struct{ query, want string }{
		{"", "{paged:false page:1 perPage:10 search: email: sort:id others:map[]}"},
		{"page=3", "{paged:true page:3 perPage:10 search: email: sort:id others:map[]}"},
		{"per_page=20", "{paged:true page:1 perPage:20 search: email: sort:id others:map[]}"},
		{"per_page=100&page=9223372036854775807", "{paged:true page:9223372036854775807 perPage:100 search: email: sort:id others:map[]}"},
		{"q=&sort=-email", "{paged:false page:1 perPage:10 search: email: sort:-email others:map[q:[] sort:[-email]]}"},
		{"q=%C3%A9+x&email=Ann@Example.com", "{paged:false page:1 perPage:10 search:é x email:Ann@Example.com sort:id others:map[email:[Ann@Example.com] q:[é x]]}"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%+v", parsed(t, tt.query)); got != tt.want {
			t.Errorf("parseListQuery(%q) = %s\nwant %s", tt.query, got, tt.want)
		}
	}
}

func TestTotalPagesIsTheCeilingOfTotalOverPerPage(t *testing.T) {
	for _, tt := range []struct {
		total         int
		perPage, want int64
	}{
		{0, 10, 0}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {20, 10, 2}, {7, 1, 7}, {7, 3, 3}, {25, 100, 1},
	} {
		if got := (listQuery{perPage: tt.perPage}).totalPages(tt.total); got != tt.want {
			t.Errorf("%d users, per_page=%d: total_pages %d, want %d", tt.total, tt.perPage, got, tt.want)
		}
	}
}

// A page is its slice of the list; a page past the end, however far, is empty, not an error, and
// its place is never computed: page × per_page would overflow.
func TestPagePastTheEndIsEmptyNotAnError(t *testing.T) {
	for _, tt := range []struct {
		query    string
		total    int
		from, to int
	}{
		{"", 25, 0, 25},
		{"page=1", 25, 0, 10},
		{"page=2&per_page=10", 25, 10, 20},
		{"page=3", 25, 20, 25},
		{"page=4", 25, 25, 25},
		{"page=1000", 25, 25, 25},
		{"page=9223372036854775807&per_page=100", 25, 25, 25},
		{"page=1", 0, 0, 0},
	} {
		if from, to := parsed(t, tt.query).window(tt.total); from != tt.from || to != tt.to {
			t.Errorf("?%s of %d users: [%d, %d), want [%d, %d)", tt.query, tt.total, from, to, tt.from, tt.to)
		}
	}
}

// A page's Link header (RFC 8288) has first and last, last being page 1 when nothing matches, prev
// when there is a page before and next when there is one after, even for a page past the end.
func TestLinkHeaderOfPages(t *testing.T) {
	link := func(page, perPage int, rel string) string {
		return fmt.Sprintf(`</api/users?page=%d&per_page=%d>; rel="%s"`, page, perPage, rel)
	}
	tests := []struct {
		query string
		total int
		want  []string
	}{
		{"page=2&per_page=10", 25, []string{link(1, 10, "first"), link(1, 10, "prev"), link(3, 10, "next"), link(3, 10, "last")}},
		{"page=1", 25, []string{link(1, 10, "first"), link(2, 10, "next"), link(3, 10, "last")}},
		{"per_page=5&page=5", 25, []string{link(1, 5, "first"), link(4, 5, "prev"), link(5, 5, "last")}},
		{"page=9", 25, []string{link(1, 10, "first"), link(8, 10, "prev"), link(3, 10, "last")}},
		{"page=1", 0, []string{link(1, 10, "first"), link(1, 10, "last")}},
		{"per_page=3", 3, []string{link(1, 3, "first"), link(1, 3, "last")}},
	}
	for _, tt := range tests {
		if got, want := parsed(t, tt.query).links(tt.total), strings.Join(tt.want, ", "); got != want {
			t.Errorf("?%s of %d users: Link\n %s\nwant\n %s", tt.query, tt.total, got, want)
		}
	}
}

// Links keep q, email and sort, escaped, and are relative: never built from the Host a client sent.
func TestLinksKeepTheOtherParametersAndAreRelative(t *testing.T) {
	q := parsed(t, "q=a%26b+c&email=user3%40example.com&sort=-name&page=2&per_page=3")
	const others = "&email=user3%40example.com&q=a%26b+c&sort=-name"
	want := `</api/users?page=1&per_page=3` + others + `>; rel="first", ` +
		`</api/users?page=1&per_page=3` + others + `>; rel="prev", ` +
		`</api/users?page=3&per_page=3` + others + `>; rel="next", ` +
		`</api/users?page=9&per_page=3` + others + `>; rel="last"`
	if got := q.links(25); got != want {
		t.Errorf("Link\n %s\nwant\n %s", got, want)
	}
}

// The envelope is data and total, then page, per_page and total_pages only when a page was asked
// for; data is [] when nothing matches, never null.
func TestEmptyListIsAnEmptyArrayNotNull(t *testing.T) {
	ann := user{ID: 1, Name: "Ann", Email: "ann@example.com"}
	for _, tt := range []struct {
		users []user
		total int
		query string
		want  string
	}{
		{nil, 0, "", `{"data":[],"total":0}`},
		{nil, 0, "page=1", `{"data":[],"total":0,"page":1,"per_page":10,"total_pages":0}`},
		{nil, 25, "page=4", `{"data":[],"total":25,"page":4,"per_page":10,"total_pages":3}`},
		{[]user{ann}, 1, "", `{"data":[{"id":1,"name":"Ann","email":"ann@example.com"}],"total":1}`},
		{[]user{ann}, 3, "per_page=1", `{"data":[{"id":1,"name":"Ann","email":"ann@example.com"}],"total":3,"page":1,"per_page":1,"total_pages":3}`},
	} {
		if got := string(encodeList(tt.users, tt.total, parsed(t, tt.query)).body); got != tt.want {
			t.Errorf("?%s: %s\nwant %s", tt.query, got, tt.want)
		}
	}
	// The store answers [] whichever way it finds nothing.
	s := storeWith(t, numbered(2)...)
	for _, query := range []string{"q=nobody", "email=nobody@example.com", "sort=name&q=nobody", "page=2&per_page=2"} {
		if body := listOf(t, s, query); body.Data == nil || len(body.Data) != 0 {
			t.Errorf("?%s: data %v, want []", query, body.Data)
		}
	}
	for _, id := range []int64{1, 2} {
		if _, err := s.commit(deleteChange(id)); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(s.list(parsed(t, "")).body); got != `{"data":[],"total":0}` {
		t.Errorf("the list of a store whose users were deleted is %s", got)
	}
}

func TestSearchAndEmailFilters(t *testing.T) {
	s := storeWith(t,
		user{Name: "Ann Lee", Email: "lee@example.com"},      // 1
		user{Name: "Bob Stone", Email: "bob@annex.example"},  // 2
		user{Name: "Carol Day", Email: "carol@example.com"},  // 3
		user{Name: "Dan Ånnsen", Email: "Dan.A@Example.org"}) // 4
	tests := []struct {
		query string
		want  string
		total int
	}{
		{"q=ANN", "[1 2]", 2},    // name or e-mail contains it, case-insensitively
		{"q=%C3%A5nn", "[4]", 1}, // Unicode too
		{"q=example", "[1 2 3 4]", 4},
		{"q=", "[1 2 3 4]", 4}, // an empty q, as a search form sends it, filters nothing
		{"q=zzz", "[]", 0},
		{"q=Lee%40", "[1]", 1},
		{"email=CAROL@example.COM", "[3]", 1}, // exact address, case-insensitively
		{"email=dan.a@example.org", "[4]", 1},
		{"email=carol@example", "[]", 0}, // exact, not contains
		{"email=lee@example.com&q=ann", "[1]", 1},
		{"email=lee@example.com&q=bob", "[]", 0},
		{"q=example&sort=-id&per_page=2&page=2", "[2 1]", 4}, // a page of the matches: total counts them all
	}
	for _, tt := range tests {
		body := listOf(t, s, tt.query)
		if got := fmt.Sprint(idsOf(body.Data)); got != tt.want || *body.Total != tt.total {
			t.Errorf("?%s: %s of total %d, want %s of %d", tt.query, got, *body.Total, tt.want, tt.total)
		}
	}
}

// Names and e-mails sort by their lower-case form, then by bytes; ties go to the lower id in both
// directions. A page of a sorted list is a slice of the whole sorted list, whichever way the store
// finds it (a slice of its ids in id order, a sort of every user otherwise).
func TestSortOrders(t *testing.T) {
	users := []user{
		{1, "bob", "zed@example.com"},
		{2, "Ann", "Amy@example.com"},
		{3, "ann", "amy@example.org"},
		{4, "Carl", "bea@example.com"},
		{5, "bob", "Bea@example.net"},  // the same name as 1
		{6, "Ännie", "ab@example.com"}, // sorts after z by bytes
	}
	tests := []struct {
		sort string
		want []int64
	}{
		{"id", []int64{1, 2, 3, 4, 5, 6}},
		{"-id", []int64{6, 5, 4, 3, 2, 1}},
		{"name", []int64{2, 3, 1, 5, 4, 6}},  // "Ann" < "ann" by bytes; the two "bob" by id
		{"-name", []int64{6, 4, 1, 5, 3, 2}}, // the two "bob" still by ascending id
		{"email", []int64{6, 2, 3, 4, 5, 1}},
		{"-email", []int64{1, 5, 4, 3, 2, 6}},
	}
	s := storeWith(t, users...)
	for _, tt := range tests {
		t.Run(tt.sort, func(t *testing.T) {
			sorted := slices.Clone(users)
			sortUsers(sorted, tt.sort)
			if got := idsOf(sorted); !slices.Equal(got, tt.want) {
				t.Errorf("sortUsers(%s) = %v, want %v", tt.sort, got, tt.want)
			}
			if got := idsOf(listOf(t, s, "sort="+tt.sort).Data); !slices.Equal(got, tt.want) {
				t.Errorf("the list by %s is %v, want %v", tt.sort, got, tt.want)
			}
			if got := idsOf(listOf(t, s, "per_page=2&page=2&sort="+tt.sort).Data); !slices.Equal(got, tt.want[2:4]) {
				t.Errorf("page 2 of 2 a page by %s is %v, want %v", tt.sort, got, tt.want[2:4])
			}
		})
	}
}

// Ties are common in a long list (many users share a first name): they must keep ascending id
// order in both directions, or a client paging through the list would see users twice or never.
func TestSortTiesGoToAscendingIDInBothDirections(t *testing.T) {
	names := []string{"Kim", "al", "Kim", "Al", "kim", "Al"}
	var users []user
	for i := 1; i <= 60; i++ {
		users = append(users, user{ID: int64(i), Name: names[i%len(names)], Email: fmt.Sprintf("user%d@example.com", i)})
	}
	for _, order := range []string{"name", "-name"} {
		sorted := slices.Clone(users)
		sortUsers(sorted, order)
		for i := 1; i < len(sorted); i++ {
			a, b := sorted[i-1], sorted[i]
			c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
			if c == 0 {
				c = strings.Compare(a.Name, b.Name)
			}
			if order == "-name" {
				c = -c
			}
			if c > 0 || c == 0 && a.ID > b.ID {
				t.Errorf("sort=%s: %d %q before %d %q", order, a.ID, a.Name, b.ID, b.Name)
			}
		}
	}
}

// The list's ETag is the hash of its body: equal lists have equal ETags, however they were asked
// for and whichever way the store built them (the whole list is cached), and every change gives a
// new one.
func TestListETagFollowsTheList(t *testing.T) {
	s := storeWith(t, user{Name: "Ann", Email: "ann@example.com"}, user{Name: "Bob", Email: "bob@example.com"})
	etagOf := func(query string) string { return s.list(parsed(t, query)).etag }
	all := etagOf("")
	for _, same := range []string{"q=", "sort=id", "q=example.com"} {
		if etagOf(same) != all {
			t.Errorf("?%s has another ETag than the same list unpaged", same)
		}
	}
	for _, other := range []string{"sort=-id", "page=1", "q=ann", "per_page=1"} {
		if etagOf(other) == all {
			t.Errorf("?%s has the ETag of the whole list", other)
		}
	}
	previous := all
	for _, c := range []change{
		createChange("Carol", "carol@example.com"),
		patchName(3, "Caroline"),
		replaceChange(1, "Ann", "ANN@example.com"),
		deleteChange(3),
	} {
		if _, err := s.commit(c); err != nil {
			t.Fatal(err)
		}
		now := etagOf("")
		if now == previous || now != etagOf("q=") {
			t.Errorf("after %+v the whole list's ETag is %s, was %s, and the same list filtered has %s", c, now, previous, etagOf("q="))
		}
		previous = now
	}
	if _, err := s.commit(replaceChange(1, "Ann", "ann@example.com")); err != nil {
		t.Fatal(err)
	}
	if etagOf("") != all {
		t.Error("the list is as it was, but its ETag is not")
	}
}
