package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxBodyBytes is the largest body the API reads: a user is far smaller.
const maxBodyBytes = 1 << 20

// errBodyTooLarge is the 413 of a body over maxBodyBytes.
var errBodyTooLarge = newError(http.StatusRequestEntityTooLarge, "the body is larger than 1 MiB (1048576 bytes)")

// The media types a body may have. PATCH also takes a JSON Merge Patch's own (RFC 7396 §4), and
// says so in Accept-Patch (RFC 5789 §3.1), as POST does in Accept-Post.
const (
	acceptPost  = "application/json"
	acceptPatch = "application/json, application/merge-patch+json"
)

// unsupportedMediaType is the 415 of a method's body, naming the media types it takes: POST in
// Accept-Post, PATCH in Accept-Patch (RFC 5789 §3.1). HTTP has no such header for PUT.
func unsupportedMediaType(method, message string) *apiError {
	e := newError(http.StatusUnsupportedMediaType, message)
	switch method {
	case http.MethodPost:
		return e.withHeader("Accept-Post", acceptPost)
	case http.MethodPatch:
		return e.withHeader("Accept-Patch", acceptPatch)
	}
	return e
}

// readUserBody reads the body of a POST, PUT or PATCH: 415, 413, then 400 for the query, then 400
// for the body (docs/api.md, "The order of the checks").
func readUserBody(w http.ResponseWriter, r *http.Request) (userBody, error) {
	body, err := readJSONBody(w, r)
	if err != nil {
		return userBody{}, err
	}
	if err := rejectQuery(r); err != nil {
		return userBody{}, err
	}
	return decodeUserBody(body)
}

// readJSONBody checks the media type and the size, and returns the whole body: read to its end
// before it is judged, a body over the limit is 413 whatever it holds.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	accepted := []string{"application/json"}
	if r.Method == http.MethodPatch {
		accepted = append(accepted, "application/merge-patch+json")
	}
	contentType := r.Header.Get("Content-Type")
	mediaType, params, err := mime.ParseMediaType(contentType) // lower-cases the type and the names
	switch {
	case !isVisibleASCII(contentType) || err != nil || !slices.Contains(accepted, mediaType):
		return nil, unsupportedMediaType(r.Method, "send the body as JSON, with Content-Type: "+strings.Join(accepted, " or "))
	case params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8"):
		return nil, unsupportedMediaType(r.Method, "send the body as JSON in UTF-8: charset may only be utf-8")
	case len(r.Header.Values("Content-Encoding")) > 0:
		return nil, unsupportedMediaType(r.Method, "send the body uncompressed, without a Content-Encoding")
	case r.ContentLength > maxBodyBytes:
		return nil, errBodyTooLarge // known from the headers: no need to read a byte
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errBodyTooLarge
	case err != nil:
		return nil, badRequest("the body could not be read to its end")
	}
	return body, nil
}

// isVisibleASCII reports whether a header value holds only visible ASCII, spaces and tabs. A media
// type compares case-insensitively in ASCII only, with only spaces and tabs around its parts (RFC
// 9110 §8.3.1, §5.6.3), while mime.ParseMediaType lower-cases and trims in Unicode: it would take
// "applİcation/json" (a capital dotted I, whose lower case is i) and trim a no-break space.
func isVisibleASCII(value string) bool {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c != '\t' && (c < ' ' || c > '~') {
			return false
		}
	}
	return true
}

// userBody is a body as a client sent it, before the rules of POST, PUT or PATCH are applied.
type userBody struct {
	id          json.RawMessage // the id as sent; nil when the body has none
	name, email bodyField
}

// A bodyField is name or email as sent: absent, null, or a string.
type bodyField struct {
	given bool // the member is in the body, null included
	null  bool
	text  string
}

// decodeUserBody reads one JSON object whose members are among id, name and email. Problems are
// found in the document's order, and the first is the answer: each member's value is judged as
// soon as it is read, before anything after it.
func decodeUserBody(body []byte) (userBody, error) {
	var u userBody
	switch {
	case !utf8.Valid(body): // encoding/json would quietly turn bad bytes into U+FFFD
		return u, badRequest("the body is not valid UTF-8")
	case bytes.HasPrefix(body, []byte("\uFEFF")):
		return u, badRequest("the body starts with a byte-order mark: send JSON without one (RFC 8259 §8.1)")
	case len(bytes.TrimSpace(body)) == 0:
		return u, badRequest(`the body is empty: send a JSON object such as {"name": "Ann", "email": "ann@example.com"}`)
	}
	// Walking the tokens shows member names exactly as sent: json.Unmarshal would match "Name" to
	// name, and let a repeated member silently win.
	decoder := json.NewDecoder(bytes.NewReader(body))
	if token, err := decoder.Token(); err != nil {
		return u, syntaxError(body, 0)
	} else if token != json.Delim('{') {
		return u, badRequest(`the body must be a JSON object, such as {"name": "Ann", "email": "ann@example.com"}`)
	}
	seen := map[string]bool{}
	for decoder.More() {
		token, err := decoder.Token()
		if err != nil {
			return u, syntaxError(body, 0)
		}
		member, _ := token.(string) // inside an object, json.Decoder gives each member's name as a string
		var value json.RawMessage
		if nameEnd := decoder.InputOffset(); decoder.Decode(&value) != nil {
			return u, syntaxError(body, valueStart(body, nameEnd))
		}
		var field *bodyField
		switch member {
		case "id":
		case "name":
			field = &u.name
		case "email":
			field = &u.email
		default:
			return u, badRequest(fmt.Sprintf("unknown field %s: a user has only name and email", quoteForMessage(member)))
		}
		if seen[member] {
			return u, badRequest(fmt.Sprintf("the member %q appears twice: each member may appear once (RFC 8259 §4)", member))
		}
		seen[member] = true
		if field == nil {
			u.id = value
			continue
		}
		field.given, field.null = true, string(value) == "null"
		if !field.null && json.Unmarshal(value, &field.text) != nil {
			return u, wrongType(member)
		}
	}
	if _, err := decoder.Token(); err != nil { // the closing brace
		return u, syntaxError(body, 0)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return u, badRequest("the body must hold one JSON object and nothing after it")
	}
	return u, nil
}

// wrongType is the 400 of a field whose value is not a string, reported on its own.
func wrongType(member string) error {
	problem := member + " must be a string"
	if member == "name" {
		return fieldsError(fieldProblems{Name: problem})
	}
	return fieldsError(fieldProblems{Email: problem})
}

// newUser applies the rules of a POST body: the whole user, and no id, which is the server's to give.
func (u userBody) newUser() (userFields, error) {
	if u.id != nil {
		return userFields{}, badRequest("id is assigned by the server: leave it out of the body")
	}
	return u.fields(required)
}

// replacement applies the rules of a PUT body: the whole user, and an id only if it is the path's.
func (u userBody) replacement(id int64) (userFields, error) {
	if err := u.idIsThePaths(id); err != nil {
		return userFields{}, err
	}
	return u.fields(required)
}

// patch applies the rules of a PATCH body (a JSON Merge Patch, RFC 7396): the fields it changes,
// at least one, and an id only if it is the path's.
func (u userBody) patch(id int64) (userFields, error) {
	if err := u.idIsThePaths(id); err != nil {
		return userFields{}, err
	}
	if !u.name.given && !u.email.given {
		return userFields{}, badRequest("the patch changes nothing: give name, email or both")
	}
	return u.fields(optional)
}

// idIsThePaths accepts an id in a PUT or PATCH body only as the id of the path, written as a JSON
// integer: clients often send back what they read, and that is how they read it.
func (u userBody) idIsThePaths(id int64) error {
	if u.id != nil && string(u.id) != strconv.FormatInt(id, 10) {
		return badRequest(fmt.Sprintf("id in the body must be the id of the path, written as the integer %d, or left out", id))
	}
	return nil
}

// syntaxError is the 400 of a body that is not valid JSON, saying where: the byte offset, counted
// from 0, of the first byte that cannot continue valid JSON, or the body's length when it ends
// too soon. json.Decoder.Token counts offsets its own way, so the JSON is read again by a
// json.Decoder from where the walk began the part that failed: from the body's start, or from
// the start of a member's value, within which encoding/json counts its 10,000 levels of nesting
// as the walk did. Its SyntaxError.Offset counts the bytes read up to and including the bad one,
// and JSON that ends too soon is io.ErrUnexpectedEOF. No Go type name reaches the client.
func syntaxError(body []byte, from int) error {
	err := json.NewDecoder(bytes.NewReader(body[from:])).Decode(new(json.RawMessage))
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return badRequest(fmt.Sprintf("the body is not valid JSON: %s (at byte %d)", syntax.Error(), int64(from)+syntax.Offset-1))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest(fmt.Sprintf("the body is not valid JSON: it ends before the object does (at byte %d, its length)", len(body)))
	}
	return badRequest("the body is not valid JSON") // not reached: the walk stopped at a syntax error
}

// valueStart returns where the value of a member begins, its name ending at nameEnd: after white
// space, a colon and white space (RFC 8259 §4). Without a colon it is 0, so that the missing colon
// is found from the body's start.
func valueStart(body []byte, nameEnd int64) int {
	const whiteSpace = " \t\r\n" // RFC 8259 §2
	rest := bytes.TrimLeft(body[nameEnd:], whiteSpace)
	if !bytes.HasPrefix(rest, []byte(":")) {
		return 0
	}
	return len(body) - len(bytes.TrimLeft(rest[1:], whiteSpace))
}

// A presence says whether a body must give a field: POST and PUT must give both, PATCH only the
// ones it changes.
type presence int

const (
	required presence = iota
	optional
)

// fields applies the field rules to name and email. Every failing field is reported at once, name
// first, so that a form can show them all.
func (u userBody) fields(p presence) (userFields, error) {
	name, nameProblem := u.name.check("name", p, nameRule)
	email, emailProblem := u.email.check("email", p, emailRule)
	if nameProblem != "" || emailProblem != "" {
		return userFields{}, fieldsError(fieldProblems{Name: nameProblem, Email: emailProblem})
	}
	return userFields{name: name, email: email}, nil
}

// check returns the field's text, trimmed, or its problem; nil text for an optional field left
// out. null is a problem: both fields are required, so a PATCH cannot remove one.
func (f bodyField) check(field string, p presence, rule func(string) string) (*string, string) {
	text := strings.TrimSpace(f.text)
	switch {
	case f.null:
		return nil, field + " is required and cannot be null"
	case !f.given && p == required:
		return nil, field + " is required"
	case !f.given:
		return nil, ""
	case text == "":
		return nil, field + " must not be empty"
	}
	if problem := rule(text); problem != "" {
		return nil, problem
	}
	return &text, ""
}

// nameRule returns what is wrong with a name, or "".
func nameRule(name string) string {
	switch {
	case utf8.RuneCountInString(name) > 100:
		return "name must be at most 100 characters"
	case strings.ContainsFunc(name, unicode.IsControl): // unicode.IsControl is category Cc
		return "name must not contain control characters"
	}
	return ""
}

// emailRule returns what is wrong with an e-mail, or "": it must be a bare address (RFC 5322
// addr-spec) that net/mail gives back unchanged, so no display name, angle brackets or comments,
// and its domain not an address in brackets, which Go 1.22 and 1.26 read differently.
func emailRule(email string) string {
	if len(email) > 254 { // the longest address SMTP can carry (RFC 5321 §4.5.3.1)
		return "email must be at most 254 bytes"
	}
	address, err := mail.ParseAddress(email)
	domain := email[strings.LastIndexByte(email, '@')+1:]
	if err != nil || address.Name != "" || address.Address != email || strings.HasPrefix(domain, "[") {
		return "email must be a plain address such as ann@example.com"
	}
	return ""
}
