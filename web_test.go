package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The rules of web.go: the explorer page, its files and the OpenAPI document are served as they are,
// with no token; the document's server URL gets the scheme the server speaks.

// explorerFiles are three of the files served beside the API, by a name for their subtests: the
// page, one of its files, and the OpenAPI document.
var explorerFiles = []struct{ name, path string }{{"page", "/"}, {"app.js", "/assets/app.js"}, {"openapi.json", "/openapi.json"}}

// The page, its files and the OpenAPI document are served with no token, each with its type, its
// length, nosniff, Cache-Control: no-cache and an ETag, and 304 when the browser's copy is current.
func TestExplorerPageAndItsFilesAreServed(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct{ name, path, contentType string }{
		{"the page", "/", "text/html; charset=utf-8"},
		{"app.js", "/assets/app.js", "text/javascript; charset=utf-8"},
		{"app.css", "/assets/app.css", "text/css; charset=utf-8"},
		{"favicon.svg", "/assets/favicon.svg", "image/svg+xml"},
		{"openapi.json", "/openapi.json", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ts.serve(httptest.NewRequest("GET", tc.path, nil)) // no token: none is needed
			wantStatus(t, w, http.StatusOK)
			wantHeaders(t, w.Header(), map[string]string{
				"Content-Type":           tc.contentType,
				"Content-Length":         strconv.Itoa(w.Body.Len()),
				"X-Content-Type-Options": "nosniff",
				"Cache-Control":          "no-cache",
			})
			etag := w.Header().Get("ETag")
			if etag == "" {
				t.Error("no ETag")
			}
			page := tc.path == "/"
			if csp := w.Header().Get("Content-Security-Policy"); page != (csp != "") {
				t.Errorf("Content-Security-Policy = %q: want one on the page only", csp)
			}

			// The ETag lets a browser keep the file and ask whether it changed: 304, no body.
			r := httptest.NewRequest("GET", tc.path, nil)
			r.Header.Set("If-None-Match", etag)
			again := ts.serve(r)
			wantStatus(t, again, http.StatusNotModified)
			wantHeaders(t, again.Header(), map[string]string{"Content-Type": "", "ETag": etag})
			wantBody(t, again, "")
		})
	}
}

// The page's Content-Security-Policy lets it run only its own files, and the page has no inline
// script or style, which that policy would block.
func TestExplorerPageHasAStrictCSP(t *testing.T) {
	w := newTestServer(t).serve(httptest.NewRequest("GET", "/", nil))
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
	page := w.Body.String()
	if inline := regexp.MustCompile(`(?i)<script>|<style|\sstyle=|\son[a-z]+=`).FindString(page); inline != "" {
		t.Errorf("the page has inline code the policy would block: %q", inline)
	}
}

// Every file the page links is served, and none comes from another origin: the page works with
// no network.
func TestExplorerLinksOnlyItsOwnFiles(t *testing.T) {
	files, err := loadStaticFiles("http")
	if err != nil {
		t.Fatal(err)
	}
	linking := string(files["/"].body) + string(files["/assets/app.css"].body) + string(files["/assets/app.js"].body)
	for _, link := range regexp.MustCompile(`/assets/[A-Za-z0-9._-]+`).FindAllString(linking, -1) {
		if _, ok := files[link]; !ok {
			t.Errorf("the page links %s, which is not in web/assets", link)
		}
	}
	if !strings.Contains(string(files["/"].body), `<link rel="icon" href="/assets/favicon.svg"`) {
		t.Error("the page names no icon: the browser would ask for /favicon.ico and log its 404")
	}
	if external := regexp.MustCompile(`(?i)(src|href)="(https?:)?//|url\((https?:)?//|@import`).FindString(linking); external != "" {
		t.Errorf("the page loads something from elsewhere: %q", external)
	}
}

// An asset that does not exist, and a path beside the page's, is a JSON 404.
func TestUnknownAssetIsJSON404(t *testing.T) {
	const (
		noAsset   = "there is no asset with this name: the explorer page at / links the ones there are"
		noNothing = "there is nothing at this path: the users are at /api/users"
	)
	ts := newTestServer(t)
	for _, tt := range []struct{ name, path, message string }{
		{"an asset not there", "/assets/nope.js", noAsset},
		{"the assets folder", "/assets/", noNothing},
		{"a path below an asset", "/assets/app.js/x", noNothing},
		{"assets without its slash", "/assets", noNothing},
		{"the page by its file name", "/index.html", noNothing},
		{"the page by its source path", "/web/index.html", noNothing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, ts.serve(httptest.NewRequest("GET", tt.path, nil)), http.StatusNotFound, tt.message)
		})
	}
}

// The page, its files and the document take GET, HEAD and OPTIONS only: anything else is a JSON
// 405 that names them in Allow, and OPTIONS names them too.
func TestExplorerTakesOnlyGetHeadOptions(t *testing.T) {
	ts := newTestServer(t)
	for _, file := range explorerFiles {
		path := file.path
		t.Run(file.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", path, strings.NewReader("{}"))
			r.Header.Set("Content-Type", "application/json")
			w := ts.serve(r)
			wantError(t, w, http.StatusMethodNotAllowed, `this path does not take the method "POST": it takes GET, HEAD, OPTIONS`)
			wantHeaders(t, w.Header(), map[string]string{"Allow": "GET, HEAD, OPTIONS"})

			w = ts.serve(httptest.NewRequest("OPTIONS", path, nil))
			wantStatus(t, w, http.StatusNoContent)
			wantHeaders(t, w.Header(), map[string]string{"Allow": "GET, HEAD, OPTIONS"})
		})
	}
}

// HEAD has the headers of GET and no body. Only the bytes on a real connection show that: the
// recorder keeps whatever a handler writes, and Go's client never reads a body after HEAD.
func TestHeadHasTheHeadersOfGetAndNoBody(t *testing.T) {
	server := httptest.NewServer(newTestServer(t))
	defer server.Close()
	for _, file := range explorerFiles {
		path := file.path
		t.Run(file.name, func(t *testing.T) {
			get, err := http.Get(server.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			full, _ := io.ReadAll(get.Body)
			get.Body.Close()

			conn, err := net.Dial("tcp", server.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "HEAD %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path)
			raw, _ := io.ReadAll(conn) // the server closes the connection after its answer
			conn.Close()
			header, body, _ := strings.Cut(string(raw), "\r\n\r\n")
			head, err := http.ReadResponse(bufio.NewReader(strings.NewReader(header+"\r\n\r\n")), nil)
			if err != nil {
				t.Fatalf("HEAD %s: %v in %q", path, err, raw)
			}
			if head.StatusCode != http.StatusOK || body != "" ||
				head.Header.Get("Content-Length") != strconv.Itoa(len(full)) || head.Header.Get("ETag") != get.Header.Get("ETag") {
				t.Errorf("HEAD %s: status %d, %d body bytes, Content-Length %q; want 200, none, %d",
					path, head.StatusCode, len(body), head.Header.Get("Content-Length"), len(full))
			}
		})
	}
}

// The page and its files follow the preconditions as the API does: If-Match that fails is 412,
// which no cache keeps and which carries no ETag; If-Match that holds is 200, and If-None-Match
// that matches is 304.
func TestIfMatchThatFailsOnAFileIs412(t *testing.T) {
	ts := newTestServer(t)
	for _, file := range explorerFiles {
		path := file.path
		t.Run(file.name, func(t *testing.T) {
			etag := ts.serve(httptest.NewRequest("GET", path, nil)).Header().Get("ETag")

			r := httptest.NewRequest("GET", path, nil)
			r.Header.Set("If-Match", `"nope"`)
			failed := ts.serve(r)
			wantError(t, failed, http.StatusPreconditionFailed, errIfMatchFailed.message)
			wantHeaders(t, failed.Header(), map[string]string{"Cache-Control": "no-store", "ETag": ""})

			r = httptest.NewRequest("GET", path, nil)
			r.Header.Set("If-Match", etag)
			wantStatus(t, ts.serve(r), http.StatusOK)

			r = httptest.NewRequest("HEAD", path, nil)
			r.Header.Set("If-Match", etag)
			r.Header.Set("If-None-Match", etag)
			wantStatus(t, ts.serve(r), http.StatusNotModified)
		})
	}
}

// withServerScheme gives the same document whatever the layout of the file, compact or indented
// another way, since it decodes the JSON rather than matching its bytes: the file can be
// re-indented without stopping the server at start. Only the scheme's default changes.
func TestServerSchemeIgnoresLayout(t *testing.T) {
	asWritten, err := webFiles.ReadFile("web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact, tabs bytes.Buffer
	if err := json.Compact(&compact, asWritten); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&tabs, compact.Bytes(), "", "\t"); err != nil {
		t.Fatal(err)
	}
	decode := func(document []byte) map[string]any {
		t.Helper()
		decoder := json.NewDecoder(bytes.NewReader(document))
		decoder.UseNumber()
		var doc map[string]any
		if err := decoder.Decode(&doc); err != nil {
			t.Fatalf("%.80s...: %v", document, err)
		}
		return doc
	}
	for _, scheme := range []string{"http", "https"} {
		// What every layout must give: the document as written, with scheme as the default.
		want := decode(asWritten)
		want["servers"].([]any)[0].(map[string]any)["variables"].(map[string]any)["scheme"].(map[string]any)["default"] = scheme
		for _, layout := range []struct {
			name     string
			document []byte
		}{
			{"as written", asWritten},
			{"compact", compact.Bytes()},
			{"indented with tabs", tabs.Bytes()},
		} {
			got, err := withServerScheme(layout.document, scheme)
			if err != nil {
				t.Errorf("%s, %s: %v", scheme, layout.name, err)
				continue
			}
			if !reflect.DeepEqual(decode(got), want) {
				t.Errorf("%s, %s: the document is not the one written with the scheme %s as the default", scheme, layout.name, scheme)
			}
		}
	}
}

// withServerScheme keeps every member but servers as it is written: its numbers exact (2^63-1,
// the largest id, would become 9223372036854775808 through a float64), and the paths in their
// order, which tools such as Swagger UI show.
func TestServerSchemeKeepsNumbersAndOrder(t *testing.T) {
	document := []byte(`{"servers":[{"url":"{scheme}://localhost:8080","variables":{"scheme":{"default":"http"}}}],` +
		`"paths":{"/users":{},"/assets":{}},"components":{"maximum":9223372036854775807,"minimum":1,"ratio":0.1,"large":1e400}}`)
	got, err := withServerScheme(document, "https")
	if err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{`"maximum": 9223372036854775807`, `"minimum": 1`, `"ratio": 0.1`, `"large": 1e400`, `"default": "https"`} {
		if !bytes.Contains(got, []byte(kept)) {
			t.Errorf("the document lacks %s:\n%s", kept, got)
		}
	}
	if users, assets := bytes.Index(got, []byte(`"/users"`)), bytes.Index(got, []byte(`"/assets"`)); users > assets {
		t.Errorf("the paths are not in the order written:\n%s", got)
	}
}

// Every member OpenAPI 3.1 allows, an x- extension included, is served as written and in its
// order, at the top of the document and inside a server: a person may add any of them.
func TestServerSchemeKeepsEveryMember(t *testing.T) {
	document := []byte(`{"openapi":"3.1.0","x-logo":{"url":"logo.svg"},"jsonSchemaDialect":"https://spec.openapis.org/oas/3.1/dialect/base",` +
		`"servers":[{"url":"{scheme}://localhost","x-note":1,"variables":{"scheme":{"default":"http","x-why":"tls"}}}],` +
		`"externalDocs":{"url":"https://example.com"},"webhooks":{}}`)
	got, err := withServerScheme(document, "https")
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, member := range []string{`"openapi"`, `"x-logo"`, `"jsonSchemaDialect"`, `"servers"`, `"externalDocs"`, `"webhooks"`} {
		at := bytes.Index(got, []byte(member))
		if at < last {
			t.Errorf("%s is missing or out of order in\n%s", member, got)
		}
		last = at
	}
	for _, kept := range []string{`"x-note": 1`, `"x-why": "tls"`, `"default": "https"`} {
		if !bytes.Contains(got, []byte(kept)) {
			t.Errorf("the document lacks %s:\n%s", kept, got)
		}
	}
}

// A server started with -tls-cert serves the OpenAPI document with its scheme's default set to
// https, so that a tool that imports the document as it is reaches the server (README, "HTTPS");
// a server without it keeps http.
func TestOpenAPISchemeFollowsTLS(t *testing.T) {
	certificate := newSelfSignedCertificate(t)
	for _, tt := range []struct {
		name   string
		flags  []string
		scheme string
	}{
		{"with -tls-cert", certificate.flags(), "https"},
		{"without", nil, "http"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, tt.flags...)
			w := ts.serve(httptest.NewRequest("GET", "/openapi.json", nil))
			wantStatus(t, w, http.StatusOK)
			var doc struct {
				Servers []struct {
					URL       string `json:"url"`
					Variables struct {
						Scheme struct {
							Default string `json:"default"`
						} `json:"scheme"`
					} `json:"variables"`
				} `json:"servers"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || len(doc.Servers) == 0 {
				t.Fatalf("the document has no servers: %v", err)
			}
			if got := doc.Servers[0].Variables.Scheme.Default; got != tt.scheme {
				t.Errorf("the scheme's default is %q, want %q", got, tt.scheme)
			}
		})
	}
}

// What a tool that imports /openapi.json reaches: the document's server URL with each variable at
// its default, as a server without TLS and one started with -tls-cert serve it.
func Example_serverScheme() {
	for _, scheme := range []string{"http", "https"} {
		files, err := loadStaticFiles(scheme)
		if err != nil {
			fmt.Println(err)
			return
		}
		var doc struct {
			Servers []struct {
				URL       string                              `json:"url"`
				Variables map[string]struct{ Default string } `json:"variables"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(files["/openapi.json"].body, &doc); err != nil {
			fmt.Println(err)
			return
		}
		for _, server := range doc.Servers {
			url := server.URL
			for name, variable := range server.Variables {
				url = strings.ReplaceAll(url, "{"+name+"}", variable.Default)
			}
			fmt.Printf("%s server: %s is %s\n", scheme, server.URL, url)
		}
	}
	// Output:
	// http server: {scheme}://{host} is http://localhost:8080
	// https server: {scheme}://{host} is https://localhost:8080
}
