package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Over HTTP the rules are stated once, by the conformance kit, which conformance_test.go runs
// against the service. The tests beside each file prove that file's own logic by calling its
// functions, and go through the real handler stack (newServer) only where the kit cannot look: a
// failing disk, a panic, the log, the flags. This file holds the helpers they share, then the
// tests of users.go.

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

// The helpers below build on the ones above.

// withAnnAndBob is a server holding Ann (id 1) and Bob (id 2).
func withAnnAndBob(t testing.TB) *testServer {
	t.Helper()
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	ts.create(t, "Bob", "bob@example.com")
	return ts
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

// wantAPIError checks that err is the API's error with this status, message and field problems,
// in their order, and returns it for a look at its headers.
func wantAPIError(t testing.TB, err error, status int, message string, fields ...fieldProblem) *apiError {
	t.Helper()
	var e *apiError
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want %d %q", err, status, message)
	}
	if e.status != status || e.message != message || fmt.Sprint(e.fields) != fmt.Sprint(fields) {
		t.Errorf("error %d %q, fields %v\nwant  %d %q, fields %v", e.status, e.message, e.fields, status, message, fields)
	}
	return e
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

// The route table (docs/api.md, "Routes"): a path's Allow is its methods, HEAD after GET, as
// ServeMux lets GET serve HEAD, and OPTIONS last (RFC 9110 §10.2.1). The 405s and OPTIONS take it
// from here.
func TestAllowListsTheRoutesMethodsWithHeadAfterGetAndOptionsLast(t *testing.T) {
	readOnly := []string{"GET", "HEAD", "OPTIONS"}
	want := map[string][]string{
		"/api/users":      {"GET", "HEAD", "POST", "OPTIONS"},
		"/api/users/{id}": {"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"},
		"/healthz":        readOnly,
		"/openapi.json":   readOnly,
		"/{$}":            readOnly,
		"/assets/{file}":  readOnly,
	}
	resources := (&api{}).resources()
	if len(resources) != len(want) {
		t.Errorf("the table has %d paths, this test knows %d: say what Allow a new path has", len(resources), len(want))
	}
	for _, res := range resources {
		if got := res.allow(); !slices.Equal(got, want[res.path]) {
			t.Errorf("Allow of %s = %q, want %q", res.path, got, want[res.path])
		}
	}
}

func TestMethodNotAllowedIs405NamingTheMethodAndTheRoutesAllow(t *testing.T) {
	allow := []string{"GET", "HEAD", "POST", "OPTIONS"}
	for _, tt := range []struct{ method, quoted string }{
		{"DELETE", `"DELETE"`},
		{"TRACE", `"TRACE"`},
		{"PROPFIND", `"PROPFIND"`},
		{strings.Repeat("X", 41), `"` + strings.Repeat("X", 40) + `..."`}, // quoted as sent, cut short when long
	} {
		err := methodNotAllowed(allow)(httptest.NewRecorder(), httptest.NewRequest(tt.method, "/api/users", nil))
		e := wantAPIError(t, err, http.StatusMethodNotAllowed,
			"this path does not take the method "+tt.quoted+": it takes GET, HEAD, POST, OPTIONS")
		wantHeader(t, e.header, "Allow", "GET, HEAD, POST, OPTIONS")
	}
}

// OPTIONS says what a path takes, whether or not anything is at it: Allow, and the bodies POST and
// PATCH take in Accept-Post and Accept-Patch (RFC 5789 §3.1). To a preflight from an origin the API
// allows, it names the same methods in Access-Control-Allow-Methods.
func TestOptionsNamesTheMethodsAndTheBodiesTheyTake(t *testing.T) {
	collection := []string{"GET", "HEAD", "POST", "OPTIONS"}
	oneUser := []string{"GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"}
	listed := corsPolicy{origins: []string{"https://app.example.com"}}
	preflightFrom := func(origin string) []string {
		return []string{"Origin", origin, "Access-Control-Request-Method", "PATCH"}
	}
	tests := []struct {
		name    string
		allow   []string
		cors    corsPolicy
		headers []string
		want    map[string]string // "" for a header the answer must not have
	}{
		{"the collection", collection, corsPolicy{}, nil, map[string]string{"Allow": "GET, HEAD, POST, OPTIONS",
			"Accept-Post": "application/json", "Accept-Patch": "", "Access-Control-Allow-Methods": ""}},
		{"a user", oneUser, corsPolicy{}, nil, map[string]string{"Allow": "GET, HEAD, PUT, PATCH, DELETE, OPTIONS",
			"Accept-Patch": "application/json, application/merge-patch+json", "Accept-Post": "", "Access-Control-Allow-Methods": ""}},
		{"a preflight from a listed origin", oneUser, listed, preflightFrom("https://app.example.com"),
			map[string]string{"Access-Control-Allow-Methods": "GET, HEAD, PUT, PATCH, DELETE, OPTIONS"}},
		{"a preflight from any origin, with -cors-origin *", collection, corsPolicy{anyOrigin: true}, preflightFrom("https://anyone.example"),
			map[string]string{"Access-Control-Allow-Methods": "GET, HEAD, POST, OPTIONS"}},
		{"a preflight from an origin not listed", oneUser, listed, preflightFrom("https://evil.example"),
			map[string]string{"Access-Control-Allow-Methods": ""}},
		{"a preflight while CORS is off", oneUser, corsPolicy{}, preflightFrom("https://app.example.com"),
			map[string]string{"Access-Control-Allow-Methods": ""}},
		{"Origin without Access-Control-Request-Method is no preflight", oneUser, listed, []string{"Origin", "https://app.example.com"},
			map[string]string{"Access-Control-Allow-Methods": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("OPTIONS", "/api/users/7", nil) // no user 7: OPTIONS does not look
			for i := 0; i+1 < len(tt.headers); i += 2 {
				r.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			w := httptest.NewRecorder()
			if err := (&api{cors: tt.cors}).options(tt.allow)(w, r); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, w, http.StatusNoContent)
			wantNoBody(t, w)
			for name, value := range tt.want {
				if got := w.Header().Values(name); value == "" && len(got) > 0 || value != "" && (len(got) != 1 || got[0] != value) {
					t.Errorf("%s = %q, want %q", name, got, value)
				}
			}
		})
	}
}

// Only the list takes a query: elsewhere the 400 names the first parameter as sent, so the client
// sees which one to drop.
func TestQueryOnAnyRouteButTheListIs400NamingIt(t *testing.T) {
	const only = ": only the list (GET /api/users) takes page, per_page, q, email and sort"
	tests := []struct {
		target string
		named  string // "" when the request has no query
	}{
		{"/api/users/1", ""},
		{"/api/users/1?", ""},
		{"/api/users/1?fields=name", `"fields"`},
		{"/api/users/1?force", `"force"`},
		{"/api/users/1?a=1&b=2", `"a"`},
		{"/api/users/1?debug&b=2", `"b"`}, // the first in order, as the list names a parameter
		{"/api/users/1?q%20x=1", `"q x"`}, // as url.ParseQuery reads it, as the list does
		{"/api/users/1?&", `"&"`},         // a query that holds no parameter is named whole
		{"/api/users/1?" + strings.Repeat("n", 41) + "=1", `"` + strings.Repeat("n", 40) + `..."`},
	}
	for _, tt := range tests {
		err := rejectQuery(httptest.NewRequest("GET", tt.target, nil))
		if tt.named == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", tt.target, err)
			}
			continue
		}
		wantAPIError(t, err, http.StatusBadRequest, "this request takes no query parameters, but the query has "+tt.named+only)
	}
}

// An id is a positive integer in canonical decimal, so that each user has one URI: anything else
// names no resource (docs/api.md, "Routes").
func TestIDIsAPositiveIntegerInCanonicalDecimal(t *testing.T) {
	for _, tt := range []struct {
		s  string
		id int64 // 0: not an id
	}{
		{"1", 1}, {"7", 7}, {"10", 10}, {"9223372036854775807", math.MaxInt64},
		{"0", 0}, {"07", 0}, {"+7", 0}, {"-7", 0}, {"7.0", 0}, {"7e0", 0}, {"0x7", 0}, {"abc", 0}, {"", 0},
		{" 7", 0}, {"7 ", 0}, {"9223372036854775808", 0}, {"99999999999999999999", 0}, {"\uff17", 0}, // a full-width 7
	} {
		id, ok := parseID(tt.s)
		if ok != (tt.id != 0) || id != tt.id && ok {
			t.Errorf("parseID(%q) = %d, %v; want %d, %v", tt.s, id, ok, tt.id, tt.id != 0)
		}
	}
}

// checkIDAndRole follows routing: an {id} not in canonical form names no resource, so it is 404
// whatever the token may do, and only then is the role judged (docs/api.md, "The order of the
// checks").
func TestAnIDNotCanonicalIs404BeforeTheRoleIsJudged(t *testing.T) {
	tests := []struct {
		name    string
		id      string // the path's {id}, "" on a path without one
		granted role
		want    error // nil: the handler runs
	}{
		{"a canonical id, the role needed", "7", roleWrite, nil},
		{"a canonical id, a role too weak", "7", roleRead, errReadOnly},
		{"the largest id, a role too weak", "9223372036854775807", roleRead, errReadOnly},
		{"an id not canonical, a role too weak", "07", roleRead, errUserNotFound},
		{"an id not canonical, the role needed", "abc", roleWrite, errUserNotFound},
		{"no id, a role too weak", "", roleRead, errReadOnly},
		{"no id, no token at all", "", roleNone, errReadOnly},
		{"no id, the role needed", "", roleWrite, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := withRole(httptest.NewRequest("DELETE", "/api/users/x", nil), tt.granted)
			if tt.id != "" {
				r.SetPathValue("id", tt.id)
			}
			ran := false
			handler := checkIDAndRole(roleWrite, func(w http.ResponseWriter, r *http.Request) error { ran = true; return nil })
			if err := handler(httptest.NewRecorder(), r); err != tt.want || ran != (tt.want == nil) {
				t.Errorf("error %v, handler ran %v; want %v, %v", err, ran, tt.want, tt.want == nil)
			}
		})
	}
}

// A refused request leaves the store exactly as it was: its users, the list's ETag, and the next
// id, which no client sees until the next create, so the kit cannot check it.
func TestEvery4xxLeavesTheStoreExactlyAsItWas(t *testing.T) {
	writeJSON := join(asWriter, asJSON)
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
	}{
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
