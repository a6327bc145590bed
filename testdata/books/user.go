package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This is user.go written again for books (title, author), as README's "Make it yours" says: the
// books copy of the service is every other .go file of the root as it is, with this file in place
// of user.go (conformance_test.go builds it, and checks it with the kit and books.json). No other
// file names a field of the resource, so only the names the other files call stay: the type user,
// userBody, userFields and their methods, the store's errors, and the list's keys. The routes,
// /api/users, are users.go's literal patterns, and the list's exact filter keeps its parameter's
// name, email (list.go): a copier renames those too.

// The store's errors, which every store returns. Books have no unique field, so errEmailTaken is
// never returned; the store's index is kept by id (uniqueKey).
var (
	errNotFound   = errors.New("book not found")
	errEmailTaken = errors.New("unique key taken")
	errNoIDLeft   = errors.New("no id left")
)

// user is a book as clients see it, in the field order of every answer and of the data file.
type user struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Author string `json:"author"`
}

// userBody is the body of a POST, PUT or PATCH as the client sent it: id as its raw JSON, and
// title and author nil when the body leaves them out or sends null; titleIsNull and authorIsNull
// say which was null, since a merge patch tells null from absent (RFC 7396 §2).
type userBody struct {
	id                        json.RawMessage
	title, author             *string
	titleIsNull, authorIsNull bool
}

// decodeUserBody decodes a body with decodeJSON (body.go), each member as its raw JSON, then reads
// title and author as strings: a value of another type is a 400 of its own.
func decodeUserBody(data []byte) (userBody, error) {
	var members struct {
		ID     json.RawMessage `json:"id"`
		Title  json.RawMessage `json:"title"`
		Author json.RawMessage `json:"author"`
	}
	if err := decodeJSON(data, &members); err != nil {
		return userBody{}, err
	}
	body := userBody{id: members.ID, titleIsNull: string(members.Title) == "null", authorIsNull: string(members.Author) == "null"}
	if err := decodeString("title", members.Title, &body.title); err != nil {
		return userBody{}, err
	}
	if err := decodeString("author", members.Author, &body.author); err != nil {
		return userBody{}, err
	}
	return body, nil
}

// decodeString decodes the member field, if the body has it, into value: nil for null.
func decodeString(field string, member json.RawMessage, value **string) error {
	if member != nil && json.Unmarshal(member, value) != nil {
		return fieldsError(fieldProblem{field, field + " must be a string"})
	}
	return nil
}

// userFields are the fields a write sets, checked and trimmed: nil where a PATCH leaves the
// stored value as it is.
type userFields struct {
	title, author *string
}

// applyTo returns u with the fields set.
func (f userFields) applyTo(u user) user {
	if f.title != nil {
		u.Title = *f.title
	}
	if f.author != nil {
		u.Author = *f.author
	}
	return u
}

// createFields checks a POST body against the rules and returns the fields it sets: both fields,
// and no id, which is the server's to give.
func (b userBody) createFields() (userFields, error) {
	if b.id != nil {
		return userFields{}, badRequest("id is assigned by the server: leave it out of the body")
	}
	return b.wholeBook()
}

// replaceFields checks a PUT body against the rules and returns the fields it sets: both fields,
// since PUT replaces the whole book, and an id only if it is the path's.
func (b userBody) replaceFields(id int64) (userFields, error) {
	if err := b.idMatchesPath(id); err != nil {
		return userFields{}, err
	}
	return b.wholeBook()
}

// wholeBook applies the field rules to a body that gives the whole book: both fields are
// required (null counts as left out), and every field that fails is reported at once, title
// first, so that a form can show them all.
func (b userBody) wholeBook() (userFields, error) {
	title, titleProblem := required("title", b.title, checkTitle)
	author, authorProblem := required("author", b.author, checkAuthor)
	if err := fieldsError(fieldProblem{"title", titleProblem}, fieldProblem{"author", authorProblem}); err != nil {
		return userFields{}, err
	}
	return userFields{title: &title, author: &author}, nil
}

// patchFields checks a PATCH body, a JSON Merge Patch (RFC 7396), against the rules and returns
// the fields it sets: the fields it names, at least one, and an id only if it is the path's.
func (b userBody) patchFields(id int64) (userFields, error) {
	if err := b.idMatchesPath(id); err != nil {
		return userFields{}, err
	}
	if b.title == nil && b.author == nil && !b.titleIsNull && !b.authorIsNull {
		return userFields{}, badRequest("the patch changes nothing: give title, author or both")
	}
	title, titleProblem := optional("title", b.title, b.titleIsNull, checkTitle)
	author, authorProblem := optional("author", b.author, b.authorIsNull, checkAuthor)
	if err := fieldsError(fieldProblem{"title", titleProblem}, fieldProblem{"author", authorProblem}); err != nil {
		return userFields{}, err
	}
	return userFields{title: title, author: author}, nil
}

// required checks a field that must be given: null counts as left out.
func required(field string, value *string, check func(string) (string, string)) (string, string) {
	if value == nil {
		return "", field + " is required"
	}
	return check(*value)
}

// optional checks a field that a PATCH may leave out: nil when it does. null would remove the
// field, which every field of a book refuses: all are required.
func optional(field string, value *string, null bool, check func(string) (string, string)) (*string, string) {
	switch {
	case null:
		return nil, field + " is required and cannot be null"
	case value == nil:
		return nil, ""
	}
	checked, problem := check(*value)
	return &checked, problem
}

// idMatchesPath accepts an id in a PUT or PATCH body only as the id of the path, written as a JSON
// integer: clients often send back what they read, and that is how they read it.
func (b userBody) idMatchesPath(id int64) error {
	if b.id != nil && string(b.id) != strconv.FormatInt(id, 10) {
		return badRequest(fmt.Sprintf("id in the body must be the id of the path, written as the integer %d, or left out", id))
	}
	return nil
}

// checkTitle returns a title trimmed of white space, and what is wrong with it ("" when nothing
// is): 1 to 200 characters, none of them a control character (Unicode category Cc).
func checkTitle(title string) (trimmed, problem string) { return checkText("title", title, 200) }

// checkAuthor returns an author trimmed of white space, and what is wrong with it ("" when
// nothing is): 1 to 100 characters, none of them a control character.
func checkAuthor(author string) (trimmed, problem string) { return checkText("author", author, 100) }

// checkText checks a field of text: trimmed, 1 to most characters, and no control character.
func checkText(field, text string, most int) (trimmed, problem string) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return text, field + " must not be empty"
	case utf8.RuneCountInString(text) > most:
		return text, fmt.Sprintf("%s must be at most %d characters", field, most)
	case strings.ContainsFunc(text, unicode.IsControl):
		return text, field + " must not contain control characters"
	}
	return text, ""
}

// sampleUsers are the fields of the books -sample-data adds to a store that never had one.
func sampleUsers() []userFields {
	var samples []userFields
	for _, sample := range [][2]string{
		{"Notes on the Analytical Engine", "Ada Lovelace"}, {"Computing Machinery and Intelligence", "Alan Turing"},
		{"A Discipline of Programming", "Edsger Dijkstra"}, {"The Art of Computer Programming", "Donald Knuth"},
	} {
		title, author := sample[0], sample[1] // new variables at each turn, whatever the Go version
		samples = append(samples, userFields{title: &title, author: &author})
	}
	return samples
}

// sortByID sorts books in ascending id order: the order of the list and of the data file.
func sortByID(users []user) {
	slices.SortFunc(users, func(a, b user) int { return cmp.Compare(a.ID, b.ID) })
}

// uniqueKey is what no other book may share with u: books have no unique field, so it is the id,
// which no two books share, and no write is ever refused for it.
func (u user) uniqueKey() string { return strconv.FormatInt(u.ID, 10) }

// The list's keys (list.go): what ?sort= sorts by and what ?q= and ?email= look in.

// sortKeys are the fields the list sorts by besides id, each compared lower-cased.
var sortKeys = map[string]func(user) string{
	"title":  func(u user) string { return u.Title },
	"author": func(u user) string { return u.Author },
}

// contains reports whether ?q= finds u: its title or author contains text, compared lower-cased.
func (u user) contains(text string) bool {
	text = strings.ToLower(text)
	return strings.Contains(strings.ToLower(u.Title), text) || strings.Contains(strings.ToLower(u.Author), text)
}

// hasEmail reports whether the list's exact filter, ?email=, finds u: here its author, compared
// lower-cased.
func (u user) hasEmail(author string) bool {
	return strings.ToLower(u.Author) == strings.ToLower(author)
}
