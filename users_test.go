package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
	"unicode"
	"unicode/utf8"
)

// The tests go through the real handler stack (newServer), so each one checks what a client sees.

const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
)

// Header pairs for do, named for what they say.
var (
	asWriter = []string{"Authorization", "Bearer " + writeToken}
	asReader = []string{"Authorization", "Bearer " + readToken}
	asJSON   = []string{"Content-Type", "application/json"}
)

// testServer is the service on a fresh, empty store, built by newServer from dependencies that a
// test may change before it calls build again.
type testServer struct {
	cfg     config
	log     *slog.Logger
	tokens  *tokens
	store   *userStore
	handler http.Handler
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	tokenSet, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{log: newLogger("text", io.Discard), tokens: tokenSet, store: newUserStore()}
	s.build()
	return s
}

// build makes the handler anew from the server's dependencies.
func (s *testServer) build() {
	s.handler = newServer(s.cfg, s.log, s.tokens, s.store, nil)
}

// do sends a request through the handler. headers come in pairs of name and value; combine
// asWriter, asJSON and others with join.
func (s *testServer) do(method, target, body string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body == "" {
		r.Body = http.NoBody
		r.ContentLength = 0
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w
}

// create adds a user through the API and returns it as the answer's body decoded.
func (s *testServer) create(t testing.TB, name, email string) user {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "email": email})
	w := s.do("POST", "/api/users", string(body), join(asWriter, asJSON)...)
	if w.Code != http.StatusCreated {
		t.Fatalf("creating %s: status %d, body %s", email, w.Code, w.Body)
	}
	var u user
	if err := json.Unmarshal(w.Body.Bytes(), &u); err != nil {
		t.Fatal(err)
	}
	return u
}

func join(pairs ...[]string) []string {
	var all []string
	for _, p := range pairs {
		all = append(all, p...)
	}
	return all
}

// errorBody decodes an error answer, failing the test if it is not the JSON error body.
func errorBody(t testing.TB, w *httptest.ResponseRecorder) (message string, fields map[string]string) {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	var body struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error == "" {
		t.Fatalf("body %q is not the JSON error body", w.Body)
	}
	return body.Error, body.Fields
}

// The helpers below build on the ones above; the tests follow them, in the order of docs/api.md.

// withAnnAndBob is a server holding Ann (id 1) and Bob (id 2).
func withAnnAndBob(t testing.TB) *testServer {
	t.Helper()
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	ts.create(t, "Bob", "bob@example.com")
	return ts
}

// serve sends a request built by the caller, for what do cannot express (an unknown length).
func (s *testServer) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w
}

// logTo sends the server's log, as JSON records, to a buffer the test can read.
func (s *testServer) logTo() *syncLog {
	buffer := &syncLog{}
	s.log = newLogger("json", buffer)
	s.build()
	return buffer
}

// syncLog is a bytes.Buffer that many goroutines may write to (a server's log, say).
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines counts the lines written so far.
func (b *syncLog) lines() int { return strings.Count(b.String(), "\n") }

func (b *syncLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records decodes a log of JSON records.
func (b *syncLog) records(t testing.TB) []map[string]any {
	t.Helper()
	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var record map[string]any
		if err := json.Unmarshal([]byte(line), &record); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		records = append(records, record)
	}
	return records
}

// userJSON is a request body with these fields.
func userJSON(name, email string) string {
	b, _ := json.Marshal(struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}{name, email})
	return string(b)
}

// userRepresentation is a user as the API sends it: id, name and email, in that order.
func userRepresentation(id int64, name, email string) string {
	b, _ := json.Marshal(user{ID: id, Name: name, Email: email})
	return string(b)
}

// wantStatus stops the test unless the answer has this status.
func wantStatus(t testing.TB, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
}

// wantError checks an error answer: its status, the JSON error body, a message that is a
// lower-case sentence and mentions each of mentions. It returns the message and fields.
func wantError(t testing.TB, w *httptest.ResponseRecorder, status int, mentions ...string) (string, map[string]string) {
	t.Helper()
	wantStatus(t, w, status)
	message, fields := errorBody(t, w)
	if first, _ := utf8.DecodeRuneInString(message); unicode.IsUpper(first) {
		t.Errorf("message %q is not a lower-case sentence", message)
	}
	for _, m := range mentions {
		if !strings.Contains(message, m) {
			t.Errorf("message %q does not mention %q", message, m)
		}
	}
	return message, fields
}

// wantHeader checks a header's value.
func wantHeader(t testing.TB, h http.Header, name, want string) {
	t.Helper()
	if got := h.Values(name); len(got) != 1 || got[0] != want {
		t.Errorf("%s = %q, want %q", name, got, want)
	}
}

// headerSet returns the comma-separated items of a header, for comparing lists in any order.
func headerSet(h http.Header, name string) map[string]bool {
	set := map[string]bool{}
	for _, line := range h.Values(name) {
		for _, item := range strings.Split(line, ",") {
			if item = strings.TrimSpace(item); item != "" {
				set[item] = true
			}
		}
	}
	return set
}

// wantHeaderSet checks that a list header holds exactly these items, in any order.
func wantHeaderSet(t testing.TB, h http.Header, name string, want ...string) {
	t.Helper()
	got := headerSet(h, name)
	ok := len(got) == len(want)
	for _, item := range want {
		ok = ok && got[item]
	}
	if !ok {
		t.Errorf("%s = %q, want the items %q", name, h.Values(name), want)
	}
}

// wantNoBody checks what 204 and 304 must be: no body and no Content-Type.
func wantNoBody(t testing.TB, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Body.Len() != 0 {
		t.Errorf("body %q, want none", w.Body)
	}
	if ct := w.Header().Values("Content-Type"); len(ct) != 0 {
		t.Errorf("Content-Type %q, want none", ct)
	}
}

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

// topLevelKeys returns the member names of a JSON object, in the order they were sent.
func topLevelKeys(t testing.TB, body []byte) []string {
	t.Helper()
	decoder := json.NewDecoder(bytes.NewReader(body))
	if token, err := decoder.Token(); err != nil || token != json.Delim('{') {
		t.Fatalf("%s is not a JSON object", body)
	}
	var keys []string
	for decoder.More() {
		key, err := decoder.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key.(string))
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			t.Fatal(err)
		}
	}
	return keys
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

// ---- Routes (docs/api.md) -----------------------------------------------------------------------

func TestCRUDRoundTrip(t *testing.T) {
	ts := newTestServer(t)

	w := ts.do("POST", "/api/users", userJSON("Ann", "ann@example.com"), join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusCreated)
	if got, want := w.Body.String(), userRepresentation(1, "Ann", "ann@example.com"); got != want {
		t.Errorf("201 body %s, want %s (id, name, email in that order)", got, want)
	}

	w = ts.do("GET", "/api/users/1", "", asReader...)
	wantStatus(t, w, http.StatusOK)
	wantHeader(t, w.Header(), "Content-Type", "application/json")
	if got, want := w.Body.String(), userRepresentation(1, "Ann", "ann@example.com"); got != want {
		t.Errorf("GET body %s, want %s", got, want)
	}

	w = ts.do("PUT", "/api/users/1", userJSON("Ann Lee", "ann.lee@example.com"), join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusOK)
	if got, want := w.Body.String(), userRepresentation(1, "Ann Lee", "ann.lee@example.com"); got != want {
		t.Errorf("PUT body %s, want %s", got, want)
	}

	w = ts.do("PATCH", "/api/users/1", `{"name":"Ann Smith"}`, join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusOK)
	if got, want := w.Body.String(), userRepresentation(1, "Ann Smith", "ann.lee@example.com"); got != want {
		t.Errorf("PATCH body %s, want %s: a merge patch keeps the fields it does not name", got, want)
	}

	w = ts.do("DELETE", "/api/users/1", "", asWriter...)
	wantStatus(t, w, http.StatusNoContent)
	wantNoBody(t, w)

	wantError(t, ts.do("GET", "/api/users/1", "", asReader...), http.StatusNotFound)
	// DELETE again: 404, and the state is the same as after the first (DELETE stays idempotent).
	wantError(t, ts.do("DELETE", "/api/users/1", "", asWriter...), http.StatusNotFound)
}

func TestWriteTokenMayAlsoRead(t *testing.T) {
	ts := withAnnAndBob(t)
	wantStatus(t, ts.do("GET", "/api/users", "", asWriter...), http.StatusOK)
	wantStatus(t, ts.do("GET", "/api/users/1", "", asWriter...), http.StatusOK)
}

func TestPutOfAMissingUserIs404NotACreate(t *testing.T) {
	ts := withAnnAndBob(t)
	wantError(t, ts.do("PUT", "/api/users/3", userJSON("Carol", "carol@example.com"), join(asWriter, asJSON)...), http.StatusNotFound)
	wantError(t, ts.do("PATCH", "/api/users/3", `{"name":"Carol"}`, join(asWriter, asJSON)...), http.StatusNotFound)
	if body, _ := ts.list(t, ""); len(body.Data) != 2 {
		t.Errorf("PUT created a user: %v", body.Data)
	}
}

func TestIDsAreNeverReused(t *testing.T) {
	ts := newTestServer(t)
	first := ts.create(t, "Ann", "ann@example.com")
	second := ts.create(t, "Bob", "bob@example.com")
	for _, u := range []user{second, first} { // the highest id too
		wantStatus(t, ts.do("DELETE", userPath(u.ID), "", asWriter...), http.StatusNoContent)
	}
	again := ts.create(t, "Ann", "ann@example.com")
	if again.ID <= second.ID {
		t.Errorf("a new user got id %d after ids up to %d were deleted: ids must never be reused", again.ID, second.ID)
	}
}

func TestPathsNotInTheTableAre404JSON(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, path := range []string{"/getUsers", "/api/getUsers", "/api/users/", "/api/products", "/api/users/1/orders",
		"/api/users/1/", "/api/v1/users", "/api", "/api/", "/healthz/"} {
		t.Run(path, func(t *testing.T) {
			w := ts.do("GET", path, "", asReader...)
			wantError(t, w, http.StatusNotFound)
		})
	}
}

// The id is a positive integer in canonical decimal: anything else names no resource.
func TestNonCanonicalIDNamesNoResource(t *testing.T) {
	ts := newTestServer(t)
	for i := 0; i < 7; i++ {
		ts.create(t, fmt.Sprint("User ", i+1), fmt.Sprintf("user%d@example.com", i+1))
	}
	wantStatus(t, ts.do("GET", "/api/users/7", "", asReader...), http.StatusOK)
	for _, id := range []string{"07", "+7", "7.0", "-7", "0", "7e0", "0x7", "abc", "9223372036854775808", "99999999999999999999"} {
		t.Run(id, func(t *testing.T) {
			path := "/api/users/" + url.PathEscape(id)
			wantError(t, ts.do("GET", path, "", asReader...), http.StatusNotFound)
			wantError(t, ts.do("PUT", path, userJSON("X", "x@example.com"), join(asWriter, asJSON)...), http.StatusNotFound)
			wantError(t, ts.do("DELETE", path, "", asWriter...), http.StatusNotFound)
			wantError(t, ts.do("OPTIONS", path, ""), http.StatusNotFound)
		})
	}
	// The largest int64 is canonical: it names a user that does not exist.
	wantStatus(t, ts.do("DELETE", "/api/users/9223372036854775807", "", asReader...), http.StatusForbidden)
}

func TestUnsupportedMethodIs405WithTheRoutesAllow(t *testing.T) {
	collection := []string{"GET", "HEAD", "POST", "OPTIONS"}
	oneUser := []string{"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"}
	tests := []struct {
		method, path string
		allow        []string
	}{
		{"DELETE", "/api/users", collection},
		{"PUT", "/api/users", collection},
		{"PATCH", "/api/users", collection},
		{"TRACE", "/api/users", collection},
		{"POST", "/api/users/7", oneUser},
		{"POST", "/api/users/1", oneUser},
		{"POST", "/api/users/abc", oneUser}, // the path's shape does not take POST: 405 before the id is judged
		{"CONNECT", "/api/users/1", oneUser},
		{"POST", "/healthz", []string{"GET", "HEAD", "OPTIONS"}},
	}
	ts := withAnnAndBob(t)
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			w := ts.do(tt.method, tt.path, userJSON("Carol", "carol@example.com"), join(asWriter, asJSON)...)
			wantError(t, w, http.StatusMethodNotAllowed, tt.method)
			wantHeaderSet(t, w.Header(), "Allow", tt.allow...)
		})
	}
}

func TestOptionsIs204WithAllowAndAcceptHeaders(t *testing.T) {
	ts := withAnnAndBob(t)

	w := ts.do("OPTIONS", "/api/users", "")
	wantStatus(t, w, http.StatusNoContent)
	wantNoBody(t, w)
	wantHeaderSet(t, w.Header(), "Allow", "GET", "HEAD", "POST", "OPTIONS")
	wantHeaderSet(t, w.Header(), "Accept-Post", "application/json")
	if w.Header().Get("Accept-Patch") != "" {
		t.Errorf("the collection takes no PATCH, yet Accept-Patch = %q", w.Header().Get("Accept-Patch"))
	}

	w = ts.do("OPTIONS", "/api/users/7", "") // no such user: OPTIONS only tells what the path takes
	wantStatus(t, w, http.StatusNoContent)
	wantNoBody(t, w)
	wantHeaderSet(t, w.Header(), "Allow", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS")
	wantHeaderSet(t, w.Header(), "Accept-Patch", "application/json", "application/merge-patch+json")
	if w.Header().Get("Accept-Post") != "" {
		t.Errorf("a user takes no POST, yet Accept-Post = %q", w.Header().Get("Accept-Post"))
	}

	w = ts.do("OPTIONS", "/healthz", "")
	wantStatus(t, w, http.StatusNoContent)
	wantHeaderSet(t, w.Header(), "Allow", "GET", "HEAD", "OPTIONS")
}

func TestOptionsIgnoresAuthorization(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, auth := range [][]string{nil, asReader, asWriter, {"Authorization", "Bearer no-such-token"},
		{"Authorization", "Basic YTpi"}, {"Authorization", "Bearer bad token!"}} {
		for _, path := range []string{"/api/users", "/api/users/1"} {
			w := ts.do("OPTIONS", path, "", auth...)
			if w.Code != http.StatusNoContent || w.Header().Get("WWW-Authenticate") != "" {
				t.Errorf("OPTIONS %s with %q: status %d, WWW-Authenticate %q; want 204 and no challenge",
					path, auth, w.Code, w.Header().Get("WWW-Authenticate"))
			}
		}
	}
	wantError(t, ts.do("OPTIONS", "/api/products", "", "Authorization", "Bearer no-such-token"), http.StatusNotFound)
}

func TestQueryOnAnyRouteButTheListIs400NamingIt(t *testing.T) {
	tests := []struct{ method, target, body string }{
		{"GET", "/api/users/1?fields=name", ""},
		{"HEAD", "/api/users/1?fields=name", ""},
		{"GET", "/api/users/9?fields=name", ""}, // the request itself is judged before the stored state
		{"DELETE", "/api/users/1?fields=name", ""},
		{"PUT", "/api/users/1?fields=name", userJSON("Ann", "ann@example.com")},
		{"PATCH", "/api/users/1?fields=name", `{"name":"Ann"}`},
		{"POST", "/api/users?fields=name", userJSON("Carol", "carol@example.com")},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			ts := withAnnAndBob(t)
			wantError(t, ts.do(tt.method, tt.target, tt.body, join(asWriter, asJSON)...), http.StatusBadRequest, `"fields"`)
			if body, _ := ts.list(t, ""); len(body.Data) != 2 || body.Data[0].Name != "Ann" {
				t.Errorf("the refused request changed the store: %+v", body.Data)
			}
		})
	}
}

// A path not in clean form is redirected by ServeMux (301 up to Go 1.25, 307 from 1.26), but only
// after authentication: an anonymous caller learns nothing about /api/.
func TestUncleanAPIPathIsRedirectedAfterAuthentication(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, path := range []string{"/api//users", "/api/./users", "/api/x/../users"} {
		wantError(t, ts.do("GET", path, ""), http.StatusUnauthorized)
		w := ts.do("GET", path, "", asReader...)
		if w.Code != http.StatusMovedPermanently && w.Code != http.StatusTemporaryRedirect {
			t.Errorf("GET %s: status %d, want a redirect", path, w.Code)
		}
		if loc := w.Header().Get("Location"); loc != "/api/users" {
			t.Errorf("GET %s: Location %q, want /api/users", path, loc)
		}
	}
}

func TestBodyOfGetAndDeleteIsIgnored(t *testing.T) {
	ts := withAnnAndBob(t)
	wantStatus(t, ts.do("GET", "/api/users/1", "{not json", join(asReader, asJSON)...), http.StatusOK)
	wantStatus(t, ts.do("GET", "/api/users", `{"page":2}`, asReader...), http.StatusOK)
	wantStatus(t, ts.do("DELETE", "/api/users/1", "\xff\xfe garbage", join(asWriter, []string{"Content-Type", "text/plain"})...),
		http.StatusNoContent)
	wantStatus(t, ts.do("OPTIONS", "/api/users", "garbage"), http.StatusNoContent)
}

// ---- The order of the checks (docs/api.md) ------------------------------------------------------

func TestRequestsAreJudgedInTheSpecsOrder(t *testing.T) {
	huge := `{"name":"Ann","email":"ann@example.com"}` + strings.Repeat(" ", 2<<20)
	noToken := []string(nil)
	textPlain := []string{"Content-Type", "text/plain"}
	stale := []string{"If-Match", `"stale"`}
	tests := []struct {
		name         string
		method, path string
		body         string
		headers      []string
		want         int
	}{
		{"401 before 404 for an unknown path", "GET", "/api/products", "", noToken, 401},
		{"401 before 404 for a non-canonical id", "GET", "/api/users/abc", "", noToken, 401},
		{"401 before 405", "DELETE", "/api/users", "", noToken, 401},
		{"401 before 415", "POST", "/api/users", "x", join(noToken, textPlain), 401},
		{"with a token, an unknown path is 404", "GET", "/api/products", "", asReader, 404},
		{"405 when the path's shape does not take the method", "POST", "/api/users/abc", "", asWriter, 405},
		{"404 for a non-canonical id the shape takes", "GET", "/api/users/abc", "", asReader, 404},
		{"405 before 403: read token, DELETE on the collection", "DELETE", "/api/users", "", asReader, 405},
		{"404 before 403: read token, DELETE of a non-canonical id", "DELETE", "/api/users/abc", "", asReader, 404},
		{"403 before 404: read token, DELETE of a missing user", "DELETE", "/api/users/999", "", asReader, 403},
		{"403 before 415", "POST", "/api/users", "x", join(asReader, textPlain), 403},
		{"403 before 412", "PUT", "/api/users/1", userJSON("A", "a@example.com"), join(asReader, asJSON, stale), 403},
		{"415 before 413", "POST", "/api/users", huge, join(asWriter, textPlain), 415},
		{"413 before 400", "POST", "/api/users", huge + "garbage", join(asWriter, asJSON), 413},
		{"400 for the body before 404 for the user", "PUT", "/api/users/999", `{"name":5}`, join(asWriter, asJSON), 400},
		{"400 for the query before 404 for the user", "GET", "/api/users/999?x=1", "", asReader, 400},
		{"404 before 412", "PUT", "/api/users/999", userJSON("A", "a@example.com"), join(asWriter, asJSON, stale), 404},
		{"404 before 412 on DELETE", "DELETE", "/api/users/999", "", join(asWriter, stale), 404},
		{"400 for the body beats 412", "PUT", "/api/users/1", `{"name":"Ann"}`, join(asWriter, asJSON, stale), 400},
		{"412 before 409", "PUT", "/api/users/1", userJSON("Ann", "bob@example.com"), join(asWriter, asJSON, stale), 412},
		{"404 before 304", "GET", "/api/users/999", "", join(asReader, []string{"If-None-Match", "*"}), 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do(tt.method, tt.path, tt.body, tt.headers...)
			wantError(t, w, tt.want)
		})
	}
}

// ---- Authentication (docs/api.md) ---------------------------------------------------------------

func TestAuthenticationChallenges(t *testing.T) {
	const (
		plain        = `Bearer realm="users"`
		invalidToken = `Bearer realm="users", error="invalid_token"`
	)
	tests := []struct {
		name          string
		authorization []string // each is one Authorization header line
		challenge     string
	}{
		{"no Authorization header", nil, plain},
		{"another scheme", []string{"Basic dGVzdDp0ZXN0"}, plain},
		{"a blank header", []string{"   "}, plain},
		{"Bearer without a token", []string{"Bearer"}, invalidToken},
		{"Bearer and a space but no token", []string{"Bearer "}, invalidToken},
		{"an unknown token", []string{"Bearer no-such-token"}, invalidToken},
		{"a token with characters outside b64token", []string{"Bearer tok!en"}, invalidToken},
		{"something after the token", []string{"Bearer " + readToken + " extra"}, invalidToken},
		{"a known token in a prefix of what is sent", []string{"Bearer " + readToken + "x"}, invalidToken},
		{"two Authorization headers", []string{"Bearer " + readToken, "Bearer " + readToken}, invalidToken},
		{"two Authorization headers, the first empty", []string{"", "Bearer " + readToken}, invalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			var headers []string
			for _, value := range tt.authorization {
				headers = append(headers, "Authorization", value)
			}
			w := ts.do("GET", "/api/users", "", headers...)
			message, _ := wantError(t, w, http.StatusUnauthorized)
			wantHeader(t, w.Header(), "WWW-Authenticate", tt.challenge)
			if strings.Contains(message, readToken) || strings.Contains(message, "no-such-token") {
				t.Errorf("the message %q repeats the token", message)
			}
		})
	}
}

func TestBearerSchemeIsCaseInsensitiveAndTakesSeveralSpaces(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, value := range []string{"Bearer " + readToken, "bearer " + readToken, "BEARER " + readToken, "Bearer    " + readToken} {
		if w := ts.do("GET", "/api/users", "", "Authorization", value); w.Code != http.StatusOK {
			t.Errorf("Authorization %q: status %d, want 200", value, w.Code)
		}
	}
}

func TestTokensWithTheFullB64TokenAlphabetAreAccepted(t *testing.T) {
	ts := newTestServer(t)
	token := "Az09-._~+/=="
	tokenSet, err := parseTokens(token + ":read")
	if err != nil {
		t.Fatal(err)
	}
	ts.tokens = tokenSet
	ts.build()
	wantStatus(t, ts.do("GET", "/api/users", "", "Authorization", "Bearer "+token), http.StatusOK)
}

func TestReadTokenOnAWriteRouteIs403InsufficientScope(t *testing.T) {
	tests := []struct{ method, path, body string }{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com")},
		{"PUT", "/api/users/1", userJSON("Ann", "ann@example.com")},
		{"PATCH", "/api/users/1", `{"name":"Ann"}`},
		{"DELETE", "/api/users/1", ""},
		{"DELETE", "/api/users/999", ""}, // not 404: a caller without permission learns nothing
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			ts := withAnnAndBob(t)
			before, _ := ts.list(t, "")
			w := ts.do(tt.method, tt.path, tt.body, join(asReader, asJSON)...)
			wantError(t, w, http.StatusForbidden)
			wantHeader(t, w.Header(), "WWW-Authenticate", `Bearer realm="users", error="insufficient_scope"`)
			if after, _ := ts.list(t, ""); fmt.Sprint(after.Data) != fmt.Sprint(before.Data) {
				t.Errorf("a refused write changed the store: %v", after.Data)
			}
		})
	}
}

// ---- Request bodies (docs/api.md) ---------------------------------------------------------------

const oneMiB = 1 << 20 // 1,048,576 bytes: the largest body the API reads

func TestContentTypeIsJudgedFirst(t *testing.T) {
	valid := userJSON("Carol", "carol@example.com")
	tests := []struct {
		name         string
		method, path string
		contentType  []string // nil: no Content-Type header
		want         int
		acceptHeader string // the header that names what the method takes, "" for PUT
	}{
		{"POST without Content-Type", "POST", "/api/users", nil, 415, "Accept-Post"},
		{"POST text/plain", "POST", "/api/users", []string{"text/plain"}, 415, "Accept-Post"},
		{"POST text/json", "POST", "/api/users", []string{"text/json"}, 415, "Accept-Post"},
		{"POST a malformed media type", "POST", "/api/users", []string{"application/json;;"}, 415, "Accept-Post"},
		{"POST charset latin1", "POST", "/api/users", []string{"application/json; charset=iso-8859-1"}, 415, "Accept-Post"},
		{"POST charset utf-16", "POST", "/api/users", []string{"application/json; charset=utf-16"}, 415, "Accept-Post"},
		{"POST merge-patch is only for PATCH", "POST", "/api/users", []string{"application/merge-patch+json"}, 415, "Accept-Post"},
		{"POST application/json", "POST", "/api/users", []string{"application/json"}, 201, ""},
		{"POST media types compare case-insensitively", "POST", "/api/users", []string{"Application/JSON"}, 201, ""},
		{"POST charset utf-8", "POST", "/api/users", []string{"application/json; charset=utf-8"}, 201, ""},
		{"POST charset UTF-8 quoted", "POST", "/api/users", []string{`application/json; charset="UTF-8"`}, 201, ""},
		{"PUT text/plain", "PUT", "/api/users/1", []string{"text/plain"}, 415, ""},
		{"PUT merge-patch", "PUT", "/api/users/1", []string{"application/merge-patch+json"}, 415, ""},
		{"PUT charset latin1", "PUT", "/api/users/1", []string{"application/json; charset=latin1"}, 415, ""},
		{"PUT application/json", "PUT", "/api/users/1", []string{"application/json"}, 200, ""},
		{"PATCH text/plain", "PATCH", "/api/users/1", []string{"text/plain"}, 415, "Accept-Patch"},
		{"PATCH without Content-Type", "PATCH", "/api/users/1", nil, 415, "Accept-Patch"},
		{"PATCH charset latin1", "PATCH", "/api/users/1", []string{"application/merge-patch+json; charset=latin1"}, 415, "Accept-Patch"},
		{"PATCH application/json", "PATCH", "/api/users/1", []string{"application/json"}, 200, ""},
		{"PATCH merge-patch", "PATCH", "/api/users/1", []string{"application/merge-patch+json"}, 200, ""},
		{"PATCH merge-patch utf-8", "PATCH", "/api/users/1", []string{"application/merge-patch+json; charset=utf-8"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			headers := asWriter
			for _, ct := range tt.contentType {
				headers = join(headers, []string{"Content-Type", ct})
			}
			w := ts.do(tt.method, tt.path, valid, headers...)
			if tt.want != 415 {
				wantStatus(t, w, tt.want)
				return
			}
			wantError(t, w, http.StatusUnsupportedMediaType, "application/json")
			switch tt.acceptHeader {
			case "Accept-Post":
				wantHeaderSet(t, w.Header(), "Accept-Post", "application/json")
			case "Accept-Patch":
				wantHeaderSet(t, w.Header(), "Accept-Patch", "application/json", "application/merge-patch+json")
			}
			for _, name := range []string{"Accept-Post", "Accept-Patch"} {
				if name != tt.acceptHeader && w.Header().Get(name) != "" {
					t.Errorf("%s on a 415 of %s: %q", name, tt.method, w.Header().Get(name))
				}
			}
		})
	}
}

// A coded body (gzip, say) is refused like any media type the method does not take: POST still
// names what it takes in Accept-Post and PATCH in Accept-Patch (docs/api.md, "Request bodies", rule
// 1).
func TestBodyWithAContentEncodingIs415(t *testing.T) {
	tests := []struct {
		method, path, body string
		encoding           string
		acceptHeader       string
		accepted           []string
	}{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com"), "gzip", "Accept-Post", []string{"application/json"}},
		{"PATCH", "/api/users/1", `{"name":"Ann Lee"}`, "br", "Accept-Patch", []string{"application/json", "application/merge-patch+json"}},
		{"PUT", "/api/users/1", userJSON("Ann Lee", "ann@example.com"), "identity", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.encoding, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do(tt.method, tt.path, tt.body, join(asWriter, asJSON, []string{"Content-Encoding", tt.encoding})...)
			wantError(t, w, http.StatusUnsupportedMediaType, "Content-Encoding")
			if tt.acceptHeader != "" {
				wantHeaderSet(t, w.Header(), tt.acceptHeader, tt.accepted...)
			}
		})
	}
}

// The body is read whole before it is judged, so its size decides before its content does.
func TestBodyOfExactly1MiBIsReadAndOneByteMoreIs413(t *testing.T) {
	padded := func(size int, object string) string { return object + strings.Repeat(" ", size-len(object)) }
	tests := []struct {
		name          string
		method, path  string
		body          string
		unknownLength bool // sent without Content-Length, as a chunked body is
		want          int
	}{
		{"POST of exactly 1 MiB", "POST", "/api/users", padded(oneMiB, userJSON("Carol", "carol@example.com")), false, 201},
		{"POST of exactly 1 MiB, length unknown", "POST", "/api/users", padded(oneMiB, userJSON("Carol", "carol@example.com")), true, 201},
		{"POST of 1 MiB + 1, valid JSON", "POST", "/api/users", padded(oneMiB+1, userJSON("Carol", "carol@example.com")), false, 413},
		{"POST of 1 MiB + 1, length unknown", "POST", "/api/users", padded(oneMiB+1, userJSON("Carol", "carol@example.com")), true, 413},
		{"POST of 1 MiB + 1 that is not JSON", "POST", "/api/users", strings.Repeat("x", oneMiB+1), true, 413},
		{"POST of 1 MiB + 1 that is broken early", "POST", "/api/users", padded(oneMiB+1, `{"name":`), true, 413},
		{"PUT of 1 MiB + 1", "PUT", "/api/users/1", padded(oneMiB+1, userJSON("Ann", "ann@example.com")), true, 413},
		{"PATCH of 1 MiB + 1", "PATCH", "/api/users/1", padded(oneMiB+1, `{"name":"Ann"}`), true, 413},
		{"PATCH of exactly 1 MiB", "PATCH", "/api/users/1", padded(oneMiB, `{"name":"Ann Lee"}`), true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			if tt.unknownLength {
				r.ContentLength = -1
				r.Body = io.NopCloser(strings.NewReader(tt.body))
			}
			w := ts.serve(r)
			if tt.want == http.StatusRequestEntityTooLarge {
				wantError(t, w, tt.want, "1 MiB")
				if body, _ := ts.list(t, ""); len(body.Data) != 2 || body.Data[0].Name != "Ann" {
					t.Errorf("a refused body changed the store: %+v", body.Data)
				}
				return
			}
			wantStatus(t, w, tt.want)
		})
	}
}

// Each way a body can fail to be one JSON object has its own 400 and message (docs/api.md, "Request
// bodies", rule 3).
func TestMalformedBodyIs400WithAMessageNamingTheProblem(t *testing.T) {
	valid := `{"name":"Carol","email":"carol@example.com"}`
	tests := []struct {
		name     string
		body     string
		mentions []string
		field    string // the member the fields map names, for a value of the wrong type
	}{
		{"empty body", "", []string{"empty"}, ""},
		{"only white space", " \r\n\t ", []string{"empty"}, ""},
		{"byte-order mark", "\uFEFF" + valid, []string{"byte-order mark"}, ""},
		{"invalid UTF-8 in a string", `{"name":"Car` + "\xff" + `ol","email":"carol@example.com"}`, []string{"UTF-8"}, ""},
		{"invalid UTF-8 outside strings", valid + "\xc3", []string{"UTF-8"}, ""},
		{"a syntax error says where", `{"name":"Carol",,"email":"carol@example.com"}`, []string{"not valid JSON", "at byte"}, ""},
		{"a missing colon says where", `{"name" "Carol"}`, []string{"not valid JSON", "at byte"}, ""},
		{"a cut-off object", `{"name":"Carol","email":"carol@exa`, []string{"not valid JSON"}, ""},
		{"a single quote", `{'name':'Carol'}`, []string{"not valid JSON"}, ""},
		{"a number for name", `{"name":5,"email":"carol@example.com"}`, []string{"name", "string"}, "name"},
		{"an object for email", `{"name":"Carol","email":{"address":"carol@example.com"}}`, []string{"email", "string"}, "email"},
		{"a boolean for email", `{"name":"Carol","email":true}`, []string{"email", "string"}, "email"},
		{"an array for name", `{"name":["Carol"],"email":"carol@example.com"}`, []string{"name", "string"}, "name"},
		{"an unknown field is named", `{"name":"Carol","email":"carol@example.com","age":36}`, []string{`"age"`}, ""},
		{"member names are case-sensitive", `{"Name":"Carol","email":"carol@example.com"}`, []string{`"Name"`}, ""},
		{"a member given twice", `{"name":"Carol","name":"Caroline","email":"carol@example.com"}`, []string{`"name"`, "twice"}, ""},
		{"a member given twice, null first", `{"email":null,"name":"Carol","email":"carol@example.com"}`, []string{`"email"`, "twice"}, ""},
		{"null", `null`, []string{"JSON object"}, ""},
		{"an array", `[` + valid + `]`, []string{"JSON object"}, ""},
		{"a string", `"Carol"`, []string{"JSON object"}, ""},
		{"a number", `42`, []string{"JSON object"}, ""},
		{"a second object after the first", valid + ` {}`, []string{"nothing after"}, ""},
		{"text after the object", valid + `x`, []string{"nothing after"}, ""},
		{"a comma after the object", valid + `,`, []string{"nothing after"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do("POST", "/api/users", tt.body, join(asWriter, asJSON)...)
			message, fields := wantError(t, w, http.StatusBadRequest, tt.mentions...)
			if tt.field != "" && (len(fields) != 1 || fields[tt.field] == "") {
				t.Errorf("fields = %v, want only %q: a value of the wrong type is reported on its own", fields, tt.field)
			}
			if tt.field == "" && fields != nil {
				t.Errorf("fields = %v, want none for a body that is not a user", fields)
			}
			for _, leak := range []string{"Go value", "struct", "main.", "json: "} {
				if strings.Contains(message, leak) {
					t.Errorf("message %q leaks Go's wording %q", message, leak)
				}
			}
		})
	}
}

func TestWhiteSpaceAroundTheObjectIsFine(t *testing.T) {
	ts := newTestServer(t)
	w := ts.do("POST", "/api/users", " \r\n\t"+userJSON("Carol", "carol@example.com")+"\n\n \t", join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusCreated)
}

// A wrong type stops decoding, so only that field is reported, even when another field also fails.
func TestWrongTypeIsReportedOnItsOwn(t *testing.T) {
	ts := newTestServer(t)
	w := ts.do("POST", "/api/users", `{"name":5,"email":"not an address"}`, join(asWriter, asJSON)...)
	message, fields := wantError(t, w, http.StatusBadRequest, "name")
	if len(fields) != 1 || fields["name"] == "" || strings.Contains(message, "email") {
		t.Errorf("message %q, fields %v: want the wrong type of name alone", message, fields)
	}
}

// id is the server's to give: a client may send back only the id of the path (docs/api.md, "Request
// bodies", rule 4).
func TestIDInTheBody(t *testing.T) {
	tests := []struct {
		name         string
		method, path string
		body         string
		want         int
	}{
		{"POST with an id", "POST", "/api/users", `{"id":3,"name":"Carol","email":"carol@example.com"}`, 400},
		{"POST with id null", "POST", "/api/users", `{"id":null,"name":"Carol","email":"carol@example.com"}`, 400},
		{"PUT with the path's id", "PUT", "/api/users/1", `{"id":1,"name":"Ann Lee","email":"ann@example.com"}`, 200},
		{"PUT with the path's id as 1.0", "PUT", "/api/users/1", `{"id":1.0,"name":"Ann Lee","email":"ann@example.com"}`, 200},
		{"PUT with another id", "PUT", "/api/users/1", `{"id":2,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with id null", "PUT", "/api/users/1", `{"id":null,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with the id as a string", "PUT", "/api/users/1", `{"id":"1","name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with id 1.5", "PUT", "/api/users/1", `{"id":1.5,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PUT with id given twice", "PUT", "/api/users/1", `{"id":1,"id":1,"name":"Ann Lee","email":"ann@example.com"}`, 400},
		{"PATCH with the path's id", "PATCH", "/api/users/2", `{"id":2,"name":"Bob Lee"}`, 200},
		{"PATCH with another id", "PATCH", "/api/users/2", `{"id":1,"name":"Bob Lee"}`, 400},
		{"PATCH with id null", "PATCH", "/api/users/2", `{"id":null,"name":"Bob Lee"}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do(tt.method, tt.path, tt.body, join(asWriter, asJSON)...)
			if tt.want == http.StatusBadRequest {
				wantError(t, w, tt.want, "id")
				return
			}
			wantStatus(t, w, tt.want)
			var got user
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || userPath(got.ID) != tt.path {
				t.Errorf("body %s is not the user at %s", w.Body, tt.path)
			}
		})
	}
}

// The field rules of docs/api.md, "Request bodies", step 5, on POST: what is stored, or the 400 and
// its fields.
func TestFieldRules(t *testing.T) {
	email254 := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." +
		strings.Repeat("d", 57) + ".com"
	if len(email254) != 254 {
		t.Fatalf("the 254-byte address has %d bytes", len(email254))
	}
	tests := []struct {
		name               string
		body               string
		wantName           string // what is stored, when the body passes
		wantEmail          string
		wantFields         []string // the fields that fail, when it does not
		mentions           []string
		wantMessageInOrder bool // name's problem before email's
	}{
		{name: "name and email are trimmed", body: userJSON("  Carol Day \t", " carol@example.com\n"),
			wantName: "Carol Day", wantEmail: "carol@example.com"},
		{name: "Unicode white space is trimmed", body: userJSON("\u00a0\u3000Carol\u2003", "\u2009carol@example.com\u00a0"),
			wantName: "Carol", wantEmail: "carol@example.com"},
		{name: "white space inside a name is kept", body: userJSON("Carol  Ann Day", "carol@example.com"),
			wantName: "Carol  Ann Day", wantEmail: "carol@example.com"},
		{name: "a name of 100 code points", body: userJSON(strings.Repeat("é", 100), "carol@example.com"),
			wantName: strings.Repeat("é", 100), wantEmail: "carol@example.com"},
		{name: "a name of 100 code points once trimmed", body: userJSON("  "+strings.Repeat("x", 100)+"  ", "carol@example.com"),
			wantName: strings.Repeat("x", 100), wantEmail: "carol@example.com"},
		{name: "a name of 101 code points", body: userJSON(strings.Repeat("é", 101), "carol@example.com"),
			wantFields: []string{"name"}, mentions: []string{"100"}},
		{name: "an empty name", body: userJSON("", "carol@example.com"), wantFields: []string{"name"}},
		{name: "a name of white space only", body: userJSON(" \t\u00a0", "carol@example.com"), wantFields: []string{"name"}},
		{name: "a name with a control character", body: `{"name":"Car\u0007ol","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name with a tab inside", body: `{"name":"Carol\tDay","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name with a line break inside", body: `{"name":"Carol\nDay","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name with DEL", body: `{"name":"Carol\u007f","email":"carol@example.com"}`,
			wantFields: []string{"name"}, mentions: []string{"control"}},
		{name: "a name without name", body: `{"email":"carol@example.com"}`, wantFields: []string{"name"}, mentions: []string{"required"}},
		{name: "name null counts as absent", body: `{"name":null,"email":"carol@example.com"}`, wantFields: []string{"name"}},
		{name: "an email of 254 bytes", body: userJSON("Carol", email254), wantName: "Carol", wantEmail: email254},
		{name: "an email of 254 bytes once trimmed", body: userJSON("Carol", "  "+email254+"  "), wantName: "Carol", wantEmail: email254},
		{name: "an email of 255 bytes", body: userJSON("Carol", "a"+email254), wantFields: []string{"email"}, mentions: []string{"254"}},
		{name: "an email keeps its case", body: userJSON("Carol", "Carol.Day@Example.COM"), wantName: "Carol", wantEmail: "Carol.Day@Example.COM"},
		{name: "an email without @", body: userJSON("Carol", "carol"), wantFields: []string{"email"}},
		{name: "an email with a display name", body: userJSON("Carol", "Carol <carol@example.com>"), wantFields: []string{"email"}},
		{name: "an email in angle brackets", body: userJSON("Carol", "<carol@example.com>"), wantFields: []string{"email"}},
		{name: "an email with a domain in brackets", body: userJSON("Carol", "carol@[192.0.2.1]"), wantFields: []string{"email"}},
		{name: "two addresses", body: userJSON("Carol", "carol@example.com, ann@example.com"), wantFields: []string{"email"}},
		{name: "an empty email", body: userJSON("Carol", ""), wantFields: []string{"email"}},
		{name: "a body without email", body: `{"name":"Carol"}`, wantFields: []string{"email"}, mentions: []string{"required"}},
		{name: "email null counts as absent", body: `{"name":"Carol","email":null}`, wantFields: []string{"email"}},
		{name: "an empty object", body: `{}`, wantFields: []string{"name", "email"}, wantMessageInOrder: true},
		{name: "both fail, each reported, name first", body: `{"email":"not an address","name":""}`,
			wantFields: []string{"name", "email"}, wantMessageInOrder: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			w := ts.do("POST", "/api/users", tt.body, join(asWriter, asJSON)...)
			if tt.wantFields == nil {
				wantStatus(t, w, http.StatusCreated)
				if got, want := w.Body.String(), userRepresentation(1, tt.wantName, tt.wantEmail); got != want {
					t.Errorf("stored %s, want %s", got, want)
				}
				return
			}
			message, fields := wantError(t, w, http.StatusBadRequest, tt.mentions...)
			if len(fields) != len(tt.wantFields) {
				t.Errorf("fields = %v, want problems with %v", fields, tt.wantFields)
			}
			for _, field := range tt.wantFields {
				problem := fields[field]
				if problem == "" || !strings.Contains(message, problem) || !strings.Contains(problem, field) {
					t.Errorf("fields[%q] = %q: want a problem that names the field and is part of the message %q", field, problem, message)
				}
			}
			if tt.wantMessageInOrder && strings.Index(message, fields["name"]) > strings.Index(message, fields["email"]) {
				t.Errorf("message %q: name's problem must come first", message)
			}
			if ts.store.count() != 0 {
				t.Error("a refused body created a user")
			}
		})
	}
}

func TestPutNeedsBothFields(t *testing.T) {
	for _, body := range []string{`{"name":"Ann Lee"}`, `{"email":"ann@example.com"}`, `{}`} {
		ts := withAnnAndBob(t)
		w := ts.do("PUT", "/api/users/1", body, join(asWriter, asJSON)...)
		_, fields := wantError(t, w, http.StatusBadRequest, "required")
		if len(fields) == 0 {
			t.Errorf("PUT %s: no fields in the 400", body)
		}
	}
}

func TestPutReplacesAndTrims(t *testing.T) {
	ts := withAnnAndBob(t)
	w := ts.do("PUT", "/api/users/1", userJSON(" Ann Lee ", " Ann.Lee@example.com "), join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusOK)
	if got, want := w.Body.String(), userRepresentation(1, "Ann Lee", "Ann.Lee@example.com"); got != want {
		t.Errorf("PUT stored %s, want %s", got, want)
	}
}

func TestPatchNeedsAtLeastOneFieldAndRefusesNull(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		want       int
		wantFields []string
		stored     string
	}{
		{"name only keeps the email", `{"name":" Ann Lee "}`, 200, nil, userRepresentation(1, "Ann Lee", "ann@example.com")},
		{"email only keeps the name", `{"email":"ann.lee@example.com"}`, 200, nil, userRepresentation(1, "Ann", "ann.lee@example.com")},
		{"both", `{"email":"al@example.com","name":"Al"}`, 200, nil, userRepresentation(1, "Al", "al@example.com")},
		{"an empty patch changes nothing: 400 without fields", `{}`, 400, nil, ""},
		{"name null cannot remove a required field", `{"name":null}`, 400, []string{"name"}, ""},
		{"email null cannot remove a required field", `{"email":null,"name":"Ann"}`, 400, []string{"email"}, ""},
		{"an empty name", `{"name":""}`, 400, []string{"name"}, ""},
		{"a bad email", `{"email":"Ann <ann@example.com>"}`, 400, []string{"email"}, ""},
		{"an unknown field", `{"nickname":"Annie"}`, 400, nil, ""},
		{"only the id changes nothing", `{"id":1}`, 400, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do("PATCH", "/api/users/1", tt.body, join(asWriter, []string{"Content-Type", "application/merge-patch+json"})...)
			if tt.want == http.StatusOK {
				wantStatus(t, w, http.StatusOK)
				if w.Body.String() != tt.stored {
					t.Errorf("PATCH stored %s, want %s", w.Body, tt.stored)
				}
				return
			}
			_, fields := wantError(t, w, tt.want)
			if len(fields) != len(tt.wantFields) {
				t.Errorf("fields = %v, want problems with %v", fields, tt.wantFields)
			}
			for _, field := range tt.wantFields {
				if fields[field] == "" {
					t.Errorf("fields = %v, want a problem with %s", fields, field)
				}
			}
		})
	}
}

// E-mail addresses are unique, compared case-insensitively (docs/api.md, "Request bodies", rule 6).
func TestDuplicateEmailIs409(t *testing.T) {
	tests := []struct {
		name         string
		method, path string
		body         string
		want         int
	}{
		{"create with a taken e-mail", "POST", "/api/users", userJSON("Ann 2", "ann@example.com"), 409},
		{"create with a taken e-mail in another case", "POST", "/api/users", userJSON("Ann 2", "ANN@Example.com"), 409},
		{"create with a taken e-mail and white space", "POST", "/api/users", userJSON("Ann 2", " ann@example.com "), 409},
		{"PUT to another user's e-mail", "PUT", "/api/users/2", userJSON("Bob", "Ann@example.com"), 409},
		{"PATCH to another user's e-mail", "PATCH", "/api/users/2", `{"email":"aNN@example.com"}`, 409},
		{"PUT of one's own e-mail in another case", "PUT", "/api/users/1", userJSON("Ann", "ANN@example.com"), 200},
		{"PATCH of one's own e-mail in another case", "PATCH", "/api/users/1", `{"email":"Ann@Example.com"}`, 200},
		{"PATCH of the name only", "PATCH", "/api/users/1", `{"name":"Ann Lee"}`, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := withAnnAndBob(t)
			w := ts.do(tt.method, tt.path, tt.body, join(asWriter, asJSON)...)
			if tt.want == http.StatusConflict {
				wantError(t, w, http.StatusConflict, "email")
				return
			}
			wantStatus(t, w, tt.want)
		})
	}
}

func TestEmailOfADeletedUserIsFreeAgain(t *testing.T) {
	ts := withAnnAndBob(t)
	wantStatus(t, ts.do("DELETE", "/api/users/1", "", asWriter...), http.StatusNoContent)
	ts.create(t, "Ann again", "ANN@example.com")
	// and an e-mail given up by an update is free too
	wantStatus(t, ts.do("PATCH", "/api/users/2", `{"email":"robert@example.com"}`, join(asWriter, asJSON)...), http.StatusOK)
	ts.create(t, "Bob again", "bob@example.com")
}

// ---- Responses (docs/api.md) --------------------------------------------------------------------

// exchange is one request and the status it must get, on a fresh server holding Ann (1) and Bob
// (2).
type exchange struct {
	name    string
	method  string
	path    string
	body    string
	headers []string
	setup   func(s *testServer) // makes the server fail, for 500 and 503
	status  int
}

func (e exchange) send(t *testing.T) *httptest.ResponseRecorder {
	t.Helper()
	ts := withAnnAndBob(t)
	if e.setup != nil {
		e.setup(ts)
		ts.build()
	}
	w := ts.do(e.method, e.path, e.body, e.headers...)
	wantStatus(t, w, e.status)
	return w
}

// diskFile is a journal's file that a test writes as a function: to make writes fail, or panic.
type diskFile func(p []byte) (int, error)

func (write diskFile) Write(p []byte) (int, error) { return write(p) }
func (diskFile) Sync() error                       { return nil }
func (diskFile) Truncate(int64) error              { return nil }
func (diskFile) Close() error                      { return nil }

// journalOn gives the server's store a journal on this file, as -data does, logging to the
// server's log.
func (s *testServer) journalOn(file journalFile) *journal {
	j := newJournal("users.jsonl", s.log, 1<<20)
	j.file, j.unlock = file, func() {}
	s.store.journal = j
	return j
}

// failingCommit makes every write fail as a full disk would, with an error the API did not foresee.
func failingCommit(s *testServer) {
	s.journalOn(diskFile(func([]byte) (int, error) { return 0, errors.New("disk on fire") }))
}

// brokenJournal gives the store a journal broken by an earlier failed write.
func brokenJournal(s *testServer) {
	s.journalOn(diskFile(func(p []byte) (int, error) { return len(p), nil })).failed.Store(true)
}

// observed wraps handler in the middleware that observes every request, logging to log.
func observed(log *slog.Logger, handler http.Handler) http.Handler {
	return (&api{log: log, requestIDPrefix: "test-"}).observe(handler)
}

// anAnswerOfEachKind lists a request for every status the service sends (docs/api.md, "Responses").
func anAnswerOfEachKind(t *testing.T) []exchange {
	probe := withAnnAndBob(t)
	userETag := probe.do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	listETag := probe.do("GET", "/api/users", "", asReader...).Header().Get("ETag")
	writeJSON := join(asWriter, asJSON)
	return []exchange{
		{name: "GET of a user", method: "GET", path: "/api/users/1", headers: asReader, status: 200},
		{name: "HEAD of a user", method: "HEAD", path: "/api/users/1", headers: asReader, status: 200},
		{name: "GET of the list", method: "GET", path: "/api/users", headers: asReader, status: 200},
		{name: "GET of a page", method: "GET", path: "/api/users?page=1&per_page=1", headers: asReader, status: 200},
		{name: "HEAD of the list", method: "HEAD", path: "/api/users", headers: asReader, status: 200},
		{name: "POST", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com"), headers: writeJSON, status: 201},
		{name: "PUT", method: "PUT", path: "/api/users/1", body: userJSON("Ann", "ann@example.com"), headers: writeJSON, status: 200},
		{name: "PATCH", method: "PATCH", path: "/api/users/1", body: `{"name":"Ann Lee"}`, headers: writeJSON, status: 200},
		{name: "DELETE", method: "DELETE", path: "/api/users/1", headers: asWriter, status: 204},
		{name: "OPTIONS of the collection", method: "OPTIONS", path: "/api/users", status: 204},
		{name: "OPTIONS of a user", method: "OPTIONS", path: "/api/users/1", headers: asReader, status: 204},
		{name: "GET of a user not modified", method: "GET", path: "/api/users/1", headers: join(asReader, []string{"If-None-Match", userETag}), status: 304},
		{name: "HEAD of a user not modified", method: "HEAD", path: "/api/users/1", headers: join(asReader, []string{"If-None-Match", userETag}), status: 304},
		{name: "GET of the list not modified", method: "GET", path: "/api/users", headers: join(asReader, []string{"If-None-Match", listETag}), status: 304},
		{name: "bad body", method: "POST", path: "/api/users", body: `{"name":""}`, headers: writeJSON, status: 400},
		{name: "bad query", method: "GET", path: "/api/users?page=0", headers: asReader, status: 400},
		{name: "no token", method: "GET", path: "/api/users", status: 401},
		{name: "unknown token", method: "GET", path: "/api/users", headers: []string{"Authorization", "Bearer nope"}, status: 401},
		{name: "read token writing", method: "DELETE", path: "/api/users/1", headers: asReader, status: 403},
		{name: "missing user", method: "GET", path: "/api/users/9", headers: asReader, status: 404},
		{name: "unknown /api/ path", method: "GET", path: "/api/products", headers: asReader, status: 404},
		{name: "method not allowed", method: "DELETE", path: "/api/users", headers: asWriter, status: 405},
		{name: "e-mail taken", method: "POST", path: "/api/users", body: userJSON("Ann", "ann@example.com"), headers: writeJSON, status: 409},
		{name: "stale If-Match", method: "DELETE", path: "/api/users/1", headers: join(asWriter, []string{"If-Match", `"stale"`}), status: 412},
		{name: "body too large", method: "POST", path: "/api/users", body: strings.Repeat(" ", oneMiB+1), headers: writeJSON, status: 413},
		{name: "not JSON", method: "POST", path: "/api/users", body: "name=Carol", headers: join(asWriter, []string{"Content-Type", "application/x-www-form-urlencoded"}), status: 415},
		{name: "a write that fails", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com"), headers: writeJSON, setup: failingCommit, status: 500},
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "healthz of a broken journal", method: "GET", path: "/healthz", setup: brokenJournal, status: 503},
		{name: "unknown path outside /api/", method: "GET", path: "/nowhere", status: 404},
		{name: "method not allowed outside /api/", method: "DELETE", path: "/healthz", status: 405},
	}
}

func TestEveryAnswerCarriesNosniffAndARequestID(t *testing.T) {
	for _, e := range anAnswerOfEachKind(t) {
		t.Run(e.name, func(t *testing.T) {
			w := e.send(t)
			wantHeader(t, w.Header(), "X-Content-Type-Options", "nosniff")
			if id := w.Header().Get("X-Request-Id"); !isRequestID(id) {
				t.Errorf("X-Request-Id = %q, want a fresh id", id)
			}
		})
	}
}

func TestAPIAnswersVaryOnAuthorization(t *testing.T) {
	for _, e := range anAnswerOfEachKind(t) {
		if !strings.HasPrefix(e.path, "/api/") {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			w := e.send(t)
			if !headerSet(w.Header(), "Vary")["Authorization"] {
				t.Errorf("Vary = %q, want Authorization: the answer depends on the token", w.Header().Values("Vary"))
			}
		})
	}
}

// Under /api/, GET and HEAD 200s and 304s may be cached if revalidated; nothing else may be stored.
func TestAPICacheControl(t *testing.T) {
	for _, e := range anAnswerOfEachKind(t) {
		if !strings.HasPrefix(e.path, "/api/") {
			continue
		}
		want := "no-store"
		if (e.method == "GET" || e.method == "HEAD") && (e.status == 200 || e.status == 304) {
			want = "private, no-cache"
		}
		t.Run(e.name, func(t *testing.T) {
			wantHeader(t, e.send(t).Header(), "Cache-Control", want)
		})
	}
}

// Every /api/ answer and every error is JSON; 204 and 304 have no body and no Content-Type.
func TestAnswersAreJSONBut204And304HaveNoBody(t *testing.T) {
	for _, e := range anAnswerOfEachKind(t) {
		t.Run(e.name, func(t *testing.T) {
			w := e.send(t)
			switch {
			case w.Code == http.StatusNoContent || w.Code == http.StatusNotModified:
				wantNoBody(t, w)
			case w.Code >= 400 && e.path != "/healthz": // /healthz answers 503 with its status
				errorBody(t, w)
			default:
				wantHeader(t, w.Header(), "Content-Type", "application/json")
				if !json.Valid(w.Body.Bytes()) {
					t.Errorf("body %q is not JSON", w.Body)
				}
			}
		})
	}
}

// Every body goes out with its Content-Length, never chunked: net/http counts the short ones
// (writeJSON leaves them to it), and the service counts a long list. Only a real connection shows
// it.
func TestEveryAnswerHasAContentLength(t *testing.T) {
	ts := newTestServer(t)
	for i := range 40 { // a list longer than net/http's 2 KiB buffer
		ts.create(t, fmt.Sprintf("User %d", i), fmt.Sprintf("user%d@example.com", i))
	}
	server := httptest.NewServer(ts.handler)
	defer server.Close()
	answers := []struct{ method, path, body string }{
		{"GET", "/api/users/1", ""},
		{"GET", "/api/users", ""},
		{"GET", "/api/users?per_page=2", ""},
		{"POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`},
		{"PATCH", "/api/users/2", `{"name":"Bob"}`},
		{"POST", "/api/users", `{"name":""}`},
		{"GET", "/api/users/999", ""},
		{"DELETE", "/api/users", ""},
		{"GET", "/healthz", ""},
		{"GET", "/openapi.json", ""},
	}
	for _, a := range answers {
		t.Run(a.method+" "+a.path, func(t *testing.T) {
			resp, body := sendTo(t, server.Client(), a.method, server.URL+a.path, a.body, join(asWriter, asJSON)...)
			if len(body) == 0 || resp.ContentLength != int64(len(body)) || resp.TransferEncoding != nil {
				t.Errorf("%d: Content-Length %d, transfer encoding %q, for a body of %d bytes",
					resp.StatusCode, resp.ContentLength, resp.TransferEncoding, len(body))
			}
		})
	}
}

// Accept is not negotiated: the API speaks JSON to every client and never answers 406.
func TestAcceptIsNotNegotiated(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, accept := range []string{"text/html", "application/xml", "image/png;q=1, */*;q=0"} {
		w := ts.do("GET", "/api/users/1", "", join(asReader, []string{"Accept", accept})...)
		wantStatus(t, w, http.StatusOK)
		wantHeader(t, w.Header(), "Content-Type", "application/json")
	}
}

func TestPostIs201WithLocationAndTheNewUsersETag(t *testing.T) {
	ts := withAnnAndBob(t)
	w := ts.do("POST", "/api/users", userJSON("Carol", "carol@example.com"), join(asWriter, asJSON)...)
	wantStatus(t, w, http.StatusCreated)
	wantHeader(t, w.Header(), "Location", "/api/users/3")
	got := ts.do("GET", "/api/users/3", "", asReader...)
	wantHeader(t, w.Header(), "ETag", got.Header().Get("ETag"))
	if w.Body.String() != got.Body.String() {
		t.Errorf("201 body %s, but the user reads %s", w.Body, got.Body)
	}
}

// The body of a PUT or PATCH answer is the stored representation, and its ETag that
// representation's, so a client can send If-Match next without reading first.
func TestPutAndPatchAnswerWithContentLocationAndTheNewETag(t *testing.T) {
	for _, tt := range []struct{ method, body string }{
		{"PUT", userJSON("Ann Lee", "ann.lee@example.com")},
		{"PATCH", `{"name":"Ann Lee"}`},
	} {
		t.Run(tt.method, func(t *testing.T) {
			ts := withAnnAndBob(t)
			before := ts.do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
			w := ts.do(tt.method, "/api/users/1", tt.body, join(asWriter, asJSON)...)
			wantStatus(t, w, http.StatusOK)
			wantHeader(t, w.Header(), "Content-Location", "/api/users/1")
			got := ts.do("GET", "/api/users/1", "", asReader...)
			wantHeader(t, w.Header(), "ETag", got.Header().Get("ETag"))
			if w.Header().Get("ETag") == before {
				t.Error("the ETag did not change with the representation")
			}
			if w.Body.String() != got.Body.String() {
				t.Errorf("%s answered %s, but the user reads %s", tt.method, w.Body, got.Body)
			}
			// The new ETag is good for the next conditional write.
			next := ts.do("PATCH", "/api/users/1", `{"name":"Ann Smith"}`, join(asWriter, asJSON, []string{"If-Match", w.Header().Get("ETag")})...)
			wantStatus(t, next, http.StatusOK)
		})
	}
}

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

func TestRequestIDIsTheClientsWhenSafeOtherwiseFresh(t *testing.T) {
	sixtyFour := strings.Repeat("a", 64)
	tests := []struct {
		name   string
		sent   []string // the X-Request-Id header lines sent
		echoed bool
	}{
		{"letters, digits, dot, underscore, dash", []string{"Abc-123_x.Z"}, true},
		{"one character", []string{"7"}, true},
		{"64 characters", []string{sixtyFour}, true},
		{"65 characters", []string{sixtyFour + "a"}, false},
		{"empty", []string{""}, false},
		{"a space", []string{"abc def"}, false},
		{"a slash", []string{"abc/def"}, false},
		{"a colon", []string{"trace:1"}, false},
		{"a quote", []string{`abc"def`}, false},
		{"non-ASCII", []string{"caf\u00e9"}, false},
		{"none", nil, false},
	}
	ts := withAnnAndBob(t)
	fresh := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headers := asReader
			for _, id := range tt.sent {
				headers = join(headers, []string{"X-Request-Id", id})
			}
			for _, path := range []string{"/api/users/1", "/api/nowhere", "/healthz"} {
				got := ts.do("GET", path, "", headers...).Header().Values("X-Request-Id")
				if len(got) != 1 {
					t.Fatalf("%s: X-Request-Id %q, want one", path, got)
				}
				switch {
				case tt.echoed && got[0] != tt.sent[0]:
					t.Errorf("%s: X-Request-Id %q, want the client's %q", path, got[0], tt.sent[0])
				case !tt.echoed && (len(tt.sent) > 0 && got[0] == tt.sent[0] || !isRequestID(got[0]) || fresh[got[0]]):
					t.Errorf("%s: X-Request-Id %q, want a fresh one", path, got[0])
				}
				fresh[got[0]] = true
			}
		})
	}
}

// ---- Listing (docs/api.md) ----------------------------------------------------------------------

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

// ---- Conditional requests (docs/api.md) ---------------------------------------------------------

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

// ---- Every refused request leaves the store as it was ----------------------------------------------

func TestEvery4xxLeavesTheStoreExactlyAsItWas(t *testing.T) {
	writeJSON := join(asWriter, asJSON)
	tests := []exchange{
		{name: "400 bad POST body", method: "POST", path: "/api/users", body: `{"name":"Carol","email":"carol"}`, headers: writeJSON, status: 400},
		{name: "400 POST with an id", method: "POST", path: "/api/users", body: `{"id":3,"name":"Carol","email":"carol@example.com"}`, headers: writeJSON, status: 400},
		{name: "400 POST with a query", method: "POST", path: "/api/users?x=1", body: userJSON("Carol", "carol@example.com"), headers: writeJSON, status: 400},
		{name: "400 POST with trailing data", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com") + "{}", headers: writeJSON, status: 400},
		{name: "400 PUT missing email", method: "PUT", path: "/api/users/1", body: `{"name":"Ann Lee"}`, headers: writeJSON, status: 400},
		{name: "400 PUT one good field, one bad", method: "PUT", path: "/api/users/1", body: userJSON("Ann Lee", "bad"), headers: writeJSON, status: 400},
		{name: "400 PATCH null", method: "PATCH", path: "/api/users/1", body: `{"name":null}`, headers: writeJSON, status: 400},
		{name: "400 PATCH one good field, one bad", method: "PATCH", path: "/api/users/1", body: `{"name":"Ann Lee","email":"x"}`, headers: writeJSON, status: 400},
		{name: "400 DELETE with a query", method: "DELETE", path: "/api/users/1?force=1", headers: asWriter, status: 400},
		{name: "401 POST without token", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com"), headers: asJSON, status: 401},
		{name: "401 DELETE with a bad token", method: "DELETE", path: "/api/users/1", headers: []string{"Authorization", "Bearer nope"}, status: 401},
		{name: "403 POST with read token", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com"), headers: join(asReader, asJSON), status: 403},
		{name: "403 DELETE with read token", method: "DELETE", path: "/api/users/1", headers: asReader, status: 403},
		{name: "404 PUT of a deleted user", method: "PUT", path: "/api/users/3", body: userJSON("Carol", "carol@example.com"), headers: writeJSON, status: 404},
		{name: "404 DELETE of a deleted user", method: "DELETE", path: "/api/users/3", headers: asWriter, status: 404},
		{name: "405 DELETE of the collection", method: "DELETE", path: "/api/users", headers: asWriter, status: 405},
		{name: "405 POST to a user", method: "POST", path: "/api/users/1", body: userJSON("Carol", "carol@example.com"), headers: writeJSON, status: 405},
		{name: "409 POST", method: "POST", path: "/api/users", body: userJSON("Ann 2", "ANN@example.com"), headers: writeJSON, status: 409},
		{name: "409 PUT", method: "PUT", path: "/api/users/2", body: userJSON("Bob", "ann@example.com"), headers: writeJSON, status: 409},
		{name: "409 PATCH", method: "PATCH", path: "/api/users/2", body: `{"email":"Ann@example.com"}`, headers: writeJSON, status: 409},
		{name: "412 PUT", method: "PUT", path: "/api/users/1", body: userJSON("Ann Lee", "ann@example.com"), headers: join(writeJSON, []string{"If-Match", `"stale"`}), status: 412},
		{name: "412 PATCH", method: "PATCH", path: "/api/users/1", body: `{"name":"Ann Lee"}`, headers: join(writeJSON, []string{"If-Match", `"stale"`}), status: 412},
		{name: "412 DELETE", method: "DELETE", path: "/api/users/1", headers: join(asWriter, []string{"If-Match", `"stale"`}), status: 412},
		{name: "413 POST", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com") + strings.Repeat(" ", oneMiB), headers: writeJSON, status: 413},
		{name: "413 PATCH", method: "PATCH", path: "/api/users/1", body: `{"name":"Ann Lee"}` + strings.Repeat(" ", oneMiB), headers: writeJSON, status: 413},
		{name: "415 POST", method: "POST", path: "/api/users", body: userJSON("Carol", "carol@example.com"), headers: join(asWriter, []string{"Content-Type", "text/plain"}), status: 415},
		{name: "415 PUT", method: "PUT", path: "/api/users/1", body: userJSON("Ann Lee", "ann@example.com"), headers: join(asWriter, []string{"Content-Encoding", "gzip"}, asJSON), status: 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Ann (1) and Bob (2); Carol (3) was created and deleted, so the next id is 4.
			ts := withAnnAndBob(t)
			ts.create(t, "Carol", "carol@example.com")
			wantStatus(t, ts.do("DELETE", "/api/users/3", "", asWriter...), http.StatusNoContent)
			_, before := ts.list(t, "")

			w := ts.do(tt.method, tt.path, tt.body, tt.headers...)
			wantError(t, w, tt.status)

			if _, after := ts.list(t, ""); after.Body.String() != before.Body.String() || after.Header().Get("ETag") != before.Header().Get("ETag") {
				t.Errorf("the store changed:\nbefore %s\nafter  %s", before.Body, after.Body)
			}
			if next := ts.create(t, "Dan", "dan@example.com"); next.ID != 4 {
				t.Errorf("the next user got id %d, want 4: the refused request used up an id", next.ID)
			}
		})
	}
}

// ---- HEAD, over a real connection ----------------------------------------------------------------

// sendTo sends a request over a real connection and returns the answer with its whole body.
func sendTo(t *testing.T, client *http.Client, method, url, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	resp, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, answer
}

// httptest.ResponseRecorder keeps a body written for HEAD; a real server drops it. So HEAD is
// tested through a real connection.
func TestHeadAnswersWithTheHeadersOfGetAndNoBody(t *testing.T) {
	ts := withAnnAndBob(t)
	server := httptest.NewServer(ts.handler)
	defer server.Close()
	send := func(method, path string, headers ...string) (*http.Response, []byte) {
		t.Helper()
		return sendTo(t, server.Client(), method, server.URL+path, "", headers...)
	}
	for _, path := range []string{"/api/users/1", "/api/users", "/api/users?page=1&per_page=1", "/api/users/9", "/healthz"} {
		t.Run(path, func(t *testing.T) {
			get, getBody := send("GET", path, asReader...)
			head, headBody := send("HEAD", path, asReader...)
			if head.StatusCode != get.StatusCode {
				t.Errorf("HEAD status %d, GET status %d", head.StatusCode, get.StatusCode)
			}
			if len(headBody) != 0 {
				t.Errorf("HEAD has a body: %q", headBody)
			}
			if len(getBody) == 0 {
				t.Error("GET has no body")
			}
			for _, name := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control", "Vary", "Link", "X-Content-Type-Options"} {
				if got, want := head.Header.Values(name), get.Header.Values(name); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("HEAD %s = %q, GET has %q", name, got, want)
				}
			}
			if get.ContentLength != int64(len(getBody)) || head.ContentLength != get.ContentLength {
				t.Errorf("Content-Length: GET %d (body %d bytes), HEAD %d", get.ContentLength, len(getBody), head.ContentLength)
			}
		})
	}
	etag := ts.do("GET", "/api/users/1", "", asReader...).Header().Get("ETag")
	notModified, body := send("HEAD", "/api/users/1", join(asReader, []string{"If-None-Match", etag})...)
	if notModified.StatusCode != http.StatusNotModified || len(body) != 0 || notModified.Header.Get("ETag") != etag {
		t.Errorf("HEAD with the current ETag: %d, ETag %q, body %q; want 304 with the ETag and no body",
			notModified.StatusCode, notModified.Header.Get("ETag"), body)
	}
	if unauthorized, _ := send("HEAD", "/api/users"); unauthorized.StatusCode != http.StatusUnauthorized ||
		unauthorized.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("HEAD without a token: %d", unauthorized.StatusCode)
	}
}

// ---- CORS (-cors-origin) ------------------------------------------------------------------------

// exposedHeaders are the headers a page on another origin must read: every one the README tells
// clients to act on.
var exposedHeaders = []string{"Location", "Content-Location", "ETag", "Link", "WWW-Authenticate", "X-Request-Id"}

// newCORSTestServer is a test server started with -cors-origin set to origins.
func newCORSTestServer(t *testing.T, origins string) *testServer {
	t.Helper()
	ts := withAnnAndBob(t)
	policy, err := parseCORSOrigins(origins)
	if err != nil {
		t.Fatal(err)
	}
	ts.cfg.cors = policy
	ts.build()
	return ts
}

func TestCORSIsOffByDefault(t *testing.T) {
	ts := withAnnAndBob(t)
	w := ts.do("GET", "/api/users", "", join(asReader, []string{"Origin", "https://app.example.com"})...)
	for name := range w.Header() {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Errorf("CORS header %s without -cors-origin", name)
		}
	}
	if headerSet(w.Header(), "Vary")["Origin"] {
		t.Error("Vary: Origin without -cors-origin")
	}
}

func TestCORSWithAListEchoesAListedOriginAndVariesOnOrigin(t *testing.T) {
	ts := newCORSTestServer(t, "http://localhost:3000, https://app.example.com")
	tests := []struct {
		name         string
		method, path string
		headers      []string
		status       int
		allowOrigin  string
	}{
		{"a listed origin reads", "GET", "/api/users", join(asReader, []string{"Origin", "https://app.example.com"}), 200, "https://app.example.com"},
		{"the other listed origin", "GET", "/api/users/1", join(asReader, []string{"Origin", "http://localhost:3000"}), 200, "http://localhost:3000"},
		{"an error answer to a listed origin", "GET", "/api/users", []string{"Origin", "https://app.example.com"}, 401, "https://app.example.com"},
		{"a 404 to a listed origin", "GET", "/api/users/9", join(asReader, []string{"Origin", "https://app.example.com"}), 404, "https://app.example.com"},
		{"an origin not listed", "GET", "/api/users", join(asReader, []string{"Origin", "https://evil.example"}), 200, ""},
		{"an origin that differs by its port", "GET", "/api/users", join(asReader, []string{"Origin", "http://localhost:3001"}), 200, ""},
		{"no Origin", "GET", "/api/users", asReader, 200, ""},
		{"healthz", "GET", "/healthz", []string{"Origin", "https://app.example.com"}, 200, "https://app.example.com"},
		{"outside /api/", "GET", "/nowhere", []string{"Origin", "https://app.example.com"}, 404, "https://app.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := ts.do(tt.method, tt.path, "", tt.headers...)
			wantStatus(t, w, tt.status)
			if got := w.Header().Values("Access-Control-Allow-Origin"); tt.allowOrigin == "" && len(got) != 0 ||
				tt.allowOrigin != "" && (len(got) != 1 || got[0] != tt.allowOrigin) {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.allowOrigin)
			}
			if !headerSet(w.Header(), "Vary")["Origin"] {
				t.Errorf("Vary %q, want Origin on every answer when origins are listed", w.Header().Values("Vary"))
			}
			if strings.HasPrefix(tt.path, "/api/") && !headerSet(w.Header(), "Vary")["Authorization"] {
				t.Errorf("Vary %q lost Authorization", w.Header().Values("Vary"))
			}
			if tt.allowOrigin != "" {
				wantHeaderSet(t, w.Header(), "Access-Control-Expose-Headers", exposedHeaders...)
			}
		})
	}
}

func TestCORSWithStarAllowsAnyOriginWithoutVaryOrigin(t *testing.T) {
	ts := newCORSTestServer(t, "*")
	for _, path := range []string{"/api/users", "/api/users/9", "/healthz"} {
		w := ts.do("GET", path, "", join(asReader, []string{"Origin", "https://anyone.example"})...)
		wantHeader(t, w.Header(), "Access-Control-Allow-Origin", "*")
		wantHeaderSet(t, w.Header(), "Access-Control-Expose-Headers", exposedHeaders...)
		if headerSet(w.Header(), "Vary")["Origin"] {
			t.Errorf("%s: Vary %q: with * the answer does not depend on the origin", path, w.Header().Values("Vary"))
		}
	}
}

func TestCORSPreflightAllowsTheRoutesMethodsAndFourHeaders(t *testing.T) {
	for _, origins := range []string{"https://app.example.com", "*"} {
		ts := newCORSTestServer(t, origins)
		for _, tt := range []struct {
			path    string
			methods []string
		}{
			{"/api/users", []string{"GET", "HEAD", "POST", "OPTIONS"}},
			{"/api/users/1", []string{"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"}},
			{"/api/users/9", []string{"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"}},
		} {
			t.Run(origins+" "+tt.path, func(t *testing.T) {
				w := ts.do("OPTIONS", tt.path, "", "Origin", "https://app.example.com",
					"Access-Control-Request-Method", "PATCH", "Access-Control-Request-Headers", "authorization, content-type, if-match")
				wantStatus(t, w, http.StatusNoContent) // no token: a browser sends none with a preflight
				wantNoBody(t, w)
				want := "https://app.example.com"
				if origins == "*" {
					want = "*"
				}
				wantHeader(t, w.Header(), "Access-Control-Allow-Origin", want)
				wantHeaderSet(t, w.Header(), "Access-Control-Allow-Methods", tt.methods...)
				wantHeaderSet(t, w.Header(), "Access-Control-Allow-Headers", "Authorization", "Content-Type", "If-Match", "If-None-Match")
				wantHeaderSet(t, w.Header(), "Allow", tt.methods...)
			})
		}
	}
}

func TestCORSPreflightFromAnOriginNotListedAllowsNothing(t *testing.T) {
	ts := newCORSTestServer(t, "https://app.example.com")
	w := ts.do("OPTIONS", "/api/users", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	for _, name := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"} {
		if w.Header().Get(name) != "" {
			t.Errorf("%s = %q for an origin that is not listed", name, w.Header().Get(name))
		}
	}
}

func TestCORSPreflightToAnUnknownPathIs404WithTheCORSHeaders(t *testing.T) {
	ts := newCORSTestServer(t, "https://app.example.com")
	for _, path := range []string{"/api/products", "/api/users/abc", "/nowhere"} {
		t.Run(path, func(t *testing.T) {
			w := ts.do("OPTIONS", path, "", "Origin", "https://app.example.com", "Access-Control-Request-Method", "GET")
			wantError(t, w, http.StatusNotFound)
			wantHeader(t, w.Header(), "Access-Control-Allow-Origin", "https://app.example.com")
			wantHeaderSet(t, w.Header(), "Access-Control-Expose-Headers", exposedHeaders...)
			if !headerSet(w.Header(), "Vary")["Origin"] {
				t.Errorf("Vary %q, want Origin", w.Header().Values("Vary"))
			}
		})
	}
}

func TestCORSExposesTheHeadersOfACreate(t *testing.T) {
	ts := newCORSTestServer(t, "https://app.example.com")
	w := ts.do("POST", "/api/users", userJSON("Carol", "carol@example.com"), join(asWriter, asJSON, []string{"Origin", "https://app.example.com"})...)
	wantStatus(t, w, http.StatusCreated)
	exposed := headerSet(w.Header(), "Access-Control-Expose-Headers")
	for _, name := range []string{"Location", "ETag", "X-Request-Id"} {
		if w.Header().Get(name) == "" || !exposed[name] {
			t.Errorf("%s = %q, exposed: %v", name, w.Header().Get(name), exposed[name])
		}
	}
}

// ---- 500, 503, panics and the log (docs/api.md, "Responses"; README) -----------------------------

func TestFailureTheAPIDidNotForeseeIs500WithoutDetail(t *testing.T) {
	ts := withAnnAndBob(t)
	log := ts.logTo()
	failingCommit(ts)
	for _, write := range []struct{ method, path, body string }{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com")},
		{"PUT", "/api/users/1", userJSON("Ann", "ann@example.com")},
		{"PATCH", "/api/users/1", `{"name":"Ann Lee"}`},
		{"DELETE", "/api/users/1", ""},
	} {
		w := ts.do(write.method, write.path, write.body, join(asWriter, asJSON)...)
		message, _ := wantError(t, w, http.StatusInternalServerError)
		if message != "internal server error" {
			t.Errorf("%s: message %q, want only \"internal server error\"", write.method, message)
		}
		wantHeader(t, w.Header(), "Cache-Control", "no-store")
		for _, name := range []string{"Location", "ETag", "Content-Location"} {
			if w.Header().Get(name) != "" {
				t.Errorf("%s: a 500 carries %s %q", write.method, name, w.Header().Get(name))
			}
		}
	}
	if !strings.Contains(log.String(), "disk on fire") {
		t.Errorf("the detail of the failure is not in the log:\n%s", log)
	}
	wantStatus(t, ts.do("GET", "/api/users", "", asReader...), http.StatusOK) // reads go on
}

func TestPanicInAHandlerIs500JSONLoggedWithItsStack(t *testing.T) {
	ts := withAnnAndBob(t)
	log := ts.logTo()
	ts.journalOn(diskFile(func([]byte) (int, error) { panic("the store is on fire") }))
	w := ts.do("POST", "/api/users", userJSON("Carol", "carol@example.com"), join(asWriter, asJSON, []string{"X-Request-Id", "panic-1"})...)
	message, _ := wantError(t, w, http.StatusInternalServerError)
	if message != "internal server error" {
		t.Errorf("message %q, want only \"internal server error\"", message)
	}
	wantHeader(t, w.Header(), "X-Request-Id", "panic-1")
	wantHeader(t, w.Header(), "X-Content-Type-Options", "nosniff")
	wantHeader(t, w.Header(), "Cache-Control", "no-store")
	logged := log.String()
	for _, want := range []string{"the store is on fire", "goroutine", "panic-1"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the log does not show %q:\n%s", want, logged)
		}
	}
	var status float64
	for _, record := range log.records(t) {
		if record["msg"] == "request" {
			status, _ = record["status"].(float64)
		}
	}
	if status != 500 {
		t.Errorf("the access log shows status %v, want 500", status)
	}
	// The server goes on.
	wantStatus(t, ts.do("GET", "/api/users", "", asReader...), http.StatusOK)
}

// A handler that set headers for an answer it never gave must not leave them on the 500.
func TestPanicDropsTheHeadersOfTheAnswerNeverGiven(t *testing.T) {
	ts := newTestServer(t)
	handler := observed(ts.log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("ETag", `"abc"`)
		h.Set("Location", "/api/users/1")
		h.Set("Content-Location", "/api/users/1")
		h.Set("Link", `</api/users?page=2>; rel="next"`)
		panic("after the headers, before the answer")
	}))
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest("GET", "/api/users", nil))
	wantError(t, w, http.StatusInternalServerError)
	for _, name := range []string{"ETag", "Location", "Content-Location", "Link"} {
		if w.Header().Get(name) != "" {
			t.Errorf("the 500 carries %s %q", name, w.Header().Get(name))
		}
	}
}

// A panic after the answer has started cannot change its status: the connection is cut, so the
// client sees a broken answer rather than a complete-looking one.
func TestPanicAfterTheAnswerBeganCutsTheConnection(t *testing.T) {
	ts := newTestServer(t)
	log := ts.logTo()
	server := httptest.NewServer(observed(ts.log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/panic" {
			io.WriteString(w, `{"status":"ok"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"data":[`)
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Error(err)
		}
		panic("half-way through the list")
	})))
	defer server.Close()

	resp, err := server.Client().Get(server.URL + "/panic")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Error("the client read a complete answer from a handler that panicked half-way")
	}
	if !strings.Contains(log.String(), "half-way through the list") {
		t.Errorf("the panic is not in the log:\n%s", log)
	}
	resp, err = server.Client().Get(server.URL + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after the panic the server does not answer: %v", err)
	}
	resp.Body.Close()
}

func TestHealthz(t *testing.T) {
	ts := withAnnAndBob(t)
	w := ts.do("GET", "/healthz", "") // needs no token
	wantStatus(t, w, http.StatusOK)
	wantHeader(t, w.Header(), "Content-Type", "application/json")
	if w.Body.String() != `{"status":"ok"}` {
		t.Errorf("body %s", w.Body)
	}

	brokenJournal(ts) // as after a failed fsync
	for _, method := range []string{"GET", "HEAD"} {
		w = ts.do(method, "/healthz", "")
		wantStatus(t, w, http.StatusServiceUnavailable)
		wantHeader(t, w.Header(), "Content-Type", "application/json")
		if w.Body.String() != `{"status":"journal broken"}` {
			t.Errorf("%s body %s", method, w.Body)
		}
	}
	wantStatus(t, ts.do("GET", "/api/users/1", "", asReader...), http.StatusOK) // reads go on
}

// One log line per request: method, path (never the query), status, bytes, duration in
// milliseconds (a number, in both formats) and request id. No token ever appears in it.
func TestAccessLogLineHasNoQueryAndNoToken(t *testing.T) {
	ts := withAnnAndBob(t)
	log := ts.logTo()
	w := ts.do("GET", "/api/users?q=access_token_in_query", "", join(asReader, []string{"X-Request-Id", "trace-42"})...)
	wantStatus(t, w, http.StatusOK)
	w401 := ts.do("GET", "/api/users", "", "Authorization", "Bearer leaked-secret-token")
	wantStatus(t, w401, http.StatusUnauthorized)

	records := log.records(t)
	if len(records) != 2 {
		t.Fatalf("%d log records for 2 requests:\n%s", len(records), log)
	}
	first := records[0]
	want := map[string]any{"msg": "request", "method": "GET", "path": "/api/users", "status": float64(200),
		"bytes": float64(w.Body.Len()), "request_id": "trace-42"}
	for key, value := range want {
		if first[key] != value {
			t.Errorf("log %s = %v, want %v", key, first[key], value)
		}
	}
	if ms, ok := first["duration_ms"].(float64); !ok || ms < 0 || ms > 10_000 {
		t.Errorf("the log line's duration_ms is %v, want a number of milliseconds", first["duration_ms"])
	}
	if id := records[1]["request_id"]; id != w401.Header().Get("X-Request-Id") {
		t.Errorf("the log shows request id %v, the answer %q", id, w401.Header().Get("X-Request-Id"))
	}
	for _, secret := range []string{"access_token_in_query", "leaked-secret-token", readToken, writeToken} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, log)
		}
		if strings.Contains(w401.Body.String(), secret) {
			t.Errorf("the 401 shows %q: %s", secret, w401.Body)
		}
	}
}

// -delay slows every /api/ answer, for showing loading states; other paths answer at once.
func TestDelaySlowsAPIAnswers(t *testing.T) {
	ts := withAnnAndBob(t)
	ts.cfg.delay = 150 * time.Millisecond
	ts.build()
	start := time.Now()
	wantStatus(t, ts.do("GET", "/api/users", "", asReader...), http.StatusOK)
	if elapsed := time.Since(start); elapsed < ts.cfg.delay {
		t.Errorf("the answer took %s, want at least the delay %s", elapsed, ts.cfg.delay)
	}
	start = time.Now()
	wantStatus(t, ts.do("GET", "/healthz", ""), http.StatusOK)
	if elapsed := time.Since(start); elapsed >= ts.cfg.delay {
		t.Errorf("/healthz took %s: -delay is for /api/ only", elapsed)
	}
}

// The error body lists the failing fields name first, as its message does (docs/api.md, "Request
// bodies").
func TestFieldProblemsComeNameFirst(t *testing.T) {
	s := newTestServer(t)
	w := s.do("POST", "/api/users", `{"name": "", "email": "Ann <a@b.c>"}`, join(asWriter, asJSON)...)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", w.Code)
	}
	body := w.Body.String()
	name, email := strings.Index(body, `"name":`), strings.Index(body, `"email":`)
	if name < 0 || email < 0 || name > email {
		t.Errorf("body %s: want fields with name before email", body)
	}
}

// A body that ends before its declared length, or breaks off while chunked, is 400 and changes
// nothing: the service never judges a part of a body as if it were all of it.
func TestBodyCutShortIs400(t *testing.T) {
	for _, length := range []int64{40, -1} { // declared, and unknown (chunked)
		t.Run(fmt.Sprint("Content-Length ", length), func(t *testing.T) {
			ts := withAnnAndBob(t)
			before := snapshotOfUsers(t, ts)
			body := io.MultiReader(strings.NewReader(`{"name":"Cy","email":"cy@`), iotest.ErrReader(io.ErrUnexpectedEOF))
			r := httptest.NewRequest("POST", "/api/users", body)
			r.ContentLength = length
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			w := ts.serve(r)
			if message, _ := errorBody(t, w); w.Code != http.StatusBadRequest || message != "the body could not be read to its end" {
				t.Errorf("%d %s, want 400: the body could not be read to its end", w.Code, w.Body)
			}
			if after := snapshotOfUsers(t, ts); after != before {
				t.Errorf("the store changed: %s, was %s", after, before)
			}
		})
	}
}
