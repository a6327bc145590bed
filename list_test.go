package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The rules of list.go: the query of GET /api/users, its filters, sorting and paging, and the
// envelope and Link header of its answer (docs/api.md, "Listing").

// A parameter the list does not take, one given twice, a bad or empty value, or a query
// url.ParseQuery rejects is 400, and the message names the parameter: a typo such as ?pgae=2 never
// returns everything. page and per_page are canonical decimal numbers, like ids.
func TestBadListParameterIs400NamingIt(t *testing.T) {
	const (
		badPage    = "page must be a whole number from 1 up, such as page=2"
		badPerPage = "per_page must be a whole number from 1 to 100, such as per_page=20"
		badSort    = "sort must be id, name or email, with - before it for descending order, such as sort=-name"
		emptyEmail = "email must not be empty: give the address to look for, such as email=ann@example.com"
		malformed  = "the query is malformed: write it as name=value pairs, with no semicolon, and a percent sign only before two hex digits"
	)
	unknown := func(name string) string {
		return `unknown query parameter "` + name + `": the list takes page, per_page, q, email and sort`
	}
	givenTwice := func(name string) string { return `the query parameter "` + name + `" is given more than once` }
	for _, tt := range []struct{ query, message string }{
		{"page=0", badPage}, {"page=-1", badPage}, {"page=01", badPage}, {"page=%2B1", badPage}, {"page=+1", badPage},
		{"page=1.0", badPage}, {"page=abc", badPage}, {"page=", badPage}, {"page", badPage}, {"page=9223372036854775808", badPage},
		{"per_page=0", badPerPage}, {"per_page=101", badPerPage}, {"per_page=010", badPerPage}, {"per_page=", badPerPage},
		{"sort=age", badSort}, {"sort=", badSort}, {"sort=-", badSort}, {"sort=--id", badSort}, {"sort=Name", badSort}, {"sort=%2Bname", badSort},
		{"email=", emptyEmail},
		{"pgae=2", unknown("pgae")}, {"Page=2", unknown("Page")}, {"limit=10", unknown("limit")},
		{"=1", unknown("")},
		{"page=1&page=1", givenTwice("page")}, {"q=a&q=b", givenTwice("q")}, {"email=a&email=b", givenTwice("email")},
		{"page=1;per_page=2", malformed}, {"q=a;b", malformed}, {"q=%zz", malformed}, {"q=%", malformed},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if _, err := parseListQuery(tt.query); !reflect.DeepEqual(err, error(badRequest(tt.message))) {
				t.Errorf("error %v, want 400 %q", err, tt.message)
			}
		})
	}
}

// Of several problems, one is named, always the same one (docs/api.md, "Listing"): a malformed
// query's, whatever else it holds; else that of the first parameter with a problem, in the byte
// order of the names, and for a parameter given twice with a bad value, that it is given twice.
// Each query below is answered as the query of that one problem alone is.
func TestFirstProblemIsNamed(t *testing.T) {
	for _, tt := range []struct{ query, alone string }{
		{"pgae=1&page=0&q=a;b", "q=a;b"},
		{"per_page=abc&page=0", "page=0"},
		{"sort=age&per_page=0", "per_page=0"},
		{"sort=age&q=a&q=b", "q=a&q=b"},
		{"zz=1&zz=2&aa=1", "aa=1"},
		{"sort=age&email=&pgae=2&page=0", "email="},
		{"page=0&page=0", "page=1&page=1"},
		{"email=a&email=", "email=a&email=b"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			_, want := parseListQuery(tt.alone)
			if want == nil {
				t.Fatalf("%s alone is taken, want a 400", tt.alone)
			}
			for range 10 { // whatever order a map gives the names in
				if _, err := parseListQuery(tt.query); !reflect.DeepEqual(err, want) {
					t.Fatalf("error %v, want %v, the error of %s alone", err, want, tt.alone)
				}
			}
		})
	}
}

// A 400 of the query names a parameter, never its value nor the raw query: RFC 6750 §2.3 lets a
// client put its token in the query, so a message that echoed one would show a token to whoever
// reads the answer or the log.
func TestQueryProblemNeverShowsAValue(t *testing.T) {
	for _, query := range []string{
		"access_token=SECRET;", "page=SECRET", "per_page=SECRET", "sort=SECRET", "email=x&email=SECRET",
		"q=SECRET&q=SECRET", "q=%zzSECRET", "access_token=SECRET&page=0",
	} {
		t.Run(query, func(t *testing.T) {
			ts := newTestServer(t)
			r := httptest.NewRequest("GET", "/api/users?"+query, nil)
			r.Header.Set("Authorization", "Bearer "+readToken)
			w := ts.serve(r)
			if w.Code != http.StatusBadRequest {
				t.Errorf("status %d, want 400", w.Code)
			}
			for where, text := range map[string]string{"the answer": w.Body.String(), "the log": ts.log.String(),
				"the header": fmt.Sprint(w.Header())} {
				if strings.Contains(text, "SECRET") {
					t.Errorf("%s shows the query's value: %s", where, text)
				}
			}
		})
	}
}

// Without page and per_page the list is not paged; either one pages it, the other taking its
// default (page 1, 10 a page). q, email and sort are kept as given, for the Link header.
func TestListQueryDefaults(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  listQuery
	}{
		{"", listQuery{sortBy: "id", kept: url.Values{}}},
		{"page=3", listQuery{sortBy: "id", page: &pageQuery{3, 10}, kept: url.Values{}}},
		{"per_page=100", listQuery{sortBy: "id", page: &pageQuery{1, 100}, kept: url.Values{}}},
		{"per_page=1&page=9223372036854775807", listQuery{sortBy: "id", page: &pageQuery{9223372036854775807, 1}, kept: url.Values{}}},
		{"q=&sort=-email", listQuery{sortBy: "email", descending: true, kept: url.Values{"q": {""}, "sort": {"-email"}}}},
		{"q=%C3%A5+x&email=Ann@Example.com", listQuery{search: "å x", email: "Ann@Example.com", sortBy: "id",
			kept: url.Values{"q": {"å x"}, "email": {"Ann@Example.com"}}}},
	} {
		t.Run("?"+tt.query, func(t *testing.T) {
			if got, err := parseListQuery(tt.query); err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseListQuery = %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
}

// listUsers are five users in id order, as the store lists them. Lower-cased, Ann Lee's name and
// user 4's are one; Ånnsen's sorts after every name in ASCII.
var listUsers = []user{
	{1, "Ann Lee", "lee@example.com"},
	{2, "Bob Stone", "bob@annex.example"},
	{3, "carol", "Carol@example.com"},
	{4, "ann lee", "Ann.Lee@example.org"},
	{5, "Ånnsen", "a@example.net"},
}

// idsOf returns the ids of users in their order; never nil.
func idsOf(users []user) []int64 {
	ids := []int64{}
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	return ids
}

// q keeps users whose name or e-mail contains the text, in any case; email the user with that
// exact address, in any case; both together, the users that match both. Then the list is sorted
// and paged, and total counts every match before paging. A page past the end, however far, is
// empty.
func TestListSelectsSortsAndPages(t *testing.T) {
	for _, tt := range []struct {
		query string
		ids   []int64
		total int
	}{
		{"", []int64{1, 2, 3, 4, 5}, 5},
		{"q=ANN", []int64{1, 2, 4}, 3},
		{"q=%C3%85NN", []int64{5}, 1},
		{"q=", []int64{1, 2, 3, 4, 5}, 5},
		{"q=zzz", []int64{}, 0},
		{"email=CAROL@example.COM", []int64{3}, 1},
		{"email=carol@example", []int64{}, 0},
		{"email=lee@example.com&q=ann", []int64{1}, 1},
		{"email=lee@example.com&q=bob", []int64{}, 0},
		{"sort=-id", []int64{5, 4, 3, 2, 1}, 5},
		{"per_page=2", []int64{1, 2}, 5},
		{"page=2&per_page=2&sort=-id", []int64{3, 2}, 5},
		{"page=3&per_page=2", []int64{5}, 5},
		{"page=4&per_page=2", []int64{}, 5},
		{"page=9223372036854775807&per_page=100", []int64{}, 5},
		{"page=2&per_page=1&q=ann", []int64{2}, 3},
		{"page=1&q=zzz", []int64{}, 0},
	} {
		t.Run("?"+tt.query, func(t *testing.T) {
			query, err := parseListQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			selected, total := query.selectUsers(slices.Clone(listUsers))
			if got := idsOf(selected); !slices.Equal(got, tt.ids) || total != tt.total {
				t.Errorf("users %v of %d, want %v of %d", got, total, tt.ids, tt.total)
			}
		})
	}
}

// Names and e-mails sort lower-cased (strings.ToLower), byte by byte; ties go to the lower id in
// both directions, so a client paging through a sorted list never sees a user twice or never.
// Ties are common in a long list (many users share a name): 60 users with five names in three
// cases show an unstable sort, or one merely reversed for descending order.
func TestSortTiesGoToTheLowerID(t *testing.T) {
	for _, tt := range []struct {
		sort string
		ids  []int64
	}{
		{"id", []int64{1, 2, 3, 4, 5}},
		{"-id", []int64{5, 4, 3, 2, 1}},
		{"name", []int64{1, 4, 2, 3, 5}},
		{"-name", []int64{5, 3, 2, 1, 4}},
		{"email", []int64{5, 4, 2, 3, 1}},
		{"-email", []int64{1, 3, 2, 4, 5}},
	} {
		t.Run(tt.sort, func(t *testing.T) {
			query, err := parseListQuery("sort=" + tt.sort)
			if err != nil {
				t.Fatal(err)
			}
			users := slices.Clone(listUsers)
			query.sortUsers(users)
			if got := idsOf(users); !slices.Equal(got, tt.ids) {
				t.Errorf("sorted by %s: %v, want %v", tt.sort, got, tt.ids)
			}
		})
	}
	names := []string{"Kim", "al", "KIM", "Al", "kim", "Bo", "AL", "bo", "Kim", "al", "Ed", "ED"}
	var many []user
	for i := 1; i <= 60; i++ {
		many = append(many, user{ID: int64(i), Name: names[i%len(names)], Email: fmt.Sprintf("user%d@example.com", i)})
	}
	for _, order := range []string{"name", "-name"} {
		t.Run("60 users by "+order, func(t *testing.T) {
			query, err := parseListQuery("sort=" + order)
			if err != nil {
				t.Fatal(err)
			}
			sorted := slices.Clone(many)
			query.sortUsers(sorted)
			for i := 1; i < len(sorted); i++ {
				a, b := sorted[i-1], sorted[i]
				c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
				if order == "-name" {
					c = -c
				}
				if c > 0 || c == 0 && a.ID > b.ID {
					t.Fatalf("%d %q before %d %q", a.ID, a.Name, b.ID, b.Name)
				}
			}
		})
	}
}

// A page's Link header (RFC 8288) gives relative URIs, never built from the Host a client sent:
// first, prev when page > 1, next when page < total_pages, and last, page max(total_pages, 1),
// each keeping q, email and sort, escaped as a form escapes them.
func TestLinkNamesFirstPrevNextLast(t *testing.T) {
	link := func(page, perPage int, others, rel string) string {
		return fmt.Sprintf(`</api/users?page=%d&per_page=%d%s>; rel="%s"`, page, perPage, others, rel)
	}
	const kept = "&email=a%26b%40example.com&q=kim+lee&sort=-name"
	for _, tt := range []struct {
		query string
		total int
		want  []string
	}{
		{"page=2", 25, []string{link(1, 10, "", "first"), link(1, 10, "", "prev"), link(3, 10, "", "next"), link(3, 10, "", "last")}},
		{"per_page=10", 25, []string{link(1, 10, "", "first"), link(2, 10, "", "next"), link(3, 10, "", "last")}},
		{"page=5&per_page=5", 25, []string{link(1, 5, "", "first"), link(4, 5, "", "prev"), link(5, 5, "", "last")}},
		{"page=9", 25, []string{link(1, 10, "", "first"), link(8, 10, "", "prev"), link(3, 10, "", "last")}},
		{"page=1", 0, []string{link(1, 10, "", "first"), link(1, 10, "", "last")}},
		{"sort=-name&q=kim+lee&page=2&per_page=3&email=a%26b@example.com", 9,
			[]string{link(1, 3, kept, "first"), link(1, 3, kept, "prev"), link(3, 3, kept, "next"), link(3, 3, kept, "last")}},
	} {
		t.Run(fmt.Sprintf("?%s of %d", tt.query, tt.total), func(t *testing.T) {
			query, err := parseListQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := query.links(tt.total), strings.Join(tt.want, ", "); got != want {
				t.Errorf("Link\n  %s\nwant\n  %s", got, want)
			}
		})
	}
}

// The envelope is data and total; a page adds page, per_page and total_pages = ceil(total /
// per_page), 0 when nothing matches. data is [], never null. The representation's ETag is made of
// its bytes, and a cache must ask before it uses a stored copy.
func TestListEnvelope(t *testing.T) {
	ann := []user{{1, "Ann", "ann@example.com"}}
	const annJSON = `[{"id":1,"name":"Ann","email":"ann@example.com"}]`
	for _, tt := range []struct {
		name  string
		users []user
		total int
		page  *pageQuery
		want  string
	}{
		{"nothing", nil, 0, nil, `{"data":[],"total":0}`},
		{"one user", ann, 1, nil, `{"data":` + annJSON + `,"total":1}`},
		{"a page of nothing", nil, 0, &pageQuery{1, 10}, `{"data":[],"total":0,"page":1,"per_page":10,"total_pages":0}`},
		{"a page past the end", nil, 25, &pageQuery{4, 10}, `{"data":[],"total":25,"page":4,"per_page":10,"total_pages":3}`},
		{"the last page of 11", ann, 11, &pageQuery{2, 10}, `{"data":` + annJSON + `,"total":11,"page":2,"per_page":10,"total_pages":2}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := listRepresentation(tt.users, tt.total, tt.page)
			if string(rep.body) != tt.want {
				t.Errorf("%s\nwant %s", rep.body, tt.want)
			}
			if rep.etag != entityTag(rep.body) || rep.contentType != "application/json" || rep.cacheControl != "private, no-cache" {
				t.Errorf("ETag %s, Content-Type %q, Cache-Control %q", rep.etag, rep.contentType, rep.cacheControl)
			}
		})
	}
}

// Through the service, a page carries its Link header and an unpaged list none, as in
// docs/api.md's example: ?q=kit&sort=-id&per_page=1&page=2 of 3 matches.
func TestListAnswersWithLinkOnlyWhenPaged(t *testing.T) {
	ts := newTestServer(t)
	for _, name := range []string{"Kit", "Ann", "Kitty", "Kitt"} {
		ts.create(t, name, strings.ToLower(name)+"@example.com")
	}
	r := httptest.NewRequest("GET", "/api/users?q=kit&sort=-id&per_page=1&page=2", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	w := ts.serve(r)
	const others = "&q=kit&sort=-id"
	want := `</api/users?page=1&per_page=1` + others + `>; rel="first", </api/users?page=1&per_page=1` + others + `>; rel="prev", ` +
		`</api/users?page=3&per_page=1` + others + `>; rel="next", </api/users?page=3&per_page=1` + others + `>; rel="last"`
	var page struct {
		Data  []user
		Total int
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil || w.Code != http.StatusOK ||
		!slices.Equal(idsOf(page.Data), []int64{3}) || page.Total != 3 {
		t.Errorf("%d %s, want 200 and Kitty (3) of 3", w.Code, w.Body)
	}
	if got := w.Header().Get("Link"); got != want {
		t.Errorf("Link\n  %s\nwant\n  %s", got, want)
	}
	r = httptest.NewRequest("GET", "/api/users?q=kit&sort=-id", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	if w := ts.serve(r); w.Header().Get("Link") != "" {
		t.Errorf("an unpaged list has the Link %q", w.Header().Get("Link"))
	}
}
