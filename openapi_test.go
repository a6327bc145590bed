package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The OpenAPI document (web/openapi.json) is written by hand, so these tests keep it honest
// against the code: it lists exactly the routes users.go registers; each operation documents the
// statuses, header fields and example bodies the service really answers, no other; its request
// examples are bodies the service takes. e2e/ lints it and checks it with other tools.

// The parts of an OpenAPI 3.1 document these tests read. A member with a $ref stands for the
// member of components it names.
type (
	openapiDoc struct {
		OpenAPI    string
		Info       struct{ Version string }
		Paths      map[string]map[string]json.RawMessage // path, then a method or "parameters"
		Components struct {
			Parameters map[string]openapiParameter
			Responses  map[string]openapiResponse
			Headers    map[string]openapiHeader
			Examples   map[string]openapiExample
		}
	}
	openapiOperation struct {
		Parameters  []openapiParameter
		RequestBody *struct{ Content map[string]openapiMedia }
		Responses   map[string]openapiResponse
	}
	openapiParameter struct {
		Ref      string `json:"$ref"`
		Name, In string
		Example  any
	}
	openapiResponse struct {
		Ref     string `json:"$ref"`
		Headers map[string]openapiHeader
		Content map[string]openapiMedia
	}
	openapiMedia  struct{ Examples map[string]openapiExample }
	openapiHeader struct {
		Ref      string `json:"$ref"`
		Required bool
		Schema   struct{ Enum []string }
		Example  string
	}
	openapiExample struct {
		Ref   string `json:"$ref"`
		Value json.RawMessage
	}
)

// readOpenAPI returns the document as the service serves it at /openapi.json: what a tool that
// imports it reads.
func readOpenAPI(t *testing.T) openapiDoc {
	t.Helper()
	w := newTestServer(t).serve(httptest.NewRequest("GET", "/openapi.json", nil))
	var doc openapiDoc
	if err := json.Unmarshal(w.Body.Bytes(), &doc); w.Code != http.StatusOK || err != nil {
		t.Fatalf("GET /openapi.json: %d, %v", w.Code, err)
	}
	return doc
}

// component returns what a $ref names in one part of components, and its name.
func component[T any](t *testing.T, part map[string]T, ref string) (T, string) {
	t.Helper()
	name := ref[strings.LastIndexByte(ref, '/')+1:]
	value, ok := part[name]
	if !ok {
		t.Fatalf("%s does not resolve", ref)
	}
	return value, name
}

// sortedKeys returns the keys of m in order, so that the tests walk the document the same way on
// every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// documentedOperation is an operation of the document, its $refs resolved: the requests a tool
// builds from its examples, and its answers by status.
type documentedOperation struct {
	name      string // "METHOD /path"
	requests  []exampleRequest
	responses map[string]documentedAnswer
}

// documentedAnswer is what the document says of one status of an operation.
type documentedAnswer struct {
	headers  map[string]openapiHeader // by canonical name
	content  map[string]openapiMedia  // by media type
	examples map[string][]byte        // by name in components/examples, compacted
}

// exampleRequest is a request as a tool builds it from the document: each parameter at its
// example, with the write token, and one example of the request body.
type exampleRequest struct {
	method, path string
	pathValues   map[string]string // {id}, {file}
	query        string
	header       http.Header
	body         string
}

// with returns a copy of rq, changed.
func (rq exampleRequest) with(change func(*exampleRequest)) exampleRequest {
	rq.header, rq.pathValues = rq.header.Clone(), maps.Clone(rq.pathValues)
	change(&rq)
	return rq
}

// build makes the request, its path's {names} replaced by their values.
func (rq exampleRequest) build() *http.Request {
	target := rq.path
	for name, value := range rq.pathValues {
		target = strings.ReplaceAll(target, "{"+name+"}", value)
	}
	if rq.query != "" {
		target += "?" + rq.query
	}
	r := httptest.NewRequest(rq.method, target, strings.NewReader(rq.body))
	r.Header = rq.header.Clone()
	return r
}

// operations returns every operation of the document, in order.
func (doc openapiDoc) operations(t *testing.T) []documentedOperation {
	t.Helper()
	var ops []documentedOperation
	for _, path := range sortedKeys(doc.Paths) {
		item := doc.Paths[path]
		var shared []openapiParameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		for _, key := range sortedKeys(item) {
			method := strings.ToUpper(key)
			if !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}, method) {
				continue
			}
			var o openapiOperation
			if err := json.Unmarshal(item[key], &o); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			op := documentedOperation{name: method + " " + path, responses: map[string]documentedAnswer{}}

			base := exampleRequest{method: method, path: path, pathValues: map[string]string{},
				header: http.Header{"Authorization": {"Bearer " + writeToken}}}
			query := url.Values{}
			for _, p := range slices.Concat(shared, o.Parameters) { // the operation's come last, and win
				if p.Ref != "" {
					p, _ = component(t, doc.Components.Parameters, p.Ref)
				}
				switch value := fmt.Sprint(p.Example); p.In {
				case "path":
					base.pathValues[p.Name] = value
				case "query":
					query.Set(p.Name, value)
				case "header":
					base.header.Set(p.Name, value)
				}
			}
			base.query = query.Encode()
			if o.RequestBody == nil {
				op.requests = []exampleRequest{base}
			} else {
				for _, mediaType := range sortedKeys(o.RequestBody.Content) {
					examples := o.RequestBody.Content[mediaType].Examples
					for _, key := range sortedKeys(examples) {
						value, _ := doc.example(t, key, examples[key])
						op.requests = append(op.requests, base.with(func(rq *exampleRequest) {
							rq.header.Set("Content-Type", mediaType)
							rq.body = string(value)
						}))
					}
				}
			}

			for status, r := range o.Responses {
				if r.Ref != "" {
					r, _ = component(t, doc.Components.Responses, r.Ref)
				}
				answer := documentedAnswer{headers: map[string]openapiHeader{}, content: r.Content, examples: map[string][]byte{}}
				for name, h := range r.Headers {
					if h.Ref != "" {
						h, _ = component(t, doc.Components.Headers, h.Ref)
					}
					answer.headers[http.CanonicalHeaderKey(name)] = h
				}
				for _, media := range r.Content {
					for key, e := range media.Examples {
						value, name := doc.example(t, key, e)
						answer.examples[name] = value
					}
				}
				op.responses[status] = answer
			}
			ops = append(ops, op)
		}
	}
	if len(ops) < 20 {
		t.Fatalf("found only %d operations: the reading of the document is broken", len(ops))
	}
	return ops
}

// example returns an example's value, compacted, and its name: in components/examples, or its key
// where it is written in place.
func (doc openapiDoc) example(t *testing.T, key string, e openapiExample) ([]byte, string) {
	t.Helper()
	name := key
	if e.Ref != "" {
		e, name = component(t, doc.Components.Examples, e.Ref)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, e.Value); err != nil {
		t.Fatalf("the example %s: %v", name, err)
	}
	return compact.Bytes(), name
}

// The document is OpenAPI 3.1, whose relative server URL (/) the service relies on, and it
// describes this version of the service: the one -version prints and CHANGELOG.md names.
func TestOpenAPIIsAtTheServicesVersion(t *testing.T) {
	doc := readOpenAPI(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
	if doc.Info.Version != version {
		t.Errorf("info.version %q, want the service's version %s", doc.Info.Version, version)
	}
}

// The document describes exactly the routes of users.go, one literal mux.Handle line each (a GET
// route serves HEAD too), and for each path the methods that Allow names on OPTIONS and on a 405
// (docs/api.md, "Routes").
func TestOpenAPIListsExactlyTheRoutes(t *testing.T) {
	source, err := os.ReadFile("users.go")
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, route := range regexp.MustCompile(`mux\.Handle\("([A-Z]+) (/[^"]*)"`).FindAllStringSubmatch(string(source), -1) {
		method, path := route[1], strings.TrimSuffix(route[2], "{$}") // "/{$}" is ServeMux's "/ and nothing more"
		served = append(served, method+" "+path)
		if method == "GET" {
			served = append(served, "HEAD "+path)
		}
	}
	if len(served) < 20 {
		t.Fatalf("found only %d routes in users.go: the reading of its mux.Handle lines is broken", len(served))
	}
	byPath := map[string][]string{} // the documented methods of each path
	var documented []string
	for _, op := range readOpenAPI(t).operations(t) {
		documented = append(documented, op.name)
		method, path, _ := strings.Cut(op.name, " ")
		byPath[path] = append(byPath[path], method)
	}
	for _, op := range served {
		if !slices.Contains(documented, op) {
			t.Errorf("users.go serves %s, which the document does not describe", op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			t.Errorf("the document describes %s, which no route of users.go serves", op)
		}
	}

	ts := newTestServer(t)
	ts.create(t, "Ann", "ann@example.com")
	for path, methods := range byPath {
		slices.Sort(methods)
		target := strings.NewReplacer("{id}", "1", "{file}", "app.js").Replace(path)
		for _, method := range []string{"OPTIONS", "TRACE"} { // TRACE: a method no path takes, so 405
			allow := strings.Split(ts.serve(apiRequest(method, target, writeToken, "")).Header().Get("Allow"), ", ")
			slices.Sort(allow)
			if !slices.Equal(allow, methods) {
				t.Errorf("%s %s: Allow %v, but the document gives the path %v", method, target, allow, methods)
			}
		}
	}
}

// Every operation is sent the request a tool builds from the document's examples, and that
// request changed in each of the ways below, each to a service of its own holding the sample
// users (-sample-data), or as the row says. Then, operation by operation:
//
//   - the document's own requests succeed: its request examples are bodies the service takes;
//   - every status the service answers is one the document gives the operation (so no
//     documented operation is ever 405), and every status the document gives it is one of these
//     answers, but 500, which a panic gives any route (TestPanicIsAJSON500OrCutsTheConnection);
//   - every example answer the document shows is one of these answers, byte for byte once
//     compacted;
//   - each answer carries the header fields the document requires of it, with a value the
//     document allows, its media type is one the document gives it, and it carries no ETag,
//     Location, Content-Location or Link the document does not give it (docs/api.md, "Responses");
//   - an answer of 400 and above, or 304, leaves the store as it was, and the next id unused.
func TestOpenAPIDocumentsWhatTheServiceAnswers(t *testing.T) {
	sampleUsers := func(t *testing.T) *testServer { return newTestServer(t, "-sample-data") } // the examples' users
	tooLarge := `{"name":"` + strings.Repeat("a", 1<<20) + `","email":"ann@example.com"}`
	setBody := func(body string) func(*exampleRequest) {
		return func(rq *exampleRequest) { rq.body = body }
	}
	setQuery := func(query string) func(*exampleRequest) {
		return func(rq *exampleRequest) { rq.query = query }
	}
	setHeader := func(name, value string) func(*exampleRequest) {
		return func(rq *exampleRequest) { rq.header.Set(name, value) }
	}
	changes := []struct {
		name   string
		change func(*exampleRequest) // nil: each request the document's examples make, unchanged
		server func(*testing.T) *testServer
	}{
		{"as the document makes it", nil, sampleUsers},
		{"without a token", func(rq *exampleRequest) { rq.header.Del("Authorization") }, sampleUsers},
		{"with an unknown token", setHeader("Authorization", "Bearer no-such-token"), sampleUsers},
		{"with a read token", setHeader("Authorization", "Bearer "+readToken), sampleUsers},
		{"naming a user or file that does not exist", func(rq *exampleRequest) {
			rq.pathValues["id"], rq.pathValues["file"] = "99", "nope.js"
		}, sampleUsers},
		{"naming a user by an id not in canonical form", func(rq *exampleRequest) { rq.pathValues["id"] = "07" }, sampleUsers},
		{"with an If-Match that matches nothing", setHeader("If-Match", `"0123456789abcdef0123456789abcdef"`), sampleUsers},
		{"with If-None-Match: *", setHeader("If-None-Match", "*"), sampleUsers},
		{"with an If-Match without its quotes", setHeader("If-Match", "0123456789abcdef0123456789abcdef"), sampleUsers},
		{"with a body in text/plain", setHeader("Content-Type", "text/plain"), sampleUsers},
		{"with a compressed body", setHeader("Content-Encoding", "gzip"), sampleUsers},
		{"with a body over 1 MiB", setBody(tooLarge), sampleUsers},
		{"with an empty body", setBody(""), sampleUsers},
		{"with a syntax error at byte 14", setBody(`{"name":"An",}`), sampleUsers},
		{"with a number for the name", setBody(`{"name":1}`), sampleUsers},
		{"with an unknown field", setBody(`{"nickname":"Ann"}`), sampleUsers},
		{"with fields that break their rules", setBody(`{"name":"  ","email":"not an address"}`), sampleUsers},
		{"with an id in the body that is not user 1's", func(rq *exampleRequest) {
			rq.pathValues["id"], rq.body = "1", `{"id":2,"name":"Ann Example","email":"ann@example.com"}`
		}, sampleUsers},
		{"with an empty object", setBody(`{}`), sampleUsers},
		{"with the e-mail of another user", setBody(`{"name":"Ann Example","email":"ADA@example.com"}`), sampleUsers},
		{"with a query parameter the list does not take", setQuery("pgae=2"), sampleUsers},
		{"with per_page=101", setQuery("per_page=101"), sampleUsers},
		{"asking for page 2 of 2 a page", setQuery("page=2&per_page=2"), sampleUsers},
		{"asking for a page past the end", setQuery("page=9&per_page=5"), sampleUsers},
		{"asking for a name nobody has", setQuery("q=nobody"), sampleUsers},
		{"asking for everything of a store of two", setQuery(""), func(t *testing.T) *testServer {
			ts := newTestServer(t)
			ts.create(t, "Ada Lovelace", "ada@example.com")
			ts.create(t, "Alan Turing", "alan@example.com")
			return ts
		}},
	}

	// The body of every 500, as writeError sends it for a failure nobody foresaw.
	internal := httptest.NewRecorder()
	writeError(internal, httptest.NewRequest("GET", "/", nil), slog.New(slog.NewTextHandler(io.Discard, nil)), errors.New("a bug"))

	for _, op := range readOpenAPI(t).operations(t) {
		t.Run(op.name, func(t *testing.T) {
			answered := map[string]bool{} // "STATUS" and "STATUS EXAMPLE"
			for _, c := range changes {
				requests := op.requests
				if c.change != nil {
					requests = []exampleRequest{requests[0].with(c.change)}
				}
				for _, rq := range requests {
					ts := c.server(t)
					before := allUsers(t, ts.store)
					w := ts.serve(rq.build())
					status := strconv.Itoa(w.Code)
					about := fmt.Sprintf("%s %s: %d %.200s", rq.method, c.name, w.Code, w.Body)

					documented, ok := op.responses[status]
					if !ok {
						t.Errorf("%s: a status the document does not give %s", about, op.name)
						continue
					}
					answered[status] = true
					if c.change == nil && w.Code >= 300 {
						t.Errorf("%s: the document's own example is refused", about)
					}
					for name, value := range documented.examples {
						if bytes.Equal(value, w.Body.Bytes()) {
							answered[status+" "+name] = true
						}
					}
					for name, h := range documented.headers {
						value := strings.Join(w.Header().Values(name), ", ")
						if h.Required && value == "" || value != "" && h.Schema.Enum != nil && !slices.Contains(h.Schema.Enum, value) {
							t.Errorf("%s: %s is %q, but the document says %v", about, name, value, h.Schema.Enum)
						}
					}
					for _, name := range []string{"ETag", "Location", "Content-Location", "Link"} {
						if _, ok := documented.headers[http.CanonicalHeaderKey(name)]; !ok && w.Header().Get(name) != "" {
							t.Errorf("%s: sends %s, which the document does not give this answer", about, name)
						}
					}
					mediaType, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
					if _, ok := documented.content[mediaType]; rq.method != "HEAD" && !ok && (mediaType != "" || len(documented.content) > 0) {
						t.Errorf("%s: media type %q, but the document gives %v", about, mediaType, sortedKeys(documented.content))
					}
					if w.Code >= 400 || w.Code == http.StatusNotModified {
						if after := allUsers(t, ts.store); !slices.Equal(after, before) {
							t.Errorf("%s: the store changed from %v to %v", about, before, after)
						}
						if next := ts.create(t, "Dee", "dee@example.com"); next.ID != int64(len(before))+1 {
							t.Errorf("%s: the next create got id %d: the request used one up", about, next.ID)
						}
					}
				}
			}

			for _, status := range sortedKeys(op.responses) {
				examples := op.responses[status].examples
				if status == "503" {
					continue // a write while a person's edit of the data file cannot be loaded: TestABrokenEditIs503AndChangesNothing
				}
				if status == "500" {
					for name, value := range examples {
						if !bytes.Equal(value, internal.Body.Bytes()) {
							t.Errorf("the example %s of 500 is %s, but every 500 is %s", name, value, internal.Body)
						}
					}
					continue
				}
				if !answered[status] {
					t.Errorf("the document gives %s, which none of these requests got", status)
					continue
				}
				for _, name := range sortedKeys(examples) {
					if !answered[status+" "+name] {
						t.Errorf("the document shows %s %s as an answer, but none of these requests got it: %s", status, name, examples[name])
					}
				}
			}
			if _, ok := op.responses["500"]; !ok {
				t.Error("the document omits 500, which a panic gives every route")
			}
		})
	}
}

// A write's answer carries the stored user's ETag, so that a client can send If-Match next without
// reading first: 201 and PATCH do. A PUT answer does not: RFC 9110 §9.3.4 allows a validator only
// for a body stored as it was sent, and the service trims it and adds the id (docs/api.md,
// "Conditional requests"). TestOpenAPIDocumentsWhatTheServiceAnswers holds the service to it.
func TestOpenAPIGivesAnETagToPostAndPatchNotPut(t *testing.T) {
	ops := map[string]documentedOperation{}
	for _, op := range readOpenAPI(t).operations(t) {
		ops[op.name] = op
	}
	for _, tt := range []struct {
		op, status string
		etag       bool
	}{
		{"POST /api/users", "201", true},
		{"PATCH /api/users/{id}", "200", true},
		{"PUT /api/users/{id}", "200", false},
	} {
		answer, ok := ops[tt.op].responses[tt.status]
		if _, etag := answer.headers[http.CanonicalHeaderKey("ETag")]; !ok || etag != tt.etag {
			t.Errorf("%s %s: documented %v, ETag %v; want ETag %v", tt.op, tt.status, ok, etag, tt.etag)
		}
	}
}

// The Content-Security-Policy the document shows is the one the page is served with.
func TestOpenAPIShowsThePagesCSP(t *testing.T) {
	shown := readOpenAPI(t).Components.Headers["ContentSecurityPolicy"].Example
	served := newTestServer(t).serve(httptest.NewRequest("GET", "/", nil)).Header().Get("Content-Security-Policy")
	if shown != served {
		t.Errorf("the document shows the CSP %q, but the page is served with %q", shown, served)
	}
}
