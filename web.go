package main

import (
	"embed"
	"net/http"
)

// webFiles are the files of web/: the explorer page and the OpenAPI document, written by hand and
// embedded in the binary as they are.
//
//go:embed web
var webFiles embed.FS

// loadStaticFiles returns the files of web/ by the path that serves them, each ready to send with
// its media type and strong ETag. /openapi.json is the file as it is: its server URL is relative
// (/), so a tool that imports it reaches the server it came from, over HTTP or HTTPS.
func loadStaticFiles() (map[string]representation, error) {
	files := map[string]representation{}
	for path, file := range map[string]struct{ name, contentType string }{
		"/":                   {"web/index.html", "text/html; charset=utf-8"},
		"/openapi.json":       {"web/openapi.json", "application/json"},
		"/assets/app.css":     {"web/assets/app.css", "text/css; charset=utf-8"},
		"/assets/app.js":      {"web/assets/app.js", "text/javascript; charset=utf-8"},
		"/assets/favicon.svg": {"web/assets/favicon.svg", "image/svg+xml"},
	} {
		body, err := webFiles.ReadFile(file.name)
		if err != nil {
			return nil, err
		}
		// The names are fixed, so a browser may keep a file but must ask first: a 304 when it is current.
		files[path] = representation{contentType: file.contentType, cacheControl: "no-cache", body: body, etag: entityTag(body)}
	}
	return files, nil
}

// explorerCSP lets the page run only its own files: markup injected through a name or e-mail
// finds nothing to run.
const explorerCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// serveFile answers GET and HEAD of the explorer page (/), its files (/assets/{file}) and the
// OpenAPI document (/openapi.json), none of which needs a token. (http.ServeContent would also
// serve ranges, and answer their errors in plain text.)
func (a *api) serveFile(w http.ResponseWriter, r *http.Request) error {
	file, ok := a.files[r.URL.Path]
	if !ok {
		return newError(http.StatusNotFound, "there is no asset with this name: the explorer page at / links the ones there are")
	}
	if r.URL.Path == "/" {
		w.Header().Set("Content-Security-Policy", explorerCSP)
		w.Header().Set("Referrer-Policy", "no-referrer")
	}
	return sendRepresentation(w, r, file)
}
