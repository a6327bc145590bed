package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The rules of conditional.go: ETags and the preconditions If-Match and If-None-Match (RFC 9110
// §13; docs/api.md, "Conditional requests"), first on readPreconditions and its judgments, then
// through the service, where the store judges a write's preconditions as it makes the write: of
// many clients with the same If-Match, one goes ahead.

// Both headers hold "*" or a list of entity tags separated by commas, and the lines of a header
// make one list (RFC 9110 §5.3). "*" means any only as the whole value.
func TestTagListsSpanLinesAndCommas(t *testing.T) {
	tags := func(list ...string) *tagList { return &tagList{tags: list} }
	for _, tt := range []struct {
		name  string
		lines []string
		want  *tagList
	}{
		{"no header", nil, nil},
		{"one tag", []string{`"a"`}, tags(`"a"`)},
		{"a list", []string{`"a", W/"b",	"c"`}, tags(`"a"`, `W/"b"`, `"c"`)},
		{"a list without spaces", []string{`"a","b"`}, tags(`"a"`, `"b"`)},
		{"over two lines", []string{`"a"`, `"b", "c"`}, tags(`"a"`, `"b"`, `"c"`)},
		{"*", []string{"*"}, &tagList{any: true}},
		{"* between spaces", []string{" * "}, &tagList{any: true}},
		{"* in a list", []string{`*, "a"`}, tags("*", `"a"`)},
		{"an empty line", []string{""}, tags("")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := readTagList(tt.lines); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readTagList(%q) = %+v, want %+v", tt.lines, got, tt.want)
			}
		})
	}
}

// The preconditions are judged in RFC 9110 §13.2.2's order against the target's current ETag.
// If-Match first, by the strong comparison: unless a tag matches (or it is *), 412, for reads
// too. Then If-None-Match, by the weak comparison: when a tag matches (or it is *), a read is 304
// and a write 412. An element that is not an entity tag matches nothing; the others still count.
func TestPreconditionsInTheirOrder(t *testing.T) {
	current := entityTag([]byte(`{"id":1,"name":"Ann","email":"ann@example.com"}`))
	tests := []struct {
		name                 string
		ifMatch, ifNoneMatch []string // header lines
		read                 int      // the status of GET: 200, 304 or 412
		write                error
	}{
		{"no precondition", nil, nil, 200, nil},
		{"If-Match the current tag", []string{current}, nil, 200, nil},
		{"If-Match *", []string{"*"}, nil, 200, nil},
		{"If-Match in a list", []string{`"a", ` + current + `, "b"`}, nil, 200, nil},
		{"If-Match on a second line", []string{`"a"`, current}, nil, 200, nil},
		{"If-Match after an element that is not a tag", []string{`a b, "c" "d", ` + current}, nil, 200, nil},
		{"If-Match the current tag, weak", []string{"W/" + current}, nil, 412, errIfMatchNotAnETag},
		{"If-Match an old tag", []string{`"0123456789abcdef0123456789abcdef"`}, nil, 412, errIfMatchFailed},
		{"If-Match the current tag unquoted", []string{strings.Trim(current, `"`)}, nil, 412, errIfMatchNotAnETag},
		{"If-Match * in a list", []string{`*, "a"`}, nil, 412, errIfMatchFailed},
		{"If-Match empty", []string{""}, nil, 412, errIfMatchNotAnETag},
		{"If-None-Match the current tag", nil, []string{current}, 304, errIfNoneMatchFailed},
		{"If-None-Match the current tag, weak", nil, []string{`"a", W/` + current}, 304, errIfNoneMatchFailed},
		{"If-None-Match *", nil, []string{"*"}, 304, errIfNoneMatchFailed},
		{"If-None-Match an old tag", nil, []string{`"a"`}, 200, nil},
		{"If-None-Match the current tag in lower-case w/", nil, []string{"w/" + current}, 200, nil},
		{"If-Match that fails, then If-None-Match that matches", []string{`"a"`}, []string{current}, 412, errIfMatchFailed},
		{"If-Match that holds, then If-None-Match that matches", []string{current}, []string{"*"}, 304, errIfNoneMatchFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/users/1", nil)
			for _, line := range tt.ifMatch {
				r.Header.Add("If-Match", line)
			}
			for _, line := range tt.ifNoneMatch {
				r.Header.Add("If-None-Match", line)
			}
			p := readPreconditions(r)
			read := http.StatusOK
			switch notModified, err := p.checkRead(current); {
			case errors.Is(err, errIfMatchFailed), errors.Is(err, errIfMatchNotAnETag):
				read = http.StatusPreconditionFailed
			case err != nil:
				t.Fatal(err)
			case notModified:
				read = http.StatusNotModified
			}
			if read != tt.read {
				t.Errorf("a read is %d, want %d", read, tt.read)
			}
			if err := p.checkWrite(current); err != tt.write {
				t.Errorf("a write: error %v, want %v", err, tt.write)
			}
		})
	}
}

// Through the service, each method on the collection and on a user takes both headers, judged
// against the target's current ETag: a user's, or for the collection that of GET /api/users with
// no query, which is what a POST's preconditions are judged against. A missing user is 404 and a
// bad body 400, whatever the headers (RFC 9110 §13.2.1); a failed precondition comes before 409.
// The dates are ignored: no answer carries a Last-Modified (RFC 9110 §13.1.3, §13.1.4).
func TestConditionalRequestsThroughTheService(t *testing.T) {
	const (
		annLee = `{"name":"Ann Lee","email":"ann@example.com"}`
		cy     = `{"name":"Cy","email":"cy@example.com"}`
		old    = `"0123456789abcdef0123456789abcdef"`
	)
	// Every case starts from a service holding Ann (/api/users/1) and Bob (2), created alike, so
	// Ann's tag and the list's are the same in each: equal representations have equal tags.
	withAnnAndBob := func(t *testing.T) *testServer {
		ts := newTestServer(t)
		ts.create(t, "Ann", "ann@example.com")
		ts.create(t, "Bob", "bob@example.com")
		return ts
	}
	first := withAnnAndBob(t)
	ann, list := etagOf(t, first, "/api/users/1"), etagOf(t, first, "/api/users")

	tests := []struct {
		name, method, target, body string
		header                     http.Header // each value a line of its own
		status                     int
	}{
		{"GET, If-None-Match the current tag", "GET", "/api/users/1", "", http.Header{"If-None-Match": {ann}}, 304},
		{"GET, If-None-Match *", "GET", "/api/users/1", "", http.Header{"If-None-Match": {"*"}}, 304},
		{"HEAD, If-None-Match the current tag, weak", "HEAD", "/api/users/1", "", http.Header{"If-None-Match": {"W/" + ann}}, 304},
		{"GET, If-Match an old tag", "GET", "/api/users/1", "", http.Header{"If-Match": {old}}, 412},
		{"GET, If-Match an old tag, If-None-Match the current", "GET", "/api/users/1", "",
			http.Header{"If-Match": {old}, "If-None-Match": {ann}}, 412},
		{"GET, If-Modified-Since later", "GET", "/api/users/1", "", http.Header{"If-Modified-Since": {"Fri, 01 Jan 2100 00:00:00 GMT"}}, 200},
		{"GET the list, If-None-Match its tag", "GET", "/api/users", "", http.Header{"If-None-Match": {list}}, 304},
		{"GET a page, If-None-Match the whole list's tag", "GET", "/api/users?per_page=5", "", http.Header{"If-None-Match": {list}}, 200},
		{"PUT, If-Match the current tag", "PUT", "/api/users/1", annLee, http.Header{"If-Match": {ann}}, 200},
		{"PUT, If-Match an old tag", "PUT", "/api/users/1", annLee, http.Header{"If-Match": {old}}, 412},
		{"PUT, If-None-Match *", "PUT", "/api/users/1", annLee, http.Header{"If-None-Match": {"*"}}, 412},
		{"PUT, If-None-Match the current tag, weak", "PUT", "/api/users/1", annLee, http.Header{"If-None-Match": {"W/" + ann}}, 412},
		{"PUT, If-None-Match an old tag", "PUT", "/api/users/1", annLee, http.Header{"If-None-Match": {old}}, 200},
		{"PUT, If-Unmodified-Since earlier", "PUT", "/api/users/1", annLee, http.Header{"If-Unmodified-Since": {"Thu, 01 Jan 1970 00:00:00 GMT"}}, 200},
		{"PATCH, If-Match on two lines", "PATCH", "/api/users/1", `{"name":"Ann Lee"}`, http.Header{"If-Match": {old, ann}}, 200},
		{"PATCH, If-Match the current tag, weak", "PATCH", "/api/users/1", `{"name":"Ann Lee"}`, http.Header{"If-Match": {"W/" + ann}}, 412},
		{"DELETE, If-Match the current tag", "DELETE", "/api/users/1", "", http.Header{"If-Match": {ann}}, 204},
		{"DELETE, If-None-Match *", "DELETE", "/api/users/1", "", http.Header{"If-None-Match": {"*"}}, 412},
		{"GET a missing user, If-None-Match *", "GET", "/api/users/9", "", http.Header{"If-None-Match": {"*"}}, 404},
		{"PUT a missing user, If-Match *", "PUT", "/api/users/9", annLee, http.Header{"If-Match": {"*"}}, 404},
		{"PATCH a missing user, If-None-Match *", "PATCH", "/api/users/9", `{"name":"Cy"}`, http.Header{"If-None-Match": {"*"}}, 404},
		{"DELETE a missing user, If-Match an old tag", "DELETE", "/api/users/9", "", http.Header{"If-Match": {old}}, 404},
		{"PUT a bad body, If-Match an old tag", "PUT", "/api/users/1", `{"name":"Ann"}`, http.Header{"If-Match": {old}}, 400},
		{"PATCH nothing, If-None-Match *", "PATCH", "/api/users/1", `{}`, http.Header{"If-None-Match": {"*"}}, 400},
		{"PATCH Bob's e-mail, If-Match an old tag", "PATCH", "/api/users/1", `{"email":"bob@example.com"}`, http.Header{"If-Match": {old}}, 412},
		{"PATCH Bob's e-mail, If-Match the current tag", "PATCH", "/api/users/1", `{"email":"bob@example.com"}`, http.Header{"If-Match": {ann}}, 409},
		{"POST, If-None-Match *", "POST", "/api/users", cy, http.Header{"If-None-Match": {"*"}}, 412},
		{"POST, If-None-Match the collection's tag", "POST", "/api/users", cy, http.Header{"If-None-Match": {list}}, 412},
		{"POST, If-None-Match an old tag", "POST", "/api/users", cy, http.Header{"If-None-Match": {old}}, 201},
		{"POST, If-Match the collection's tag", "POST", "/api/users", cy, http.Header{"If-Match": {list}}, 201},
		{"POST, If-Match an old tag", "POST", "/api/users", cy, http.Header{"If-Match": {old}}, 412},
		{"POST, If-Match a user's tag", "POST", "/api/users", cy, http.Header{"If-Match": {ann}}, 412},
		{"POST a bad body, If-None-Match *", "POST", "/api/users", `{"name":"Cy"}`, http.Header{"If-None-Match": {"*"}}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			before := allUsers(t, ts.store)
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			if tt.body != "" {
				r.Header.Set("Content-Type", "application/json")
			}
			for name, lines := range tt.header {
				for _, line := range lines {
					r.Header.Add(name, line)
				}
			}

			w := ts.serve(r)

			if w.Code != tt.status {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tt.status)
			}
			if after := allUsers(t, ts.store); w.Code >= 300 && !slices.Equal(after, before) {
				t.Errorf("a %d changed the store:\nbefore %v\nafter  %v", w.Code, before, after)
			}
			if w.Code == http.StatusNotModified {
				want := ann
				if tt.target == "/api/users" {
					want = list
				}
				h := w.Header()
				if h.Get("ETag") != want || w.Body.Len() != 0 || h.Get("Content-Type") != "" || h.Get("Cache-Control") != "private, no-cache" {
					t.Errorf("304 with ETag %q, Content-Type %q, Cache-Control %q, body %q; want ETag %s, no body",
						h.Get("ETag"), h.Get("Content-Type"), h.Get("Cache-Control"), w.Body, want)
				}
			}
		})
	}
}

// etagOf is the ETag of GET target, failing the test unless it is 200.
func etagOf(t *testing.T, ts *testServer, target string) string {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	w := ts.serve(r)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	return w.Header().Get("ETag")
}

// The ETag of a user or a list is strong, made of the representation's bytes alone: it changes
// whenever they change, and equal representations have equal tags, however they were asked for
// (docs/api.md, "Conditional requests").
func TestETagFollowsTheRepresentation(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	ann, list := etagOf(t, ts, "/api/users/1"), etagOf(t, ts, "/api/users")
	strong := regexp.MustCompile(`^"[0-9a-f]{32}"$`)
	for _, tag := range []string{ann, list} {
		if !strong.MatchString(tag) {
			t.Errorf("ETag %s, want a strong tag of 32 hex digits", tag)
		}
	}
	for _, query := range []string{"?sort=id", "?q=", "?sort=-name"} { // the same list, with one user
		if tag := etagOf(t, ts, "/api/users"+query); tag != list {
			t.Errorf("%s has the ETag %s, the same list unasked %s", query, tag, list)
		}
	}
	if tag := etagOf(t, ts, "/api/users?per_page=10"); tag == list {
		t.Errorf("a page has the ETag of the whole list: its envelope differs")
	}

	patch := func(name string) {
		r := httptest.NewRequest("PATCH", "/api/users/1", strings.NewReader(`{"name":"`+name+`"}`))
		r.Header.Set("Authorization", "Bearer "+writeToken)
		r.Header.Set("Content-Type", "application/json")
		if w := ts.serve(r); w.Code != http.StatusOK {
			t.Fatalf("PATCH: %d %s", w.Code, w.Body)
		}
	}
	patch("Ann Lee")
	if etagOf(t, ts, "/api/users/1") == ann || etagOf(t, ts, "/api/users") == list {
		t.Error("Ann changed, but her ETag or the list's did not")
	}
	patch("Ann")
	if etagOf(t, ts, "/api/users/1") != ann || etagOf(t, ts, "/api/users") != list {
		t.Error("Ann is as she was, but her ETag or the list's is not")
	}
}

// Of many clients that send the same If-Match at once, exactly one goes ahead and every other gets
// 412: the store judges a write's preconditions as it makes the write, so the tag is no longer
// current when the next one's turn comes. This is how If-Match prevents a "lost update" (RFC 9110
// §13.1.1). A round of clients shows it when they meet; many rounds make sure they do.
func TestOneOfManyIfMatchGoesAhead(t *testing.T) {
	const rounds, clients = 50, 20
	for _, tt := range []struct {
		name, method, target string
		body                 string // a format with the round and the client's number
		users                int    // in the store afterwards: the one change of each round made
	}{
		{"PATCH a user", "PATCH", "/api/users/1", `{"name":"Ann %d.%d"}`, 1},
		{"POST to the collection", "POST", "/api/users", `{"name":"Cy","email":"cy%d.%d@example.com"}`, 1 + rounds},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			for round := range rounds {
				tag := etagOf(t, ts, tt.target) // Ann's, or the collection's
				statuses := make(chan int, clients)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range clients {
					r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(fmt.Sprintf(tt.body, round, i)))
					r.Header.Set("Authorization", "Bearer "+writeToken)
					r.Header.Set("Content-Type", "application/json")
					r.Header.Set("If-Match", tag)
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start // all at once
						statuses <- ts.serve(r).Code
					}()
				}
				close(start)
				wg.Wait()
				close(statuses)
				counts := map[int]int{}
				for status := range statuses {
					counts[status]++
				}
				if counts[200]+counts[201] != 1 || counts[412] != clients-1 {
					t.Fatalf("round %d: statuses %v, want one success and %d times 412", round, counts, clients-1)
				}
			}
			if users := allUsers(t, ts.store); len(users) != tt.users {
				t.Errorf("the store holds %d users, want %d", len(users), tt.users)
			}
		})
	}
}
