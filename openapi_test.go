package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// The OpenAPI document (web/openapi.json) is written by hand, so these tests keep it honest:
// it lists exactly the routes users.go registers, its examples are bodies the service really
// sends and takes, and its statuses are the service's own. e2e/ lints it and checks the service's
// answers against it with other tools.

// openapiDocument is the OpenAPI document as the service serves it at /openapi.json, decoded: what
// a tool that imports it reads.
func openapiDocument(t *testing.T) map[string]any {
	t.Helper()
	w := newTestServer(t).serve(httptest.NewRequest("GET", "/openapi.json", nil))
	wantStatus(t, w, http.StatusOK)
	var doc map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("/openapi.json is not JSON: %v", err)
	}
	return doc
}

// openapiOperations returns "METHOD /path" for every operation of the document, sorted.
func openapiOperations(doc map[string]any) []string {
	var operations []string
	for path, item := range doc["paths"].(map[string]any) {
		for key := range item.(map[string]any) {
			switch key {
			case "get", "head", "post", "put", "patch", "delete", "options", "trace":
				operations = append(operations, strings.ToUpper(key)+" "+path)
			}
		}
	}
	slices.Sort(operations)
	return operations
}

// The document is OpenAPI 3.1 at the service's version, and describes exactly the routes of
// users.go, each one literal mux.Handle line (GET also serves HEAD); what OPTIONS answers in Allow
// for each path is what the document lists for it.
func TestOpenAPIListsExactlyTheRoutes(t *testing.T) {
	doc := openapiDocument(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if v := doc["info"].(map[string]any)["version"]; v != version {
		t.Errorf("info.version = %v, want the service's version %s", v, version)
	}

	source, err := os.ReadFile("users.go")
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, route := range regexp.MustCompile(`mux\.Handle\("([A-Z]+) (/[^"]*)"`).FindAllStringSubmatch(string(source), -1) {
		method, path := route[1], strings.TrimSuffix(route[2], "{$}") // "/{$}" is how ServeMux says "/ and nothing more"
		served = append(served, method+" "+path)
		if method == "GET" {
			served = append(served, "HEAD "+path)
		}
	}
	if len(served) < 20 {
		t.Fatalf("found only %d routes in users.go: the reading of its mux.Handle lines is broken", len(served))
	}
	slices.Sort(served)
	documented := openapiOperations(doc)
	for _, op := range served {
		if !slices.Contains(documented, op) {
			t.Errorf("users.go serves %s, but the document does not describe it", op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			t.Errorf("the document describes %s, but no route of users.go serves it", op)
		}
	}

	ts := newTestServer(t)
	ann := ts.create(t, "Ann", "ann@example.com")
	for path := range doc["paths"].(map[string]any) {
		var methods []string
		for _, op := range documented {
			if method, opPath, _ := strings.Cut(op, " "); opPath == path {
				methods = append(methods, method)
			}
		}
		target := strings.NewReplacer("{id}", strconv.FormatInt(ann.ID, 10), "{file}", "app.js").Replace(path)
		allow := strings.Split(ts.serve(httptest.NewRequest("OPTIONS", target, nil)).Header().Get("Allow"), ", ")
		slices.Sort(allow)
		if !slices.Equal(allow, methods) {
			t.Errorf("OPTIONS %s: Allow %v, but the document lists %v", target, allow, methods)
		}
	}
}

// Each documented operation, sent to the real handler stack, reaches a route and succeeds: never
// the 404 of a path that does not exist, never a 405.
func TestEveryDocumentedOperationIsAnswered(t *testing.T) {
	for _, op := range openapiOperations(openapiDocument(t)) {
		t.Run(strings.ReplaceAll(op, "/", " "), func(t *testing.T) {
			ts := newTestServer(t)
			ada := ts.create(t, "Ada Lovelace", "ada@example.com")
			method, path, _ := strings.Cut(op, " ")
			target := strings.NewReplacer("{id}", strconv.FormatInt(ada.ID, 10), "{file}", "app.js").Replace(path)
			body, contentType := "", ""
			switch method {
			case http.MethodPost, http.MethodPut:
				body, contentType = `{"name":"Ann Example","email":"ann@example.com"}`, "application/json"
			case http.MethodPatch:
				body, contentType = `{"name":"Ann Example"}`, "application/merge-patch+json"
			}
			r := httptest.NewRequest(method, target, strings.NewReader(body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			if contentType != "" {
				r.Header.Set("Content-Type", contentType)
			}
			w := ts.serve(r)
			if w.Code == http.StatusMethodNotAllowed || w.Code == http.StatusNotFound && strings.Contains(w.Body.String(), "nothing at this path") {
				t.Errorf("%s %s: status %d %s: the route is not served", method, target, w.Code, w.Body)
			}
			if w.Code >= 400 {
				t.Errorf("%s %s: status %d %s, want a success", method, target, w.Code, w.Body)
			}
		})
	}
}

// What a tool that imports the document finds: a server URL it can reach as it is, and no schema
// name that hides one of a client language's own (a TypeScript Error, say).
func TestOpenAPIImportsIntoClientTools(t *testing.T) {
	doc := openapiDocument(t)
	// The document's first server URL with each variable at its default: where a tool that imports
	// the document as it is sends its requests.
	server := doc["servers"].([]any)[0].(map[string]any)
	serverURL, _ := server["url"].(string)
	variables, _ := server["variables"].(map[string]any)
	for name, variable := range variables {
		value, _ := variable.(map[string]any)["default"].(string)
		serverURL = strings.ReplaceAll(serverURL, "{"+name+"}", value)
	}
	if serverURL != "http://localhost:8080" {
		t.Errorf("the server URL, its variables at their defaults, is %s; want http://localhost:8080, where go run . listens", serverURL)
	}
	for name := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		if slices.Contains([]string{"Error", "Object", "Array", "String", "Number", "Date", "Response", "Request", "Headers", "URL"}, name) {
			t.Errorf("the schema %s takes the name of one of JavaScript's own types", name)
		}
	}
}

// A tool that sends the document's examples (Postman in its example mode, Dredd) gets each
// operation's success status from a fresh server with the sample users, in any order.
func TestOpenAPIExamplesSucceed(t *testing.T) {
	doc := openapiDocument(t)
	components := doc["components"].(map[string]any)
	// parameter resolves a parameter of the document, given inline or as a $ref.
	parameter := func(p map[string]any) map[string]any {
		if ref, ok := p["$ref"].(string); ok {
			return components["parameters"].(map[string]any)[strings.TrimPrefix(ref, "#/components/parameters/")].(map[string]any)
		}
		return p
	}
	ts := newTestServer(t)
	if err := addSampleUsers(ts.store); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for path, item := range doc["paths"].(map[string]any) { // a map: the order changes on every run
		pathParameters, _ := item.(map[string]any)["parameters"].([]any)
		for method, operation := range item.(map[string]any) {
			op, ok := operation.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			success := "999"
			for status := range op["responses"].(map[string]any) {
				if strings.HasPrefix(status, "2") && status < success {
					success = status
				}
			}
			target, header, query := path, http.Header{}, url.Values{}
			operationParameters, _ := op["parameters"].([]any)
			parameters := map[string]map[string]any{} // by place and name: the operation's replace the path's
			for _, raw := range append(slices.Clone(pathParameters), operationParameters...) {
				p := parameter(raw.(map[string]any))
				parameters[p["in"].(string)+" "+p["name"].(string)] = p
			}
			for _, p := range parameters {
				example := fmt.Sprint(p["example"])
				switch p["in"] {
				case "path":
					target = strings.ReplaceAll(target, "{"+p["name"].(string)+"}", example)
				case "query":
					query.Set(p["name"].(string), example)
				case "header":
					header.Set(p["name"].(string), example)
				}
			}
			if len(query) > 0 {
				target += "?" + query.Encode()
			}
			bodies := map[string][]string{"": {""}} // media type to the example bodies
			if rb, ok := op["requestBody"].(map[string]any); ok {
				bodies = map[string][]string{}
				for mediaType, content := range rb["content"].(map[string]any) {
					for _, e := range content.(map[string]any)["examples"].(map[string]any) {
						name := strings.TrimPrefix(e.(map[string]any)["$ref"].(string), "#/components/examples/")
						value := components["examples"].(map[string]any)[name].(map[string]any)["value"]
						body, _ := json.Marshal(value)
						bodies[mediaType] = append(bodies[mediaType], string(body))
					}
				}
			}
			for mediaType, examples := range bodies {
				for _, body := range examples {
					r := httptest.NewRequest(strings.ToUpper(method), target, strings.NewReader(body))
					for name := range header {
						r.Header.Set(name, header.Get(name))
					}
					r.Header.Set("Authorization", "Bearer "+writeToken)
					if mediaType != "" {
						r.Header.Set("Content-Type", mediaType)
					}
					w := ts.serve(r)
					if sent++; strconv.Itoa(w.Code) != success {
						t.Errorf("%s %s %s: %d %s, want %s", strings.ToUpper(method), target, body, w.Code, w.Body, success)
					}
				}
			}
		}
	}
	if sent < 25 {
		t.Errorf("only %d requests sent: the walk of the document is broken", sent)
	}
}

// The statuses the document names are the service's own (docs/api.md, "Responses"), every
// operation documents the 500 of a panic, and every operation under /api/ that needs a token says
// what happens without one.
func TestOpenAPIStatusesAreTheServicesOwn(t *testing.T) {
	doc := openapiDocument(t)
	used := []string{"200", "201", "204", "304", "400", "401", "403", "404", "409", "412", "413", "415", "500", "503"}
	for path, item := range doc["paths"].(map[string]any) {
		for method, operation := range item.(map[string]any) {
			op, ok := operation.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			responses := op["responses"].(map[string]any)
			for status := range responses {
				if !slices.Contains(used, status) {
					t.Errorf("%s %s documents status %s, which the service never sends", method, path, status)
				}
			}
			if _, ok := responses["500"]; !ok {
				t.Errorf("%s %s: a panic is answered 500 on every route, but the document omits it", method, path)
			}
			_, documents401 := responses["401"]
			if needsToken := isAPIPath(path) && method != "options"; needsToken != documents401 {
				t.Errorf("%s %s: 401 documented %v, want %v", method, path, documents401, needsToken)
			}
		}
	}
}

// openapiExample is one example body of the document, with the schema it illustrates.
type openapiExample struct {
	where  string // a JSON pointer-like path, for messages
	name   string // the example's name in components/examples, when it is a $ref
	schema string // the schema's name in components/schemas
	value  json.RawMessage
}

// openapiExamples finds every example of every media type in the document, resolving $refs. The
// examples of components/examples are taken from the file as written, in its members' order,
// which decoding into a map loses.
func openapiExamples(t *testing.T, doc map[string]any) []openapiExample {
	t.Helper()
	components := doc["components"].(map[string]any)
	resolve := func(ref string) (string, map[string]any) {
		name := ref[strings.LastIndexByte(ref, '/')+1:]
		kind := strings.TrimPrefix(ref, "#/components/")
		kind = kind[:strings.IndexByte(kind, '/')]
		target, ok := components[kind].(map[string]any)[name].(map[string]any)
		if !ok {
			t.Fatalf("%s does not resolve", ref)
		}
		return name, target
	}
	asWritten, err := webFiles.ReadFile("web/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Components struct {
			Examples map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"examples"`
		} `json:"components"`
	}
	if err := json.Unmarshal(asWritten, &raw); err != nil {
		t.Fatal(err)
	}
	var found []openapiExample
	var walk func(where string, node any)
	walk = func(where string, node any) {
		object, ok := node.(map[string]any)
		if !ok {
			return
		}
		if content, ok := object["content"].(map[string]any); ok {
			for mediaType, m := range content {
				media := m.(map[string]any)
				ref, _ := media["schema"].(map[string]any)["$ref"].(string)
				if ref == "" {
					continue // the page's own files: HTML, CSS, JavaScript, SVG
				}
				schema, _ := resolve(ref)
				examples, _ := media["examples"].(map[string]any)
				if len(examples) == 0 {
					t.Errorf("%s %s has no example", where, mediaType)
				}
				for key, e := range examples {
					example := e.(map[string]any)
					name := ""
					value, _ := json.Marshal(example["value"])
					if ref, ok := example["$ref"].(string); ok {
						name, _ = resolve(ref)
						var compact bytes.Buffer
						json.Compact(&compact, raw.Components.Examples[name].Value)
						value = compact.Bytes()
					}
					found = append(found, openapiExample{where + "/" + mediaType + "/" + key, name, schema, value})
				}
			}
		}
		for key, child := range object {
			walk(where+"/"+key, child)
		}
	}
	walk("", doc)
	return found
}

// openapiDecodeStrictly decodes one JSON value into v, refusing members v does not have.
func openapiDecodeStrictly(body []byte, v any) error {
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(v); err != nil {
		return err
	}
	if decoder.More() {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// The examples are bodies the service really sends and takes: each decodes into the service's own
// types with no unknown field, a user is byte for byte what the store would send, an error named
// after one of the service's fixed errors carries its exact message, and a request body passes the
// service's own decoder and field rules.
func TestOpenAPIExamplesAreRealBodies(t *testing.T) {
	// refused is the 415 readJSONBody gives a request of method with these headers.
	refused := func(method, contentType, encoding string) *apiError {
		r := httptest.NewRequest(method, "/api/users/1", strings.NewReader("{}"))
		r.Header.Set("Content-Type", contentType)
		if encoding != "" {
			r.Header.Set("Content-Encoding", encoding)
		}
		_, err := readJSONBody(httptest.NewRecorder(), r)
		return err.(*apiError)
	}
	fixed := map[string]*apiError{
		"NoToken": errNoToken, "InvalidToken": errInvalidToken, "ReadOnly": errReadOnly,
		"NoSuchUser": errorFor(errNotFound), "Changed": errIfMatchFailed, "EmailTaken": errorFor(errEmailTaken),
		"TooLarge": errBodyTooLarge, "NotJSON": refused("PUT", "text/plain", ""),
		"NotJSONPatch": refused("PATCH", "text/plain", ""),
		"Compressed":   refused("POST", "application/json", "gzip"), "Internal": errInternal,
	}
	// The list, error and health bodies as the service writes them (encodeList, writeError, health).
	type listEnvelope struct {
		Data       []user `json:"data"`
		Total      int64  `json:"total"`
		Page       *int64 `json:"page"`
		PerPage    *int64 `json:"per_page"`
		TotalPages *int64 `json:"total_pages"`
	}
	type healthBody struct {
		Status string `json:"status"`
	}
	examples := openapiExamples(t, openapiDocument(t))
	if len(examples) < 20 {
		t.Fatalf("found only %d examples: the walk of the document is broken", len(examples))
	}
	for _, e := range examples {
		var err error
		switch e.schema {
		case "User":
			var u user
			if err = openapiDecodeStrictly(e.value, &u); err == nil {
				want, _ := encodeJSON(u)
				if string(e.value) != string(want) {
					t.Errorf("%s: %s is not the service's representation %s", e.where, e.value, want)
				}
			}
		case "UserList":
			var list listEnvelope
			if err = openapiDecodeStrictly(e.value, &list); err == nil {
				paged := list.Page != nil && list.PerPage != nil && list.TotalPages != nil
				switch {
				case list.Data == nil:
					t.Errorf("%s: data must be [], never null", e.where)
				case !paged && (list.Page != nil || list.PerPage != nil || list.TotalPages != nil):
					t.Errorf("%s: page, per_page and total_pages come together or not at all", e.where)
				case !paged && list.Total != int64(len(list.Data)):
					t.Errorf("%s: unpaged, total must be the length of data", e.where)
				case paged && *list.TotalPages != (list.Total+*list.PerPage-1) / *list.PerPage:
					t.Errorf("%s: total_pages must be ceil(total / per_page)", e.where)
				}
			}
		case "ErrorBody":
			var body errorBody
			if err = openapiDecodeStrictly(e.value, &body); err == nil {
				if body.Error == "" {
					t.Errorf("%s: the error message is empty", e.where)
				}
				if body.Fields != nil && body.Fields.Name == "" && body.Fields.Email == "" {
					t.Errorf("%s: fields names no problem", e.where)
				}
				if want, ok := fixed[e.name]; ok && body.Error != want.message {
					t.Errorf("%s: message %q, but the service says %q", e.where, body.Error, want.message)
				}
			}
		case "Health":
			var body healthBody
			err = openapiDecodeStrictly(e.value, &body)
		case "NewUser", "UserReplacement", "UserPatch":
			var withID struct{ ID *int64 }
			json.Unmarshal(e.value, &withID)
			pathID := int64(1)
			if withID.ID != nil {
				pathID = *withID.ID
			}
			var body userBody
			if body, err = decodeUserBody(e.value); err == nil {
				switch e.schema {
				case "NewUser":
					_, err = body.newUser()
				case "UserReplacement":
					_, err = body.replacement(pathID)
				default:
					_, err = body.patch(pathID)
				}
			}
		default:
			t.Errorf("%s: no test knows the schema %s", e.where, e.schema)
		}
		if err != nil {
			t.Errorf("%s (%s): %s does not decode: %v", e.where, e.schema, e.value, err)
		}
	}
}

// The document's Content-Security-Policy example is the one the page is really served with.
func TestOpenAPIShowsThePagesCSP(t *testing.T) {
	doc := openapiDocument(t)
	header := doc["components"].(map[string]any)["headers"].(map[string]any)["ContentSecurityPolicy"].(map[string]any)
	served := newTestServer(t).serve(httptest.NewRequest("GET", "/", nil)).Header().Get("Content-Security-Policy")
	if header["example"] != served {
		t.Errorf("the document shows the CSP %q, but the page is served with %q", header["example"], served)
	}
}
