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
// (docs/api.md, "Responses"; README, "Configuration").

// observed wraps handler in the middleware that observes every request, logging to log.
func observed(log *slog.Logger, handler http.Handler) http.Handler {
	return (&api{log: log, requestIDPrefix: "test-"}).observe(handler)
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
