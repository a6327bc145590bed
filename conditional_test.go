package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The rules of conditional.go: ETags and preconditions (docs/api.md, "Conditional requests"),
// proved on entityTag, parseTagList, readPreconditions, checkRead, checkWrite and
// sendRepresentation. How the store judges a write's preconditions is in store_test.go.

const (
	ifMatchFailed     = "the resource has changed since you read it: If-Match does not match its current ETag"
	ifNoneMatchFailed = "the request did not go ahead: If-None-Match matches the current ETag of the resource, or is * and the resource exists"
)

// withPreconditions is a request with these header pairs: If-Match and If-None-Match lines.
func withPreconditions(method string, headers ...string) *http.Request {
	r := httptest.NewRequest(method, "/api/users/1", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

// An ETag is always 16 hex digits between quotes, as the README says: a hash that begins with zero
// bits is padded, not shortened.
func TestETagIsSixteenHexDigits(t *testing.T) {
	padded := 0
	for i := range 64 {
		etag := entityTag(marshal(user{ID: int64(i + 1), Name: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)}))
		if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(etag) {
			t.Errorf("user %d has the ETag %s, want 16 hex digits between quotes", i+1, etag)
		}
		if strings.HasPrefix(etag, `"0`) {
			padded++
		}
	}
	if padded == 0 {
		t.Fatal("no ETag began with 0: the test proves nothing about padding, so give it other users")
	}
}

// sendRepresentation answers GET and HEAD: 200 with the body, or 304 when If-None-Match says the
// client's copy is current, by the weak comparison (RFC 9110 §13.1.2). A 304 carries the ETag and
// no body, so no Content-Type either.
func TestIfNoneMatchIs304UnderWeakComparison(t *testing.T) {
	body := []byte(`{"id":1,"name":"Ann","email":"ann@example.com"}`)
	current := entityTag(body)
	tests := []struct {
		name        string
		ifNoneMatch []string // header lines
		want        int
	}{
		{"the current ETag", []string{current}, 304},
		{"the current ETag, weak", []string{"W/" + current}, 304},
		{"in a list", []string{`"other", ` + current}, 304},
		{"weak, in a list without spaces", []string{`W/"other",W/` + current}, 304},
		{"after a tag that holds a comma", []string{`"a,b", ` + current}, 304},
		{"in the second header line", []string{`"other"`, current}, 304},
		{"*", []string{"*"}, 304},
		{"an unknown ETag", []string{`"other"`}, 200},
		{"unquoted", []string{strings.Trim(current, `"`)}, 200},
		{"after a part that is not a tag", []string{"other, " + current}, 200},
		{"empty", []string{""}, 200},
		{"none", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			for _, line := range tt.ifNoneMatch {
				headers = append(headers, "If-None-Match", line)
			}
			w := httptest.NewRecorder()
			if err := sendRepresentation(w, withPreconditions("GET", headers...), "application/json", body, current); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, w, tt.want)
			wantHeader(t, w.Header(), "ETag", current)
			if tt.want == http.StatusNotModified {
				wantNoBody(t, w)
				return
			}
			wantHeader(t, w.Header(), "Content-Type", "application/json")
			wantHeader(t, w.Header(), "Content-Length", fmt.Sprint(len(body)))
			if w.Body.String() != string(body) {
				t.Errorf("body %s, want %s", w.Body, body)
			}
		})
	}
}

// If-Match is judged on GET and HEAD too (RFC 9110 §13.1.1): when none of its tags matches by the
// strong comparison, the answer is 412, and it comes before If-None-Match's 304 (§13.2.2).
func TestIfMatchThatFailsOnAReadIs412(t *testing.T) {
	body := []byte(`{"data":[],"total":0}`)
	current := entityTag(body)
	tests := []struct {
		name    string
		headers []string
		want    int
	}{
		{"a tag that is not the current one", []string{"If-Match", `"nope"`}, 412},
		{"the current tag, weak", []string{"If-Match", "W/" + current}, 412},
		{"a list without the current tag", []string{"If-Match", `"a", "b"`}, 412},
		{"an empty header", []string{"If-Match", ""}, 412},
		{"the current tag", []string{"If-Match", current}, 200},
		{"the current tag in a list", []string{"If-Match", `"a", ` + current}, 200},
		{"the current tag on the second line", []string{"If-Match", `"a"`, "If-Match", current}, 200},
		{"*", []string{"If-Match", "*"}, 200},
		{"If-Match that fails and If-None-Match that matches", []string{"If-Match", `"nope"`, "If-None-Match", current}, 412},
		{"If-Match that holds and If-None-Match that matches", []string{"If-Match", current, "If-None-Match", current}, 304},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			err := sendRepresentation(w, withPreconditions("GET", tt.headers...), "application/json", body, current)
			if tt.want != http.StatusPreconditionFailed {
				if err != nil {
					t.Fatal(err)
				}
				wantStatus(t, w, tt.want)
				return
			}
			wantAPIError(t, err, http.StatusPreconditionFailed, ifMatchFailed)
			if len(w.Header()) != 0 || w.Body.Len() != 0 {
				t.Errorf("sendRepresentation began an answer it did not give: %v %q", w.Header(), w.Body)
			}
		})
	}
}

// A write goes ahead when If-Match names its target's current ETag by the strong comparison, or
// is *; a weak tag never matches (RFC 9110 §13.1.1).
func TestIfMatchGuardsWrites(t *testing.T) {
	current := entityTag([]byte(`{"id":1,"name":"Ann","email":"ann@example.com"}`))
	tests := []struct {
		name    string
		ifMatch []string // header lines
		goes    bool     // whether the write goes ahead
	}{
		{"the current ETag", []string{current}, true},
		{"*", []string{"*"}, true},
		{"in a list", []string{`"a", ` + current + `, "b"`}, true},
		{"in the second header line", []string{`"a"`, current}, true},
		{"the current ETag, weak", []string{"W/" + current}, false},
		{"a weak list", []string{`W/"a", W/` + current}, false},
		{"an old ETag", []string{`"0123456789abcdef"`}, false},
		{"unquoted", []string{strings.Trim(current, `"`)}, false},
		{"after a quoted string with a space", []string{`"a b", ` + current}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			for _, line := range tt.ifMatch {
				headers = append(headers, "If-Match", line)
			}
			err := readPreconditions(withPreconditions("PUT", headers...)).checkWrite(current)
			if tt.goes {
				if err != nil {
					t.Errorf("%v, want the write to go ahead", err)
				}
				return
			}
			wantAPIError(t, err, http.StatusPreconditionFailed, ifMatchFailed)
		})
	}
}

// If-None-Match on a write asks to go ahead only if no current representation matches, by the
// weak comparison: when one does, or it is * and the target exists, the answer is 412 (RFC 9110
// §13.1.2). If-Match is judged first.
func TestIfNoneMatchThatMatchesOnAWriteIs412(t *testing.T) {
	current := entityTag([]byte(`{"id":1,"name":"Ann","email":"ann@example.com"}`))
	tests := []struct {
		name    string
		headers []string
		refusal string // "" when the write goes ahead
	}{
		{"*", []string{"If-None-Match", "*"}, ifNoneMatchFailed},
		{"the current ETag", []string{"If-None-Match", current}, ifNoneMatchFailed},
		{"the current ETag, weak", []string{"If-None-Match", "W/" + current}, ifNoneMatchFailed},
		{"the current ETag in a list", []string{"If-None-Match", `"a", ` + current}, ifNoneMatchFailed},
		{"another ETag", []string{"If-None-Match", `"0123456789abcdef"`}, ""},
		{"If-Match that fails and If-None-Match that matches", []string{"If-Match", `"a"`, "If-None-Match", "*"}, ifMatchFailed},
		{"If-Match that holds and If-None-Match that matches", []string{"If-Match", "*", "If-None-Match", "*"}, ifNoneMatchFailed},
		{"no precondition", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := readPreconditions(withPreconditions("PUT", tt.headers...)).checkWrite(current)
			if tt.refusal == "" {
				if err != nil {
					t.Errorf("%v, want the write to go ahead", err)
				}
				return
			}
			wantAPIError(t, err, http.StatusPreconditionFailed, tt.refusal)
		})
	}
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
		// "*" is the whole value or nothing (If-Match = "*" / #entity-tag), and tags are separated
		// by commas: none of these lists matches the tag after its first part.
		{` * `, tagList{"*"}},
		{`*, "x"`, nil},
		{`"x", *`, tagList{`"x"`}},
		{`**`, nil},
		{`"x" "y"`, nil},
		{`"x""y"`, nil},
		{`"x", "y" "z"`, tagList{`"x"`}},
	}
	for _, tt := range tests {
		if got := parseTagList(tt.list); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("parseTagList(%q) = %q, want %q", tt.list, got, tt.want)
		}
	}
}
