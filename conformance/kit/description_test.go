package kit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// booksJSON is a description of a books API with none of the optional keys.
const booksJSON = `{
  "collection": "/api/books",
  "create": {"title": "Kit {tag}-{n}", "author": "Ann"},
  "replace": {"title": "Kit {tag}-{n}", "author": "Bob"},
  "invalid": [{"author": "{tag}"}]
}`

// description reads a description of a test's, which must be valid.
func description(t *testing.T, text string) *Description {
	t.Helper()
	d, err := ParseDescription("test.json", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Every description in the repository reads, this reference's included.
func TestTheRepositorysDescriptionsRead(t *testing.T) {
	if d := UsersDescription(); !d.ThisReference || d.Collection != "/api/users" || d.Name != "users.json (built in)" {
		t.Errorf("users.json reads as %+v", d)
	}
	for _, file := range []string{"../../testdata/books/books.json", "../../e2e/json-server/posts.json"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDescription(file, f)
		f.Close()
		if err != nil || d.ThisReference {
			t.Errorf("%s: %v; this reference: %v", file, err, d != nil && d.ThisReference)
		}
	}
}

// A description that cannot drive the rules is refused at once, saying which key is wrong: a
// mistake would otherwise show up only as rules that fail, or are skipped, for no clear reason.
func TestDescriptionMistakesAreNamed(t *testing.T) {
	valid := map[string]string{
		"collection": `"/api/books"`,
		"create":     `{"title": "Kit {tag}-{n}", "isbn": "{n}"}`,
		"replace":    `{"title": "Kit {tag}-{n}", "isbn": "{n}"}`,
		"invalid":    `[{"title": "{tag}"}]`,
	}
	for _, tt := range []struct {
		name, key, value, says string
	}{
		{"a collection without a slash", "collection", `"api/books"`, "collection must be the path"},
		{"a collection with a query", "collection", `"/api/books?x=1"`, "collection must be the path"},
		{"a collection with a slash at its end", "collection", `"/api/books/"`, "collection must be the path"},
		{"no create body", "create", `{}`, "create must be a body"},
		{"a create body without {n}", "create", `{"title": "Kit {tag}"}`, "create must hold {tag} and {n}"},
		{"a replace body without {tag}", "replace", `{"title": "Kit {n}"}`, "replace must hold {tag} and {n}"},
		{"no invalid body", "invalid", `[]`, "invalid must list at least one body"},
		{"an invalid body without {tag}", "invalid", `[{}]`, "invalid[0] must hold {tag}"},
		{"an empty patch", "patch", `{}`, "patch must change at least one member"},
		{"a tag field without {tag}", "tag", `{"field": "isbn", "filter": "q"}`, `tag.field is "isbn", so create must hold {tag}`},
		{"a tag without its filter", "tag", `{"field": "title", "filter": ""}`, "tag.filter must name"},
		{"a unique field without {n}", "unique", `{"field": "author"}`, `unique.field is "author", so create must hold {n}`},
		{"a sort without its parameter", "sort", `{"prefix": "-", "keys": {}}`, "sort.param must name"},
		{"a sort with both ways of descending", "sort", `{"param": "s", "prefix": "-", "order": "o", "keys": {}}`, "either prefix"},
		{"a sort key not in create", "sort", `{"param": "s", "prefix": "-", "keys": {"year": [1, 2]}}`, "sort.keys.year must be a member of create"},
		{"a sort key with one value", "sort", `{"param": "s", "prefix": "-", "keys": {"title": ["a"]}}`, "at least two values"},
		{"a filter on no field", "filters", `{"q": {"fields": [], "match": "contains"}}`, "filters.q.fields must name"},
		{"a filter that matches otherwise", "filters", `{"q": {"fields": ["title"], "match": "like"}}`, `filters.q.match must be "exact" or "contains"`},
		{"paging without its size", "paging", `{"page": "page"}`, "paging must name"},
		{"a list that is not a pointer", "list", `{"data": "data"}`, "list.data and list.total must be JSON pointers"},
		{"an error that is not a pointer", "error", `"message"`, "error must be a JSON pointer"},
		{"a key the kit does not know", "pagin", `{}`, `unknown field "pagin"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := []string{}
			for key, value := range valid {
				if key != tt.key {
					members = append(members, `"`+key+`": `+value)
				}
			}
			members = append(members, `"`+tt.key+`": `+tt.value)
			_, err := ParseDescription("test.json", strings.NewReader("{"+strings.Join(members, ", ")+"}"))
			if err == nil || !strings.Contains(err.Error(), tt.says) || !strings.HasPrefix(err.Error(), "test.json") {
				t.Errorf("got %v, want an error that names test.json and says %q", err, tt.says)
			}
		})
	}
}

// Each body the kit fills gets the rule's tag for {tag} and a number of its own for {n}, however
// deep the string, and the description's own bodies are left as written.
func TestFillGivesEachBodyItsOwnNumber(t *testing.T) {
	d := description(t, `{"collection": "/books", "create": {"title": "{tag}-{n}", "meta": {"tags": ["{tag}", 5]}},
		"replace": {"title": "{tag}-{n}"}, "invalid": [{"title": "{tag}"}]}`)
	c := &Client{group: "kit-1a2b3c4d-007"}
	first, second := c.fill(d.Create), c.fill(d.Create)
	want := Body{"title": "kit-1a2b3c4d-007-1", "meta": map[string]any{"tags": []any{"kit-1a2b3c4d-007", json.Number("5")}}}
	if !reflect.DeepEqual(first, want) || second["title"] != "kit-1a2b3c4d-007-2" || d.Create["title"] != "{tag}-{n}" {
		t.Errorf("filled %v, then %v; the description's body is now %v", first, second, d.Create)
	}
}

// A rule whose key the description does not declare is skipped, "not declared (KEY)", and does not
// fail the run, whatever its tier; an API without auth is sent no token, and needs none.
func TestMissingKeysSkipTheirRules(t *testing.T) {
	var mu sync.Mutex
	var authorization []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		authorization = append(authorization, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(`[]`))
	}))
	defer server.Close()
	books := description(t, booksJSON)
	books.Collection = "/"
	report := run(t, Config{URL: server.URL, Description: books},
		Rule{ID: "test/sorts", Tier: Must, Keys: keySort, check: func(c *Client) error { return failf(nil, "", "") }},
		Rule{ID: "test/realm", Tier: Must, Keys: keyAuth | keyRealm, check: func(c *Client) error { return failf(nil, "", "") }},
		Rule{ID: "test/reads", Tier: Must, check: func(c *Client) error { return c.get("/").statusIs(http.StatusOK) }})
	for i, want := range []string{"not declared (sort)", "not declared (auth, auth.realm)"} {
		if r := report.Results[i]; r.Status != Skipped || r.Reason != want {
			t.Errorf("%s: %v, %q; want skipped, %q", r.Rule.ID, r.Status, r.Reason, want)
		}
	}
	if report.Results[2].Status != Passed || report.Failed() {
		t.Errorf("the rule that needs no key: %v; the run failed: %v", report.Results[2].Status, report.Failed())
	}
	if strings.Join(authorization, "") != "" {
		t.Errorf("an API without auth was sent Authorization %q", authorization)
	}
}

// A description that declares auth, given no token, cannot proceed.
func TestAuthWithoutATokenCannotProceed(t *testing.T) {
	_, err := Run(context.Background(), Config{URL: "http://127.0.0.1:9", Description: UsersDescription()}, Rules())
	if err == nil || !strings.Contains(err.Error(), "no write token") {
		t.Errorf("Run: %v", err)
	}
}

// A JSON Merge Patch replaces members, merges objects and removes what is null: the examples of
// RFC 7396 Appendix A, on the members of an item.
func TestMergedFollowsRFC7396(t *testing.T) {
	for _, tt := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	} {
		var target map[string]any
		var patch Body
		json.Unmarshal([]byte(tt.target), &target)
		json.Unmarshal([]byte(tt.patch), &patch)
		if got := merged(item{members: target}, patch).String(); got != tt.want {
			t.Errorf("%s merged with %s: %s, want %s", tt.target, tt.patch, got, tt.want)
		}
	}
}

// A JSON pointer (RFC 6901) finds a member, an element, or the whole, and escapes / and ~.
func TestPointAtFollowsRFC6901(t *testing.T) {
	value, _ := decodeValue([]byte(`{"data": [{"id": 7}], "a/b": 1, "m~n": 2, "meta": {"total": 3}}`))
	for _, tt := range []struct {
		pointer string
		want    string // the JSON of what it points at; "" when it points at nothing
	}{
		{"/data/0/id", "7"}, {"/a~1b", "1"}, {"/m~0n", "2"}, {"/meta/total", "3"}, {"/data/1", ""}, {"/nothing", ""}, {"/data/x", ""},
	} {
		got, found := pointAt(value, tt.pointer)
		if shown := string(mustMarshal(got)); found != (tt.want != "") || found && shown != tt.want {
			t.Errorf("%s: %s, found %v; want %q", tt.pointer, shown, found, tt.want)
		}
	}
}

// A filter keeps an item when one of its fields matches, exactly or by containing the value, in
// any case only when the description says so.
func TestFilterKeepsAsDeclared(t *testing.T) {
	it := item{ID: "1", members: map[string]any{"title": "Dune", "author": "Frank Herbert", "year": json.Number("1965")}}
	for _, tt := range []struct {
		filter FilterKey
		value  string
		keeps  bool
	}{
		{FilterKey{Fields: []string{"title"}, Match: "exact"}, "Dune", true},
		{FilterKey{Fields: []string{"title"}, Match: "exact"}, "dune", false},
		{FilterKey{Fields: []string{"title"}, Match: "exact", IgnoreCase: true}, "DUNE", true},
		{FilterKey{Fields: []string{"title"}, Match: "exact"}, "Dun", false},
		{FilterKey{Fields: []string{"title", "author"}, Match: "contains"}, "Herb", true},
		{FilterKey{Fields: []string{"title", "author"}, Match: "contains"}, "herb", false},
		{FilterKey{Fields: []string{"title", "author"}, Match: "contains", IgnoreCase: true}, "herb", true},
		{FilterKey{Fields: []string{"title"}, Match: "contains"}, "", true},
		{FilterKey{Fields: []string{"year"}, Match: "exact"}, "1965", true},
	} {
		if got := tt.filter.keeps(it, tt.value); got != tt.keeps {
			t.Errorf("%+v keeps %q: %v, want %v", tt.filter, tt.value, got, tt.keeps)
		}
	}
}

// The kit orders values as a sort of the description does: numbers as numbers, text as text, in
// any case only when the description says so.
func TestCompareValuesAsTheSortDoes(t *testing.T) {
	for _, tt := range []struct {
		a, b       any
		ignoreCase bool
		want       int
	}{
		{json.Number("9"), json.Number("10"), false, -1},
		{"9", "10", false, 1},
		{"ann", "Ann", false, 1},
		{"ann", "Ann", true, 0},
		{"Carl", "bob", false, -1},
		{"Carl", "bob", true, 1},
	} {
		if got := compareValues(tt.a, tt.b, tt.ignoreCase); got != tt.want {
			t.Errorf("compareValues(%v, %v, %v) = %d, want %d", tt.a, tt.b, tt.ignoreCase, got, tt.want)
		}
	}
}

// A typo of the page parameter is two of its letters swapped, after any leading mark.
func TestMisspeltSwapsTwoLetters(t *testing.T) {
	for name, want := range map[string]string{"page": "pgae", "_page": "_pgae", "p": "px"} {
		if got := misspelt(name); got != want {
			t.Errorf("misspelt(%q) = %q, want %q", name, got, want)
		}
	}
}

// notesServer is an API no description of the repository fits: notes with string ids, at /v1/notes,
// a bare array for the list, no authentication, and its errors as RFC 9457 problem details.
func notesServer(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	notes := map[string]map[string]any{}
	var order []string
	problem := func(w http.ResponseWriter, status int, detail string) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
	}
	answer := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/notes", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		list := []map[string]any{}
		for _, id := range order {
			if note, ok := notes[id]; ok {
				list = append(list, note)
			}
		}
		answer(w, http.StatusOK, list)
	})
	mux.HandleFunc("POST /v1/notes", func(w http.ResponseWriter, r *http.Request) {
		var note map[string]any
		if json.NewDecoder(r.Body).Decode(&note) != nil {
			problem(w, http.StatusBadRequest, "the body is not a JSON object")
			return
		}
		mu.Lock()
		defer mu.Unlock()
		note["id"] = "note-" + strconv.Itoa(len(order)+1)
		notes[note["id"].(string)], order = note, append(order, note["id"].(string))
		w.Header().Set("Location", "/v1/notes/"+note["id"].(string)) // relative
		answer(w, http.StatusCreated, note)
	})
	mux.HandleFunc("GET /v1/notes/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		note, ok := notes[r.PathValue("id")]
		mu.Unlock()
		if !ok {
			problem(w, http.StatusNotFound, "no note has this id")
			return
		}
		answer(w, http.StatusOK, note)
	})
	mux.HandleFunc("DELETE /v1/notes/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := notes[r.PathValue("id")]; !ok {
			problem(w, http.StatusNotFound, "no note has this id")
			return
		}
		delete(notes, r.PathValue("id"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { problem(w, http.StatusNotFound, "there is nothing here") })
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	return server
}

// The convention rules hold for any API that keeps them, as its description declares it: ids that
// are strings, a Location relative to the request, errors as RFC 9457 problem details (their
// message at /detail, in application/problem+json), and no authentication.
func TestConventionRulesCheckWhatTheDescriptionDeclares(t *testing.T) {
	server := notesServer(t)
	notes := description(t, `{"collection": "/v1/notes", "create": {"text": "{tag}-{n}"}, "replace": {"text": "{tag}-{n}"},
		"invalid": [{"text": "{tag}"}], "error": "/detail"}`)
	var rules []Rule
	for _, id := range []string{"reachable/list-200", "reachable/content-type-json", "create/201", "create/201-body-is-the-item", "create/201-location",
		"create/location-reads-back", "create/each-post-a-new-item", "read/200-item", "read/missing-404", "list/envelope", "list/holds-created-item",
		"delete/204", "delete/gone", "delete/again-404", "errors/error-body", "errors/error-message"} {
		i := slices.IndexFunc(Rules(), func(r Rule) bool { return r.ID == id })
		rules = append(rules, Rules()[i])
	}
	report := run(t, Config{URL: server.URL, Description: notes}, rules...)
	for _, r := range report.Results {
		if r.Status != Passed {
			t.Errorf("%s: %s %s\n  expected %s\n  got      %s", r.Rule.ID, r.Status, r.Reason, r.Expected, r.Got)
		}
	}
	if len(report.Leftovers) > 0 {
		t.Errorf("leftovers: %q", report.Leftovers)
	}
}
