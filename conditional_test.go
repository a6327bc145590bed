package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The rules of conditional.go: ETags and preconditions (docs/api.md, "Conditional requests"),
// proved on entityTag, parseTagList, readPreconditions, checkRead, checkWrite, onUser and
// sendRepresentation. That the store runs a write's check atomically with the write is in
// store_test.go.

// An ETag is always 32 hex digits between quotes, as the README says: a hash that begins with zero
// bits is padded, not shortened.
func TestETagIs32HexDigits(t *testing.T) {
	quotedHex := regexp.MustCompile(`^"[0-9a-f]{32}"$`)
	padded := 0
	for i := range 64 {
		representation, err := encodeJSON(user{ID: int64(i + 1), Name: fmt.Sprintf("User %d", i), Email: fmt.Sprintf("user%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		etag := entityTag(representation)
		if !quotedHex.MatchString(etag) {
			t.Errorf("user %d has the ETag %s, want 32 hex digits between quotes", i+1, etag)
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
func TestIfNoneMatchOnAReadIs304(t *testing.T) {
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
			r := httptest.NewRequest("GET", "/api/users/1", nil)
			for _, line := range tt.ifNoneMatch {
				r.Header.Add("If-None-Match", line)
			}
			w := httptest.NewRecorder()
			if err := sendRepresentation(w, r, "application/json", body, current); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, w, tt.want)
			if tt.want == http.StatusNotModified {
				wantHeaders(t, w.Header(), map[string]string{"ETag": current, "Content-Type": "", "Content-Length": ""})
				wantBody(t, w, "")
				return
			}
			wantHeaders(t, w.Header(), map[string]string{"ETag": current, "Content-Type": "application/json",
				"Content-Length": fmt.Sprint(len(body))})
			wantBody(t, w, string(body))
		})
	}
}

// If-Match is judged on GET and HEAD too (RFC 9110 §13.1.1): when none of its tags matches by the
// strong comparison, the answer is 412, and it comes before If-None-Match's 304 (§13.2.2).
func TestIfMatchOnAReadIs412(t *testing.T) {
	body := []byte(`{"data":[],"total":0}`)
	current := entityTag(body)
	tests := []struct {
		name                 string
		ifMatch, ifNoneMatch []string // header lines
		want                 int
	}{
		{"a tag that is not the current one", []string{`"nope"`}, nil, 412},
		{"the current tag, weak", []string{"W/" + current}, nil, 412},
		{"a list without the current tag", []string{`"a", "b"`}, nil, 412},
		{"an empty header", []string{""}, nil, 412},
		{"the current tag", []string{current}, nil, 200},
		{"the current tag in a list", []string{`"a", ` + current}, nil, 200},
		{"the current tag on the second line", []string{`"a"`, current}, nil, 200},
		{"*", []string{"*"}, nil, 200},
		{"If-Match that fails and If-None-Match that matches", []string{`"nope"`}, []string{current}, 412},
		{"If-Match that holds and If-None-Match that matches", []string{current}, []string{current}, 304},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/users", nil)
			for _, line := range tt.ifMatch {
				r.Header.Add("If-Match", line)
			}
			for _, line := range tt.ifNoneMatch {
				r.Header.Add("If-None-Match", line)
			}
			w := httptest.NewRecorder()
			err := sendRepresentation(w, r, "application/json", body, current)
			if tt.want != http.StatusPreconditionFailed {
				if err != nil {
					t.Fatal(err)
				}
				wantStatus(t, w, tt.want)
				return
			}
			if err != errIfMatchFailed {
				t.Errorf("error %#v, want the 412 of If-Match", err)
			}
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
			r := httptest.NewRequest("PUT", "/api/users/1", nil)
			for _, line := range tt.ifMatch {
				r.Header.Add("If-Match", line)
			}
			err := readPreconditions(r).checkWrite(current)
			switch {
			case tt.goes && err != nil:
				t.Errorf("%v, want the write to go ahead", err)
			case !tt.goes && err != errIfMatchFailed:
				t.Errorf("error %#v, want the 412 of If-Match", err)
			}
		})
	}
}

// If-None-Match on a write asks to go ahead only if no current representation matches, by the
// weak comparison: when one does, or it is * and the target exists, the answer is 412 (RFC 9110
// §13.1.2). If-Match is judged first.
func TestIfNoneMatchOnAWriteIs412(t *testing.T) {
	current := entityTag([]byte(`{"id":1,"name":"Ann","email":"ann@example.com"}`))
	tests := []struct {
		name                 string
		ifMatch, ifNoneMatch string    // "" for no such header
		refusal              *apiError // nil when the write goes ahead
	}{
		{"*", "", "*", errIfNoneMatchFailed},
		{"the current ETag", "", current, errIfNoneMatchFailed},
		{"the current ETag, weak", "", "W/" + current, errIfNoneMatchFailed},
		{"the current ETag in a list", "", `"a", ` + current, errIfNoneMatchFailed},
		{"another ETag", "", `"0123456789abcdef"`, nil},
		{"If-Match that fails and If-None-Match that matches", `"a"`, "*", errIfMatchFailed},
		{"If-Match that holds and If-None-Match that matches", "*", "*", errIfNoneMatchFailed},
		{"no precondition", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/api/users/1", nil)
			if tt.ifMatch != "" {
				r.Header.Set("If-Match", tt.ifMatch)
			}
			if tt.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", tt.ifNoneMatch)
			}
			err := readPreconditions(r).checkWrite(current)
			switch {
			case tt.refusal == nil && err != nil:
				t.Errorf("%v, want the write to go ahead", err)
			case tt.refusal != nil && err != tt.refusal:
				t.Errorf("error %#v, want %#v", err, tt.refusal)
			}
		})
	}
}

// A failed precondition is 412, with a message that says which one failed (RFC 9110 §15.5.13).
func TestFailedPreconditionIs412(t *testing.T) {
	for _, tt := range []struct {
		name    string
		refusal *apiError
		message string
	}{
		{"If-Match", errIfMatchFailed, "the resource has changed since you read it: If-Match does not match its current ETag"},
		{"If-None-Match", errIfNoneMatchFailed,
			"the request did not go ahead: If-None-Match matches the current ETag of the resource, or is * and the resource exists"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.refusal.status != http.StatusPreconditionFailed || tt.refusal.message != tt.message {
				t.Errorf("answered %d %q, want 412 %q", tt.refusal.status, tt.refusal.message, tt.message)
			}
		})
	}
}

// onUser judges a write's preconditions against the ETag of the user as it is now: the tag a
// client read before the user changed no longer matches.
func TestOnUserJudgesTheCurrentUser(t *testing.T) {
	before := user{ID: 1, Name: "Ann", Email: "ann@example.com"}
	now := user{ID: 1, Name: "Ann Lee", Email: "ann@example.com"}
	_, readBefore, err := userRepresentation(before)
	if err != nil {
		t.Fatal(err)
	}
	_, readNow, err := userRepresentation(now)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                 string
		ifMatch, ifNoneMatch string // "" for no such header
		refusal              error  // nil when the write goes ahead
	}{
		{"no precondition", "", "", nil},
		{"If-Match, the tag of now", readNow, "", nil},
		{"If-Match, the tag read before", readBefore, "", errIfMatchFailed},
		{"If-None-Match, the tag read before", "", readBefore, nil},
		{"If-None-Match *", "", "*", errIfNoneMatchFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("PATCH", "/api/users/1", nil)
			if tt.ifMatch != "" {
				r.Header.Set("If-Match", tt.ifMatch)
			}
			if tt.ifNoneMatch != "" {
				r.Header.Set("If-None-Match", tt.ifNoneMatch)
			}
			if err := readPreconditions(r).onUser(now); err != tt.refusal {
				t.Errorf("error %#v, want %#v", err, tt.refusal)
			}
		})
	}
}

// Entity-tag lists are read by RFC 9110 §8.8.3's grammar: a tag is W/ perhaps, then characters
// other than space, control and quote between quotes; "*" counts only as the whole value, and tags
// are separated by commas (§13.1.1). From a part that is not a tag followed by a comma or the
// end on, nothing is read.
func TestTagListsAreReadByTheGrammar(t *testing.T) {
	tags := func(list ...string) tagList { return tagList{tags: list} }
	tests := []struct {
		list string
		want tagList
	}{
		{`"a"`, tags(`"a"`)},
		{`*`, tagList{any: true}},
		{`"a", W/"b",	"c"`, tags(`"a"`, `W/"b"`, `"c"`)},
		{`"a","b"`, tags(`"a"`, `"b"`)},
		{` , ,"a",,`, tags(`"a"`)},
		{`""`, tags(`""`)},
		{`"with space", "b"`, tagList{}},
		{"\"tab\there\", \"b\"", tagList{}},
		{"\"nul\x00\"", tagList{}},
		{`"a", "with space", "b"`, tags(`"a"`)},
		{`"a", unquoted, "b"`, tags(`"a"`)},
		{`"unterminated`, tagList{}},
		{`W/ "space after W/"`, tagList{}},
		{`w/"lower-case w"`, tagList{}},
		{"\"obs-text \xe9\"", tagList{}},
		{"\"obs-text\xe9\"", tags("\"obs-text\xe9\"")},
		{``, tagList{}},
		// "*" is the whole value or nothing (If-Match = "*" / #entity-tag), and tags are separated
		// by commas: none of these lists matches the tag after its first part.
		{` * `, tagList{any: true}},
		{`*, "x"`, tagList{}},
		{`"x", *`, tags(`"x"`)},
		{`**`, tagList{}},
		{`"x" "y"`, tagList{}},
		{`"x""y"`, tagList{}},
		{`"x", "y" "z"`, tags(`"x"`)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.list), func(t *testing.T) {
			if got := parseTagList(tt.list); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseTagList(%q) = {any: %v, tags: %q}, want {any: %v, tags: %q}", tt.list, got.any, got.tags, tt.want.any, tt.want.tags)
			}
		})
	}
}
