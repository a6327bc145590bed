package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The rules of middleware.go: what every answer carries, CORS, panics and the access log
// (docs/api.md, "Responses" and "Browsers (CORS)"; README, "Configuration"), proved on the
// middleware functions, and through the real handler for what the kit does not check: CORS off
// and *, panics, the log and -delay.

// An X-Request-Id of 1 to 64 characters of A-Z a-z 0-9 . _ - is the client's, echoed and logged;
// any other, or none, gets the server's own: a prefix and a counter, new on every request.
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
	a := &api{requestIDPrefix: "5eed-"}
	seen := map[string]bool{} // every id given so far: the server's own are new each time
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/api/users", nil)
		for _, id := range tt.sent {
			r.Header.Add("X-Request-Id", id)
		}
		got := a.requestID(r)
		switch {
		case tt.echoed && got != tt.sent[0]:
			t.Errorf("%s: request id %q, want the client's %q", tt.name, got, tt.sent[0])
		case !tt.echoed && (!strings.HasPrefix(got, "5eed-") || !isRequestID(got) || seen[got]):
			t.Errorf("%s: request id %q, want a fresh one of the server's", tt.name, got)
		}
		seen[got] = true
	}
}

// Under /api/ the token is judged before ServeMux redirects a path that is not clean, so a path
// that is under /api/ once cleaned needs one too: an anonymous caller learns nothing about /api/.
func TestUncleanPathsUnderAPINeedATokenToo(t *testing.T) {
	for _, tt := range []struct {
		path string
		api  bool
	}{
		{"/api/users", true}, {"/api/users/1", true}, {"/api/", true}, {"/api/products", true},
		{"/api//users", true}, {"//api/users", true}, {"/./api/users", true}, {"/assets/../api/users", true},
		{"/api", false}, {"/apiary", false}, {"/healthz", false}, {"/", false}, {"/assets/app.js", false},
	} {
		if got := isAPIPath(tt.path); got != tt.api {
			t.Errorf("isAPIPath(%q) = %v, want %v", tt.path, got, tt.api)
		}
	}
}

// Without -cors-origin no answer carries a CORS header, and none varies on Origin: a page on
// another origin may not read the API.
func TestCORSIsOffByDefault(t *testing.T) {
	ts := newTestServer(t)
	r := httptest.NewRequest("GET", "/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("Origin", "https://app.example.com")
	w := ts.serve(r)
	wantStatus(t, w, http.StatusOK)
	for name := range w.Header() {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Errorf("CORS header %s without -cors-origin", name)
		}
	}
	wantHeaders(t, w.Header(), map[string]string{"Vary": "Authorization"}) // not Origin
}

// middlewareExposedHeaders is the Access-Control-Expose-Headers of every CORS answer: every header the README
// tells clients to act on.
const middlewareExposedHeaders = "Location, Content-Location, ETag, Link, WWW-Authenticate, X-Request-Id"

// With -cors-origin listing origins, an answer to a listed origin names it and exposes the headers
// clients act on, an error answer too; a preflight also gets the headers it may send and how long
// to remember that. Every answer varies on Origin, for a cache, whether or not it names one.
func TestCORSWithAListEchoesAListedOriginAndVariesOnOrigin(t *testing.T) {
	const allowHeaders = "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id"
	tests := []struct {
		name   string
		method string
		header map[string]string
		want   map[string]string // "" for a header the answer must not have
	}{
		{"a listed origin", "GET", map[string]string{"Origin": "https://app.example.com"}, map[string]string{
			"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": middlewareExposedHeaders,
			"Access-Control-Allow-Headers": "", "Access-Control-Max-Age": ""}},
		{"the other listed origin", "POST", map[string]string{"Origin": "http://localhost:3000"}, map[string]string{
			"Access-Control-Allow-Origin": "http://localhost:3000", "Access-Control-Expose-Headers": middlewareExposedHeaders}},
		{"an origin not listed", "GET", map[string]string{"Origin": "https://evil.example"}, map[string]string{
			"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
		{"an origin that differs by its port", "GET", map[string]string{"Origin": "http://localhost:3001"}, map[string]string{
			"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
		{"no Origin", "GET", nil, map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
		{"a preflight from a listed origin", "OPTIONS",
			map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PATCH"},
			map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": middlewareExposedHeaders,
				"Access-Control-Allow-Headers": allowHeaders, "Access-Control-Max-Age": "600"}},
		{"a preflight from an origin not listed", "OPTIONS",
			map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Headers": "", "Access-Control-Max-Age": ""}},
		{"OPTIONS without Access-Control-Request-Method", "OPTIONS", map[string]string{"Origin": "https://app.example.com"},
			map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Allow-Headers": ""}},
	}
	a := &api{log: newLogger("json", io.Discard), cors: corsPolicy{origins: []string{"http://localhost:3000", "https://app.example.com"}}}
	handler := a.allowCrossOrigin(a.handle(notFound)) // an error answer keeps the CORS headers
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/users/9", nil)
			for name, value := range tt.header {
				r.Header.Set(name, value)
			}
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, r)
			wantStatus(t, w, http.StatusNotFound)
			wantHeaders(t, w.Header(), tt.want)
			wantHeaders(t, w.Header(), map[string]string{"Vary": "Origin"})
		})
	}
}

// With -cors-origin * every page may read the answers, which then do not vary by origin; a
// preflight from any origin, with no token, is allowed the route's methods and the four headers.
func TestCORSWithStarAllowsAnyOriginWithoutVaryOrigin(t *testing.T) {
	ts := newTestServer(t, "-cors-origin", "*")
	for _, path := range []string{"/api/users", "/api/users/9", "/healthz"} {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		r.Header.Set("Origin", "https://anyone.example")
		w := ts.serve(r)
		wantHeaders(t, w.Header(), map[string]string{
			"Access-Control-Allow-Origin":   "*",
			"Access-Control-Expose-Headers": middlewareExposedHeaders,
		})
		if vary := strings.Join(w.Header().Values("Vary"), ", "); strings.Contains(vary, "Origin") {
			t.Errorf("%s: Vary %q: with * the answer does not depend on the origin", path, vary)
		}
	}

	r := httptest.NewRequest("OPTIONS", "/api/users/1", nil) // no token: a browser sends none with a preflight
	r.Header.Set("Origin", "https://anyone.example")
	r.Header.Set("Access-Control-Request-Method", "PATCH")
	r.Header.Set("Access-Control-Request-Headers", "authorization, content-type, if-match")
	w := ts.serve(r)
	wantStatus(t, w, http.StatusNoContent)
	wantHeaders(t, w.Header(), map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "GET, HEAD, PUT, PATCH, DELETE, OPTIONS",
		"Access-Control-Allow-Headers": "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id",
	})
}

// An origin in -cors-origin is read as a browser writes it in Origin (RFC 6454 §6.2), so one
// typed in capitals or with its default port still matches the page that calls.
func TestCORSOriginsAreReadAsABrowserWritesThem(t *testing.T) {
	for _, tt := range []struct{ configured, browser string }{
		{"HTTP://LocalHost:3000", "http://localhost:3000"},
		{"http://localhost:80", "http://localhost"},
		{"HTTPS://App.Example.COM:443", "https://app.example.com"},
		{"https://app.example.com:8443", "https://app.example.com:8443"},
		{"http://[::1]:80", "http://[::1]"},
		{"http://[::1]:8080", "http://[::1]:8080"},
	} {
		ts := newTestServer(t, "-cors-origin", tt.configured)
		r := httptest.NewRequest("GET", "/api/users/1", nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		r.Header.Set("Origin", tt.browser)
		w := ts.serve(r)
		if got := w.Header().Get("Access-Control-Allow-Origin"); got != tt.browser {
			t.Errorf("-cors-origin %s: Access-Control-Allow-Origin %q for the page at %s", tt.configured, got, tt.browser)
		}
	}
}

// A panic before the answer has begun is a JSON 500 that says nothing more, with the request's id,
// nosniff and no-store; the log has the panic with its stack and the request's id, and the access
// log the 500. The panic goes no further than the middleware.
func TestPanicInAHandlerIs500JSONLoggedWithItsStack(t *testing.T) {
	log := &logBuffer{}
	a := &api{log: newLogger("json", log), requestIDPrefix: "test-"} // as newServer builds it, with what observe uses
	handler := a.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("the store is on fire")
	}))
	r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Carol","email":"carol@example.com"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Request-Id", "panic-1")
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r) // returns: the panic was recovered

	wantError(t, w, http.StatusInternalServerError, "internal server error")
	wantHeaders(t, w.Header(), map[string]string{
		"X-Request-Id":           "panic-1",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-store",
	})
	panics := log.records(t, "panic in handler")
	if len(panics) != 1 {
		t.Fatalf("%d records of the panic, want 1:\n%s", len(panics), log)
	}
	stack, _ := panics[0]["stack"].(string)
	if panics[0]["panic"] != "the store is on fire" || panics[0]["request_id"] != "panic-1" ||
		!strings.Contains(stack, "goroutine") || !strings.Contains(stack, "middleware_test.go") {
		t.Errorf("the panic is logged as %v, want its value, the request's id and its stack", panics[0])
	}
	requests := log.records(t, "request")
	if len(requests) != 1 || requests[0]["status"] != float64(500) || requests[0]["request_id"] != "panic-1" {
		t.Errorf("the access log has %v, want one record of the 500 with its id", requests)
	}
}

// A handler that set headers for an answer it never gave must not leave them on the 500.
func TestPanicDropsTheHeadersOfTheAnswerNeverGiven(t *testing.T) {
	a := &api{log: newLogger("json", io.Discard), requestIDPrefix: "test-"}
	handler := a.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("ETag", `"abc"`)
		h.Set("Location", "/api/users/1")
		h.Set("Content-Location", "/api/users/1")
		h.Set("Link", `</api/users?page=2>; rel="next"`)
		panic("after the headers, before the answer")
	}))
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, httptest.NewRequest("GET", "/api/users", nil))
	wantError(t, w, http.StatusInternalServerError, "internal server error")
	wantHeaders(t, w.Header(), map[string]string{"ETag": "", "Location": "", "Content-Location": "", "Link": ""})
}

// A panic after the answer has started cannot change its status: the connection is cut, so the
// client sees a broken answer rather than a complete-looking one, and the server goes on.
func TestPanicAfterTheAnswerBeganCutsTheConnection(t *testing.T) {
	log := &logBuffer{}
	a := &api{log: newLogger("json", log), requestIDPrefix: "test-"}
	server := httptest.NewServer(a.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	if panics := log.records(t, "panic in handler"); len(panics) != 1 || panics[0]["panic"] != "half-way through the list" {
		t.Errorf("the log has %v, want the panic", panics)
	}
	resp, err = server.Client().Get(server.URL + "/")
	if err != nil {
		t.Fatalf("after the panic the server does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("after the panic the server answers %d", resp.StatusCode)
	}
}

// One log record per request: method, path (never the query), status, bytes, duration in
// milliseconds (a number) and request id. No token ever appears in it, nor in a 401.
func TestAccessLogLineHasNoQueryAndNoToken(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	ts.create(t, "Bob", "bob@example.com")
	before := len(ts.log.records(t, "request"))

	r := httptest.NewRequest("GET", "/api/users?q=access_token_in_query", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("X-Request-Id", "trace-42")
	w := ts.serve(r)
	wantStatus(t, w, http.StatusOK)
	r = httptest.NewRequest("GET", "/api/users", nil)
	r.Header.Set("Authorization", "Bearer leaked-secret-token")
	w401 := ts.serve(r)
	wantStatus(t, w401, http.StatusUnauthorized)

	records := ts.log.records(t, "request")[before:]
	if len(records) != 2 {
		t.Fatalf("%d log records for 2 requests:\n%s", len(records), ts.log)
	}
	want := map[string]any{"method": "GET", "path": "/api/users", "status": float64(200),
		"bytes": float64(w.Body.Len()), "request_id": "trace-42"}
	for key, value := range want {
		if records[0][key] != value {
			t.Errorf("log %s = %v, want %v", key, records[0][key], value)
		}
	}
	if ms, ok := records[0]["duration_ms"].(float64); !ok || ms < 0 || ms > 10_000 {
		t.Errorf("the record's duration_ms is %v, want a number of milliseconds", records[0]["duration_ms"])
	}
	if id := records[1]["request_id"]; id != w401.Header().Get("X-Request-Id") {
		t.Errorf("the log shows request id %v, the answer %q", id, w401.Header().Get("X-Request-Id"))
	}
	for _, secret := range []string{"access_token_in_query", "leaked-secret-token", readToken, writeToken} {
		if strings.Contains(ts.log.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, ts.log)
		}
		if strings.Contains(w401.Body.String(), secret) {
			t.Errorf("the 401 shows %q: %s", secret, w401.Body)
		}
	}
}

// An answer to HEAD sends no body (net/http drops what the handler writes), so its log record
// counts no bytes, while GET's counts the body it sent: both describe the same representation.
func TestHeadIsLoggedWithNoBytesAndGetWithItsBody(t *testing.T) {
	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	before := len(ts.log.records(t, "request"))

	answers := map[string]*httptest.ResponseRecorder{}
	for _, method := range []string{"GET", "HEAD"} {
		r := httptest.NewRequest(method, "/api/users", nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		answers[method] = ts.serve(r)
		wantStatus(t, answers[method], http.StatusOK)
	}
	length := answers["GET"].Body.Len()
	if got := answers["HEAD"].Header().Get("Content-Length"); got != strconv.Itoa(length) {
		t.Errorf("HEAD's Content-Length %s, GET's body %d bytes: HEAD must describe the same answer", got, length)
	}

	records := ts.log.records(t, "request")[before:]
	if len(records) != 2 || records[0]["method"] != "GET" || records[1]["method"] != "HEAD" {
		t.Fatalf("the log has %v, want a record of the GET, then of the HEAD", records)
	}
	if got := records[0]["bytes"]; got != float64(length) {
		t.Errorf("GET is logged with bytes=%v, want the %d bytes of its body", got, length)
	}
	if got := records[1]["bytes"]; got != float64(0) {
		t.Errorf("HEAD is logged with bytes=%v, want 0: it sends no body", got)
	}
}

// -delay slows every /api/ answer, for showing loading states; other paths answer at once.
func TestDelaySlowsAPIAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the wall-clock time of answers")
	}
	const delay = 150 * time.Millisecond
	ts := newTestServer(t, "-delay", delay.String())
	start := time.Now()
	r := httptest.NewRequest("GET", "/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	wantStatus(t, ts.serve(r), http.StatusOK)
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("the answer took %s, want at least the delay %s", elapsed, delay)
	}
	start = time.Now()
	wantStatus(t, ts.serve(httptest.NewRequest("GET", "/healthz", nil)), http.StatusOK)
	if elapsed := time.Since(start); elapsed >= delay {
		t.Errorf("/healthz took %s: -delay is for /api/ only", elapsed)
	}
}

// A client that goes away during -delay gets no answer, and the log says so, naming no status:
// nothing was sent.
func TestClientThatLeavesDuringTheDelayIsLoggedWithoutAStatus(t *testing.T) {
	ts := newTestServer(t, "-delay", "10s")
	ctx, leave := context.WithCancel(context.Background())
	leave() // the client has gone before the delay ends
	r := httptest.NewRequest("GET", "/api/users", nil).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer "+readToken)
	ts.serve(r)
	if answered := ts.log.records(t, "request"); len(answered) != 0 {
		t.Errorf("logged as answered: %v", answered)
	}
	gone := ts.log.records(t, "request got no answer")
	if len(gone) != 1 || gone[0]["status"] != nil || gone[0]["path"] != "/api/users" {
		t.Errorf("the log has %v, want one record of the request, with no status", gone)
	}
}

// cleanPath removes dot segments as RFC 3986 §5.2.4 does and merges empty segments, on the path as
// sent: a percent-escape is bytes like any other, so %2E is not a dot and %2F not a slash.
func TestCleanPathRemovesDotSegmentsAndMergesEmptyOnes(t *testing.T) {
	for _, tt := range []struct{ path, clean string }{
		{"/", "/"}, {"/api/users", "/api/users"}, {"/api/users/", "/api/users/"},
		{"//", "/"}, {"/api//users", "/api/users"}, {"//api/", "/api/"}, {"/api/users//", "/api/users/"},
		{"/./api/users", "/api/users"}, {"/api/./users", "/api/users"}, {"/api/users/.", "/api/users/"},
		{"/api/x/../users", "/api/users"}, {"/api/users/..", "/api/"}, {"/..", "/"}, {"/../..//api", "/api"},
		{"/a/..//b", "/b"}, {"/api//%75sers", "/api/%75sers"}, {"/api/%2E%2E/users", "/api/%2E%2E/users"},
		{"/%2Fapi/users", "/%2Fapi/users"}, {"/api/.../users", "/api/.../users"}, {"/api/..x/.x", "/api/..x/.x"},
	} {
		if got := cleanPath(tt.path); got != tt.clean {
			t.Errorf("cleanPath(%q) = %q, want %q", tt.path, got, tt.clean)
		}
	}
}

// A path not in clean form is answered 308 with Location its clean form, escapes as sent and the
// query kept, and the JSON error body; under /api/ only once the token is valid, OPTIONS aside.
// A path clean as sent whose escapes decode to one that is not names nothing: 404.
func TestUncleanPathIs308ToItsCleanForm(t *testing.T) {
	ts := newTestServer(t)
	for _, tt := range []struct {
		method, target, token string
		status                int
		location              string
	}{
		{"GET", "/api//%75sers", readToken, 308, "/api/%75sers"},
		{"GET", "/api//%75sers", "", 401, ""},
		{"GET", "//api/", "", 401, ""},
		{"GET", "//api/", readToken, 308, "/api/"},
		{"GET", "/x/../api/users?page=2&q=a%20b", readToken, 308, "/api/users?page=2&q=a%20b"},
		{"DELETE", "/api/users/./7", readToken, 308, "/api/users/7"},
		{"OPTIONS", "/api//products", "", 308, "/api/products"},
		{"GET", "//healthz", "", 308, "/healthz"},
		{"GET", "//api", "", 308, "/api"},
		{"GET", "/./%5C/evil.example", "", 308, "/%5C/evil.example"},
		{"GET", "/%2Fapi/users", "", 401, ""},
		{"GET", "/%2Fapi/users", readToken, 404, ""},
		{"GET", "/api/%2E%2E/healthz", readToken, 404, ""},
		{"GET", "/assets/%2E%2E/%2E%2E/etc/passwd", "", 404, ""},
	} {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.token != "" {
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			w := ts.serve(r)
			wantStatus(t, w, tt.status)
			wantHeaders(t, w.Header(), map[string]string{"Location": tt.location, "Content-Type": "application/json"})
			if tt.status == http.StatusPermanentRedirect {
				clean, _, _ := strings.Cut(tt.location, "?")
				wantError(t, w, tt.status, "this path is not in clean form: it is "+clean)
			}
		})
	}
}
