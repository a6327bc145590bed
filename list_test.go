package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rules of list.go: the list's query, filters, sorting and paging (docs/api.md, "Listing"),
// proved on parseListQuery, listQuery's totalPages, window and links, encodeList, api.list and
// sortUsers.

// listDecoded is the list envelope decoded; the paging fields are nil when absent.
type listDecoded struct {
	Data       []user `json:"data"`
	Total      *int   `json:"total"`
	Page       *int64 `json:"page"`
	PerPage    *int64 `json:"per_page"`
	TotalPages *int64 `json:"total_pages"`
}

// listParsed is a list query that parseListQuery takes, failing the test if it does not.
func listParsed(t *testing.T, rawQuery string) listQuery {
	t.Helper()
	q, err := parseListQuery(rawQuery)
	if err != nil {
		t.Fatalf("parseListQuery(%q): %v", rawQuery, err)
	}
	return q
}

// listService is the part of the service that answers GET /api/users, on a store in memory
// holding these users, created in their order; and the users as created, with their ids.
func listService(t *testing.T, users ...user) (*api, []user) {
	t.Helper()
	s := newUserStore()
	var created []user
	for _, u := range users {
		c, err := s.create(userFields{name: &u.Name, email: &u.Email}, noPrecondition)
		if err != nil {
			t.Fatalf("creating %+v: %v", u, err)
		}
		created = append(created, c)
	}
	return &api{store: s}, created
}

// listAnswer is the answer of a to GET /api/users?rawQuery: its body and its ETag.
func listAnswer(t *testing.T, a *api, rawQuery string) *encodedList {
	t.Helper()
	list, err := a.list(listParsed(t, rawQuery))
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// listOf is the body of that answer, decoded.
func listOf(t *testing.T, a *api, rawQuery string) listDecoded {
	t.Helper()
	var body listDecoded
	if err := json.Unmarshal(listAnswer(t, a, rawQuery).body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// listIDs returns the ids of users, in their order; never nil.
func listIDs(users []user) []int64 {
	ids := []int64{}
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	return ids
}

// A parameter the list does not take, one given twice, or a value out of its range is 400, naming
// it; parameters are judged in the order of their names, so a query always gets the same message.
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
			want := badRequest(tt.message)
			for range 10 { // whatever order a map gives the names in
				if _, err := parseListQuery(tt.query); !reflect.DeepEqual(err, want) {
					t.Fatalf("error %#v\nwant  %#v", err, want)
				}
			}
		})
	}
	// A query url.ParseQuery cannot read is 400 with its reason.
	for _, malformed := range []string{"page=%zz", "q=%", "page=1;per_page=2"} {
		t.Run("malformed "+malformed, func(t *testing.T) {
			_, err := parseListQuery(malformed)
			if e, ok := err.(*apiError); !ok || e.status != http.StatusBadRequest || !strings.HasPrefix(e.message, "the query string is malformed: ") {
				t.Errorf("error %v, want a 400 that says the query string is malformed", err)
			}
		})
	}
}

// Without page or per_page the list is not paged; either one pages it, and the other takes its
// default. q, email and sort are kept as given, for the Link header.
func TestListQueryDefaults(t *testing.T) {
	tests := []struct {
		query string
		want  listQuery
	}{
		{"", listQuery{page: 1, perPage: 10, sort: "id", others: url.Values{}}},
		{"page=3", listQuery{paged: true, page: 3, perPage: 10, sort: "id", others: url.Values{}}},
		{"per_page=20", listQuery{paged: true, page: 1, perPage: 20, sort: "id", others: url.Values{}}},
		{"per_page=100&page=9223372036854775807", listQuery{paged: true, page: 9223372036854775807, perPage: 100, sort: "id", others: url.Values{}}},
		{"q=&sort=-email", listQuery{page: 1, perPage: 10, sort: "-email", others: url.Values{"q": {""}, "sort": {"-email"}}}},
		{"q=%C3%A9+x&email=Ann@Example.com", listQuery{page: 1, perPage: 10, search: "é x", email: "Ann@Example.com", sort: "id",
			others: url.Values{"email": {"Ann@Example.com"}, "q": {"é x"}}}},
	}
	for _, tt := range tests {
		t.Run("?"+tt.query, func(t *testing.T) {
			if got := listParsed(t, tt.query); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseListQuery(%q) = %+v\nwant %+v", tt.query, got, tt.want)
			}
		})
	}
}

// total_pages is the ceiling of total over per_page: 0 when nothing matches.
func TestTotalPagesRoundsUp(t *testing.T) {
	for _, tt := range []struct {
		total         int
		perPage, want int64
	}{
		{0, 10, 0}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {20, 10, 2}, {7, 1, 7}, {7, 3, 3}, {25, 100, 1},
	} {
		t.Run(fmt.Sprintf("%d users, per_page=%d", tt.total, tt.perPage), func(t *testing.T) {
			if got := (listQuery{perPage: tt.perPage}).totalPages(tt.total); got != tt.want {
				t.Errorf("total_pages %d, want %d", got, tt.want)
			}
		})
	}
}

// A page is its slice of the list; a page past the end, however far, is empty, not an error, and
// its place is never computed: page × per_page would overflow.
func TestPagePastTheEndIsEmpty(t *testing.T) {
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
		t.Run(fmt.Sprintf("?%s of %d users", tt.query, tt.total), func(t *testing.T) {
			if from, to := listParsed(t, tt.query).window(tt.total); from != tt.from || to != tt.to {
				t.Errorf("[%d, %d), want [%d, %d)", from, to, tt.from, tt.to)
			}
		})
	}
}

// A page's Link header (RFC 8288) has first and last, last being page 1 when nothing matches, prev
// when there is a page before and next when there is one after, even for a page past the end.
func TestLinkNamesFirstPrevNextLast(t *testing.T) {
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
		t.Run(fmt.Sprintf("?%s of %d users", tt.query, tt.total), func(t *testing.T) {
			if got, want := listParsed(t, tt.query).links(tt.total), strings.Join(tt.want, ", "); got != want {
				t.Errorf("Link\n %s\nwant\n %s", got, want)
			}
		})
	}
}

// Links keep q, email and sort, escaped, and are relative: never built from the Host a client sent.
func TestLinksKeepQueryAndAreRelative(t *testing.T) {
	q := listParsed(t, "q=a%26b+c&email=user3%40example.com&sort=-name&page=2&per_page=3")
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
// for; data is [] when nothing matches, never null, whichever way the list finds nothing.
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
		t.Run(fmt.Sprintf("encodeList %d of %d, ?%s", len(tt.users), tt.total, tt.query), func(t *testing.T) {
			list, err := encodeList(tt.users, tt.total, listParsed(t, tt.query))
			if err != nil || string(list.body) != tt.want {
				t.Errorf("%s, %v\nwant %s", list.body, err, tt.want)
			}
		})
	}
	service, created := listService(t, user{Name: "User 1", Email: "user1@example.com"}, user{Name: "User 2", Email: "user2@example.com"})
	for _, query := range []string{"q=nobody", "email=nobody@example.com", "sort=name&q=nobody", "page=2&per_page=2"} {
		t.Run("?"+query, func(t *testing.T) {
			if body := listOf(t, service, query); body.Data == nil || len(body.Data) != 0 {
				t.Errorf("data %v, want []", body.Data)
			}
		})
	}
	t.Run("every user deleted", func(t *testing.T) {
		listAnswer(t, service, "") // the whole list, kept until the store changes
		for _, u := range created {
			if err := service.store.delete(u.ID, allowAny); err != nil {
				t.Fatal(err)
			}
		}
		if body := string(listAnswer(t, service, "").body); body != `{"data":[],"total":0}` {
			t.Errorf("the list is %s, want {\"data\":[],\"total\":0}", body)
		}
	})
}

// q keeps the users whose name or e-mail contains it, case-insensitively; email the user whose
// address is exactly it, in any case; both together, the users that match both. total counts every
// match, before paging.
func TestFiltersKeepMatchingUsers(t *testing.T) {
	service, u := listService(t,
		user{Name: "Ann Lee", Email: "lee@example.com"},
		user{Name: "Bob Stone", Email: "bob@annex.example"},
		user{Name: "Carol Day", Email: "carol@example.com"},
		user{Name: "Dan Ånnsen", Email: "Dan.A@Example.org"})
	ann, bob, carol, dan := u[0].ID, u[1].ID, u[2].ID, u[3].ID
	tests := []struct {
		query string
		want  []int64
		total int
	}{
		{"q=ANN", []int64{ann, bob}, 2}, // name or e-mail contains it, case-insensitively
		{"q=%C3%A5nn", []int64{dan}, 1}, // Unicode too
		{"q=example", []int64{ann, bob, carol, dan}, 4},
		{"q=", []int64{ann, bob, carol, dan}, 4}, // an empty q, as a search form sends it, filters nothing
		{"q=zzz", []int64{}, 0},
		{"q=Lee%40", []int64{ann}, 1},
		{"email=CAROL@example.COM", []int64{carol}, 1}, // exact address, case-insensitively
		{"email=dan.a@example.org", []int64{dan}, 1},
		{"email=carol@example", []int64{}, 0}, // exact, not contains
		{"email=lee@example.com&q=ann", []int64{ann}, 1},
		{"email=lee@example.com&q=bob", []int64{}, 0},
		{"q=example&sort=-id&per_page=2&page=2", []int64{bob, ann}, 4}, // a page of the matches: total counts them all
	}
	for _, tt := range tests {
		t.Run("?"+tt.query, func(t *testing.T) {
			body := listOf(t, service, tt.query)
			if got := listIDs(body.Data); !slices.Equal(got, tt.want) || *body.Total != tt.total {
				t.Errorf("%v of total %d, want %v of %d", got, *body.Total, tt.want, tt.total)
			}
		})
	}
}

// Names and e-mails sort by their lower-case form, then by bytes; ties go to the lower id in both
// directions. A page of a sorted list is a slice of the whole sorted list, whichever way the store
// finds it (a slice of its ids in id order, a sort of every user otherwise).
func TestSortByLowerCaseThenBytesThenID(t *testing.T) {
	service, users := listService(t,
		user{Name: "bob", Email: "zed@example.com"},
		user{Name: "Ann", Email: "Amy@example.com"},
		user{Name: "ann", Email: "amy@example.org"},
		user{Name: "Carl", Email: "bea@example.com"},
		user{Name: "bob", Email: "Bea@example.net"},  // the same name as the first
		user{Name: "Ännie", Email: "ab@example.com"}) // sorts after z by bytes
	tests := []struct {
		sort  string
		order []int // the users, by their place above
	}{
		{"id", []int{0, 1, 2, 3, 4, 5}},
		{"-id", []int{5, 4, 3, 2, 1, 0}},
		{"name", []int{1, 2, 0, 4, 3, 5}},  // "Ann" < "ann" by bytes; the two "bob" by id
		{"-name", []int{5, 3, 0, 4, 2, 1}}, // the two "bob" still by ascending id
		{"email", []int{5, 1, 2, 3, 4, 0}},
		{"-email", []int{0, 4, 3, 2, 1, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.sort, func(t *testing.T) {
			var want []int64
			for _, i := range tt.order {
				want = append(want, users[i].ID)
			}
			sorted := slices.Clone(users)
			sortUsers(sorted, tt.sort)
			if got := listIDs(sorted); !slices.Equal(got, want) {
				t.Errorf("sortUsers(%s) = %v, want %v", tt.sort, got, want)
			}
			if got := listIDs(listOf(t, service, "sort="+tt.sort).Data); !slices.Equal(got, want) {
				t.Errorf("the list by %s is %v, want %v", tt.sort, got, want)
			}
			if got := listIDs(listOf(t, service, "per_page=2&page=2&sort="+tt.sort).Data); !slices.Equal(got, want[2:4]) {
				t.Errorf("page 2 of 2 a page by %s is %v, want %v", tt.sort, got, want[2:4])
			}
		})
	}
}

// Ties are common in a long list (many users share a first name): they must keep ascending id
// order in both directions, or a client paging through the list would see users twice or never.
func TestSortTiesGoToTheLowerID(t *testing.T) {
	names := []string{"Kim", "al", "Kim", "Al", "kim", "Al"}
	var users []user
	for i := 1; i <= 60; i++ {
		users = append(users, user{ID: int64(i), Name: names[i%len(names)], Email: fmt.Sprintf("user%d@example.com", i)})
	}
	for _, order := range []string{"name", "-name"} {
		t.Run(order, func(t *testing.T) {
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
					t.Errorf("%d %q before %d %q", a.ID, a.Name, b.ID, b.Name)
				}
			}
		})
	}
}

// The list's ETag is the hash of its body: equal lists have equal ETags, however they were asked
// for and whichever way the service built them (the whole list is cached until the store
// changes), and every change gives a new one.
func TestListETagFollowsTheList(t *testing.T) {
	service, users := listService(t, user{Name: "Ann", Email: "ann@example.com"}, user{Name: "Bob", Email: "bob@example.com"})
	s, ann := service.store, users[0]
	etagOf := func(query string) string {
		t.Helper()
		return listAnswer(t, service, query).etag
	}
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
	text := func(s string) *string { return &s }
	var carol user
	previous := all
	for _, c := range []struct {
		name  string
		write func() error
	}{
		{"create Carol", func() (err error) {
			carol, err = s.create(userFields{name: text("Carol"), email: text("carol@example.com")}, noPrecondition)
			return err
		}},
		{"rename Carol", func() error {
			_, err := s.update(carol.ID, userFields{name: text("Caroline")}, allowAny)
			return err
		}},
		{"replace Ann", func() error {
			_, err := s.update(ann.ID, userFields{name: text("Ann"), email: text("ANN@example.com")}, allowAny)
			return err
		}},
		{"delete Carol", func() error { return s.delete(carol.ID, allowAny) }},
	} {
		if err := c.write(); err != nil {
			t.Fatal(err)
		}
		now := etagOf("")
		if now == previous || now != etagOf("q=") {
			t.Errorf("after %s the whole list's ETag is %s, was %s, and the same list filtered has %s", c.name, now, previous, etagOf("q="))
		}
		previous = now
	}
	if _, err := s.update(ann.ID, userFields{email: text("ann@example.com")}, allowAny); err != nil {
		t.Fatal(err)
	}
	if etagOf("") != all {
		t.Error("the list is as it was, but its ETag is not")
	}
}

// The list's query parser accepts only page, per_page, q, email and sort, each once, with values
// in range; the window it computes stays inside the list; and the Link header it builds is a
// safe header value that names the same query.
func FuzzParseListQuery(f *testing.F) {
	for _, query := range []string{
		"", "page=2", "per_page=100", "page=3&per_page=7&sort=-name&q=ann", "email=ann@example.com", "sort=email",
		"page=0", "page=01", "per_page=101", "page=9223372036854775807&per_page=100", "page=9223372036854775808",
		"pgae=2", "page=1&page=2", "%zz", "a;b", "q=", "q=%0D%0ASet-Cookie:%20x", "sort=id&q=%E2%80%A8", "=", "&&",
	} {
		f.Add(query, uint32(0))
		f.Add(query, uint32(25))
	}
	linkTarget := regexp.MustCompile(`<([^>]*)>`) // the URIs of a Link header
	f.Fuzz(func(t *testing.T, rawQuery string, totalUsers uint32) {
		query, err := parseListQuery(rawQuery)
		if err != nil {
			if _, problem := fuzzClientAnswer(err, http.StatusBadRequest); problem != nil {
				t.Fatal(problem)
			}
			return
		}
		values, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatalf("accepted %q, which url.ParseQuery rejects: %v", rawQuery, err)
		}
		for name, given := range values {
			if !slices.Contains([]string{"page", "per_page", "q", "email", "sort"}, name) || len(given) != 1 {
				t.Fatalf("accepted %q: %s given %d times", rawQuery, name, len(given))
			}
		}
		if query.page < 1 || query.perPage < 1 || query.perPage > 100 || !slices.Contains(sortOrders, query.sort) {
			t.Fatalf("accepted %q as %+v", rawQuery, query)
		}
		if page, given := values["page"]; given && page[0] != strconv.FormatInt(query.page, 10) {
			t.Fatalf("accepted page=%q, which is not in canonical form", page[0])
		}
		if query.paged != (values.Has("page") || values.Has("per_page")) {
			t.Fatalf("%q: paged is %v", rawQuery, query.paged)
		}

		total := int(totalUsers % 1000000)
		from, to := query.window(total)
		if from < 0 || from > to || to > total || query.paged && int64(to-from) > query.perPage || !query.paged && to-from != total {
			t.Fatalf("%q with %d users: the window is [%d, %d)", rawQuery, total, from, to)
		}
		if !query.paged {
			return
		}
		link := query.links(total)
		for _, c := range link {
			if c < ' ' || c == 0x7f {
				t.Fatalf("the Link header %q holds a control character", link)
			}
		}
		for _, rel := range []string{`rel="first"`, `rel="last"`} {
			if !strings.Contains(link, rel) {
				t.Fatalf("the Link header %q lacks %s", link, rel)
			}
		}
		for _, target := range linkTarget.FindAllStringSubmatch(link, -1) {
			again, err := parseListQuery(strings.TrimPrefix(target[1], "/api/users?"))
			if err != nil || again.perPage != query.perPage || again.sort != query.sort || again.search != query.search ||
				again.email != query.email {
				t.Fatalf("the link %s does not keep the query %q: %+v, %v", target[1], rawQuery, again, err)
			}
		}
	})
}
