package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The OpenAPI document (web/openapi.json) is written by hand. These tests hold it to what it
// promises a client, measured against the service. e2e/ lints it with other tools.

// readOpenAPI decodes the document the service serves at /openapi.json into doc, each
// {"$ref": "#/..."} replaced by what it names, as a client's tool reads it.
func readOpenAPI(t *testing.T, doc any) {
	t.Helper()
	var tree any
	if err := json.Unmarshal(newTestServer(t).serve(httptest.NewRequest("GET", "/openapi.json", nil)).Body.Bytes(), &tree); err != nil {
		t.Fatal(err)
	}
	var inline func(v any) any
	inline = func(v any) any {
		if list, ok := v.([]any); ok {
			for i, item := range list {
				list[i] = inline(item)
			}
		}
		object, _ := v.(map[string]any)
		if ref, ok := object["$ref"].(string); ok {
			named := tree
			for _, name := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				part, _ := named.(map[string]any)
				if named = part[name]; named == nil {
					t.Fatalf("%s names nothing", ref)
				}
			}
			return inline(named)
		}
		for name, member := range object {
			object[name] = inline(member)
		}
		return v
	}
	inlined, _ := json.Marshal(inline(tree))
	if err := json.Unmarshal(inlined, doc); err != nil {
		t.Fatal(err)
	}
}

// The document shows the service's own values: the version -version prints, and the page's
// Content-Security-Policy. It is OpenAPI 3.1, whose relative server URL (/) the explorer uses.
func TestOpenAPIShowsTheServicesOwnValues(t *testing.T) {
	var doc struct {
		OpenAPI    string
		Info       struct{ Version string }
		Components struct {
			Headers map[string]struct{ Example string }
		}
	}
	readOpenAPI(t, &doc)
	page := newTestServer(t).serve(httptest.NewRequest("GET", "/", nil))
	for _, tt := range []struct{ name, shown, want string }{
		{"openapi", doc.OpenAPI[:min(len(doc.OpenAPI), 4)], "3.1."}, // 3.1.x
		{"info.version", doc.Info.Version, version},
		{"the CSP", doc.Components.Headers["ContentSecurityPolicy"].Example, page.Header().Get("Content-Security-Policy")},
	} {
		if tt.shown != tt.want {
			t.Errorf("%s: the document shows %q, want %q", tt.name, tt.shown, tt.want)
		}
	}
}

// The document describes exactly the paths the service routes (read from users.go's mux.Handle
// lines: a ServeMux cannot list them), and for each path exactly the methods the service names in
// Allow, on OPTIONS and on a 405 (docs/api.md, "Routes"). Then each operation is sent the requests
// a client's tool builds from the document (the write token, each parameter at its example, each
// example body), and the first of them changed in each of the plain ways below, each to a service
// of its own that holds the sample users the examples show (-sample-data):
//   - the document's own requests are taken (2xx);
//   - every answer has a status the document gives the operation, and the header fields it marks
//     required, with a value it allows;
//   - every status and example answer the document gives the operation is among the answers.
func TestOpenAPIPromisesWhatTheServiceDoes(t *testing.T) {
	type parameter struct {
		Name, In string
		Example  any
	}
	type media struct {
		Examples map[string]struct{ Value any }
	}
	type operation struct {
		Parameters  []parameter
		RequestBody struct{ Content map[string]media }
		Responses   map[string]struct {
			Headers map[string]struct {
				Required bool
				Schema   struct{ Enum []string }
			}
			Content map[string]media
		}
	}
	var doc struct {
		Paths map[string]struct {
			Parameters                                   []parameter // the path's, before each operation's own
			Get, Head, Post, Put, Patch, Delete, Options *operation
		}
	}
	readOpenAPI(t, &doc)
	source, err := os.ReadFile("users.go")
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]bool{}
	for _, route := range regexp.MustCompile(`mux\.Handle\("(?:[A-Z]+ )?(/[^"]*)"`).FindAllStringSubmatch(string(source), -1) {
		routed[strings.TrimSuffix(route[1], "{$}")] = true // "/{$}" is ServeMux's "/ and nothing more"
	}

	// The plain ways a client's request goes wrong, or asks for something else, each applied to the
	// first of an operation's own requests. Bodies go to user 1, where the path names one.
	type request struct {
		id, file    string // the path's {id} and {file}
		query, body string
		header      http.Header
	}
	changes := map[string]func(*request){
		"naming user 07 (not in canonical form) and file nope.js": func(rq *request) { rq.id, rq.file = "07", "nope.js" },
	}
	for _, h := range [][2]string{
		{"Authorization", ""}, {"Authorization", "Bearer no-such-token"}, {"Authorization", "Bearer " + readToken},
		{"If-Match", `"0123456789abcdef0123456789abcdef"`}, {"If-Match", "0123456789abcdef0123456789abcdef"}, // no quotes
		{"If-None-Match", "*"}, {"Content-Type", "text/plain"}, {"Content-Encoding", "gzip"},
	} {
		changes["with "+h[0]+": "+h[1]] = func(rq *request) { rq.header.Set(h[0], h[1]) }
	}
	for _, query := range []string{"pgae=2", "per_page=101", "page=2&per_page=2", "page=9&per_page=5", "q=nobody",
		"q=la"} { // q=la: Ada and Alan alone
		changes["asking for ?"+query] = func(rq *request) { rq.query = query }
	}
	tooLarge := `{"name":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, body := range []string{"", `{"name":"An",}`, `{"name":1}`, `{"nickname":"Ann"}`, `{}`,
		`{"name":"  ","email":"not an address"}`, `{"id":2,"name":"Ann","email":"ann@example.com"}`,
		`{"name":"Ann","email":"ALAN@example.com"}`, tooLarge} {
		changes[fmt.Sprintf("sending the body %.50s", body)] = func(rq *request) { rq.id, rq.body = "1", body }
	}

	for path, item := range doc.Paths {
		t.Run(path, func(t *testing.T) {
			if !routed[path] {
				t.Errorf("the document describes %s, which the service does not route", path)
			}
			operations := map[string]*operation{"GET": item.Get, "HEAD": item.Head, "POST": item.Post, "PUT": item.Put,
				"PATCH": item.Patch, "DELETE": item.Delete, "OPTIONS": item.Options}
			var documented []string
			for method, op := range operations {
				if op != nil {
					documented = append(documented, method)
				}
			}
			slices.Sort(documented)
			for _, method := range []string{"OPTIONS", "TRACE"} { // TRACE: a method no path takes, so 405
				r := httptest.NewRequest(method, strings.NewReplacer("{id}", "1", "{file}", "app.js").Replace(path), nil)
				r.Header.Set("Authorization", "Bearer "+writeToken)
				allow := strings.Split(newTestServer(t).serve(r).Header().Get("Allow"), ", ")
				if slices.Sort(allow); !slices.Equal(allow, documented) {
					t.Errorf("%s: Allow %v, but the document gives %v", method, allow, documented)
				}
			}

			for _, method := range documented {
				op := operations[method]
				got := map[string][]any{} // the answers' bodies, decoded, by status
				send := func(about string, rq request) int {
					target := strings.NewReplacer("{id}", rq.id, "{file}", rq.file).Replace(path)
					if rq.query != "" {
						target += "?" + rq.query
					}
					r := httptest.NewRequest(method, target, strings.NewReader(rq.body))
					r.Header = rq.header
					w := newTestServer(t, "-sample-data").serve(r)
					status, about := strconv.Itoa(w.Code), fmt.Sprintf("%s %s %s: %d", method, target, about, w.Code)
					if _, ok := op.Responses[status]; !ok {
						t.Errorf("%s %.200s, a status the document does not give", about, w.Body)
					}
					for name, h := range op.Responses[status].Headers {
						value := strings.Join(w.Header().Values(name), ", ")
						if h.Required && value == "" || value != "" && h.Schema.Enum != nil && !slices.Contains(h.Schema.Enum, value) {
							t.Errorf("%s with %s %q, but the document says %v (required: %v)", about, name, value, h.Schema.Enum, h.Required)
						}
					}
					var answer any
					json.Unmarshal(w.Body.Bytes(), &answer) // nil for no body
					got[status] = append(got[status], answer)
					return w.Code
				}

				base, values := request{header: http.Header{"Authorization": {"Bearer " + writeToken}}}, url.Values{}
				for _, p := range append(item.Parameters, op.Parameters...) { // the operation's come last, and win
					switch example := fmt.Sprint(p.Example); {
					case p.Name == "id":
						base.id = example
					case p.Name == "file":
						base.file = example
					case p.In == "query":
						values.Set(p.Name, example)
					case p.In == "header":
						base.header.Set(p.Name, example)
					}
				}
				base.query = values.Encode()
				var own []request
				for mediaType, m := range op.RequestBody.Content {
					for _, example := range m.Examples {
						rq, value := base, []byte(nil)
						value, _ = json.Marshal(example.Value) // decoded from JSON, it encodes again
						rq.header, rq.body = base.header.Clone(), string(value)
						rq.header.Set("Content-Type", mediaType)
						own = append(own, rq)
					}
				}
				if own == nil { // an operation that takes no body
					own = []request{base}
				}
				for _, rq := range own {
					if status := send("as the document makes it", rq); status >= 300 {
						t.Errorf("%s: the document's own request %s is refused: %d", method, rq.body, status)
					}
				}
				for about, change := range changes {
					rq := own[0]
					rq.header = rq.header.Clone()
					change(&rq)
					send(about, rq)
				}

				for status, documented := range op.Responses {
					// Not from a plain request: a 500 is a failure nobody foresaw (users_test.go's
					// TestFailedWriteIs500AndTheNextTriesAgain), a 503 a person's broken edit of the
					// data file (users_test.go's TestABrokenEditIs503AndChangesNothing).
					if status == "500" || status == "503" {
						continue
					}
					if got[status] == nil {
						t.Errorf("%s: the document gives %s, which none of these requests got", method, status)
					}
					for _, m := range documented.Content {
						for name, example := range m.Examples {
							if !slices.ContainsFunc(got[status], func(answer any) bool { return reflect.DeepEqual(answer, example.Value) }) {
								t.Errorf("%s: the document shows %s %s, which none of these requests got: %v", method, status, name, example.Value)
							}
						}
					}
				}
			}
		})
		delete(routed, path)
	}
	for path := range routed {
		t.Errorf("the service routes %s, which the document does not describe", path)
	}
}
