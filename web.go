package main

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strconv"
)

// The OpenAPI document and the API explorer page are files in web/, embedded in the binary: the
// service serves them with no network and no files beside it. They are written by hand, with no
// build step, so what is in the repository is exactly what a browser gets.
//
//go:embed web
var webFiles embed.FS

// A staticFile is one embedded file, ready to send.
type staticFile struct {
	body        []byte
	contentType string
	etag        string
}

// The page's Content-Security-Policy allows only the service's own files: no inline script or
// style, no other origin, no frames, no forms that post anywhere. A name or e-mail that tried to
// inject markup would find nothing it could run.
const explorerCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var (
	openAPIDocument = loadStaticFile("web/openapi.json")
	explorerHTML    = loadStaticFile("web/index.html")
	assets          = loadAssets("web/assets")
)

// contentTypes names the media type of each kind of file in web/. A file of any other kind is a
// mistake that stops the program at start, before it serves anything.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".json": "application/json",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

func loadStaticFile(name string) staticFile {
	body, err := webFiles.ReadFile(name)
	if err != nil {
		panic(err) // the file is embedded at build time: only a broken build lacks it
	}
	contentType, ok := contentTypes[path.Ext(name)]
	if !ok {
		panic("web.go: no Content-Type is known for " + name)
	}
	return staticFile{body: body, contentType: contentType, etag: entityTag(body)}
}

// loadAssets reads every file of web/assets, by its name in /assets/{file}.
func loadAssets(dir string) map[string]staticFile {
	entries, err := fs.ReadDir(webFiles, dir)
	if err != nil {
		panic(err)
	}
	files := map[string]staticFile{}
	for _, entry := range entries {
		files[entry.Name()] = loadStaticFile(dir + "/" + entry.Name())
	}
	return files
}

// GET /openapi.json is the OpenAPI 3.1 document of this API, for Postman, Insomnia, Swagger UI and
// client generators. It needs no token: it tells only what the API is.
func (a *api) openAPI(w http.ResponseWriter, r *http.Request) error {
	serveStatic(w, r, openAPIDocument)
	return nil
}

// GET / is the API explorer: a page that sends real requests and shows each exchange as it
// crossed the wire. The page needs no token; it asks the person for one.
func (a *api) explorerPage(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Security-Policy", explorerCSP)
	w.Header().Set("Referrer-Policy", "no-referrer")
	serveStatic(w, r, explorerHTML)
	return nil
}

// GET /assets/{file} serves the page's own CSS, JavaScript and icon. Any other name is 404.
func (a *api) asset(w http.ResponseWriter, r *http.Request) error {
	file, ok := assets[r.PathValue("file")]
	if !ok {
		return newError(http.StatusNotFound, "there is no asset with this name: the explorer page at / links the ones there are")
	}
	serveStatic(w, r, file)
	return nil
}

// serveStatic answers GET and HEAD with an embedded file, or 304 when the client has it already.
// File names are fixed, so a browser may keep a file but must ask first (no-cache); net/http drops
// the body of a HEAD. (http.ServeContent would also do ranges, and answer their errors in text.)
func serveStatic(w http.ResponseWriter, r *http.Request, file staticFile) {
	w.Header().Set("Cache-Control", "no-cache")
	if notModified(w, r, file.etag) {
		return
	}
	w.Header().Set("Content-Type", file.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(file.body)))
	w.WriteHeader(http.StatusOK)
	w.Write(file.body)
}
