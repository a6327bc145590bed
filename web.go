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
// set to scheme. Only servers is decoded: every other member is kept as it is written, in its
// order, so a member this code does not know (externalDocs, an x- extension) is served as it is.
func withServerScheme(document []byte, scheme string) ([]byte, error) {
	decoder := json.NewDecoder(bytes.NewReader(document))
	var members bytes.Buffer // the document's members, each "name":value, separated by commas
	err := readObject(decoder, "the OpenAPI document", func(name string) error {
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			return err
		}
		if name == "servers" {
			var err error
			if value, err = serversWithScheme(value, scheme); err != nil {
				return err
			}
		}
		if members.Len() > 0 {
			members.WriteByte(',')
		}
		quoted, _ := json.Marshal(name) // a string always encodes
		members.Write(quoted)
		members.WriteByte(':')
		members.Write(value)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var indented bytes.Buffer
	err = json.Indent(&indented, []byte("{"+members.String()+"}"), "", "  ")
	return indented.Bytes(), err
}

// serversWithScheme returns the servers of an OpenAPI document with the default of each one's
// scheme variable set to scheme, and every other member as it was.
func serversWithScheme(value json.RawMessage, scheme string) (json.RawMessage, error) {
	var servers []map[string]json.RawMessage
	if err := json.Unmarshal(value, &servers); err != nil {
		return nil, err
	}
	for _, server := range servers {
		var variables map[string]map[string]json.RawMessage
		if err := json.Unmarshal(server["variables"], &variables); err != nil || variables["scheme"] == nil {
			continue // a server without a scheme variable is served as it is
		}
		variables["scheme"]["default"], _ = json.Marshal(scheme) // a string always encodes
		var err error
		if server["variables"], err = json.Marshal(variables); err != nil {
			return nil, err
		}
	}
	return encodeJSON(servers)
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
