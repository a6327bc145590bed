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
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxBodyBytes is the largest body the API reads (SPEC §5): a user is far smaller.
const maxBodyBytes = 1 << 20

var (
	errBodyTooLarge = newError(http.StatusRequestEntityTooLarge,
		"the body is larger than 1 MiB (1048576 bytes)")
	// HTTP names the media types a method takes in Accept-Post and Accept-Patch; PUT has no such header.
	errPostMediaType = &apiError{status: http.StatusUnsupportedMediaType,
		message: "send the body as JSON, with Content-Type: application/json",
		header:  http.Header{"Accept-Post": {"application/json"}}}
	errPutMediaType = newError(http.StatusUnsupportedMediaType,
		"send the body as JSON, with Content-Type: application/json")
	errPatchMediaType = &apiError{status: http.StatusUnsupportedMediaType,
		message: "send the body as JSON, with Content-Type: application/json or application/merge-patch+json",
		header:  http.Header{"Accept-Patch": {"application/json, application/merge-patch+json"}}}
	// A compressed body is refused with the method's Accept-Post or Accept-Patch, as above.
	errContentEncoding = newError(http.StatusUnsupportedMediaType,
		"send the body uncompressed, without a Content-Encoding")
	mediaTypeErrors = map[string]*apiError{
		http.MethodPost: errPostMediaType, http.MethodPut: errPutMediaType, http.MethodPatch: errPatchMediaType,
	}
)

// readUser reads the user in the body of POST, PUT or PATCH, judging the request in the order of
// SPEC §3: media type (415), size (413), then the query and the body (400). pathID is the id in
// the path, or 0 for POST.
func readUser(w http.ResponseWriter, r *http.Request, pathID int64) (name, email string, err error) {
	body, err := readJSONBody(w, r)
	if err != nil {
		return "", "", err
	}
	if err := rejectQuery(r); err != nil {
		return "", "", err
	}
	fields, err := decodeUserBody(body, pathID)
	if err != nil {
		return "", "", err
	}
	return fields.validate(r.Method == http.MethodPatch)
}

// readJSONBody checks a request's media type (415) and size (413), in that order, and returns its
// whole body. Reading all of it before judging it is what makes an oversized body 413 whatever it
// holds: a decoder that streams would stop early and judge a prefix.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mediaTypeError := mediaTypeErrors[r.Method]
	mediaType, params, err := "application/json", map[string]string(nil), error(nil)
	if contentType := r.Header.Get("Content-Type"); contentType != mediaType { // nearly every client sends
		mediaType, params, err = mime.ParseMediaType(contentType) // exactly that: no need to parse it
	}
	switch {
	case err != nil:
		return nil, mediaTypeError
	case mediaType != "application/json" && !(r.Method == http.MethodPatch && mediaType == "application/merge-patch+json"):
		return nil, mediaTypeError
	case params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8"):
		return nil, mediaTypeError
	case len(r.Header["Content-Encoding"]) > 0:
		return nil, &apiError{status: errContentEncoding.status, message: errContentEncoding.message,
			header: mediaTypeError.header}
	case r.ContentLength > maxBodyBytes:
		return nil, errBodyTooLarge // known from the headers: no need to read it
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, maxBodyBytes), r.ContentLength)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge
		}
		return nil, newError(http.StatusBadRequest, "the body could not be read to its end")
	}
	return body, nil
}

// readAll is io.ReadAll for a body whose length the headers may give: a short body is read into a
// buffer of that size, not into io.ReadAll's 512 bytes and more, a user body being a tenth of that.
// A longer one grows its buffer as bytes arrive, as io.ReadAll does: reserving what a client only
// declares would let slow clients hold a megabyte each for nothing.
func readAll(body io.Reader, length int64) ([]byte, error) {
	if length < 0 || length > 4096 { // unknown (chunked), or long
		return io.ReadAll(body)
	}
	buffer := make([]byte, length+1) // one byte more, to see the end where the length says
	n, err := io.ReadFull(body, buffer)
	switch {
	case int64(n) == length && (err == io.EOF || err == io.ErrUnexpectedEOF):
		return buffer[:n], nil
	case err != nil: // a body cut short, or too large
		return nil, err
	}
	rest, err := io.ReadAll(body) // net/http never lets a body run past its length; others might
	return append(buffer, rest...), err
}

// userBody is a user as a client sent it, before the field rules are applied.
type userBody struct {
	name, email bodyField
}

// field returns the member of a user body with this name, exactly as spelled, or nil.
func (u *userBody) field(name string) *bodyField {
	switch name {
	case "name":
		return &u.name
	case "email":
		return &u.email
	}
	return nil
}

type bodyField struct {
	given bool // the member was in the body, null included
	null  bool
	text  string
}

// decodeUserBody reads a body that must be exactly one JSON object with the members name, email
// and, only where it repeats the id of the path, id (SPEC §5, steps 3 and 4). pathID is 0 for POST,
// where a client cannot know the id yet. Every way a body can be wrong has its own message.
func decodeUserBody(body []byte, pathID int64) (userBody, error) {
	var user userBody
	switch {
	case !utf8.Valid(body): // encoding/json would quietly turn bad bytes into U+FFFD
		return user, badRequest("the body is not valid UTF-8")
	case bytes.HasPrefix(body, []byte("\uFEFF")):
		return user, badRequest("the body starts with a byte-order mark: send JSON without one (RFC 8259 §8.1)")
	case len(bytes.TrimSpace(body)) == 0:
		return user, badRequest(`the body is empty: send a JSON object such as {"name": "Ann", "email": "ann@example.com"}`)
	}
	if user, ok := decodeSimpleUserBody(body); ok {
		return user, nil
	}
	return decodeUserBodyTokens(body, pathID)
}

// decodeUserBodyTokens is decodeUserBody for a body in valid UTF-8 with something in it: it judges
// every body, the wrong ones included, and says what is wrong.
func decodeUserBodyTokens(body []byte, pathID int64) (userBody, error) {
	var user userBody
	// Walking the tokens shows member names exactly as sent: json.Unmarshal would match "Name" to
	// name and let a repeated member silently win.
	decoder := json.NewDecoder(bytes.NewReader(body))
	if token, err := decoder.Token(); err != nil {
		return user, syntaxError(err)
	} else if token != json.Delim('{') {
		return user, badRequest("the body must be a JSON object, such as {\"name\": \"Ann\", \"email\": \"ann@example.com\"}")
	}
	var id json.RawMessage
	idGiven := false
	for decoder.More() {
		token, err := decoder.Token()
		if err != nil {
			return user, syntaxError(err)
		}
		name := token.(string) // inside an object, the decoder returns member names as strings
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			return user, syntaxError(err)
		}
		field := user.field(name)
		switch {
		case name == "id":
			if idGiven {
				return user, badRequest(`the member "id" appears twice: each member may appear once (RFC 8259 §4)`)
			}
			id, idGiven = value, true
			continue
		case field == nil:
			return user, badRequest(fmt.Sprintf("unknown field %s: a user has only name and email", quoteForMessage(name)))
		}
		if field.given {
			return user, badRequest(fmt.Sprintf("the member %q appears twice: each member may appear once (RFC 8259 §4)", name))
		}
		field.given, field.null = true, string(value) == "null"
		if !field.null && json.Unmarshal(value, &field.text) != nil {
			return user, &apiError{status: http.StatusBadRequest, message: name + " must be a string",
				fields: map[string]string{name: name + " must be a string"}}
		}
	}
	if _, err := decoder.Token(); err != nil { // the closing brace
		return user, syntaxError(err)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return user, badRequest("the body must hold one JSON object and nothing after it")
	}
	// id is the server's to give; a client may only send back the one it read (SPEC §5, step 4).
	if idGiven && pathID == 0 {
		return user, badRequest("id is assigned by the server: leave it out of the body")
	}
	if idGiven && !sameInteger(id, pathID) {
		return user, badRequest(fmt.Sprintf("id in the body must be the id of the path (%d), or left out", pathID))
	}
	return user, nil
}

// decodeSimpleUserBody reads the body nearly every client sends, an object whose members are
// name and email, each at most once, with strings free of escapes, such as
// {"name": "Ann", "email": "ann@example.com"}. It reports false for anything else, which
// decodeUserBodyTokens then reads. It exists for speed: walking encoding/json's tokens took a
// third of the time of a whole POST, and this takes a few hundred nanoseconds. Where it accepts a
// body, both give the same result (FuzzSimpleUserBodyAgrees checks that). The body is valid UTF-8.
func decodeSimpleUserBody(body []byte) (userBody, bool) {
	var user userBody
	rest := skipJSONSpace(body)
	if len(rest) == 0 || rest[0] != '{' {
		return user, false
	}
	rest = skipJSONSpace(rest[1:])
	if len(rest) > 0 && rest[0] == '}' { // {}
		return user, len(skipJSONSpace(rest[1:])) == 0
	}
	for {
		name, afterName, ok := cutSimpleString(rest)
		if !ok {
			return user, false
		}
		afterName = skipJSONSpace(afterName)
		if len(afterName) == 0 || afterName[0] != ':' {
			return user, false
		}
		value, afterValue, ok := cutSimpleString(skipJSONSpace(afterName[1:]))
		if !ok {
			return user, false
		}
		field := user.field(string(name)) // only compared, so Go converts it without an allocation
		if field == nil {
			return user, false // id, or an unknown field: the general decoder judges them
		}
		if field.given {
			return user, false
		}
		*field = bodyField{given: true, text: string(value)}

		rest = skipJSONSpace(afterValue)
		switch {
		case len(rest) > 0 && rest[0] == ',':
			rest = skipJSONSpace(rest[1:])
		case len(rest) > 0 && rest[0] == '}': // the end of the object, and nothing may follow it
			return user, len(skipJSONSpace(rest[1:])) == 0
		default:
			return user, false
		}
	}
}

// skipJSONSpace drops the white space JSON allows between tokens (RFC 8259 §2).
func skipJSONSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// cutSimpleString reads a JSON string at the start of b that has no escapes and no control
// characters, so its text is its bytes, and returns that text and what follows.
func cutSimpleString(b []byte) (text, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i], b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, b, false
		}
	}
	return nil, b, false
}

// sameInteger reports whether a JSON value is the number id, in any form a JSON encoder may write
// it (7, 7.0, 7e0). Beyond 2^53, where float64 loses integers, only the plain form counts.
func sameInteger(value json.RawMessage, id int64) bool {
	if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
		return n == id
	}
	f, err := strconv.ParseFloat(string(value), 64)
	return err == nil && id < 1<<53 && f == float64(id)
}

func syntaxError(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return badRequest(fmt.Sprintf("the body is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest("the body is not valid JSON: it ends before the object does")
	}
	return badRequest("the body is not valid JSON")
}

func badRequest(message string) *apiError { return newError(http.StatusBadRequest, message) }

// quoteForMessage quotes a client's text for an error message, cut short if it is long.
func quoteForMessage(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return strconv.Quote(s)
}

// validate applies the field rules of SPEC §5, step 5, and returns the values to store. POST and
// PUT need both fields; a PATCH needs at least one, and leaves "" for a field it keeps. Every
// failing field is reported at once, so a form can show them all.
func (u userBody) validate(patch bool) (name, email string, err error) {
	if patch && !u.name.given && !u.email.given {
		return "", "", badRequest("the patch changes nothing: give name, email or both")
	}
	name, nameProblem := checkName(u.name, !patch)
	email, emailProblem := checkEmail(u.email, !patch)
	if nameProblem == "" && emailProblem == "" {
		return name, email, nil // most bodies pass: the map of problems is made only for one that fails
	}
	problems := map[string]string{}
	var sentences []string
	for _, p := range [][2]string{{"name", nameProblem}, {"email", emailProblem}} {
		if field, problem := p[0], p[1]; problem != "" {
			problems[field] = problem
			sentences = append(sentences, problem)
		}
	}
	return "", "", &apiError{status: http.StatusBadRequest, message: strings.Join(sentences, "; "), fields: problems}
}

// checkName returns the name to store, or the problem with it.
func checkName(f bodyField, required bool) (string, string) {
	if problem := checkPresence("name", f, required); problem != "" || !f.given {
		return "", problem
	}
	name := strings.TrimSpace(f.text) // TrimSpace trims Unicode white space
	switch {
	case name == "":
		return "", "name must not be empty"
	case utf8.RuneCountInString(name) > 100:
		return "", "name must be at most 100 characters"
	case strings.ContainsFunc(name, unicode.IsControl): // unicode.IsControl is category Cc
		return "", "name must not contain control characters"
	}
	return name, ""
}

// checkEmail returns the e-mail to store, or the problem with it.
func checkEmail(f bodyField, required bool) (string, string) {
	if problem := checkPresence("email", f, required); problem != "" || !f.given {
		return "", problem
	}
	email := strings.TrimSpace(f.text)
	switch {
	case email == "":
		return "", "email must not be empty"
	case len(email) > 254: // the longest address SMTP can carry (RFC 5321 §4.5.3.1)
		return "", "email must be at most 254 bytes"
	case !isPlainAddress(email):
		return "", "email must be a plain address such as ann@example.com"
	}
	return email, ""
}

// checkPresence reports a required field that is missing. null counts as missing: both fields are
// required, so a PATCH cannot remove one either.
func checkPresence(field string, f bodyField, required bool) string {
	switch {
	case f.null:
		return field + " is required and cannot be null"
	case required && !f.given:
		return field + " is required"
	}
	return ""
}

// isPlainAddress accepts what net/mail accepts as an address and gives back unchanged: no display
// name, no angle brackets. Domains in brackets are refused, since Go versions disagree on them.
func isPlainAddress(email string) bool {
	if isCommonAddress(email) {
		return true
	}
	address, err := mail.ParseAddress(email)
	if err != nil || address.Name != "" || address.Address != email {
		return false
	}
	domain := email[strings.LastIndexByte(email, '@')+1:]
	return !strings.HasPrefix(domain, "[")
}

// isCommonAddress reports whether an address has the shape of nearly all of them: letters, digits
// and . _ % + - before the @, letters, digits, - and . after it, and no dot at either end of a
// part or next to another. net/mail accepts every such address as it is (FuzzCommonAddress
// checks that), so checking this first spares most writes the parser and its allocations.
func isCommonAddress(email string) bool {
	local, domain, _ := strings.Cut(email, "@")
	return isDotAtom(local, "._%+-") && isDotAtom(domain, ".-")
}

// isDotAtom reports whether s is letters, digits and the bytes in extra, not starting or ending
// with a dot and without two dots in a row.
func isDotAtom(s, extra string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}
