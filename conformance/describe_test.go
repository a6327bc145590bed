package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"users/conformance/kit"
)

// describe drafts a description from an OpenAPI document: the body of POST from its schema's
// required properties (local $refs followed, an example of a property taken), that of PUT from
// its example, an invalid body without a required property, bearer auth, and the list's shape. The
// draft is a description the kit reads, and stderr says what was taken and what is left to add.
func TestDescribeDraftsADescriptionFromOpenAPI(t *testing.T) {
	status, stdout, stderr := command(t, nil, "describe", "-openapi", "testdata/books-openapi.json", "-collection", "/api/books")
	if status != 0 {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	draft, err := kit.ParseDescription("the draft", strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("the draft is not a description the kit reads: %v\n%s", err, stdout)
	}
	want := &kit.Description{
		Name:       "the draft",
		Collection: "/api/books",
		Create:     kit.Body{"title": "Kit", "author": "{tag}-{n}-Ursula K. Le Guin", "year": json.Number("1")},
		Replace:    kit.Body{"title": "Dune", "author": "{tag}-{n}-Frank Herbert", "year": json.Number("1965")},
		Invalid:    []kit.Body{{"author": "{tag}-{n}-Ursula K. Le Guin", "year": json.Number("1")}},
		List:       &kit.ListKey{Data: "/items", Total: "/total"},
		Auth:       &kit.AuthKey{},
	}
	if !reflect.DeepEqual(draft, want) {
		t.Errorf("the draft\n%s\nwant %+v", stdout, want)
	}
	for _, note := range []string{
		"describe: /api/books takes GET, POST\n",
		"describe: /api/books/{id} takes GET, PUT, DELETE\n",
		"describe: create: made from the required properties of the schema\n",
		"describe: replace: the request's example dune\n",
		"describe: invalid: the create body without title, which the schema requires\n",
		"describe: GET /api/books takes the query parameters page, q: declare those",
		"describe: unique, error, cors and conditional_post are not in an OpenAPI document",
	} {
		if !strings.Contains(stderr, note) {
			t.Errorf("no %q in\n%s", note, stderr)
		}
	}
}

// The document may be a file or an http(s) URL: the draft is the same. A document in YAML, or
// without the path asked for, cannot be drafted from, and the command says why with exit status 2.
func TestDescribeReadsJSONFromAFileOrAURL(t *testing.T) {
	document, _ := os.ReadFile("testdata/books-openapi.json")
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(document) }))
	defer server.Close()
	yaml := filepath.Join(t.TempDir(), "openapi.yaml")
	os.WriteFile(yaml, []byte("openapi: 3.1.0\npaths: {}\n"), 0o600)
	_, fromFile, _ := command(t, nil, "describe", "-openapi", "testdata/books-openapi.json", "-collection", "/api/books")
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		says   string // on stderr, for a mistake
	}{
		{"a URL", []string{"-openapi", server.URL + "/openapi.json", "-collection", "/api/books"}, 0, ""},
		{"YAML", []string{"-openapi", yaml, "-collection", "/api/books"}, 2, "describe reads JSON only, as the standard library has no YAML reader"},
		{"a path the document has not", []string{"-openapi", "testdata/books-openapi.json", "-collection", "/api/films"}, 2,
			"the document has no path /api/films: its paths are /api/books, /api/books/{id}"},
		{"no collection", []string{"-openapi", "testdata/books-openapi.json"}, 2, "-openapi and -collection are required"},
		{"no document", []string{"-openapi", filepath.Join(t.TempDir(), "none.json"), "-collection", "/api/books"}, 2, "-openapi: open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := command(t, nil, append([]string{"describe"}, tt.args...)...)
			if status != tt.status || tt.status == 0 && stdout != fromFile || tt.status != 0 && !strings.Contains(stderr, tt.says) {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", status, tt.status, stdout, stderr)
			}
		})
	}
}

// This service's own document drafts a description of its users that the kit reads, with the
// members of a user in its bodies, bearer auth and PATCH.
func TestDescribeDraftsTheUsersOfThisService(t *testing.T) {
	status, stdout, stderr := command(t, nil, "describe", "-openapi", "../web/openapi.json", "-collection", "/api/users")
	draft, err := kit.ParseDescription("the draft", strings.NewReader(stdout))
	if status != 0 || err != nil {
		t.Fatalf("exit status %d, %v\n%s\n%s", status, err, stdout, stderr)
	}
	if _, hasName := draft.Create["name"]; !hasName || draft.Create["email"] == nil || draft.Auth == nil || draft.Patch == nil {
		t.Errorf("the draft lacks a user's members, auth or patch:\n%s", stdout)
	}
}
