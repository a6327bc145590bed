package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The rules of middleware.go: what every answer carries, CORS, panics and the access log
// (docs/api.md, "Responses" and "Browsers (CORS)"; README, "Configuration"), proved on the
// middleware functions, and through the real handler for what the kit does not check: CORS off
// and *, panics, the log (no token in it, no line forged by a request) and -delay.

// An X-Request-Id of 1 to 64 characters of A-Z a-z 0-9 . _ - is the client's, echoed and logged;
// any other, or none, gets the server's own: a prefix and a counter, new on every request.
func TestRequestIDIsTheClientsOnlyIfSafe(t *testing.T) {
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
func TestCORSListEchoesAListedOrigin(t *testing.T) {
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
func TestCORSStarAllowsAnyOrigin(t *testing.T) {
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
func TestCORSOriginsMatchAsBrowsersWriteThem(t *testing.T) {
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
func TestPanicIsAJSON500LoggedWithItsStack(t *testing.T) {
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
func TestPanicDropsTheHeadersAlreadySet(t *testing.T) {
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

// A panic costs its own request only. Before the answer has begun it is the JSON 500, without the
// headers set for the answer never given; after, the status is already on its way, so the
// connection is cut and the client sees a broken answer rather than a complete-looking one.
// Either way the panic is logged once with its stack, net/http does not log it a second time, and
// the server goes on (README, "What it withstands").
func TestPanicCostsOnlyItsOwnRequest(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		cut     bool // the connection is cut, rather than answered 500
	}{
		{"before the answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/half/made") // for an answer never given: must not reach the 500
			panic("before the answer")
		}, false},
		{"after the status", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic("after the status")
		}, true},
		{"after part of the body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"data":[`)
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Error(err)
			}
			panic("after part of the body")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.create(t, "Ann", "ann@example.com")
			// /panic gets the service's own middleware, logging where the service does; every other
			// path goes to the service.
			a := &api{log: newLogger("json", ts.log), requestIDPrefix: "panic-"}
			mux := http.NewServeMux()
			mux.Handle("/panic", a.observe(tt.handler))
			mux.Handle("/", ts)
			server := httptest.NewUnstartedServer(mux)
			serverLog := &logBuffer{}
			server.Config.ErrorLog = log.New(serverLog, "", 0)
			server.Start()
			defer server.Close()
			requestsBefore := len(ts.log.records(t, "request"))

			// A new connection for each request: on a reused one, net/http's client would retry a
			// GET whose connection was cut, and the panic would happen twice.
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			get := func(path string) (*http.Response, []byte, error) {
				r, _ := http.NewRequest("GET", server.URL+path, nil)
				r.Header.Set("Authorization", "Bearer "+readToken)
				resp, err := client.Do(r)
				if err != nil {
					return nil, nil, err
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				return resp, body, err
			}
			const rounds = 3
			for round := 0; round < rounds; round++ {
				resp, body, err := get("/panic")
				switch {
				case tt.cut && err == nil:
					t.Fatalf("the client read a whole answer, %d %q; want the connection cut", resp.StatusCode, body)
				case tt.cut:
				case err != nil:
					t.Fatal(err)
				case resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/json" ||
					string(body) != `{"error":"internal server error"}`:
					t.Fatalf("status %d, Content-Type %q, body %s; want the JSON 500",
						resp.StatusCode, resp.Header.Get("Content-Type"), body)
				case resp.Header.Get("Location") != "" || resp.Header.Get("X-Request-Id") == "":
					t.Fatalf("headers %v: want an X-Request-Id and no Location", resp.Header)
				}
				if resp, body, err := get("/api/users/1"); err != nil || resp.StatusCode != 200 {
					t.Fatalf("after the panic: %v, body %s", err, body)
				}
			}

			panics := ts.log.records(t, "panic in handler")
			if len(panics) != rounds {
				t.Fatalf("%d records of the panic for %d panics:\n%s", len(panics), rounds, ts.log)
			}
			for _, record := range panics {
				stack, _ := record["stack"].(string)
				if record["panic"] != tt.name || !strings.HasPrefix(stack, "goroutine ") || !strings.Contains(stack, "middleware_test.go") {
					t.Errorf("the panic is logged as %v, want its value and a stack naming the handler", record)
				}
			}
			if n := len(ts.log.records(t, "request")) - requestsBefore; n != 2*rounds {
				t.Errorf("%d access log records for %d requests", n, 2*rounds)
			}
			if strings.Contains(serverLog.String(), "panic") {
				t.Errorf("net/http logged the panic a second time:\n%s", serverLog)
			}
		})
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
	if ms, ok := records[0]["duration_ms"].(float64); !ok || ms < 0 { // how long it took is the clock's to say
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
func TestHeadIsLoggedWithNoBytes(t *testing.T) {
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

// Tokens never reach a log line, an error message or any answer (docs/api.md, "Authentication"),
// wherever a client puts them and in either log format; each request is one log line.
func TestTokensNeverReachTheLog(t *testing.T) {
	const unknownToken = "unknown-secret-token-0123456789"
	secrets := []string{writeToken, readToken, unknownToken}
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	authorization := func(values ...string) http.Header {
		return http.Header{"Authorization": values, "Content-Type": {"application/json"}}
	}
	writer, reader := authorization("Bearer "+writeToken), authorization("Bearer "+readToken)
	tests := []struct {
		name, method, target string
		header               http.Header
		body                 string
		status               int
	}{
		{"the write token", "GET", "/api/users", writer, "", 200},
		{"the read token", "GET", "/api/users/1", reader, "", 200},
		{"the read token on a write", "POST", "/api/users", reader, eve, 403},
		{"an unknown token", "GET", "/api/users", authorization("Bearer " + unknownToken), "", 401},
		{"the token twice", "GET", "/api/users", authorization("Bearer "+writeToken, "Bearer "+writeToken), "", 401},
		{"the token after another scheme", "GET", "/api/users", authorization("Token " + writeToken), "", 401},
		{"the token in the query alone", "GET", "/api/users?access_token=" + writeToken, nil, "", 401},
		{"the token in the query of the list", "GET", "/api/users?access_token=" + writeToken, writer, "", 400},
		{"the token in the query of a user", "GET", "/api/users/1?access_token=" + readToken, writer, "", 400},
		{"the token in the query of a create", "POST", "/api/users?access_token=" + writeToken, writer, eve, 400},
		{"the token as a query value to sort", "GET", "/api/users?sort=" + writeToken, writer, "", 400},
		{"the token as a page", "GET", "/api/users?page=" + writeToken, writer, "", 400},
		{"the token in If-Match", "DELETE", "/api/users/1",
			http.Header{"Authorization": {"Bearer " + writeToken}, "If-Match": {`"` + writeToken + `"`}}, "", 412},
		{"the token on a 404", "GET", "/api/nothing", writer, "", 404},
		{"the token on a 405", "DELETE", "/api/users", writer, "", 405},
		{"the token on a 501", "TRACE", "/api/users", writer, "", 501},
		{"the token on OPTIONS", "OPTIONS", "/api/users/1", writer, "", 204},
		{"the token on /healthz", "GET", "/healthz", writer, "", 200},
	}
	for _, format := range []string{"text", "json"} {
		for _, tt := range tests {
			t.Run(format+" "+tt.name, func(t *testing.T) {
				ts := newTestServer(t, "-log-format", format)
				ts.create(t, "Ann", "ann@example.com")
				linesBefore := strings.Count(ts.log.String(), "\n")
				r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
				for name, values := range tt.header {
					for _, value := range values {
						r.Header.Add(name, value)
					}
				}
				w := ts.serve(r)

				wantStatus(t, w, tt.status)
				for _, secret := range secrets {
					if strings.Contains(w.Body.String(), secret) {
						t.Errorf("the answer's body holds a token: %s", w.Body)
					}
					for name, values := range w.Header() {
						if strings.Contains(strings.Join(values, ", "), secret) {
							t.Errorf("the answer's %s holds a token: %q", name, values)
						}
					}
					if strings.Contains(ts.log.String(), secret) {
						t.Errorf("the log holds a token:\n%s", ts.log)
					}
				}
				if lines := strings.Count(ts.log.String(), "\n") - linesBefore; lines != 1 {
					t.Errorf("%d log lines, want 1", lines)
				}
			})
		}
	}
}

// Request values are logged as data: a path, header or id holding a newline, quotes or escape
// codes cannot start a log line of its own or pass for another field. One request, one line, in
// either log format.
func TestRequestValuesCannotForgeLogLines(t *testing.T) {
	tests := []struct {
		name, method, target string
		header               http.Header
		body                 string
	}{
		{"a newline in the path", "GET", "/api/users/1%0Atime=2000-01-01%20level=ERROR%20msg=forged", nil, ""},
		{"a carriage return in the path", "GET", "/api/users/1%0D%0Alevel=ERROR", nil, ""},
		{"quotes in the path", "GET", `/api/users/%22%20status=200%20x=%22`, nil, ""},
		{"a JSON break-out in the path", "GET", `/api/users/%22,%22level%22:%22ERROR`, nil, ""},
		{"an escape code in the path", "GET", "/api/users/%1B%5B31mred", nil, ""},
		{"a line separator in the path", "GET", "/api/users/1%E2%80%A8level=ERROR", nil, ""},
		{"a NUL in the path", "GET", "/api/%00level=ERROR", nil, ""},
		{"invalid UTF-8 in the path", "GET", "/api/users/%FF%FE", nil, ""},
		{"a newline in X-Request-Id", "GET", "/api/users", http.Header{"X-Request-Id": {"a\nlevel=ERROR msg=forged"}}, ""},
		{"quotes in X-Request-Id", "GET", "/api/users", http.Header{"X-Request-Id": {`a" level="ERROR`}}, ""},
		{"an unknown method", "FORGED", "/api/users", nil, ""},
		{"a newline in a field name", "POST", "/api/users", http.Header{"Content-Type": {"application/json"}}, `{"x\nlevel=ERROR":1}`},
		{"a newline in a query name", "GET", "/api/users?x%0Alevel=ERROR=1", nil, ""},
	}
	// parseTextLine reads a line of slog's text format: key=value pairs separated by spaces, where
	// a value is either Go-quoted or has no space, quote or equals sign in it.
	parseTextLine := func(line string) (keys []string, values map[string]string, err error) {
		values = map[string]string{}
		rest := strings.TrimSuffix(line, "\n")
		for rest != "" {
			key, after, found := strings.Cut(rest, "=")
			if !found || key == "" || strings.ContainsAny(key, " \"") {
				return nil, nil, fmt.Errorf("no key=value at %q", rest)
			}
			var value string
			if strings.HasPrefix(after, `"`) {
				quoted, err := strconv.QuotedPrefix(after)
				if err != nil {
					return nil, nil, fmt.Errorf("a bad quoted value at %q", after)
				}
				value, _ = strconv.Unquote(quoted)
				after = after[len(quoted):]
			} else {
				value, after, _ = strings.Cut(after, " ")
				after = " " + after
				if strings.ContainsAny(value, "\"=") {
					return nil, nil, fmt.Errorf("an unquoted value %q", value)
				}
			}
			if _, seen := values[key]; seen {
				return nil, nil, fmt.Errorf("the key %s twice", key)
			}
			keys, values[key] = append(keys, key), value
			if after == " " || after == "" {
				break
			}
			if !strings.HasPrefix(after, " ") {
				return nil, nil, fmt.Errorf("no space after a value at %q", after)
			}
			rest = after[1:]
		}
		return keys, values, nil
	}
	// replaceInvalidBytes replaces each byte that is not part of valid UTF-8 with U+FFFD, as slog's
	// JSON handler does (strings.ToValidUTF8 would replace a run of them with one).
	replaceInvalidBytes := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r) // utf8.RuneError is U+FFFD
			i += size
		}
		return b.String()
	}
	for _, format := range []string{"text", "json"} {
		for _, tt := range tests {
			t.Run(format+" "+tt.name, func(t *testing.T) {
				ts := newTestServer(t, "-log-format", format)
				ts.create(t, "Ann", "ann@example.com")
				before := ts.log.String()
				r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(tt.body))
				for name, values := range tt.header {
					r.Header[name] = values
				}
				r.Header.Set("Authorization", "Bearer "+writeToken)
				w := ts.serve(r)

				if w.Code >= 500 && w.Code != http.StatusNotImplemented {
					t.Errorf("status %d", w.Code)
				}
				line := strings.TrimPrefix(ts.log.String(), before)
				if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
					t.Fatalf("the request logged %q, want one line", line)
				}
				wantPath, requestID := r.URL.Path, w.Header().Get("X-Request-Id")
				if format == "json" {
					var record map[string]any
					if err := json.Unmarshal([]byte(line), &record); err != nil {
						t.Fatalf("the line is not one JSON record: %v\n%s", err, line)
					}
					if record["path"] != replaceInvalidBytes(wantPath) || record["request_id"] != requestID ||
						record["level"] != "INFO" || record["msg"] != "request" || record["method"] != tt.method {
						t.Errorf("the record says %v", record)
					}
					return
				}
				keys, values, err := parseTextLine(line)
				if err != nil {
					t.Fatalf("%v in the line %s", err, line)
				}
				if !slices.Equal(keys, []string{"time", "level", "msg", "method", "path", "status", "bytes", "duration_ms", "request_id"}) ||
					values["level"] != "INFO" || values["msg"] != "request" || values["method"] != tt.method ||
					values["path"] != wantPath || values["request_id"] != requestID {
					t.Errorf("the line reads as %q = %q", keys, values)
				}
			})
		}
	}
}

// -delay holds back every /api/ answer, for showing loading states, and no other. A request whose
// client has already gone shows it without a clock: /healthz, not held, is answered all the same;
// /api/users is held, so it gets no answer, and the log says so naming no status (nothing was
// sent); a server that is stopping ends the delay early, and the request is answered.
func TestDelayHoldsBackOnlyAPIAnswers(t *testing.T) {
	stopped := make(chan struct{})
	close(stopped)
	gone, leave := context.WithCancel(context.Background())
	leave()
	tests := []struct {
		name     string
		path     string
		ctx      context.Context // the request's context, as the server gives it
		answered bool
	}{
		{"healthz is not held back", "/healthz", gone, true},
		{"a client gone gets no answer", "/api/users", gone, false},
		{"a stopping server answers", "/api/users", withStopping(context.Background(), stopped), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, "-delay", "10s") // the longest: a request held back would wait it out
			r := httptest.NewRequest("GET", tt.path, nil).WithContext(tt.ctx)
			r.Header.Set("Authorization", "Bearer "+readToken)
			w := ts.serve(r)

			answered, unanswered := ts.log.records(t, "request"), ts.log.records(t, "request got no answer")
			if tt.answered {
				wantStatus(t, w, http.StatusOK)
				if len(answered) != 1 || len(unanswered) != 0 {
					t.Errorf("the log has %v and %v, want one record of the answer", answered, unanswered)
				}
				return
			}
			if w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" {
				t.Errorf("an answer was written for a client that had gone: %q", w.Body)
			}
			if len(answered) != 0 {
				t.Errorf("logged as answered: %v", answered)
			}
			if len(unanswered) != 1 || unanswered[0]["status"] != nil || unanswered[0]["path"] != "/api/users" {
				t.Errorf("the log has %v, want one record of the request, with no status", unanswered)
			}
		})
	}
}

// cleanPath removes dot segments as RFC 3986 §5.2.4 does and merges empty segments, on the path as
// sent: a percent-escape is bytes like any other, so %2E is not a dot and %2F not a slash.
func TestCleanPathRemovesDotSegments(t *testing.T) {
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
			ts := newTestServer(t)
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
