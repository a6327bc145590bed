package main

import (
	"embed"
	"hash/fnv"
	"io"
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
	body        string
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

	// The files change only with a new binary, and the page links them under fixed names, so a
	// browser may keep them but asks each time; the ETag makes that a 304 with no body.
	revalidateAlways = []string{"no-cache"}
	explorerHeaders  = http.Header{
		"Content-Security-Policy": {explorerCSP},
		"Referrer-Policy":         {"no-referrer"},
	}
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
		panic("web.go: " + err.Error()) // the file is embedded at build time: only a bad build lacks it
	}
	contentType, ok := contentTypes[path.Ext(name)]
	if !ok {
		panic("web.go: no Content-Type is known for " + name)
	}
	hash := fnv.New64a()
	hash.Write(body)
	return staticFile{body: string(body), contentType: contentType, etag: formatETag(hash.Sum64())}
}

// loadAssets reads every file of web/assets, by its name in /assets/{file}.
func loadAssets(dir string) map[string]staticFile {
	entries, err := fs.ReadDir(webFiles, dir)
	if err != nil {
		panic("web.go: " + err.Error())
	}
	files := map[string]staticFile{}
	for _, entry := range entries {
		if !entry.IsDir() {
			files[entry.Name()] = loadStaticFile(dir + "/" + entry.Name())
		}
	}
	return files
}

// GET /openapi.json is the OpenAPI 3.1 document of this API, for Postman, Insomnia, Swagger UI and
// client generators. It needs no token: it tells only what the API is.
func (a *api) openAPI(w http.ResponseWriter, r *http.Request) error {
	serveStatic(w, r, openAPIDocument, nil)
	return nil
}

// GET / is the API explorer: a page that sends real requests and shows each exchange as it
// crossed the wire. The page needs no token; it asks the person for one.
func (a *api) explorerPage(w http.ResponseWriter, r *http.Request) error {
	serveStatic(w, r, explorerHTML, explorerHeaders)
	return nil
}

// GET /assets/{file} serves the page's own CSS, JavaScript and icon. Any other name is 404.
func (a *api) asset(w http.ResponseWriter, r *http.Request) error {
	file, ok := assets[r.PathValue("file")]
	if !ok {
		return newError(http.StatusNotFound, "there is no asset with this name: the explorer page at / links the ones there are")
	}
	serveStatic(w, r, file, nil)
	return nil
}

// serveStatic answers GET and HEAD with an embedded file, or 304 when If-None-Match shows the
// client has it already (RFC 9110 §13.1.2). HEAD gets the same headers; net/http drops the body.
func serveStatic(w http.ResponseWriter, r *http.Request, file staticFile, header http.Header) {
	h := w.Header()
	for name, values := range header {
		h[name] = values
	}
	h["Etag"] = []string{file.etag}
	h["Cache-Control"] = revalidateAlways
	if ifNoneMatch := headerList(r, "If-None-Match"); ifNoneMatch != "" && ifNoneMatchHolds(ifNoneMatch, file.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = []string{file.contentType}
	h["Content-Length"] = []string{strconv.Itoa(len(file.body))}
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, file.body)
}
