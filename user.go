package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Everything that knows what a user is lives in this file: its fields, the body a client sends
// and the rules of each field, the field no two users may share, and the keys the list sorts and
// searches by. A copy that serves another resource starts here (README, "Make it yours").

// The store's errors, which every store returns, kept in memory (store.go) or elsewhere
// (examples/postgres). Their text is for the log: errorFor (respond.go) gives each the status and
// the message a client reads.
var (
	errNotFound   = errors.New("user not found")
	errEmailTaken = errors.New("email taken") // a write would give two users one e-mail (uniqueKey)
	errNoIDLeft   = errors.New("no id left")  // every id up to 2^63-1 has been given
)

// user is a user as clients see it, in the field order of every answer and of the data file.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// userBody is the body of a POST, PUT or PATCH as the client sent it: id as its raw JSON, so that
// 7 is told from 7.0 and "7", and name and email nil when the body leaves them out or sends null;
// nameIsNull and emailIsNull say which was null, since a merge patch tells null from absent
// (RFC 7396 §2).
type userBody struct {
	id                      json.RawMessage
	name, email             *string
	nameIsNull, emailIsNull bool
}

// decodeUserBody decodes a body with decodeJSON (body.go), each member as its raw JSON, which is
// nil for a member left out and null for a null one (a pointer could not tell them apart). Then
// name and email are read as strings: a value of another type is a 400 of its own.
func decodeUserBody(data []byte) (userBody, error) {
	var members struct {
		ID    json.RawMessage `json:"id"`
		Name  json.RawMessage `json:"name"`
		Email json.RawMessage `json:"email"`
	}
	if err := decodeJSON(data, &members); err != nil {
		return userBody{}, err
	}
	body := userBody{id: members.ID, nameIsNull: string(members.Name) == "null", emailIsNull: string(members.Email) == "null"}
	if err := decodeString("name", members.Name, &body.name); err != nil {
		return userBody{}, err
	}
	if err := decodeString("email", members.Email, &body.email); err != nil {
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
	if b.id != nil {
		return userFields{}, badRequest("id is assigned by the server: leave it out of the body")
	}
	return b.wholeUser()
}

// replaceFields checks a PUT body against the rules and returns the fields it sets: both fields,
// since PUT replaces the whole user, and an id only if it is the path's.
func (b userBody) replaceFields(id int64) (userFields, error) {
	if err := b.idMatchesPath(id); err != nil {
		return userFields{}, err
	}
	return b.wholeUser()
}

// wholeUser applies the field rules to a body that gives the whole user: both fields are
// required (null counts as left out), and every field that fails is reported at once, name
// first, so that a form can show them all.
func (b userBody) wholeUser() (userFields, error) {
	name, nameProblem := required("name", b.name, checkName)
	email, emailProblem := required("email", b.email, checkEmail)
	if err := fieldsError(fieldProblem{"name", nameProblem}, fieldProblem{"email", emailProblem}); err != nil {
		return userFields{}, err
	}
	return userFields{name: &name, email: &email}, nil
}

// patchFields checks a PATCH body, a JSON Merge Patch (RFC 7396), against the rules and returns
// the fields it sets: the fields it names, at least one, and an id only if it is the path's.
func (b userBody) patchFields(id int64) (userFields, error) {
	if err := b.idMatchesPath(id); err != nil {
		return userFields{}, err
	}
	if b.name == nil && b.email == nil && !b.nameIsNull && !b.emailIsNull {
		return userFields{}, badRequest("the patch changes nothing: give name, email or both")
	}
	name, nameProblem := optional("name", b.name, b.nameIsNull, checkName)
	email, emailProblem := optional("email", b.email, b.emailIsNull, checkEmail)
	if err := fieldsError(fieldProblem{"name", nameProblem}, fieldProblem{"email", emailProblem}); err != nil {
		return userFields{}, err
	}
	return userFields{name: name, email: email}, nil
}

// required checks a field that must be given: null counts as left out.
func required(field string, value *string, check func(string) (string, string)) (string, string) {
	if value == nil {
		return "", field + " is required"
	}
	return check(*value)
}

// optional checks a field that a PATCH may leave out: nil when it does. null would remove the
// field, which every field of a user refuses: all are required.
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

// checkName returns a name trimmed of white space, and what is wrong with it ("" when nothing is):
// 1 to 100 characters, none of them a control character (Unicode category Cc).
func checkName(name string) (trimmed, problem string) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return name, "name must not be empty"
	case utf8.RuneCountInString(name) > 100:
		return name, "name must be at most 100 characters"
	case strings.ContainsFunc(name, unicode.IsControl): // unicode.IsControl is category Cc
		return name, "name must not contain control characters"
	}
	return name, ""
}

// checkEmail returns an e-mail trimmed of white space, and what is wrong with it ("" when nothing
// is): a bare address (RFC 5322 addr-spec) that net/mail gives back unchanged, so no display name,
// angle brackets or comments, and no domain in brackets, which Go 1.22 and 1.26 read differently.
func checkEmail(email string) (trimmed, problem string) {
	email = strings.TrimSpace(email)
	switch {
	case email == "":
		return email, "email must not be empty"
	case len(email) > 254: // the longest address SMTP can carry (RFC 5321 §4.5.3.1)
		return email, "email must be at most 254 bytes"
	}
	address, err := mail.ParseAddress(email)
	domain := email[strings.LastIndexByte(email, '@')+1:]
	if err != nil || address.Name != "" || address.Address != email || strings.HasPrefix(domain, "[") {
		return email, "email must be a plain address such as ann@example.com"
	}
	return email, ""
}

// sampleUsers are the fields of the users -sample-data adds to a store that never had one.
func sampleUsers() []userFields {
	var samples []userFields
	for _, sample := range [][2]string{
		{"Ada Lovelace", "ada@example.com"}, {"Alan Turing", "alan@example.com"},
		{"Grace Hopper", "grace@example.com"}, {"Edsger Dijkstra", "edsger@example.com"},
		{"Barbara Liskov", "barbara@example.com"}, {"Donald Knuth", "don@example.com"},
		{"Margaret Hamilton", "margaret@example.com"}, {"Ken Thompson", "ken@example.com"},
		{"Radia Perlman", "radia@example.com"}, {"Dennis Ritchie", "dennis@example.com"},
		{"Frances Allen", "frances@example.com"}, {"John Backus", "john@example.com"},
	} {
		name, email := sample[0], sample[1] // new variables at each turn, whatever the Go version
		samples = append(samples, userFields{name: &name, email: &email})
	}
	return samples
}

// sortByID sorts users in ascending id order: the order of the list and of the data file.
func sortByID(users []user) {
	slices.SortFunc(users, func(a, b user) int { return cmp.Compare(a.ID, b.ID) })
}

// The unique field. No two users may have the same e-mail, compared lower-cased: the store keeps
// an index of these keys (store.go), and a write that would repeat one fails with errEmailTaken.
// A resource without a unique field drops uniqueKey, errEmailTaken and the store's index.

// uniqueKey is what no other user may share with u: its e-mail, lower-cased.
func (u user) uniqueKey() string { return strings.ToLower(u.Email) }

// The list's keys (list.go): what ?sort= sorts by and what ?q= and ?email= look in.

// sortKeys are the fields the list sorts by besides id, each compared lower-cased.
var sortKeys = map[string]func(user) string{
	"name":  func(u user) string { return u.Name },
	"email": func(u user) string { return u.Email },
}

// contains reports whether ?q= finds u: its name or e-mail contains text, compared lower-cased.
func (u user) contains(text string) bool {
	text = strings.ToLower(text)
	return strings.Contains(strings.ToLower(u.Name), text) || strings.Contains(strings.ToLower(u.Email), text)
}

// hasEmail reports whether ?email= finds u: its e-mail is this one, compared lower-cased.
func (u user) hasEmail(email string) bool { return strings.ToLower(u.Email) == strings.ToLower(email) }
