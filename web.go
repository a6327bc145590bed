package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
)

// webFiles are the files of web/: the explorer page and the OpenAPI document, written by hand and
// embedded in the binary as they are.
//
//go:embed web
var webFiles embed.FS

// A staticFile is a file of web/ ready to send: its body, its type, and its strong ETag.
type staticFile struct {
	body        []byte
	contentType string
	etag        string
}

// loadStaticFiles returns the files of web/ by the path that serves them. The OpenAPI document's
// server URL gets the scheme this server speaks, http or https, so that a tool that imports the
// document as it is reaches the server (README, "HTTPS").
func loadStaticFiles(scheme string) (map[string]staticFile, error) {
	files := map[string]staticFile{}
	for path, file := range map[string]struct{ name, contentType string }{
		"/":                   {"web/index.html", "text/html; charset=utf-8"},
		"/openapi.json":       {"web/openapi.json", "application/json"},
		"/assets/app.css":     {"web/assets/app.css", "text/css; charset=utf-8"},
		"/assets/app.js":      {"web/assets/app.js", "text/javascript; charset=utf-8"},
		"/assets/favicon.svg": {"web/assets/favicon.svg", "image/svg+xml"},
	} {
		body, err := webFiles.ReadFile(file.name)
		if err == nil && path == "/openapi.json" {
			body, err = withServerScheme(body, scheme)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file.name, err)
		}
		files[path] = staticFile{body: body, contentType: file.contentType, etag: entityTag(body)}
	}
	return files, nil
}

// withServerScheme returns the OpenAPI document with the default of its servers' scheme variable
// set to scheme. Only servers is decoded; every other member is kept as it is written, in its
// order, paths included, so any layout of the file gives the same document.
func withServerScheme(document []byte, scheme string) ([]byte, error) {
	var doc openAPIDocument
	decoder := json.NewDecoder(bytes.NewReader(document))
	decoder.DisallowUnknownFields() // a member this type does not name must not vanish from what is served
	if err := decoder.Decode(&doc); err != nil {
		return nil, err
	}
	for _, server := range doc.Servers {
		if variable, ok := server.Variables["scheme"]; ok {
			variable.Default = scheme
			server.Variables["scheme"] = variable
		}
	}
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false) // as every body is sent (encodeJSON)
	encoder.SetIndent("", "  ")
	err := encoder.Encode(doc)
	return b.Bytes(), err
}

// openAPIDocument is the top of an OpenAPI 3.1 document, its members in the order web/openapi.json
// gives them.
type openAPIDocument struct {
	OpenAPI    json.RawMessage `json:"openapi"`
	Info       json.RawMessage `json:"info"`
	Servers    []openAPIServer `json:"servers"`
	Security   json.RawMessage `json:"security"`
	Tags       json.RawMessage `json:"tags"`
	Paths      json.RawMessage `json:"paths"`
	Components json.RawMessage `json:"components"`
}

// openAPIServer is a server of the document: a URL whose variables tools set. It is encoded again,
// its variables in the order of their names.
type openAPIServer struct {
	URL         string                           `json:"url"`
	Description string                           `json:"description,omitempty"`
	Variables   map[string]openAPIServerVariable `json:"variables,omitempty"`
}

// openAPIServerVariable is a variable of a server URL, such as {scheme}.
type openAPIServerVariable struct {
	Default     string   `json:"default"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
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
