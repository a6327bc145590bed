package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The rules of conditional.go: ETags and preconditions (docs/api.md, "Conditional requests").

func TestETagIsStrongAndFollowsTheRepresentation(t *testing.T) {
	ts := withAnnAndBob(t)
	etagOf := func(path string) string {
		t.Helper()
		w := ts.do("GET", path, "", asReader...)
		wantStatus(t, w, http.StatusOK)
		etag := w.Header().Get("ETag")
		if !regexp.MustCompile(`^"[\x21\x23-\x7e]+"$`).MatchString(etag) {
			t.Fatalf("ETag %q of %s is not a strong entity tag", etag, path)
		}
		return etag
	}
	ann, bob := etagOf("/api/users/1"), etagOf("/api/users/2")
	if ann == bob {
		t.Error("two different users have the same ETag")
	}
	if etagOf("/api/users/1") != ann {
		t.Error("the ETag changed without a change")
	}
	wantStatus(t, ts.do("PATCH", "/api/users/1", `{"name":"Ann"}`, join(asWriter, asJSON)...), http.StatusOK)
	if etagOf("/api/users/1") != ann {
		t.Error("a PATCH to the same values changed the ETag: equal representations have equal ETags")
	}
	wantStatus(t, ts.do("PATCH", "/api/users/1", `{"name":"Ann Lee"}`, join(asWriter, asJSON)...), http.StatusOK)
	if etagOf("/api/users/1") == ann {
		t.Error("the ETag did not change with the name")
	}
	wantStatus(t, ts.do("PATCH", "/api/users/1", `{"name":"Ann"}`, join(asWriter, asJSON)...), http.StatusOK)
	if etagOf("/api/users/1") != ann {
		t.Error("the same representation again has another ETag")
	}
}

// An ETag is always 16 hex digits between quotes, as the README says: a hash that begins with zero
// bits is padded, not shortened.
func TestETagIsSixteenHexDigits(t *testing.T) {
	ts := newTestServer(t)
	padded := 0
	for i := range 64 {
		u := ts.create(t, fmt.Sprintf("User %d", i), fmt.Sprintf("user%d@example.com", i))
		etag := ts.do("GET", userPath(u.ID), "", asReader...).Header().Get("ETag")
		if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(etag) {
			t.Errorf("user %d has the ETag %s, want 16 hex digits between quotes", u.ID, etag)
		}
		if strings.HasPrefix(etag, `"0`) {
			padded++
		}
	}
	if padded == 0 {
		t.Fatal("no ETag began with 0: the test proves nothing about padding, so give it other users")
	}
}

func TestIfNoneMatchIs304UnderWeakComparison(t *testing.T) {
	ts := withAnnAndBob(t)
	current := ts.do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	bobs := ts.do("GET", "/api/users/2", "", asReader...).Header().Get("ETag")
	tests := []struct {
		name        string
		ifNoneMatch []string // header lines
		want        int
	}{
		{"the current ETag", []string{current}, 304},
		{"the current ETag, weak", []string{"W/" + current}, 304},
		{"in a list", []string{`"other", ` + current}, 304},
		{"weak, in a list without spaces", []string{`W/"other",W/` + current}, 304},
		{"in the second header line", []string{`"other"`, current}, 304},
		{"*", []string{"*"}, 304},
		{"another user's ETag", []string{bobs}, 200},
		{"an unknown ETag", []string{`"other"`}, 200},
		{"unquoted", []string{strings.Trim(current, `"`)}, 200},
		{"empty", []string{""}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"GET", "HEAD"} {
				headers := asReader
				for _, value := range tt.ifNoneMatch {
					headers = join(headers, []string{"If-None-Match", value})
				}
				w := ts.do(method, "/api/users/1", "", headers...)
				wantStatus(t, w, tt.want)
				wantHeader(t, w.Header(), "ETag", current)
				wantHeader(t, w.Header(), "Cache-Control", "private, no-cache")
				if tt.want == http.StatusNotModified {
					wantNoBody(t, w)
				}
			}
		})
	}
}

func TestIfNoneMatchOnTheListIs304(t *testing.T) {
	ts := withUsers(t, 5)
	for _, query := range []string{"", "?page=2&per_page=2", "?sort=-name&q=user"} {
		_, first := ts.list(t, query)
		etag := first.Header().Get("ETag")
		w := ts.do("GET", "/api/users"+query, "", join(asReader, []string{"If-None-Match", "W/" + etag})...)
		wantStatus(t, w, http.StatusNotModified)
		wantNoBody(t, w)
		wantHeader(t, w.Header(), "ETag", etag)
	}
	// After a change, the old ETag no longer matches.
	_, before := ts.list(t, "")
	ts.create(t, "Carol", "carol@example.com")
	w := ts.do("GET", "/api/users", "", join(asReader, []string{"If-None-Match", before.Header().Get("ETag")})...)
	wantStatus(t, w, http.StatusOK)
}

// If-Match uses the strong comparison: a weak tag never matches, * matches any existing user.
func TestIfMatchGuardsWrites(t *testing.T) {
	current := withAnnAndBob(t).do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	tests := []struct {
		name    string
		ifMatch []string // header lines
		want    bool     // whether the write goes ahead
	}{
		{"the current ETag", []string{current}, true},
		{"*", []string{"*"}, true},
		{"in a list", []string{`"a", ` + current + `, "b"`}, true},
		{"in the second header line", []string{`"a"`, current}, true},
		{"the current ETag, weak", []string{"W/" + current}, false},
		{"a weak list", []string{`W/"a", W/` + current}, false},
		{"an old ETag", []string{`"0123456789abcdef"`}, false},
		{"unquoted", []string{strings.Trim(current, `"`)}, false},
	}
	writes := []struct {
		method, body string
		success      int
	}{
		{"PUT", userJSON("Ann Lee", "ann@example.com"), 200},
		{"PATCH", `{"name":"Ann Lee"}`, 200},
		{"DELETE", "", 204},
	}
	for _, tt := range tests {
		for _, write := range writes {
			t.Run(write.method+" "+tt.name, func(t *testing.T) {
				ts := withAnnAndBob(t)
				before := ts.do("GET", "/api/users/1", "", asReader...)
				headers := join(asWriter, asJSON)
				for _, value := range tt.ifMatch {
					headers = join(headers, []string{"If-Match", value})
				}
				w := ts.do(write.method, "/api/users/1", write.body, headers...)
				if tt.want {
					wantStatus(t, w, write.success)
					return
				}
				wantError(t, w, http.StatusPreconditionFailed, "If-Match")
				after := ts.do("GET", "/api/users/1", "", asReader...)
				if after.Code != 200 || after.Body.String() != before.Body.String() || after.Header().Get("ETag") != before.Header().Get("ETag") {
					t.Errorf("after the 412 the user is %d %s, want it unchanged: %s", after.Code, after.Body, before.Body)
				}
			})
		}
	}
}

// The lost update, avoided: two clients read the same user; the second write fails instead of
// silently undoing the first.
func TestIfMatchStopsALostUpdate(t *testing.T) {
	ts := withAnnAndBob(t)
	etag := ts.do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	first := ts.do("PATCH", "/api/users/1", `{"name":"Ann Lee"}`, join(asWriter, asJSON, []string{"If-Match", etag})...)
	wantStatus(t, first, http.StatusOK)
	second := ts.do("PATCH", "/api/users/1", `{"name":"Ann Smith"}`, join(asWriter, asJSON, []string{"If-Match", etag})...)
	wantError(t, second, http.StatusPreconditionFailed)
	if got := ts.do("GET", "/api/users/1", "", asReader...).Body.String(); got != first.Body.String() {
		t.Errorf("the user is %s, want the first client's write %s", got, first.Body)
	}
}

func TestConditionsAreJudgedOnlyForAUserThatExists(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, method := range []string{"PUT", "PATCH", "DELETE"} {
		for _, ifMatch := range []string{"*", `"stale"`} {
			w := ts.do(method, "/api/users/9", userJSON("Ann", "ann9@example.com"), join(asWriter, asJSON, []string{"If-Match", ifMatch})...)
			wantError(t, w, http.StatusNotFound)
		}
	}
	wantError(t, ts.do("GET", "/api/users/9", "", join(asReader, []string{"If-None-Match", "*"})...), http.StatusNotFound)
}

// Entity-tag lists are read by RFC 9110 §8.8.3's grammar: a tag is W/ perhaps, then characters
// other than space, control and quote between quotes; from a part that is not a tag on, nothing
// is read.
func TestTagListsAreReadByTheGrammar(t *testing.T) {
	tests := []struct {
		list string
		want tagList
	}{
		{`"a"`, tagList{`"a"`}},
		{`*`, tagList{"*"}},
		{`"a", W/"b",	"c"`, tagList{`"a"`, `W/"b"`, `"c"`}},
		{`"a","b"`, tagList{`"a"`, `"b"`}},
		{` , ,"a",,`, tagList{`"a"`}},
		{`""`, tagList{`""`}},
		{`"with space", "b"`, nil},
		{"\"tab\there\", \"b\"", nil},
		{"\"nul\x00\"", nil},
		{`"a", "with space", "b"`, tagList{`"a"`}},
		{`"a", unquoted, "b"`, tagList{`"a"`}},
		{`"unterminated`, nil},
		{`W/ "space after W/"`, nil},
		{`w/"lower-case w"`, nil},
		{"\"obs-text \xe9\"", nil},
		{"\"obs-text\xe9\"", tagList{"\"obs-text\xe9\""}},
		{``, nil},
	}
	for _, tt := range tests {
		if got := parseTagList(tt.list); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("parseTagList(%q) = %q, want %q", tt.list, got, tt.want)
		}
	}
}

// If-Match is judged on GET and HEAD too (RFC 9110 §13.1.1): when none of its tags matches by
// strong comparison, the answer is 412, and it comes before If-None-Match's 304 (§13.2.2).
func TestIfMatchThatFailsOnAReadIs412(t *testing.T) {
	ts := withAnnAndBob(t)
	userTag := ts.do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	listTag := ts.do("GET", "/api/users?page=1&per_page=1", "", asReader...).Header().Get("ETag")
	for _, target := range []struct{ path, current string }{
		{"/api/users/1", userTag},
		{"/api/users?page=1&per_page=1", listTag},
	} {
		tests := []struct {
			name    string
			headers []string
			want    int
		}{
			{"a tag that is not the current one", []string{"If-Match", `"nope"`}, 412},
			{"the current tag, weak", []string{"If-Match", "W/" + target.current}, 412},
			{"a list without the current tag", []string{"If-Match", `"a", "b"`}, 412},
			{"an empty header", []string{"If-Match", ""}, 412},
			{"the current tag", []string{"If-Match", target.current}, 200},
			{"the current tag in a list", []string{"If-Match", `"a", ` + target.current}, 200},
			{"*", []string{"If-Match", "*"}, 200},
			{"If-Match that fails and If-None-Match that matches", []string{"If-Match", `"nope"`, "If-None-Match", target.current}, 412},
			{"If-Match that holds and If-None-Match that matches", []string{"If-Match", target.current, "If-None-Match", target.current}, 304},
		}
		for _, tt := range tests {
			for _, method := range []string{"GET", "HEAD"} {
				t.Run(method+" "+target.path+" with "+tt.name, func(t *testing.T) {
					w := ts.do(method, target.path, "", join(asReader, tt.headers)...)
					wantStatus(t, w, tt.want)
					if tt.want != http.StatusPreconditionFailed {
						wantHeader(t, w.Header(), "ETag", target.current)
						return
					}
					if method == "GET" {
						wantError(t, w, http.StatusPreconditionFailed, "If-Match")
					}
					wantHeader(t, w.Header(), "Cache-Control", "no-store")
					for _, name := range []string{"ETag", "Link"} {
						if value := w.Header().Get(name); value != "" {
							t.Errorf("a 412 carries %s %q, which belongs to the answer not given", name, value)
						}
					}
				})
			}
		}
	}
}

// If-None-Match on a write asks to go ahead only if no current representation matches: when one
// does, or it is * and the user exists, the answer is 412 and nothing changes (RFC 9110 §13.1.2).
func TestIfNoneMatchThatMatchesOnAWriteIs412(t *testing.T) {
	current := withAnnAndBob(t).do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	tests := []struct {
		name        string
		ifNoneMatch string
		want        bool // whether the write goes ahead
	}{
		{"*", "*", false},
		{"the current ETag", current, false},
		{"the current ETag, weak", "W/" + current, false},
		{"the current ETag in a list", `"a", ` + current, false},
		{"another ETag", `"0123456789abcdef"`, true},
	}
	writes := []struct {
		method, body string
		success      int
	}{
		{"PUT", userJSON("Ann Lee", "ann@example.com"), 200},
		{"PATCH", `{"name":"Ann Lee"}`, 200},
		{"DELETE", "", 204},
	}
	for _, tt := range tests {
		for _, write := range writes {
			t.Run(write.method+" "+tt.name, func(t *testing.T) {
				ts := withAnnAndBob(t)
				before := ts.do("GET", "/api/users/1", "", asReader...)
				w := ts.do(write.method, "/api/users/1", write.body, join(asWriter, asJSON, []string{"If-None-Match", tt.ifNoneMatch})...)
				if tt.want {
					wantStatus(t, w, write.success)
					return
				}
				wantError(t, w, http.StatusPreconditionFailed, "If-None-Match")
				if after := ts.do("GET", "/api/users/1", "", asReader...); after.Body.String() != before.Body.String() {
					t.Errorf("after the 412 the user is %s, want it unchanged: %s", after.Body, before.Body)
				}
			})
		}
	}
}

// The target of POST is the collection, whose ETag is that of GET /api/users with no query: it
// always exists, so If-None-Match: * is 412, and If-Match with the list's ETag creates the user
// only if the collection has not changed since the client read it.
func TestPreconditionsOfAPostAreJudgedAgainstTheCollection(t *testing.T) {
	ts := withAnnAndBob(t)
	listTag := func() string { return ts.do("GET", "/api/users", "", asReader...).Header().Get("ETag") }
	post := func(name string, headers ...string) *httptest.ResponseRecorder {
		body := userJSON(name, strings.ToLower(name)+"@example.com")
		return ts.do("POST", "/api/users", body, join(asWriter, asJSON, headers)...)
	}
	read := listTag()
	wantError(t, post("Nobody", "If-None-Match", "*"), http.StatusPreconditionFailed, "If-None-Match")
	wantError(t, post("Nobody", "If-None-Match", read), http.StatusPreconditionFailed, "If-None-Match")
	pageTag := ts.do("GET", "/api/users?page=1&per_page=1", "", asReader...).Header().Get("ETag")
	wantError(t, post("Nobody", "If-Match", pageTag), http.StatusPreconditionFailed, "If-Match")
	if listTag() != read {
		t.Fatal("a POST that failed its precondition changed the collection")
	}
	wantStatus(t, post("Carol", "If-Match", read), http.StatusCreated)
	wantError(t, post("Dan", "If-Match", read), http.StatusPreconditionFailed, "If-Match") // Carol changed it
	wantStatus(t, post("Dan", "If-Match", listTag()), http.StatusCreated)
	wantStatus(t, post("Eve", "If-Match", "*"), http.StatusCreated)
	wantStatus(t, post("Fay", "If-None-Match", read), http.StatusCreated)
}
