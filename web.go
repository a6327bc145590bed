package main

import (
	"bytes"
	"embed"
	"maps"
	"net/http"
)

// webFiles are the files of web/: the explorer page and the OpenAPI document, written by hand and
// embedded as they are.
//
//go:embed web
var webFiles embed.FS

// staticFiles are the files of web/ by the path that serves them, each ready to send.
var staticFiles = map[string]staticFile{
	"/":                   loadStaticFile("web/index.html", "text/html; charset=utf-8"),
	"/openapi.json":       loadStaticFile("web/openapi.json", "application/json"),
	"/assets/app.css":     loadStaticFile("web/assets/app.css", "text/css; charset=utf-8"),
	"/assets/app.js":      loadStaticFile("web/assets/app.js", "text/javascript; charset=utf-8"),
	"/assets/favicon.svg": loadStaticFile("web/assets/favicon.svg", "image/svg+xml"),
}

// staticFilesOverHTTPS are the files a server started with -tls-cert serves: the same, but for
// /openapi.json, whose server variable scheme defaults to https, so that a tool importing the
// document as it is reaches that server over HTTPS (README, "HTTPS"). Only that one value changes;
// the rest is served as written.
var staticFilesOverHTTPS = withOpenAPIOverHTTPS(staticFiles)

type staticFile struct {
	body        []byte
	contentType string
	etag        string
}

func loadStaticFile(name, contentType string) staticFile {
	body, err := webFiles.ReadFile(name)
	if err != nil {
		panic(err) // the file is embedded at build time: only a broken build lacks it
	}
	return newStaticFile(body, contentType)
}

// newStaticFile is a file ready to send: its body, its type, and its strong ETag.
func newStaticFile(body []byte, contentType string) staticFile {
	return staticFile{body: body, contentType: contentType, etag: entityTag(body)}
}

// withOpenAPIOverHTTPS returns a copy of files whose /openapi.json has its scheme default set to
// https. Like loadStaticFile it panics at start, here when web/openapi.json no longer holds that
// default exactly once: a test run finds it at once.
func withOpenAPIOverHTTPS(files map[string]staticFile) map[string]staticFile {
	asWritten, overHTTPS := []byte(`"scheme": {"default": "http",`), []byte(`"scheme": {"default": "https",`)
	document := files["/openapi.json"]
	if bytes.Count(document.body, asWritten) != 1 {
		panic("web/openapi.json must hold " + string(asWritten) + " once: the server variable an HTTPS server sets")
	}
	files = maps.Clone(files)
	files["/openapi.json"] = newStaticFile(bytes.Replace(document.body, asWritten, overHTTPS, 1), document.contentType)
	return files
}

// explorerCSP lets the page run only its own files: markup injected through a name or e-mail
// finds nothing to run.
const explorerCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// serveFile answers GET and HEAD of the explorer page (/), its files (/assets/{file}) and the
// OpenAPI document (/openapi.json), none of which needs a token.
func (a *api) serveFile(w http.ResponseWriter, r *http.Request) error {
	file, ok := a.files[r.URL.Path]
	if !ok {
		return newError(http.StatusNotFound, "there is no asset with this name: the explorer page at / links the ones there are")
	}
	if r.URL.Path == "/" {
		w.Header().Set("Content-Security-Policy", explorerCSP)
		w.Header().Set("Referrer-Policy", "no-referrer")
	}
	// The names are fixed, so a browser may keep a file but must ask first: a 304 when it is current.
	// (http.ServeContent would also serve ranges, and answer their errors in plain text.)
	w.Header().Set("Cache-Control", "no-cache")
	return sendRepresentation(w, r, file.contentType, file.body, file.etag)
}
