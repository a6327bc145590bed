package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"users/conformance/kit"
)

// describe is the command describe: it drafts a description of a collection from an OpenAPI
// document, for a person to edit (docs/kit.md). The draft goes to stdout; what it could not tell
// from the document, and what it took, goes to stderr. It returns the exit status.
func describe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("describe", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	source := flags.String("openapi", "", "the OpenAPI document, in JSON: a `file`, or an http(s) URL such as http://localhost:8080/openapi.json")
	collection := flags.String("collection", "", "the `path` of the collection to describe, such as /api/books")
	err := flags.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "users conformance kit %s\n\nUsage: conformance describe -openapi URL_OR_FILE -collection PATH\n\n"+
			"Drafts a description of the collection at PATH from an OpenAPI 3 document, to edit before the\n"+
			"kit uses it (docs/kit.md): the paths and their methods, and the bodies, from a request example\n"+
			"or from the required properties of its schema. It reads JSON only: the standard library has no\n"+
			"YAML reader, so convert a YAML document to JSON first.\n\nFlags:\n", kit.Version)
		flags.SetOutput(stdout)
		flags.PrintDefaults()
		return allPassed
	case err != nil:
		fmt.Fprintf(stderr, "conformance describe: %v (run with -h for the flags)\n", err)
		return cannotCheck
	case *source == "" || *collection == "":
		fmt.Fprintln(stderr, "conformance describe: -openapi and -collection are required, such as -openapi openapi.json -collection /api/books")
		return cannotCheck
	}
	document, err := readOpenAPI(ctx, *source)
	if err != nil {
		fmt.Fprintln(stderr, "conformance describe:", err)
		return cannotCheck
	}
	draft, notes, err := draftDescription(document, *collection)
	if err != nil {
		fmt.Fprintln(stderr, "conformance describe:", err)
		return cannotCheck
	}
	out, _ := json.MarshalIndent(draft, "", "  ")
	fmt.Fprintf(stdout, "%s\n", out)
	for _, note := range notes {
		fmt.Fprintln(stderr, "describe:", note)
	}
	return allPassed
}

// readOpenAPI reads an OpenAPI document in JSON from a file or an http(s) URL.
func readOpenAPI(ctx context.Context, source string) (map[string]any, error) {
	var data []byte
	var err error
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		data, err = fetch(ctx, source)
	} else {
		data, err = os.ReadFile(source)
	}
	if err != nil {
		return nil, fmt.Errorf("-openapi: %w", err)
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var document map[string]any
	if err := decoder.Decode(&document); err != nil {
		return nil, fmt.Errorf("%s is not an OpenAPI document in JSON (%v): describe reads JSON only, as the standard library has no YAML reader, "+
			"so convert a YAML document to JSON first", source, err)
	}
	if version, _ := document["openapi"].(string); !strings.HasPrefix(version, "3.") {
		return nil, fmt.Errorf(`%s is not an OpenAPI 3 document: it has no "openapi": "3.x"`, source)
	}
	return document, nil
}

// fetch GETs a document.
func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s answered %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// itemPathPattern is the path of an item under a collection: the collection's, then one
// parameter, such as /api/books/{id}.
var itemPathPattern = regexp.MustCompile(`^/\{[^/{}]+\}$`)

// draftDescription drafts the description of the collection at path from an OpenAPI document, and
// says in notes what it took and what is left to the person who edits it.
func draftDescription(document map[string]any, path string) (*kit.Description, []string, error) {
	doc := openAPI{document}
	paths, _ := document["paths"].(map[string]any)
	collection, ok := paths[path].(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("the document has no path %s: its paths are %s", path, strings.Join(sortedNames(paths), ", "))
	}
	var itemPath string
	for _, p := range sortedNames(paths) {
		if rest, found := strings.CutPrefix(p, path); found && itemPathPattern.MatchString(rest) {
			itemPath = p
		}
	}
	item, _ := paths[itemPath].(map[string]any)
	notes := []string{fmt.Sprintf("%s takes %s", path, strings.Join(methodsOf(collection), ", "))}
	if itemPath != "" {
		notes = append(notes, fmt.Sprintf("%s takes %s", itemPath, strings.Join(methodsOf(item), ", ")))
	}

	create, from, err := doc.body(collection["post"])
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", path, err)
	}
	notes = append(notes, "create: "+from)
	replace, from, err := doc.body(item["put"])
	if err != nil {
		replace, from = create, "the create body, as PUT "+itemPath+" has none"
	}
	notes = append(notes, "replace: "+from)

	tagged, required := tagMember(create), doc.requiredOf(collection["post"])
	d := &kit.Description{Collection: path, Create: withPlaceholders(create, tagged), Replace: withPlaceholders(replace, tagged)}
	for _, name := range required {
		if name != tagged {
			d.Invalid = append(d.Invalid, without(d.Create, name))
			notes = append(notes, fmt.Sprintf("invalid: the create body without %s, which the schema requires", name))
			break
		}
	}
	if d.Invalid == nil {
		d.Invalid = []kit.Body{{}}
		notes = append(notes, "invalid: write a body the API must refuse, holding {tag} in a string")
	}
	if _, ok := item["patch"]; ok {
		d.Patch = kit.Body{tagged: d.Create[tagged]}
		notes = append(notes, fmt.Sprintf("patch: PATCH %s is in the document; the draft patches %s", itemPath, tagged))
	}
	if doc.hasBearer() {
		d.Auth = &kit.AuthKey{}
		notes = append(notes, "auth: the document has a bearer security scheme; add auth.realm if its challenges name a realm")
	}
	if shape := doc.listShape(collection["get"]); shape != nil {
		d.List = shape
		notes = append(notes, "list: the list's 200 is an object; check list.data and list.total")
	}
	if parameters := doc.queryParameters(collection["get"]); len(parameters) > 0 {
		notes = append(notes, fmt.Sprintf("GET %s takes the query parameters %s: declare those that are a tag filter, filters, sort and paging (docs/kit.md)",
			path, strings.Join(parameters, ", ")))
	}
	if tagged == "" {
		notes = append(notes, "the bodies have no string for the kit's {tag} and {n}: put them in one (docs/kit.md)")
	} else {
		notes = append(notes, fmt.Sprintf("the kit's {tag} and {n} are in %s: check that the values still pass the API's rules", tagged))
	}
	notes = append(notes, "unique, error, cors and conditional_post are not in an OpenAPI document: add those the API has")
	return d, notes, nil
}

// openAPI is an OpenAPI document, read as JSON.
type openAPI struct{ document map[string]any }

// resolve follows a local $ref ("#/components/schemas/Book") to what it names.
func (o openAPI) resolve(value any) map[string]any {
	object, _ := value.(map[string]any)
	for range 10 { // a chain of references, not a loop
		ref, ok := object["$ref"].(string)
		if !ok {
			break
		}
		var target any = o.document
		for _, token := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			next, _ := target.(map[string]any)
			target = next[strings.NewReplacer("~1", "/", "~0", "~").Replace(token)]
		}
		object, _ = target.(map[string]any)
	}
	return object
}

// jsonContent is an operation's request body in application/json.
func (o openAPI) jsonContent(operation any) map[string]any {
	requestBody := o.resolve(o.resolve(operation)["requestBody"])
	content, _ := requestBody["content"].(map[string]any)
	return o.resolve(content["application/json"])
}

// body returns an operation's request body: its example, the first of its examples, or one made
// from the required properties of its schema; and where it came from.
func (o openAPI) body(operation any) (kit.Body, string, error) {
	content := o.jsonContent(operation)
	if content == nil {
		return nil, "", errors.New("no request body in application/json")
	}
	if example, ok := content["example"].(map[string]any); ok {
		return kit.Body(example), "the request's example", nil
	}
	if examples, ok := content["examples"].(map[string]any); ok && len(examples) > 0 {
		name := sortedNames(examples)[0]
		if value, ok := o.resolve(examples[name])["value"].(map[string]any); ok {
			return kit.Body(value), "the request's example " + name, nil
		}
	}
	schema := o.resolve(content["schema"])
	properties, _ := schema["properties"].(map[string]any)
	body := kit.Body{}
	for _, name := range o.required(schema) {
		body[name] = o.valueOf(o.resolve(properties[name]))
	}
	if len(body) == 0 {
		return nil, "", errors.New("no example, and a schema with no required property to make one from")
	}
	return body, "made from the required properties of the schema", nil
}

// requiredOf returns the required properties of an operation's request body, in the schema's order.
func (o openAPI) requiredOf(operation any) []string {
	return o.required(o.resolve(o.jsonContent(operation)["schema"]))
}

// required returns the required properties of a schema, in its order.
func (o openAPI) required(schema map[string]any) []string {
	var names []string
	list, _ := schema["required"].([]any)
	for _, name := range list {
		if s, ok := name.(string); ok {
			names = append(names, s)
		}
	}
	return names
}

// valueOf is a value a schema takes: its example, its first enum value, or one of its type.
func (o openAPI) valueOf(schema map[string]any) any {
	if example, ok := schema["example"]; ok {
		return example
	}
	if values, ok := schema["enum"].([]any); ok && len(values) > 0 {
		return values[0]
	}
	switch schema["type"] {
	case "integer", "number":
		return json.Number("1")
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	if schema["format"] == "email" {
		return "kit@example.com"
	}
	return "Kit"
}

// hasBearer reports whether the document has a bearer security scheme (RFC 6750).
func (o openAPI) hasBearer() bool {
	components, _ := o.document["components"].(map[string]any)
	schemes, _ := components["securitySchemes"].(map[string]any)
	for _, name := range sortedNames(schemes) {
		scheme := o.resolve(schemes[name])
		if scheme["type"] == "http" && strings.EqualFold(fmt.Sprint(scheme["scheme"]), "bearer") {
			return true
		}
	}
	return false
}

// listShape is the list key of the collection's GET, when its 200 is an object holding an array:
// where the array is, and an integer property total, if it has one.
func (o openAPI) listShape(operation any) *kit.ListKey {
	responses, _ := o.resolve(operation)["responses"].(map[string]any)
	content, _ := o.resolve(responses["200"])["content"].(map[string]any)
	schema := o.resolve(o.resolve(content["application/json"])["schema"])
	properties, _ := schema["properties"].(map[string]any)
	var shape *kit.ListKey
	for _, name := range sortedNames(properties) {
		if o.resolve(properties[name])["type"] == "array" && shape == nil {
			shape = &kit.ListKey{Data: "/" + name}
		}
	}
	if total := o.resolve(properties["total"]); shape != nil && total["type"] == "integer" {
		shape.Total = "/total"
	}
	return shape
}

// queryParameters names the query parameters of an operation.
func (o openAPI) queryParameters(operation any) []string {
	var names []string
	parameters, _ := o.resolve(operation)["parameters"].([]any)
	for _, p := range parameters {
		if parameter := o.resolve(p); parameter["in"] == "query" {
			names = append(names, fmt.Sprint(parameter["name"]))
		}
	}
	return names
}

// tagMember is the member of a body the kit's tag and number go in: the first string, by name.
func tagMember(b kit.Body) string {
	for _, name := range sortedNames(b) {
		if _, ok := b[name].(string); ok {
			return name
		}
	}
	return ""
}

// withPlaceholders returns the body with {tag}-{n}- before the value of its member tagged, so that
// each body the kit sends is its own: an address stays an address, kit-…-1-ann@example.com.
func withPlaceholders(b kit.Body, tagged string) kit.Body {
	out := kit.Body{}
	for name, value := range b {
		out[name] = value
	}
	if s, ok := out[tagged].(string); ok {
		out[tagged] = "{tag}-{n}-" + s
	}
	return out
}

// without returns the body without one member.
func without(b kit.Body, name string) kit.Body {
	out := kit.Body{}
	for n, value := range b {
		if n != name {
			out[n] = value
		}
	}
	return out
}

// methodsOf names the methods of a path item, in upper case, in the order of RFC 9110 §9.3.
func methodsOf(pathItem map[string]any) []string {
	var methods []string
	for _, method := range []string{"get", "head", "post", "put", "patch", "delete", "options", "trace"} {
		if _, ok := pathItem[method]; ok {
			methods = append(methods, strings.ToUpper(method))
		}
	}
	return methods
}

// sortedNames returns an object's member names, sorted.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
