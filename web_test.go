package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The rules of web.go: the explorer page, its files and the OpenAPI document are served as they are,
// with no token.

func TestExplorerPageAndItsFilesAreServed(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct{ path, contentType string }{
		{"/", "text/html; charset=utf-8"},
		{"/assets/app.js", "text/javascript; charset=utf-8"},
		{"/assets/app.css", "text/css; charset=utf-8"},
		{"/assets/favicon.svg", "image/svg+xml"},
		{"/openapi.json", "application/json"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			w := s.do("GET", tc.path, "") // no token: none is needed
			if w.Code != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
			}
			h := w.Header()
			if got := h.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := h.Get("Content-Length"); got != strconv.Itoa(w.Body.Len()) {
				t.Errorf("Content-Length = %q for a body of %d bytes", got, w.Body.Len())
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-cache" || h.Get("Etag") == "" {
				t.Errorf("headers %v: want nosniff, Cache-Control: no-cache and an ETag", h)
			}
			page := tc.path == "/"
			if csp := h.Get("Content-Security-Policy"); page != (csp != "") {
				t.Errorf("Content-Security-Policy = %q: want one on the page only", csp)
			}

			// The ETag lets a browser keep the file and ask whether it changed: 304, no body.
			again := s.do("GET", tc.path, "", "If-None-Match", h.Get("Etag"))
			if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("Content-Type") != "" {
				t.Errorf("If-None-Match with the ETag: status %d, body %q, Content-Type %q; want 304 with neither",
					again.Code, again.Body, again.Header().Get("Content-Type"))
			}
		})
	}
}

func TestExplorerPageHasAStrictContentSecurityPolicy(t *testing.T) {
	w := newTestServer(t).do("GET", "/", "")
	csp := w.Header().Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'",
		"connect-src 'self'", "img-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, directive) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, directive)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "*") {
		t.Errorf("Content-Security-Policy %q allows more than the service's own files", csp)
	}
	// With that policy, inline script or style would not run: the page must have none.
	page := w.Body.String()
	if inline := regexp.MustCompile(`(?i)<script>|<style|\sstyle=|\son[a-z]+=`).FindString(page); inline != "" {
		t.Errorf("the page has inline code the policy would block: %q", inline)
	}
}

// Every file the page links is served, and none comes from another origin: the page works with
// no network.
func TestExplorerLinksOnlyItsOwnFiles(t *testing.T) {
	files := string(staticFiles["/"].body) + string(staticFiles["/assets/app.css"].body) + string(staticFiles["/assets/app.js"].body)
	for _, link := range regexp.MustCompile(`/assets/[A-Za-z0-9._-]+`).FindAllString(files, -1) {
		if _, ok := staticFiles[link]; !ok {
			t.Errorf("the page links %s, which is not in web/assets", link)
		}
	}
	if !strings.Contains(string(staticFiles["/"].body), `<link rel="icon" href="/assets/favicon.svg"`) {
		t.Error("the page names no icon: the browser would ask for /favicon.ico and log its 404")
	}
	if external := regexp.MustCompile(`(?i)(src|href)="(https?:)?//|url\((https?:)?//|@import`).FindString(files); external != "" {
		t.Errorf("the page loads something from elsewhere: %q", external)
	}
}

func TestUnknownAssetIsJSON404(t *testing.T) {
	s := newTestServer(t)
	for _, path := range []string{"/assets/nope.js", "/assets/", "/assets/app.js/x", "/assets", "/index.html", "/web/index.html"} {
		w := s.do("GET", path, "")
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, w.Code)
			continue
		}
		errorBody(t, w)
	}
}

func TestExplorerRoutesTakeOnlyGetHeadAndOptions(t *testing.T) {
	s := newTestServer(t)
	for _, path := range []string{"/", "/openapi.json", "/assets/app.js"} {
		w := s.do("POST", path, "{}", asJSON...)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("POST %s: status %d, Allow %q; want 405 with GET, HEAD, OPTIONS", path, w.Code, w.Header().Get("Allow"))
		}
		errorBody(t, w)
		w = s.do("OPTIONS", path, "")
		if w.Code != http.StatusNoContent || w.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("OPTIONS %s: status %d, Allow %q; want 204 with GET, HEAD, OPTIONS", path, w.Code, w.Header().Get("Allow"))
		}
	}
}

// HEAD has the headers of GET and no body; only a real connection shows that (the recorder keeps
// whatever a handler writes).
func TestExplorerHeadOverARealConnection(t *testing.T) {
	server := httptest.NewServer(newTestServer(t).handler)
	defer server.Close()
	for _, path := range []string{"/", "/assets/app.js", "/openapi.json"} {
		response, err := http.Head(server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(response.Body)
		response.Body.Close()
		get, err := http.Get(server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := io.ReadAll(get.Body)
		get.Body.Close()
		if response.StatusCode != http.StatusOK || len(body) != 0 ||
			response.Header.Get("Content-Length") != strconv.Itoa(len(full)) || response.Header.Get("Etag") != get.Header.Get("Etag") {
			t.Errorf("HEAD %s: status %d, %d body bytes, Content-Length %q; want 200, none, %d",
				path, response.StatusCode, len(body), response.Header.Get("Content-Length"), len(full))
		}
	}
}

// The page and its files follow the preconditions as the API does: If-Match that fails is 412.
func TestIfMatchThatFailsOnAFileIs412(t *testing.T) {
	s := newTestServer(t)
	for _, path := range []string{"/", "/openapi.json", "/assets/app.js"} {
		etag := s.do("GET", path, "").Header().Get("ETag")
		failed := s.do("GET", path, "", "If-Match", `"nope"`)
		wantError(t, failed, http.StatusPreconditionFailed, "If-Match")
		wantHeader(t, failed.Header(), "Cache-Control", "no-store") // an error answer is kept by no cache
		if etag := failed.Header().Get("ETag"); etag != "" {
			t.Errorf("%s: the 412 carries the ETag %s of the answer it replaces", path, etag)
		}
		wantStatus(t, s.do("GET", path, "", "If-Match", etag), http.StatusOK)
		wantStatus(t, s.do("HEAD", path, "", "If-Match", etag, "If-None-Match", etag), http.StatusNotModified)
	}
}
