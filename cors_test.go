package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The rules of cors.go (docs/api.md, "Browsers (CORS)").

// An origin is taken only as a browser writes it in Origin (RFC 6454 §6.2); browserOrigin gives
// that form, which -cors-origin shows for one written otherwise, or false for no origin at all.
func TestBrowserOriginIsTheFormOfOrigin(t *testing.T) {
	for _, tt := range []struct {
		origin, form string
		ok           bool
	}{
		{"http://localhost:3000", "http://localhost:3000", true},
		{"http://localhost:03000", "http://localhost:3000", true},
		{"HTTP://App.Example", "http://app.example", true},
		{"http://app.example/", "http://app.example", true},
		{"https://app.example:443", "https://app.example", true},
		{"http://[::1]:8080", "http://[::1]:8080", true},
		{"https://app.example/app", "", false},
		{"ftp://app.example", "", false},
		{"app.example", "", false},
		{"http://localhost:99999", "", false},
	} {
		t.Run(tt.origin, func(t *testing.T) {
			if form, ok := browserOrigin(tt.origin); form != tt.form || ok != tt.ok {
				t.Errorf("browserOrigin(%q) = %q, %v; want %q, %v", tt.origin, form, ok, tt.form, tt.ok)
			}
		})
	}
}

// Without -cors-origin no answer carries a CORS header, so a browser lets no page on another
// origin read the API; a preflight is then only an OPTIONS request.
func TestCORSIsOffByDefault(t *testing.T) {
	ts := newTestServer(t)
	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "/api/users", nil),
		httptest.NewRequest("OPTIONS", "/api/users/undefined", nil),
	} {
		r.Header.Set("Authorization", "Bearer "+readToken)
		r.Header.Set("Origin", "http://localhost:3000")
		r.Header.Set("Access-Control-Request-Method", "GET")
		w := ts.serve(r)
		if corsHeaders(w.Header()) != nil || slices.Contains(w.Header().Values("Vary"), "Origin") {
			t.Errorf("%s %s: %d with %v, want no CORS header", r.Method, r.URL, w.Code, w.Header())
		}
	}
}

// With -cors-origin listing origins, an answer to a page of a listed origin, compared byte for
// byte with Origin, names that origin and exposes the headers a client acts on, error answers
// included; a preflight is also allowed every method of the API and the request headers it
// invites. A preflight needs no token and is 204 on every path under /api/, known or not, so that
// the page then sees the real request's JSON 404 or 405; elsewhere it gets the route's OPTIONS
// answer. An origin not listed gets no CORS header. Every answer varies by Origin.
func TestCORSAnswersTheListedOriginsOnly(t *testing.T) {
	const local, app = "http://localhost:3000", "https://app.example"
	// wantListed fails the test unless the field, a list, names each of names.
	wantListed := func(t *testing.T, h http.Header, field string, names ...string) {
		t.Helper()
		for _, name := range names {
			if !slices.Contains(strings.Split(h.Get(field), ", "), name) {
				t.Errorf("%s %q does not name %s", field, h.Get(field), name)
			}
		}
	}
	tests := []struct {
		name, method, target, origin string
		preflight                    bool // a preflight: OPTIONS with Access-Control-Request-Method
		status                       int
		allowed                      bool
	}{
		{"a listed origin", "GET", "/api/users", local, false, 200, true},
		{"the other listed origin, on an error", "POST", "/api/users", app, false, 415, true},
		{"an origin not listed", "GET", "/api/users", "https://evil.example", false, 200, false},
		{"a listed origin in other case", "GET", "/api/users", "http://LOCALHOST:3000", false, 200, false},
		{"a listed origin on another port", "GET", "/api/users", "http://localhost:3001", false, 200, false},
		{"no origin", "GET", "/api/users", "", false, 200, false},
		{"a preflight to a path that does not exist", "OPTIONS", "/api/users/undefined", local, true, 204, true},
		{"a preflight for a method the path does not take", "OPTIONS", "/api/users", app, true, 204, true},
		{"a preflight from an origin not listed", "OPTIONS", "/api/users/undefined", "https://evil.example", true, 404, false},
		{"a preflight outside /api/", "OPTIONS", "/healthz", local, true, 204, true},
		{"a preflight to an unknown path outside /api/", "OPTIONS", "/nothing", local, true, 404, true},
	}
	ts := newTestServer(t, "-cors-origin", local+","+app)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if tt.preflight {
				r.Header.Set("Access-Control-Request-Method", "DELETE") // and no token: a browser sends none
			} else {
				r.Header.Set("Authorization", "Bearer "+writeToken)
			}
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			w := ts.serve(r)
			h := w.Header()
			if w.Code != tt.status || !slices.Contains(h.Values("Vary"), "Origin") {
				t.Errorf("%d with Vary %q, want %d varying by Origin", w.Code, h.Values("Vary"), tt.status)
			}
			if !tt.allowed {
				if cors := corsHeaders(h); cors != nil {
					t.Errorf("CORS headers %v, want none", cors)
				}
				return
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != tt.origin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.origin)
			}
			// Every header docs/api.md tells a client to act on, so that a page can read it.
			wantListed(t, h, "Access-Control-Expose-Headers", "Location", "Content-Location", "ETag", "Link",
				"WWW-Authenticate", "X-Request-Id", "Allow", "Accept-Post", "Accept-Patch", "Retry-After")
			if tt.preflight {
				wantListed(t, h, "Access-Control-Allow-Methods", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
				wantListed(t, h, "Access-Control-Allow-Headers", "Authorization", "Content-Type", "If-Match", "If-None-Match", "X-Request-Id")
			}
		})
	}
	if users := allUsers(t, ts.store); len(users) != 0 {
		t.Errorf("the requests created %v", users)
	}
}

// With -cors-origin * a page of any origin may call the API; the answers then name no origin and
// do not vary by it.
func TestCORSStarAllowsEveryOrigin(t *testing.T) {
	ts := newTestServer(t, "-cors-origin", "*")
	get := httptest.NewRequest("GET", "/api/users", nil)
	get.Header.Set("Authorization", "Bearer "+readToken)
	preflight := httptest.NewRequest("OPTIONS", "/api/users/undefined", nil)
	preflight.Header.Set("Access-Control-Request-Method", "DELETE")
	for _, r := range []*http.Request{get, preflight} {
		r.Header.Set("Origin", "https://anyone.example")
		w := ts.serve(r)
		if got := w.Header().Get("Access-Control-Allow-Origin"); got != "*" || w.Code/100 != 2 || slices.Contains(w.Header().Values("Vary"), "Origin") {
			t.Errorf("%s: %d, Access-Control-Allow-Origin %q, Vary %q; want a success for *, not varying by Origin",
				r.Method, w.Code, got, w.Header().Values("Vary"))
		}
		if methods := w.Header().Get("Access-Control-Allow-Methods"); r == preflight && !strings.Contains(methods, "DELETE") {
			t.Errorf("a preflight for DELETE: Access-Control-Allow-Methods %q, want it to name DELETE", methods)
		}
	}
}

// corsHeaders returns the Access-Control-* fields of a header, or nil when it has none.
func corsHeaders(h http.Header) http.Header {
	var cors http.Header
	for name, values := range h {
		if strings.HasPrefix(name, "Access-Control-") {
			if cors == nil {
				cors = http.Header{}
			}
			cors[name] = values
		}
	}
	return cors
}

// A request from a page of an origin not allowed is logged, once for each origin and for at most
// 32 of them, naming the origins allowed: a page that sees only "Failed to fetch" has its reason
// in the log. A request of the server's own page, whose Origin is the server's, is not refused.
func TestARefusedOriginIsLoggedOnce(t *testing.T) {
	ts := newTestServer(t, "-cors-origin", "http://localhost:3000")
	send := func(origin string) {
		r := httptest.NewRequest("OPTIONS", "/api/users", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "GET")
		ts.serve(r)
	}
	send("http://127.0.0.1:3000")
	send("http://127.0.0.1:3000")
	send("http://example.com") // httptest.NewRequest's Host: the server's own origin
	want := []string{"http://127.0.0.1:3000"}
	for i := range 40 {
		origin := fmt.Sprintf("http://made-up-%d.example", i)
		send(origin)
		if len(want) < 32 {
			want = append(want, origin)
		}
	}
	var logged []string
	for _, record := range ts.log.records("cross-origin request refused") {
		logged = append(logged, fmt.Sprint(record["origin"]))
		if record["allowed"] != "http://localhost:3000" {
			t.Errorf("the record %v does not name the allowed origin http://localhost:3000", record)
		}
	}
	if !reflect.DeepEqual(logged, want) {
		t.Errorf("the refused origins logged are\n%q\nwant each once, the first 32, and not the server's own:\n%q", logged, want)
	}
}
