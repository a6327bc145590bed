package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The rules of middleware.go: what every answer carries, CORS, panics and the access log
// (docs/api.md, "Responses"; README, "Configuration"), proved on the middleware functions, and
// through the real handler stack for what the kit does not check: CORS off and *, panics, the log
// and -delay.

// observed wraps handler in the middleware that observes every request, logging to log.
func observed(log *slog.Logger, handler http.Handler) http.Handler {
	return (&api{log: log, requestIDPrefix: "test-"}).observe(handler)
}

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
	fresh := map[string]bool{}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/api/users", nil)
		for _, id := range tt.sent {
			r.Header.Add("X-Request-Id", id)
		}
		got := a.requestID(r)
		switch {
		case tt.echoed && got != tt.sent[0]:
			t.Errorf("%s: request id %q, want the client's %q", tt.name, got, tt.sent[0])
		case !tt.echoed && (!strings.HasPrefix(got, "5eed-") || !isRequestID(got) || fresh[got]):
			t.Errorf("%s: request id %q, want a fresh one of the server's", tt.name, got)
		}
		fresh[got] = true
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

// With -cors-origin listing origins, an answer to a listed origin names it and exposes the headers
// clients act on, an error answer too; a preflight also gets the headers it may send and how long
// to remember that. Every answer varies on Origin, for a cache, whether or not it names one.
func TestCORSWithAListEchoesAListedOriginAndVariesOnOrigin(t *testing.T) {
	const allowHeaders = "Authorization, Content-Type, If-Match, If-None-Match"
	exposed := strings.Join(exposedHeaders, ", ")
	tests := []struct {
		name    string
		method  string
		headers []string
		want    map[string]string // "" for a header the answer must not have
	}{
		{"a listed origin", "GET", []string{"Origin", "https://app.example.com"}, map[string]string{
			"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": exposed,
			"Access-Control-Allow-Headers": "", "Access-Control-Max-Age": ""}},
		{"the other listed origin", "POST", []string{"Origin", "http://localhost:3000"}, map[string]string{
			"Access-Control-Allow-Origin": "http://localhost:3000", "Access-Control-Expose-Headers": exposed}},
		{"an origin not listed", "GET", []string{"Origin", "https://evil.example"}, map[string]string{
			"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
		{"an origin that differs by its port", "GET", []string{"Origin", "http://localhost:3001"}, map[string]string{
			"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
		{"no Origin", "GET", nil, map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}},
		{"a preflight from a listed origin", "OPTIONS", []string{"Origin", "https://app.example.com", "Access-Control-Request-Method", "PATCH"},
			map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": exposed,
				"Access-Control-Allow-Headers": allowHeaders, "Access-Control-Max-Age": "600"}},
		{"a preflight from an origin not listed", "OPTIONS", []string{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"},
			map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Headers": "", "Access-Control-Max-Age": ""}},
		{"OPTIONS without Access-Control-Request-Method", "OPTIONS", []string{"Origin", "https://app.example.com"},
			map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Allow-Headers": ""}},
	}
	a := &api{log: newLogger("text", io.Discard), cors: corsPolicy{origins: []string{"http://localhost:3000", "https://app.example.com"}}}
	handler := a.allowCrossOrigin(a.handle(notFound)) // an error answer keeps the CORS headers
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/users/9", nil)
			for i := 0; i+1 < len(tt.headers); i += 2 {
				r.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, r)
			wantStatus(t, w, http.StatusNotFound)
			for name, value := range tt.want {
				if got := w.Header().Values(name); value == "" && len(got) > 0 || value != "" && (len(got) != 1 || got[0] != value) {
					t.Errorf("%s = %q, want %q", name, got, value)
				}
			}
			wantHeader(t, w.Header(), "Vary", "Origin")
		})
	}
}

// With -cors-origin * every page may read the answers, which then do not vary by origin; a
// preflight from any origin is allowed the route's methods and the four headers.
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
	w := ts.do("OPTIONS", "/api/users/1", "", "Origin", "https://anyone.example",
		"Access-Control-Request-Method", "PATCH", "Access-Control-Request-Headers", "authorization, content-type, if-match")
	wantStatus(t, w, http.StatusNoContent) // no token: a browser sends none with a preflight
	wantHeader(t, w.Header(), "Access-Control-Allow-Origin", "*")
	wantHeaderSet(t, w.Header(), "Access-Control-Allow-Methods", "GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS")
	wantHeaderSet(t, w.Header(), "Access-Control-Allow-Headers", "Authorization", "Content-Type", "If-Match", "If-None-Match")
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
		ts := newCORSTestServer(t, tt.configured)
		w := ts.do("GET", "/api/users/1", "", join(asReader, []string{"Origin", tt.browser})...)
		wantHeader(t, w.Header(), "Access-Control-Allow-Origin", tt.browser)
	}
}
