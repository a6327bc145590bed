package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The rules of web.go (docs/api.md, "Routes"): the explorer page (/), its files (/assets/{file})
// and the OpenAPI document (/openapi.json) are the files of web/ as they are written, served with
// no token, each with its media type and a strong ETag, and the preconditions of RFC 9110 §13.

// servedFiles are the files web.go serves: the path, the file of web/ it serves, its media type.
var servedFiles = []struct{ path, file, contentType string }{
	{"/", "web/index.html", "text/html; charset=utf-8"},
	{"/assets/app.css", "web/assets/app.css", "text/css; charset=utf-8"},
	{"/assets/app.js", "web/assets/app.js", "text/javascript; charset=utf-8"},
	{"/assets/favicon.svg", "web/assets/favicon.svg", "image/svg+xml"},
	{"/openapi.json", "web/openapi.json", "application/json"},
}

// Each file is served with no token, byte for byte as written in web/, with its media type and
// length, nosniff, and Cache-Control: no-cache (a browser may keep it but must ask first: the
// names never change) with a strong ETag to ask with.
func TestExplorerFilesAreServedAsWritten(t *testing.T) {
	strongETag := regexp.MustCompile(`^"[\x21\x23-\x7e]+"$`) // an entity tag without W/ (RFC 9110 §8.8.3)
	ts := newTestServer(t)
	for _, f := range servedFiles {
		t.Run(f.path, func(t *testing.T) {
			written, err := os.ReadFile(f.file)
			if err != nil {
				t.Fatal(err)
			}
			w := ts.serve(httptest.NewRequest("GET", f.path, nil)) // no Authorization: none is needed
			if w.Code != http.StatusOK || w.Body.String() != string(written) {
				t.Fatalf("status %d and %d bytes, want 200 and the %d bytes of %s", w.Code, w.Body.Len(), len(written), f.file)
			}
			for name, want := range map[string]string{
				"Content-Type":           f.contentType,
				"Content-Length":         strconv.Itoa(len(written)),
				"X-Content-Type-Options": "nosniff",
				"Cache-Control":          "no-cache",
			} {
				if got := w.Header().Get(name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			if etag := w.Header().Get("ETag"); !strongETag.MatchString(etag) {
				t.Errorf("ETag %q, want a strong entity tag", etag)
			}
		})
	}
}

// The files follow the preconditions as the API does (docs/api.md, "Conditional requests"): an
// If-None-Match that matches is 304 with the ETag and no body, so a browser keeps its copy; an
// If-Match that matches none is 412, the JSON error without an ETag.
func TestExplorerFilesFollowPreconditions(t *testing.T) {
	ts := newTestServer(t)
	const other = `"not-the-current-tag"`
	for _, f := range servedFiles {
		current := ts.serve(httptest.NewRequest("GET", f.path, nil)).Header().Get("ETag")
		for _, tt := range []struct {
			header, value string
			status        int
		}{
			{"If-None-Match", current, http.StatusNotModified},
			{"If-None-Match", other, http.StatusOK},
			{"If-Match", current, http.StatusOK},
			{"If-Match", other, http.StatusPreconditionFailed},
		} {
			t.Run(fmt.Sprintf("%s %s %s", f.path, tt.header, tt.value), func(t *testing.T) {
				r := httptest.NewRequest("GET", f.path, nil)
				r.Header.Set(tt.header, tt.value)
				w := ts.serve(r)
				switch tt.status {
				case http.StatusNotModified:
					if w.Code != tt.status || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "" ||
						w.Header().Get("ETag") != current || w.Header().Get("Cache-Control") != "no-cache" {
						t.Errorf("%d %v %q, want 304 with the ETag and Cache-Control, and no body", w.Code, w.Header(), w.Body)
					}
				case http.StatusPreconditionFailed:
					ifMatchFailed, _ := errorFor(errIfMatchFailed)
					wantError(t, w, tt.status, ifMatchFailed.message)
					if etag := w.Header().Get("ETag"); etag != "" {
						t.Errorf("the 412 carries ETag %s", etag)
					}
				default:
					if w.Code != tt.status {
						t.Errorf("status %d, want %d", w.Code, tt.status)
					}
				}
			})
		}
	}
}

// HEAD has the status and header fields of GET and no body. Only the bytes on a real connection
// show that: a recorder keeps what a handler writes, which net/http drops for HEAD, and Go's
// client never reads a body after HEAD.
func TestHeadOfAFileIsGetWithoutTheBody(t *testing.T) {
	server := httptest.NewServer(newTestServer(t))
	defer server.Close()
	for _, f := range servedFiles {
		t.Run(f.path, func(t *testing.T) {
			get, err := server.Client().Get(server.URL + f.path)
			if err != nil {
				t.Fatal(err)
			}
			get.Body.Close()

			conn, err := net.Dial("tcp", server.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "HEAD %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", f.path)
			raw, err := io.ReadAll(conn) // the server closes the connection after its answer
			if err != nil {
				t.Fatal(err)
			}
			header, body, _ := strings.Cut(string(raw), "\r\n\r\n")
			head, err := http.ReadResponse(bufio.NewReader(strings.NewReader(header+"\r\n\r\n")), nil)
			if err != nil {
				t.Fatalf("%v in %q", err, raw)
			}
			if head.StatusCode != http.StatusOK || body != "" {
				t.Errorf("HEAD: status %d and %d body bytes, want 200 and none", head.StatusCode, len(body))
			}
			for _, name := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control"} {
				if head.Header.Get(name) != get.Header.Get(name) {
					t.Errorf("%s: HEAD %q, GET %q", name, head.Header.Get(name), get.Header.Get(name))
				}
			}
		})
	}
}

// A name that is not one of the page's files is the JSON 404 (docs/api.md, "Routes"): an asset
// the page does not have says so, and a path beside the files' is any unknown path's 404.
func TestUnknownAssetIsTheJSON404(t *testing.T) {
	const (
		noAsset   = "there is no asset with this name: the explorer page at / links the ones there are"
		noNothing = "there is nothing at this path: the users are at /api/users"
	)
	ts := newTestServer(t)
	for _, tt := range []struct{ name, path, message string }{
		{"an asset not there", "/assets/nope.js", noAsset},
		{"a file of web/ that is not an asset", "/assets/index.html", noAsset},
		{"the assets folder", "/assets/", noNothing},
		{"a path below an asset", "/assets/app.js/x", noNothing},
		{"the page by its file name", "/index.html", noNothing},
		{"the page by its source path", "/web/index.html", noNothing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, ts.serve(httptest.NewRequest("GET", tt.path, nil)), http.StatusNotFound, tt.message)
		})
	}
}

// The page's Content-Security-Policy lets it run only its own files, so markup injected through a
// user's name finds nothing to run; the page has no inline script or style, which the policy
// would block. Referrer-Policy: no-referrer keeps the page's URL from other sites.
func TestExplorerPageRunsOnlyItsOwnFiles(t *testing.T) {
	w := newTestServer(t).serve(httptest.NewRequest("GET", "/", nil))
	csp := w.Header().Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'",
		"img-src 'self'", "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, directive) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, directive)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "*") {
		t.Errorf("Content-Security-Policy %q allows more than the page's own files", csp)
	}
	if policy := w.Header().Get("Referrer-Policy"); policy != "no-referrer" {
		t.Errorf("Referrer-Policy %q, want no-referrer", policy)
	}
	if inline := regexp.MustCompile(`(?i)<script>|<style|\sstyle=|\son[a-z]+=`).FindString(w.Body.String()); inline != "" {
		t.Errorf("the page has inline code the policy would block: %q", inline)
	}
}

// Every file the page and its files link is served, and none comes from another origin: the page
// works with no network. It names its icon, or a browser would ask for /favicon.ico, a 404.
func TestExplorerLinksOnlyItsOwnFiles(t *testing.T) {
	ts := newTestServer(t)
	var linking string
	for _, path := range []string{"/", "/assets/app.css", "/assets/app.js"} {
		linking += ts.serve(httptest.NewRequest("GET", path, nil)).Body.String()
	}
	links := regexp.MustCompile(`/assets/[A-Za-z0-9._-]+`).FindAllString(linking, -1)
	if len(links) == 0 {
		t.Fatal("the page links no file: the reading of its links is broken")
	}
	for _, link := range links {
		if w := ts.serve(httptest.NewRequest("GET", link, nil)); w.Code != http.StatusOK {
			t.Errorf("the page links %s, which is %d", link, w.Code)
		}
	}
	if !strings.Contains(linking, `<link rel="icon" href="/assets/favicon.svg"`) {
		t.Error("the page names no icon")
	}
	if external := regexp.MustCompile(`(?i)(src|href)="(https?:)?//|url\((https?:)?//|@import`).FindString(linking); external != "" {
		t.Errorf("the page loads something from elsewhere: %q", external)
	}
}

// /openapi.json is the file as written, byte for byte, over HTTP and over HTTPS alike: its one
// server URL is relative (/, as OpenAPI 3.1 allows), so a tool that imports it reaches the
// server it came from, whatever its scheme, host and port (docs/api.md, "Routes"). HTTPS here is
// the TLS settings parseConfig builds from -tls-cert and -tls-key, with the test-only certificate
// of testdata/.
func TestOpenAPIIsTheFileAsWrittenOverHTTPAndHTTPS(t *testing.T) {
	written, err := os.ReadFile("web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig([]string{"users", "-tls-cert", "testdata/test-only-self-signed-cert.pem", "-tls-key", "testdata/test-only-self-signed-key.pem"}, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		tls  *tls.Config
	}{
		{"HTTP", nil},
		{"HTTPS", cfg.tls},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := httptest.NewUnstartedServer(newTestServer(t))
			server.TLS = tt.tls
			if tt.tls != nil {
				server.StartTLS() // its client trusts the certificate of server.TLS
			} else {
				server.Start()
			}
			defer server.Close()
			resp, err := server.Client().Get(server.URL + "/openapi.json")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK || string(body) != string(written) || (resp.TLS != nil) != (tt.tls != nil) {
				t.Fatalf("%s %s: %d, %d bytes (%v); want 200 and the %d bytes of web/openapi.json", server.URL, resp.Proto, resp.StatusCode, len(body), err, len(written))
			}
			var doc struct{ Servers []struct{ URL string } }
			if err := json.Unmarshal(body, &doc); err != nil || len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
				t.Errorf("servers %+v (%v), want the one relative URL /", doc.Servers, err)
			}
		})
	}
}

// The page, its files and the document take GET, HEAD and OPTIONS only (docs/api.md, "Routes"):
// OPTIONS is 204 naming them in Allow, and any other method the JSON 405 naming them too, which
// stores nothing, even a user's body sent to the page.
func TestExplorerFilesTakeGetHeadAndOptions(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/", "/assets/app.js", "/openapi.json"} {
		for _, method := range []string{"OPTIONS", "POST", "PUT", "PATCH", "DELETE", "TRACE"} {
			t.Run(method+" "+path, func(t *testing.T) {
				r := httptest.NewRequest(method, path, strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
				r.Header.Set("Authorization", "Bearer "+writeToken)
				r.Header.Set("Content-Type", "application/json")
				w := ts.serve(r)
				if method == "OPTIONS" {
					if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
						t.Errorf("%d %q, want 204 and no body", w.Code, w.Body)
					}
				} else {
					wantError(t, w, http.StatusMethodNotAllowed, `this path does not take the method "`+method+`": it takes GET, HEAD, OPTIONS`)
				}
				if allow := w.Header().Get("Allow"); allow != "GET, HEAD, OPTIONS" {
					t.Errorf("Allow %q, want GET, HEAD, OPTIONS", allow)
				}
				if users := allUsers(t, ts.store); len(users) != 0 {
					t.Errorf("the store holds %v", users)
				}
			})
		}
	}
}
