package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
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
	tokens  tokens
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

// The helpers below build on the ones above. The tests of this file follow them: the routes of
// users.go and their handlers (docs/api.md, "Routes"); each other file's rules are in its own _test.go.

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

func TestPutOfAMissingUserIs404NotACreate(t *testing.T) {
	ts := withAnnAndBob(t)
	wantError(t, ts.do("PUT", "/api/users/3", userJSON("Carol", "carol@example.com"), join(asWriter, asJSON)...), http.StatusNotFound)
	wantError(t, ts.do("PATCH", "/api/users/3", `{"name":"Carol"}`, join(asWriter, asJSON)...), http.StatusNotFound)
	if body, _ := ts.list(t, ""); len(body.Data) != 2 {
		t.Errorf("PUT created a user: %v", body.Data)
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
