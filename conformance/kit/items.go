package kit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The convention rules see the collection as the description names it: items, each a JSON object
// with an id, created from the description's bodies. (The rules of this reference only see users:
// users.go.)

// An item is a member of the collection as the server answers it.
type item struct {
	ID      string         // its id as it goes in a path: 7, or abc for "abc"
	members map[string]any // every member, the id included, numbers as written (json.Number)
}

func (it item) String() string { return string(mustMarshal(it.members)) }

// decodeValue reads JSON as the kit compares it: numbers as written, so that 7 and 7.0 differ.
func decodeValue(data []byte) (any, error) {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var value any
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, fmt.Errorf("something follows the JSON value")
	}
	return value, nil
}

// itemOf reads a JSON value as an item: an object whose id is a number or a non-empty string.
func itemOf(value any) (item, bool) {
	members, ok := value.(map[string]any)
	if !ok {
		return item{}, false
	}
	switch id := members["id"].(type) {
	case json.Number:
		return item{ID: id.String(), members: members}, true
	case string:
		return item{ID: id, members: members}, id != ""
	}
	return item{}, false
}

// decodeItem reads the answer as an item.
func (x *reply) decodeItem() (item, error) {
	value, err := decodeValue(x.responseBody)
	it, ok := itemOf(value)
	if err != nil || !ok {
		return item{}, failf(x, `an item: a JSON object whose "id" is a number or a string`, x.summary())
	}
	return it, nil
}

// itemPath is the path of an item: the collection's, then its id.
func (c *Client) itemPath(id string) string { return c.collection() + "/" + url.PathEscape(id) }

// collection is the path of the collection, as the description names it.
func (c *Client) collection() string { return c.run.desc.Collection }

// fill returns a body of the description with its placeholders filled: {tag} by the rule's tag,
// and {n} by a number new to this body.
func (c *Client) fill(b Body) Body {
	filled := fillValue(map[string]any(b), strings.NewReplacer("{tag}", c.group, "{n}", c.number()))
	return Body(filled.(map[string]any))
}

// fillValue returns a copy of a JSON value with the placeholders filled in each of its strings.
func fillValue(value any, placeholders *strings.Replacer) any {
	switch v := value.(type) {
	case string:
		return placeholders.Replace(v)
	case map[string]any:
		filled := make(map[string]any, len(v))
		for name, member := range v {
			filled[name] = fillValue(member, placeholders)
		}
		return filled
	case []any:
		filled := make([]any, len(v))
		for i, element := range v {
			filled[i] = fillValue(element, placeholders)
		}
		return filled
	}
	return value
}

// with returns the body with one member set to value.
func (b Body) with(name string, value any) Body {
	changed := Body{}
	for n, v := range b {
		changed[n] = v
	}
	changed[name] = value
	return changed
}

func (b Body) String() string { return string(mustMarshal(b)) }

// post sends a body to the collection as the writer.
func (c *Client) post(b Body, header ...string) *reply {
	return c.write(http.MethodPost, c.collection(), b.String(), header...)
}

// newItem creates an item from the description's create body. A server that cannot create one
// makes the rule a skip: create/201 and its neighbours say what is wrong.
func (c *Client) newItem() (item, error) { return c.newItemFrom(c.fill(c.run.desc.Create)) }

// newItemFrom creates an item from this body.
func (c *Client) newItemFrom(b Body) (item, error) {
	x := c.post(b)
	it, err := x.decodeItem()
	if x.status/100 != 2 || err != nil {
		return item{}, cannotCreate(x, c.collection())
	}
	return it, nil
}

// newItems creates n items, one after another, so that their ids follow the order of creation.
func (c *Client) newItems(n int) ([]item, error) {
	var items []item
	for range n {
		it, err := c.newItem()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// gone makes an item of the rule's and deletes it, for an item that does not exist.
func (c *Client) gone() (item, error) {
	it, err := c.newItem()
	if err != nil {
		return it, err
	}
	if x := c.remove(c.itemPath(it.ID)); x.status/100 != 2 {
		return it, cannotRun(x, "could not delete an item to check it: DELETE %s answered %s, not 2xx", c.itemPath(it.ID), x.statusLine())
	}
	return it, nil
}

// holdsMembers returns the first member of b the item does not have with b's value, or "".
func (it item) holdsMembers(b Body) string {
	for _, name := range sortedKeys(b) {
		if !reflect.DeepEqual(it.members[name], b[name]) {
			return name
		}
	}
	return ""
}

// itemHolding checks that the answer is an item holding each member of b with b's value, and
// returns it.
func (x *reply) itemHolding(b Body) (item, error) {
	it, err := x.decodeItem()
	if err != nil {
		return item{}, err
	}
	if it.holdsMembers(b) != "" {
		return item{}, failf(x, "an item holding "+b.String(), x.summary())
	}
	return it, nil
}

// isItemWith checks that the answer is the item id, holding each member of b with b's value.
func (x *reply) isItemWith(id string, b Body) error {
	it, err := x.itemHolding(b)
	if err == nil && it.ID != id {
		return failf(x, "the item "+id+", holding "+b.String(), x.summary())
	}
	return err
}

// isItem checks that the answer is exactly this item, member for member.
func (x *reply) isItem(want item) error {
	got, err := x.decodeItem()
	if err != nil {
		return err
	}
	if got.ID != want.ID || !reflect.DeepEqual(got.members, want.members) {
		return failf(x, "the item "+want.String(), x.summary())
	}
	return nil
}

// merged is the item after a JSON Merge Patch (RFC 7396 §2): each member of the patch replaces the
// item's, an object merges into an object, and null removes the member.
func merged(it item, patch Body) item {
	return item{ID: it.ID, members: mergePatch(it.members, map[string]any(patch))}
}

// mergePatch is RFC 7396's MergePatch on objects: it returns a new object, target left as it is.
func mergePatch(target, patch map[string]any) map[string]any {
	result := make(map[string]any, len(target))
	for name, value := range target {
		result[name] = value
	}
	for name, value := range patch {
		inner, isObject := value.(map[string]any)
		old, wasObject := result[name].(map[string]any)
		switch {
		case value == nil:
			delete(result, name)
		case isObject && wasObject:
			result[name] = mergePatch(old, inner)
		case isObject:
			result[name] = mergePatch(map[string]any{}, inner)
		default:
			result[name] = value
		}
	}
	return result
}

// find reads the item with this id as it is stored: by GET of the item, or where a server has no
// such route, from the whole list.
func (c *Client) find(id string) (it item, found bool, err error) {
	x := c.get(c.itemPath(id))
	switch x.status {
	case http.StatusOK:
		it, err := x.decodeItem()
		return it, err == nil, err
	case http.StatusNotFound:
		return item{}, false, nil
	}
	return c.findInList(func(it item) bool { return it.ID == id })
}

// findInList looks for an item in the whole list, as a GET of the collection gives it.
func (c *Client) findInList(match func(item) bool) (item, bool, error) {
	l, err := c.decodeListing(c.get(c.collection()))
	if err != nil {
		return item{}, false, err
	}
	if i := slices.IndexFunc(l.items, match); i >= 0 {
		return l.items[i], true, nil
	}
	return item{}, false, nil
}

// unchanged checks that a refused request x left the item as it was.
func (c *Client) unchanged(x *reply, before item) error {
	after, found, err := c.find(before.ID)
	switch {
	case err != nil:
		return err
	case !found:
		return failf(x, "the item left as it was, "+before.String(), "the item is gone after the request")
	case !reflect.DeepEqual(after.members, before.members):
		return failf(x, "the item left as it was, "+before.String(), "afterwards it is "+after.String())
	}
	return nil
}

// storedWith checks that after the request x the item id reads, and is listed, holding each member
// of b with b's value.
func (c *Client) storedWith(x *reply, id string, b Body) error {
	read, found, err := c.find(id)
	switch {
	case err != nil:
		return err
	case !found:
		return failf(x, fmt.Sprintf("the item %s stored, holding %s", id, b), "no item "+id+" afterwards")
	case read.holdsMembers(b) != "":
		return failf(x, fmt.Sprintf("the item %s stored, holding %s", id, b), "it reads "+read.String())
	}
	listed, found, err := c.findInList(func(it item) bool { return it.ID == id })
	switch {
	case err != nil:
		return err
	case !found || listed.holdsMembers(b) != "":
		return failf(x, fmt.Sprintf("the list showing the item %s holding %s", id, b), "it shows "+listed.String())
	}
	return nil
}

// notCreated checks that a refused POST x of the body b made no item: no item in the whole list
// holds every string of b that carries the rule's tag.
func (c *Client) notCreated(x *reply, b Body) error {
	var marks []string
	for _, name := range sortedKeys(b) {
		if s, ok := b[name].(string); ok && strings.Contains(s, c.group) {
			marks = append(marks, s)
		}
	}
	it, found, err := c.findInList(func(it item) bool {
		return len(marks) > 0 && !slices.ContainsFunc(marks, func(mark string) bool { return !holdsText(it, mark) })
	})
	switch {
	case err != nil:
		return err
	case found:
		return failf(x, "no item created", "the list holds "+it.String())
	}
	return nil
}

// holdsText reports whether one of the item's members is this text, in any case: a server may
// store an address in lower case.
func holdsText(it item, text string) bool {
	for _, value := range it.members {
		if s, ok := value.(string); ok && strings.EqualFold(s, text) {
			return true
		}
	}
	return false
}

// mine returns the list of the rule's own items, through the description's tag filter, with more
// of the query after it.
func (c *Client) mine(query string) *reply {
	target := c.collection() + "?" + url.QueryEscape(c.run.desc.Tag.Filter) + "=" + url.QueryEscape(c.group)
	if query != "" {
		target += "&" + query
	}
	return c.get(target)
}

// A listing is a list answer as the description shapes it: its items, and their total where the
// body carries one (list.total) or the answer carries the header of a page's total
// (paging.total_header).
type listing struct {
	items []item
	total *int64
}

// ids returns the ids of the items, in their order.
func (l listing) ids() []string {
	ids := []string{}
	for _, it := range l.items {
		ids = append(ids, it.ID)
	}
	return ids
}

// decodeListing reads the answer as a list: 200, and a JSON array of items, at list.data in an
// object when the description says so, with the total where the description puts it.
func (c *Client) decodeListing(x *reply) (listing, error) {
	if err := x.statusIs(http.StatusOK); err != nil {
		return listing{}, err
	}
	shape := "a JSON array of items"
	l := c.run.desc.List
	if l != nil {
		shape = fmt.Sprintf("a JSON object with an array of items at %s", l.Data)
		if l.Total != "" {
			shape += fmt.Sprintf(" and their total, an integer, at %s", l.Total)
		}
	}
	value, err := decodeValue(x.responseBody)
	if err != nil {
		return listing{}, failf(x, shape, x.summary())
	}
	data, found := value, true
	if l != nil {
		data, found = pointAt(value, l.Data)
	}
	elements, ok := data.([]any)
	if !found || !ok {
		return listing{}, failf(x, shape, x.summary())
	}
	var result listing
	for _, element := range elements {
		it, ok := itemOf(element)
		if !ok {
			return listing{}, failf(x, "a list whose elements are items, each with an id", "an element "+excerpt(mustMarshal(element)))
		}
		result.items = append(result.items, it)
	}
	switch {
	case l != nil && l.Total != "":
		total, found := pointAt(value, l.Total)
		n, err := strconv.ParseInt(fmt.Sprint(total), 10, 64)
		if _, isNumber := total.(json.Number); !found || !isNumber || err != nil {
			return listing{}, failf(x, shape, x.summary())
		}
		result.total = &n
	case c.run.desc.Paging != nil && c.run.desc.Paging.TotalHeader != "" && x.responseHeader.Get(c.run.desc.Paging.TotalHeader) != "":
		header := c.run.desc.Paging.TotalHeader
		n, err := strconv.ParseInt(x.responseHeader.Get(header), 10, 64)
		if err != nil {
			return listing{}, failf(x, header+": an integer", describeHeader(x.responseHeader, header))
		}
		result.total = &n
	}
	return result, nil
}

// pointAt returns the value a JSON pointer (RFC 6901) points at.
func pointAt(value any, pointer string) (any, bool) {
	if pointer == "" {
		return value, true
	}
	for _, token := range strings.Split(pointer, "/")[1:] {
		token = strings.NewReplacer("~1", "/", "~0", "~").Replace(token)
		switch v := value.(type) {
		case map[string]any:
			member, ok := v[token]
			if !ok {
				return nil, false
			}
			value = member
		case []any:
			i, err := strconv.Atoi(token)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			value = v[i]
		default:
			return nil, false
		}
	}
	return value, true
}

// listIs checks that the answer is a list of exactly these items, in this order.
func (c *Client) listIs(x *reply, want ...item) error {
	l, err := c.decodeListing(x)
	if err != nil {
		return err
	}
	wantIDs := listing{items: want}.ids()
	if !slices.Equal(l.ids(), wantIDs) {
		return failf(x, "the items "+describeItems(want)+", in that order", "the items "+describeItems(l.items))
	}
	return nil
}

// describeItems names items by id, each with its members, so that a failure of an order shows what
// was compared, not ids alone.
func describeItems(items []item) string {
	parts := []string{}
	for _, it := range items {
		parts = append(parts, it.ID+" "+it.String())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// compareValues orders two JSON values as the description's sort does: as numbers when both are,
// else as text, in any case when ignoreCase is true.
func compareValues(a, b any, ignoreCase bool) int {
	x, aIsNumber := number(a)
	y, bIsNumber := number(b)
	if aIsNumber && bIsNumber {
		return cmp.Compare(x, y)
	}
	s, t := textOf(a), textOf(b)
	if ignoreCase {
		s, t = strings.ToLower(s), strings.ToLower(t)
	}
	return strings.Compare(s, t)
}

// number reads a JSON number.
func number(value any) (float64, bool) {
	n, ok := value.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// textOf is a member's value as a filter or a sort reads text: a string as it is, anything else
// as its JSON.
func textOf(value any) string {
	if s, ok := value.(string); ok {
		return s
	}
	if value == nil {
		return ""
	}
	return string(mustMarshal(value))
}

// byID returns the items in ascending id order.
func byID(items []item) []item {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b item) int { return compareValues(a.members["id"], b.members["id"], false) })
	return sorted
}

// keeps reports whether the filter keeps the item for the value: one of its fields matches it.
func (f FilterKey) keeps(it item, value string) bool {
	for _, field := range f.Fields {
		text := textOf(it.members[field])
		if f.IgnoreCase {
			text, value = strings.ToLower(text), strings.ToLower(value)
		}
		if f.Match == "exact" && text == value || f.Match == "contains" && strings.Contains(text, value) {
			return true
		}
	}
	return false
}
