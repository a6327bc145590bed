package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The rules of list.go: the list's query, filters, sorting and paging (docs/api.md, "Listing").

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

// linkTargets parses a Link header (RFC 8288) into its targets by relation.
func linkTargets(t testing.TB, h http.Header) map[string]string {
	t.Helper()
	found := map[string]string{}
	for _, m := range regexp.MustCompile(`<([^>]*)>; rel="([a-z]+)"`).FindAllStringSubmatch(h.Get("Link"), -1) {
		if _, twice := found[m[2]]; twice {
			t.Errorf("Link has rel=%q twice: %s", m[2], h.Get("Link"))
		}
		found[m[2]] = m[1]
	}
	return found
}

func TestListWithoutParametersIsEveryUserByIDAndTotalIsItsLength(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Carol", "carol@example.com")
	ts.create(t, "Ann", "ann@example.com")
	ts.create(t, "Bob", "bob@example.com")
	wantStatus(t, ts.do("DELETE", "/api/users/2", "", asWriter...), http.StatusNoContent)
	_, w := ts.list(t, "")
	want := `{"data":[` + userRepresentation(1, "Carol", "carol@example.com") + "," +
		userRepresentation(3, "Bob", "bob@example.com") + `],"total":2}`
	if w.Body.String() != want {
		t.Errorf("list %s\nwant %s", w.Body, want)
	}
	if w.Header().Get("Link") != "" {
		t.Errorf("an unpaged list has a Link header: %s", w.Header().Get("Link"))
	}
}

func TestEmptyListIsAnEmptyArrayNotNull(t *testing.T) {
	ts := withAnnAndBob(t)
	tests := []struct{ query, want string }{
		{"", `{"data":[],"total":0}`}, // after both users are deleted, below
		{"?q=nobody", `{"data":[],"total":0}`},
		{"?email=nobody@example.com", `{"data":[],"total":0}`},
		{"?page=1", `{"data":[],"total":0,"page":1,"per_page":10,"total_pages":0}`},
	}
	for _, id := range []string{"1", "2"} {
		wantStatus(t, ts.do("DELETE", "/api/users/"+id, "", asWriter...), http.StatusNoContent)
	}
	for _, tt := range tests {
		if _, w := ts.list(t, tt.query); w.Body.String() != tt.want {
			t.Errorf("GET /api/users%s = %s, want %s", tt.query, w.Body, tt.want)
		}
	}
}

// withUsers is a server holding n users, named "User 1" to "User n" with ids 1 to n.
func withUsers(t *testing.T, n int) *testServer {
	t.Helper()
	ts := newTestServer(t)
	for i := 1; i <= n; i++ {
		ts.create(t, fmt.Sprint("User ", i), fmt.Sprintf("user%d@example.com", i))
	}
	return ts
}

func TestPagedListEnvelope(t *testing.T) {
	ts := withUsers(t, 25)
	body, w := ts.list(t, "?page=2&per_page=10")
	if got, want := topLevelKeys(t, w.Body.Bytes()), []string{"data", "total", "page", "per_page", "total_pages"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("envelope members %v, want %v in that order", got, want)
	}
	if got, want := fmt.Sprint(idsOf(body.Data)), "[11 12 13 14 15 16 17 18 19 20]"; got != want {
		t.Errorf("page 2 holds %s, want %s", got, want)
	}
	if *body.Total != 25 || *body.Page != 2 || *body.PerPage != 10 || *body.TotalPages != 3 {
		t.Errorf("total %d, page %d, per_page %d, total_pages %d; want 25, 2, 10, 3", *body.Total, *body.Page, *body.PerPage, *body.TotalPages)
	}

	// Either parameter turns paging on; the other takes its default.
	body, _ = ts.list(t, "?per_page=20")
	if len(body.Data) != 20 || body.Data[0].ID != 1 || *body.Page != 1 || *body.TotalPages != 2 {
		t.Errorf("?per_page=20: %d users from %d, page %v, total_pages %v", len(body.Data), body.Data[0].ID, *body.Page, *body.TotalPages)
	}
	body, _ = ts.list(t, "?page=3")
	if fmt.Sprint(idsOf(body.Data)) != "[21 22 23 24 25]" || *body.PerPage != 10 {
		t.Errorf("?page=3: %v, per_page %v", idsOf(body.Data), *body.PerPage)
	}
	body, _ = ts.list(t, "?per_page=100")
	if len(body.Data) != 25 || *body.TotalPages != 1 {
		t.Errorf("?per_page=100: %d users, total_pages %d", len(body.Data), *body.TotalPages)
	}
}

func TestTotalPagesIsTheCeilingOfTotalOverPerPage(t *testing.T) {
	tests := []struct{ users, perPage, want int }{
		{0, 10, 0}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {20, 10, 2}, {7, 1, 7}, {7, 3, 3},
	}
	for _, tt := range tests {
		ts := withUsers(t, tt.users)
		body, _ := ts.list(t, fmt.Sprintf("?per_page=%d", tt.perPage))
		if int(*body.TotalPages) != tt.want || *body.Total != tt.users {
			t.Errorf("%d users, per_page=%d: total_pages %d, total %d; want %d, %d", tt.users, tt.perPage, *body.TotalPages, *body.Total, tt.want, tt.users)
		}
	}
}

func TestPagePastTheEndIsEmptyNotAnError(t *testing.T) {
	ts := withUsers(t, 25)
	for _, page := range []string{"4", "1000", "9223372036854775807"} {
		body, w := ts.list(t, "?per_page=10&page="+page)
		if len(body.Data) != 0 || *body.Total != 25 || *body.TotalPages != 3 || strconv.FormatInt(*body.Page, 10) != page {
			t.Errorf("page %s: %s", page, w.Body)
		}
		if got := linkTargets(t, w.Header())["last"]; got != "/api/users?page=3&per_page=10" {
			t.Errorf("page %s: last is %q", page, got)
		}
	}
	// Beyond the largest int64 a page is not a number the API takes.
	wantError(t, ts.do("GET", "/api/users?page=9223372036854775808", "", asReader...), http.StatusBadRequest, "page")
}

func TestLinkHeaderOfPages(t *testing.T) {
	tests := []struct {
		users int
		query string
		want  map[string]string
	}{
		{25, "?page=2&per_page=10", map[string]string{
			"first": "/api/users?page=1&per_page=10", "prev": "/api/users?page=1&per_page=10",
			"next": "/api/users?page=3&per_page=10", "last": "/api/users?page=3&per_page=10"}},
		{25, "?page=1", map[string]string{
			"first": "/api/users?page=1&per_page=10", "next": "/api/users?page=2&per_page=10",
			"last": "/api/users?page=3&per_page=10"}},
		{25, "?per_page=5&page=5", map[string]string{
			"first": "/api/users?page=1&per_page=5", "prev": "/api/users?page=4&per_page=5",
			"last": "/api/users?page=5&per_page=5"}},
		{25, "?page=9", map[string]string{
			"first": "/api/users?page=1&per_page=10", "prev": "/api/users?page=8&per_page=10",
			"last": "/api/users?page=3&per_page=10"}},
		{0, "?page=1", map[string]string{ // the last page of nothing is page 1
			"first": "/api/users?page=1&per_page=10", "last": "/api/users?page=1&per_page=10"}},
		{3, "?per_page=3", map[string]string{
			"first": "/api/users?page=1&per_page=3", "last": "/api/users?page=1&per_page=3"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.users, " users ", tt.query), func(t *testing.T) {
			ts := withUsers(t, tt.users)
			_, w := ts.list(t, tt.query)
			if got := linkTargets(t, w.Header()); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Link: %s\nparsed %v\nwant   %v", w.Header().Get("Link"), got, tt.want)
			}
		})
	}
}

// Links keep the other parameters and are relative: never built from the Host a client sent
// (httptest's requests come to example.com, which must not show).
func TestLinksKeepTheOtherParametersAndAreRelative(t *testing.T) {
	ts := withUsers(t, 25)
	w := ts.do("GET", "/api/users?q=user&sort=-name&page=2&per_page=3", "", asReader...)
	wantStatus(t, w, http.StatusOK)
	targets := linkTargets(t, w.Header())
	if len(targets) != 4 {
		t.Fatalf("Link %q, want first, prev, next and last", w.Header().Get("Link"))
	}
	for rel, target := range targets {
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "" || u.Host != "" || u.Path != "/api/users" {
			t.Errorf("rel=%s: %q is not a relative URI of the list", rel, target)
			continue
		}
		q := u.Query()
		if q.Get("q") != "user" || q.Get("sort") != "-name" || q.Get("per_page") != "3" || len(q) != 4 {
			t.Errorf("rel=%s: %q does not keep q, sort and per_page", rel, target)
		}
		// Following the link gives a page of the same list.
		if next, _ := ts.list(t, strings.TrimPrefix(target, "/api/users")); *next.Total != 25 {
			t.Errorf("rel=%s: following %q gives total %d", rel, target, *next.Total)
		}
	}
	withEmail := ts.do("GET", "/api/users?email=user3@example.com&page=1", "", asReader...)
	if got := linkTargets(t, withEmail.Header())["first"]; !strings.Contains(got, "email=user3%40example.com") {
		t.Errorf("first is %q: the email filter was lost", got)
	}
}

func TestBadListParameterIs400NamingIt(t *testing.T) {
	tests := []struct{ query, names string }{
		{"page=0", "page"},
		{"page=-1", "page"},
		{"page=01", "page"},
		{"page=+1", "page"},
		{"page=1.0", "page"},
		{"page=abc", "page"},
		{"page=", "page"},
		{"per_page=0", "per_page"},
		{"per_page=101", "per_page"},
		{"per_page=abc", "per_page"},
		{"per_page=010", "per_page"},
		{"per_page=", "per_page"},
		{"sort=age", "sort"},
		{"sort=", "sort"},
		{"sort=+name", "sort"},
		{"sort=Name", "sort"},
		{"sort=--id", "sort"},
		{"email=", "email"},
		{"pgae=2", "pgae"},
		{"limit=10", "limit"},
		{"Page=2", "Page"},
		{"page=1&page=2", "page"},
		{"page=1&page=1", "page"},
		{"q=a&q=b", "q"},
		{"sort=id&sort=name", "sort"},
		{"q=ann&email=a@example.com&email=b@example.com", "email"},
	}
	ts := withUsers(t, 3)
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantError(t, ts.do("GET", "/api/users?"+tt.query, "", asReader...), http.StatusBadRequest, tt.names)
		})
	}
	for _, malformed := range []string{"page=%zz", "q=%", "page=1;per_page=2"} {
		t.Run(malformed, func(t *testing.T) {
			wantError(t, ts.do("GET", "/api/users?"+malformed, "", asReader...), http.StatusBadRequest)
		})
	}
	// and the ones that look odd but are fine
	for _, fine := range []string{"q=", "per_page=100", "page=1&per_page=1", "sort=-email", "q=%C3%A9"} {
		wantStatus(t, ts.do("GET", "/api/users?"+fine, "", asReader...), http.StatusOK)
	}
}

func TestSearchAndEmailFilters(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann Lee", "lee@example.com")      // 1
	ts.create(t, "Bob Stone", "bob@annex.example")  // 2
	ts.create(t, "Carol Day", "carol@example.com")  // 3
	ts.create(t, "Dan Ånnsen", "Dan.A@Example.org") // 4
	tests := []struct {
		query string
		want  string
	}{
		{"?q=ANN", "[1 2]"}, // name or e-mail contains it, case-insensitively
		{"?q=ånn", "[4]"},   // Unicode too
		{"?q=example", "[1 2 3 4]"},
		{"?q=", "[1 2 3 4]"}, // an empty q, as a search form sends it, filters nothing
		{"?q=zzz", "[]"},
		{"?q=" + url.QueryEscape("Lee@"), "[1]"},
		{"?email=CAROL@example.COM", "[3]"}, // exact address, case-insensitively
		{"?email=dan.a@example.org", "[4]"},
		{"?email=carol@example", "[]"}, // exact, not contains
		{"?email=lee@example.com&q=ann", "[1]"},
		{"?email=lee@example.com&q=bob", "[]"},
		{"?q=example&sort=-id&per_page=2&page=2", "[2 1]"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			body, _ := ts.list(t, tt.query)
			if got := fmt.Sprint(idsOf(body.Data)); got != tt.want {
				t.Errorf("ids %s, want %s", got, tt.want)
			}
			if body.Page == nil && *body.Total != len(body.Data) {
				t.Errorf("unpaged total %d for %d users", *body.Total, len(body.Data))
			}
		})
	}
	body, _ := ts.list(t, "?q=example&per_page=1")
	if *body.Total != 4 || *body.TotalPages != 4 {
		t.Errorf("paged search: total %d, total_pages %d; want the matches before paging, 4 and 4", *body.Total, *body.TotalPages)
	}
}

// Names and e-mails sort by their lower-case form, then by bytes; ties go to the lower id in both
// directions.
func TestSortOrders(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "bob", "zed@example.com")  // 1
	ts.create(t, "Ann", "Amy@example.com")  // 2
	ts.create(t, "ann", "amy@example.org")  // 3
	ts.create(t, "Carl", "bea@example.com") // 4
	ts.create(t, "bob", "Bea@example.net")  // 5: the same name as 1
	ts.create(t, "Ännie", "ab@example.com") // 6: sorts after z by bytes
	tests := []struct{ sort, want string }{
		{"id", "[1 2 3 4 5 6]"},
		{"-id", "[6 5 4 3 2 1]"},
		{"name", "[2 3 1 5 4 6]"},  // "Ann" < "ann" by bytes; the two "bob" by id
		{"-name", "[6 4 1 5 3 2]"}, // the two "bob" still by ascending id
		{"email", "[6 2 3 4 5 1]"},
		{"-email", "[1 5 4 3 2 6]"},
	}
	for _, tt := range tests {
		t.Run(tt.sort, func(t *testing.T) {
			body, _ := ts.list(t, "?sort="+tt.sort)
			if got := fmt.Sprint(idsOf(body.Data)); got != tt.want {
				t.Errorf("sort=%s: %s, want %s", tt.sort, got, tt.want)
			}
			// A page of a sorted list is a slice of the whole sorted list.
			page, _ := ts.list(t, "?per_page=2&page=2&sort="+tt.sort)
			if got, want := fmt.Sprint(idsOf(page.Data)), "["+strings.Join(strings.Fields(strings.Trim(tt.want, "[]"))[2:4], " ")+"]"; got != want {
				t.Errorf("sort=%s, page 2 of 2: %s, want %s", tt.sort, got, want)
			}
		})
	}
}

// Ties are common in a long list (many users share a first name): they must keep ascending id
// order in both directions, or a client paging through the list would see users twice or never.
func TestSortTiesGoToAscendingIDInBothDirections(t *testing.T) {
	ts := newTestServer(t)
	names := []string{"Kim", "al", "Kim", "Al", "kim", "Al"}
	for i := 1; i <= 60; i++ {
		ts.create(t, names[i%len(names)], fmt.Sprintf("user%d@example.com", i))
	}
	for _, order := range []string{"name", "-name"} {
		body, _ := ts.list(t, "?sort="+order)
		if len(body.Data) != 60 {
			t.Fatalf("sort=%s: %d users, want 60", order, len(body.Data))
		}
		for i := 1; i < len(body.Data); i++ {
			a, b := body.Data[i-1], body.Data[i]
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

func TestListETagFollowsTheList(t *testing.T) {
	ts := withAnnAndBob(t)
	etagOf := func(query string) string {
		t.Helper()
		_, w := ts.list(t, query)
		etag := w.Header().Get("ETag")
		if etag == "" || strings.HasPrefix(etag, "W/") {
			t.Fatalf("list%s: ETag %q, want a strong one", query, etag)
		}
		return etag
	}
	all := etagOf("")
	// Equal lists have equal ETags, however they were asked for.
	for _, same := range []string{"", "?q=", "?sort=id", "?q=example.com"} {
		if etagOf(same) != all {
			t.Errorf("list%s has another ETag than the same list unpaged", same)
		}
	}
	// Different lists have different ones.
	for _, other := range []string{"?sort=-id", "?page=1", "?q=ann", "?per_page=1"} {
		if etagOf(other) == all {
			t.Errorf("list%s has the ETag of the whole list", other)
		}
	}
	changes := []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com"), 201},
		{"PATCH", "/api/users/3", `{"name":"Caroline"}`, 200},
		{"PUT", "/api/users/1", userJSON("Ann", "ANN@example.com"), 200},
		{"DELETE", "/api/users/3", "", 204},
	}
	previous := all
	for _, c := range changes {
		wantStatus(t, ts.do(c.method, c.path, c.body, join(asWriter, asJSON)...), c.status)
		if now := etagOf(""); now == previous {
			t.Errorf("the list's ETag did not change after %s %s", c.method, c.path)
		} else {
			previous = now
		}
	}
	wantStatus(t, ts.do("PUT", "/api/users/1", userJSON("Ann", "ann@example.com"), join(asWriter, asJSON)...), http.StatusOK)
	if etagOf("") != all {
		t.Error("the list is as it was, but its ETag is not")
	}
}
