package kit

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// A Description names the collection the kit checks and says what its API declares: a JSON file
// the user writes (docs/kit.md shows one for books), read by ParseDescription. users.json, beside
// this file, is this reference's own.
//
// The collection and the bodies are required. Every other key is optional, and each turns on the
// rules that need it (Rule.Keys; -list shows them): a rule whose key is missing is skipped,
// "not declared (KEY)", and never fails. A string in a body may hold two placeholders, filled each
// time the kit sends the body: {tag}, a tag unique to the run and the rule, by which the kit finds
// its own items, and {n}, a number new to each body, so that a unique field gets a new value in
// each create.
type Description struct {
	// Name is where the description came from, as the report names it.
	Name string `json:"-"`

	// ThisReference says that the API is this reference, the users service: the rules of this
	// reference only, written for users, then run too. Only users.json sets it.
	ThisReference bool `json:"this_reference,omitempty"`
	// Collection is the path of the collection, such as /api/books; an item is at Collection/{id},
	// and its id is its member "id", a number or a string.
	Collection string `json:"collection"`
	// Create is a valid body to create an item with, Replace a second one to replace an item with
	// (PUT), and Invalid the bodies that a create and a replace must refuse (at least one). Create
	// and Replace hold {tag} and {n}, and each body of Invalid holds {tag}, so that the kit can see
	// what a request created.
	Create  Body   `json:"create"`
	Replace Body   `json:"replace"`
	Invalid []Body `json:"invalid"`

	// Patch is a JSON Merge Patch (RFC 7396) that changes an item: the API takes PATCH.
	Patch Body `json:"patch,omitempty"`
	// Tag says where the kit's tag goes (Field, which holds {tag} in Create and Replace) and the
	// query parameter that lists only the items whose Field contains a text (Filter): with it, the
	// kit lists its own items alone.
	Tag *TagKey `json:"tag,omitempty"`
	// Unique names the field no two items may share.
	Unique *UniqueKey `json:"unique,omitempty"`
	// Sort is how the list sorts.
	Sort *SortKey `json:"sort,omitempty"`
	// Filters are the query parameters that filter the list, by name.
	Filters map[string]FilterKey `json:"filters,omitempty"`
	// Paging is how the list pages.
	Paging *PagingKey `json:"paging,omitempty"`
	// List is where the items and their total are in a list's body, when it is not a bare array.
	List *ListKey `json:"list,omitempty"`
	// Error is where an error's message is in its body: a JSON pointer (RFC 6901), such as /error,
	// or RFC 9457's /detail.
	Error string `json:"error,omitempty"`
	// Auth says that the API takes bearer tokens (RFC 6750), and the realm of its challenges. Without
	// it the API has no authentication: the kit sends no token.
	Auth *AuthKey `json:"auth,omitempty"`
	// CORS says that the API answers pages of other origins (the Fetch standard's CORS protocol).
	CORS bool `json:"cors,omitempty"`
	// ConditionalPost says that a POST judges If-Match and If-None-Match against the collection,
	// whose ETag is that of its list.
	ConditionalPost bool `json:"conditional_post,omitempty"`
}

// A Body is a JSON object the kit sends, its numbers kept as written (json.Number).
type Body map[string]any

// TagKey is the description's tag: where the kit's tag goes, and the filter that finds it.
type TagKey struct {
	Field  string `json:"field"`
	Filter string `json:"filter"`
}

// UniqueKey is the description's unique field.
type UniqueKey struct {
	Field      string `json:"field"`
	IgnoreCase bool   `json:"ignore_case,omitempty"` // Ann@example.com and ann@example.com are the same
}

// SortKey is the description's sort: the query parameter, how it says descending, and the keys
// with the values the kit creates items with to sort them. Descending is written either as a
// Prefix before the key (sort=-name) or as a second parameter, Order, that takes asc or desc
// (_sort=name&_order=desc, as json-server writes it). id is always a key; values compare as
// numbers when both are, else as text, in any case when IgnoreCase is true. Items that compare
// equal keep ascending id order, in both directions.
type SortKey struct {
	Param      string           `json:"param"`
	Prefix     string           `json:"prefix,omitempty"`
	Order      string           `json:"order,omitempty"`
	IgnoreCase bool             `json:"ignore_case,omitempty"`
	Keys       map[string][]any `json:"keys"`
}

// FilterKey is one filter of the list: the fields it looks in, and how it matches a value, exact
// or contains, in any case when IgnoreCase is true. An item matches when one of the fields does.
type FilterKey struct {
	Fields     []string `json:"fields"`
	Match      string   `json:"match"`
	IgnoreCase bool     `json:"ignore_case,omitempty"`
}

// PagingKey is the description's paging: the query parameters of the page number (from 1) and of
// its size, the largest size the API takes (0 when it sets none), and the header that carries the
// total of a page (X-Total-Count), when the body does not.
type PagingKey struct {
	Page        string `json:"page"`
	Size        string `json:"size"`
	MaxSize     int    `json:"max_size,omitempty"`
	TotalHeader string `json:"total_header,omitempty"`
}

// ListKey is where a list's items and their total are in its body, each a JSON pointer: for users
// {"data": "/data", "total": "/total"}. Without it, the body is a bare array.
type ListKey struct {
	Data  string `json:"data"`
	Total string `json:"total,omitempty"`
}

// AuthKey is the description's authentication: bearer tokens, and the realm their challenges name
// ("" when they name none).
type AuthKey struct {
	Realm string `json:"realm,omitempty"`
}

//go:embed users.json
var usersDescription []byte

// UsersDescription returns this reference's own description, users.json, which the kit uses when
// it is given none.
func UsersDescription() *Description {
	d, err := ParseDescription("users.json (built in)", bytes.NewReader(usersDescription))
	if err != nil {
		panic("kit: users.json: " + err.Error()) // the kit's tests read it: not reached
	}
	return d
}

// ParseDescription reads a description, named name in the report, and checks it. A key it does
// not know is a mistake, as a misspelt key would otherwise turn its rules off without a word.
func ParseDescription(name string, r io.Reader) (*Description, error) {
	decoder := json.NewDecoder(r)
	decoder.DisallowUnknownFields()
	decoder.UseNumber()
	d := &Description{Name: name}
	if err := decoder.Decode(d); err != nil {
		return nil, fmt.Errorf("%s is not a description: %w", name, err)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: something follows the description's object", name)
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// check says what is wrong with a description: its first problem, in the order of its keys.
func (d *Description) check() error {
	if u, err := url.Parse(d.Collection); err != nil || !strings.HasPrefix(d.Collection, "/") || strings.HasSuffix(d.Collection, "/") ||
		u.RawQuery != "" || u.Path != d.Collection {
		return fmt.Errorf(`collection must be the path of the collection, such as "/api/books", not %q`, d.Collection)
	}
	for _, b := range []struct {
		key  string
		body Body
	}{{"create", d.Create}, {"replace", d.Replace}} {
		switch {
		case len(b.body) == 0:
			return fmt.Errorf("%s must be a body the API takes, a JSON object with at least one member", b.key)
		case !holds(b.body, "{tag}") || !holds(b.body, "{n}"):
			return fmt.Errorf("%s must hold {tag} and {n} in its strings, by which the kit tells its items apart", b.key)
		}
	}
	if len(d.Invalid) == 0 {
		return errors.New("invalid must list at least one body that a create must refuse")
	}
	for i, b := range d.Invalid {
		if !holds(b, "{tag}") {
			return fmt.Errorf("invalid[%d] must hold {tag} in one of its strings, so that the kit can see it created nothing", i)
		}
	}
	if d.Patch != nil && len(d.Patch) == 0 {
		return errors.New("patch must change at least one member")
	}
	if t := d.Tag; t != nil {
		for _, b := range []struct {
			key  string
			body Body
		}{{"create", d.Create}, {"replace", d.Replace}, {"patch", d.Patch}} {
			if value, ok := b.body[t.Field]; (ok || b.key != "patch") && !holds(value, "{tag}") {
				return fmt.Errorf("tag.field is %q, so %s must hold {tag} in its member %q", t.Field, b.key, t.Field)
			}
		}
		if t.Filter == "" {
			return errors.New("tag.filter must name the query parameter that finds the kit's items by their tag, such as q")
		}
	}
	if u := d.Unique; u != nil {
		for _, b := range []struct {
			key  string
			body Body
		}{{"create", d.Create}, {"replace", d.Replace}} {
			if !holds(b.body[u.Field], "{n}") {
				return fmt.Errorf("unique.field is %q, so %s must hold {n} in its member %q: each create needs a value of its own", u.Field, b.key, u.Field)
			}
		}
	}
	if s := d.Sort; s != nil {
		switch {
		case s.Param == "":
			return errors.New("sort.param must name the query parameter that sorts, such as sort")
		case (s.Prefix == "") == (s.Order == ""):
			return errors.New(`sort must say how to sort in descending order: either prefix, such as "-" for sort=-name, or order, such as "_order" for _order=desc`)
		}
		for _, key := range sortedKeys(s.Keys) {
			if _, ok := d.Create[key]; !ok || len(s.Keys[key]) < 2 {
				return fmt.Errorf("sort.keys.%s must be a member of create, with at least two values to sort", key)
			}
		}
	}
	for _, name := range sortedKeys(d.Filters) {
		f := d.Filters[name]
		switch {
		case len(f.Fields) == 0 || slices.ContainsFunc(f.Fields, func(field string) bool { _, ok := d.Create[field]; return !ok }):
			return fmt.Errorf("filters.%s.fields must name the members of create the filter looks in", name)
		case f.Match != "exact" && f.Match != "contains":
			return fmt.Errorf(`filters.%s.match must be "exact" or "contains", not %q`, name, f.Match)
		}
	}
	if p := d.Paging; p != nil && (p.Page == "" || p.Size == "" || p.MaxSize < 0) {
		return errors.New("paging must name the parameters of the page (page) and of its size (size), and max_size may not be negative")
	}
	if l := d.List; l != nil && (!isPointer(l.Data) || l.Total != "" && !isPointer(l.Total)) {
		return errors.New(`list.data and list.total must be JSON pointers, such as "/data" and "/total"`)
	}
	if d.Error != "" && !isPointer(d.Error) {
		return fmt.Errorf(`error must be a JSON pointer, such as "/error" or "/detail", not %q`, d.Error)
	}
	return nil
}

// holds reports whether a JSON value has the text in one of its strings, however deep.
func holds(value any, text string) bool {
	switch v := value.(type) {
	case string:
		return strings.Contains(v, text)
	case map[string]any:
		return slices.ContainsFunc(sortedKeys(v), func(k string) bool { return holds(v[k], text) })
	case Body:
		return holds(map[string]any(v), text)
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return holds(e, text) })
	}
	return false
}

// isPointer reports whether s is a JSON pointer to a member (RFC 6901): "" points at the whole.
func isPointer(s string) bool { return s == "" || strings.HasPrefix(s, "/") }

// A Key is a key of the description that a rule needs.
type Key int

const (
	keyPatch Key = 1 << iota
	keyTag
	keyUnique
	keySort
	keyFilters
	keyPaging
	keyTotal // list.total
	keyError
	keyAuth
	keyRealm // auth.realm
	keyCORS
	keyConditionalPost
)

// keyNames are the keys by name, as the description writes them.
var keyNames = []struct {
	key  Key
	name string
}{
	{keyPatch, "patch"}, {keyTag, "tag"}, {keyUnique, "unique"}, {keySort, "sort"}, {keyFilters, "filters"},
	{keyPaging, "paging"}, {keyTotal, "list.total"}, {keyError, "error"}, {keyAuth, "auth"}, {keyRealm, "auth.realm"},
	{keyCORS, "cors"}, {keyConditionalPost, "conditional_post"},
}

// String names the keys, for -list and the report: "sort, tag".
func (k Key) String() string {
	var names []string
	for _, kn := range keyNames {
		if k&kn.key != 0 {
			names = append(names, kn.name)
		}
	}
	return strings.Join(names, ", ")
}

// missing returns the keys of k the description does not declare.
func (d *Description) missing(k Key) Key {
	declared := map[Key]bool{
		keyPatch: d.Patch != nil, keyTag: d.Tag != nil, keyUnique: d.Unique != nil, keySort: d.Sort != nil,
		keyFilters: len(d.Filters) > 0, keyPaging: d.Paging != nil, keyTotal: d.List != nil && d.List.Total != "",
		keyError: d.Error != "", keyAuth: d.Auth != nil, keyRealm: d.Auth != nil && d.Auth.Realm != "",
		keyCORS: d.CORS, keyConditionalPost: d.ConditionalPost,
	}
	var missing Key
	for _, kn := range keyNames {
		if k&kn.key != 0 && !declared[kn.key] {
			missing |= kn.key
		}
	}
	return missing
}

// sortedKeys returns the names of an object's members, sorted, so that what depends on them is
// the same from one run to the next.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
