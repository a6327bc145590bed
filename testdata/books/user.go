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
// of user.go (conformance_test.go builds it, and checks it with the kit and books.json).
//
// Only the resource changes, so the names the other files use stay: the type is user, and its
// fields keep their Go names Name (the title) and Email (the author), which main.go's sample data
// and datafile.go's messages name; the JSON names are the books'. A copier renames those too.
// Books have no unique field, so uniqueKey is the id, which no two books share, and errEmailTaken
// is never returned.

// user is a book as clients see it, in the field order of every answer and of the data file.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"title"`  // the book's title
	Email string `json:"author"` // the book's author
}

// userBody is the body of a POST, PUT or PATCH as the client sent it. ID is a json.RawMessage,
// not a pointer, so that null is told from an absent id, and 7 from 7.0. Title and Author are nil
// when the body leaves them out or sends null; titleIsNull and authorIsNull say which was null.
type userBody struct {
	ID     json.RawMessage `json:"id"`
	Title  *string         `json:"title"`
	Author *string         `json:"author"`

	titleIsNull, authorIsNull bool
}

// decodeUserBody decodes a body with decodeJSON (body.go), which reports its first problem in the
// body's order. encoding/json gives a member sent as null and one left out alike as nil, while
// a merge patch tells them apart (null asks to remove the field, RFC 7396 §2): so the body is read
// once more for its nulls, which cannot fail once decodeJSON has read it.
func decodeUserBody(data []byte) (userBody, error) {
	var body userBody
	if err := decodeJSON(data, &body); err != nil {
		return userBody{}, err
	}
	var members struct{ Title, Author json.RawMessage }
	if err := json.Unmarshal(data, &members); err != nil {
		return userBody{}, err // not reached: decodeJSON has read this very object
	}
	body.titleIsNull, body.authorIsNull = string(members.Title) == "null", string(members.Author) == "null"
	return body, nil
}

// userFields are the fields a write sets, checked and trimmed: nil where a PATCH leaves the
// stored value as it is. name is the title and email the author, as main.go names them.
type userFields struct {
	name, email *string
}

// applyTo returns u with the fields set.
func (f userFields) applyTo(u user) user {
	if f.name != nil {
		u.Name = *f.name
	}
	if f.email != nil {
		u.Email = *f.email
	}
	return u
}

// createFields checks a POST body against the rules and returns the fields it sets: both fields,
// and no id, which is the server's to give.
func (b userBody) createFields() (userFields, error) {
	if b.ID != nil {
		return userFields{}, badRequest("id is assigned by the server: leave it out of the body")
	}
	return b.wholeUser()
}

// replaceFields checks a PUT body against the rules and returns the fields it sets: both fields,
// since PUT replaces the whole book, and an id only if it is the path's.
func (b userBody) replaceFields(id int64) (userFields, error) {
	if err := b.idIsThePaths(id); err != nil {
		return userFields{}, err
	}
	return b.wholeUser()
}

// wholeUser applies the field rules to a body that gives the whole book: both fields are
// required (null counts as left out), and every field that fails is reported at once, title
// first, so that a form can show them all.
func (b userBody) wholeUser() (userFields, error) {
	title, titleProblem := required("title", b.Title, checkTitle)
	author, authorProblem := required("author", b.Author, checkAuthor)
	if err := fieldsError(fieldProblem{"title", titleProblem}, fieldProblem{"author", authorProblem}); err != nil {
		return userFields{}, err
	}
	return userFields{name: &title, email: &author}, nil
}

// patchFields checks a PATCH body, a JSON Merge Patch (RFC 7396), against the rules and returns
// the fields it sets: the fields it names, at least one, and an id only if it is the path's.
func (b userBody) patchFields(id int64) (userFields, error) {
	if err := b.idIsThePaths(id); err != nil {
		return userFields{}, err
	}
	if b.Title == nil && b.Author == nil && !b.titleIsNull && !b.authorIsNull {
		return userFields{}, badRequest("the patch changes nothing: give title, author or both")
	}
	title, titleProblem := optional("title", b.Title, b.titleIsNull, checkTitle)
	author, authorProblem := optional("author", b.Author, b.authorIsNull, checkAuthor)
	if err := fieldsError(fieldProblem{"title", titleProblem}, fieldProblem{"author", authorProblem}); err != nil {
		return userFields{}, err
	}
	return userFields{name: title, email: author}, nil
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

// idIsThePaths accepts an id in a PUT or PATCH body only as the id of the path, written as a JSON
// integer: clients often send back what they read, and that is how they read it.
func (b userBody) idIsThePaths(id int64) error {
	if b.ID != nil && string(b.ID) != strconv.FormatInt(id, 10) {
		return badRequest(fmt.Sprintf("id in the body must be the id of the path, written as the integer %d, or left out", id))
	}
	return nil
}

// checkTitle returns a title trimmed of white space, and what is wrong with it ("" when nothing
// is): 1 to 200 characters, none of them a control character (Unicode category Cc).
func checkTitle(title string) (trimmed, problem string) {
	return checkText("title", title, 200)
}

// checkAuthor returns an author trimmed of white space, and what is wrong with it ("" when
// nothing is): 1 to 100 characters, none of them a control character.
func checkAuthor(author string) (trimmed, problem string) {
	return checkText("author", author, 100)
}

// checkText checks a field of text: trimmed, 1 to most characters, and no control character.
func checkText(field, text string, most int) (trimmed, problem string) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return text, field + " must not be empty"
	case utf8.RuneCountInString(text) > most:
		return text, fmt.Sprintf("%s must be at most %d characters", field, most)
	case strings.ContainsFunc(text, unicode.IsControl): // unicode.IsControl is category Cc
		return text, field + " must not contain control characters"
	}
	return text, ""
}

// sortByID sorts books in ascending id order: the order of the list and of the data file.
func sortByID(users []user) {
	slices.SortFunc(users, func(a, b user) int { return cmp.Compare(a.ID, b.ID) })
}

// Books have no unique field. The store keeps an index of unique keys (store.go), so a book's key
// is its id, which no other book has: no write is ever refused for it.

// uniqueKey is what no other book may share with u: its id.
func (u user) uniqueKey() string { return strconv.FormatInt(u.ID, 10) }

// errEmailTaken is what the store would answer to a write that repeated a unique key: no book's
// key repeats, so it never does.
var errEmailTaken = errors.New("another book already has this key")

// The list's keys (list.go): what ?sort= sorts by and what ?q= and ?email= look in. list.go names
// the second parameter email; a copier renames it author there.

// sortKeys are the fields the list sorts by besides id, each compared lower-cased.
var sortKeys = map[string]func(user) string{
	"title":  func(u user) string { return u.Name },
	"author": func(u user) string { return u.Email },
}

// contains reports whether ?q= finds u: its title or author contains text, compared lower-cased.
func (u user) contains(text string) bool {
	text = strings.ToLower(text)
	return strings.Contains(strings.ToLower(u.Name), text) || strings.Contains(strings.ToLower(u.Email), text)
}

// hasEmail reports whether ?email= finds u: its author is this one, compared lower-cased.
func (u user) hasEmail(author string) bool {
	return strings.ToLower(u.Email) == strings.ToLower(author)
}
