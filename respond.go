package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// apiError is the API's one error type: a status, a sentence a client can act on, a problem per
// failing field (for a form), and the headers the status calls for (WWW-Authenticate, Allow, ...).
type apiError struct {
	status  int
	message string
	fields  fieldProblems
	header  http.Header
}

// fieldProblems are the problems of a body's fields, in the order the rules ran. In an error body
// they are the object "fields", one member a field, in that order.
type fieldProblems []fieldProblem

type fieldProblem struct{ field, problem string }

// err is the 400 that reports the problems: every sentence in the message, and each in fields.
func (problems fieldProblems) err() *apiError {
	sentences := make([]string, len(problems))
	for i, p := range problems {
		sentences[i] = p.problem
	}
	return &apiError{status: http.StatusBadRequest, message: strings.Join(sentences, "; "), fields: problems}
}

// MarshalJSON encodes the problems as one JSON object whose members keep their order, each name
// and value encoded by encoding/json: a map would sort them, and a struct with a field for name
// and one for email would drop, without a word, the problem of a field a later rule adds.
func (problems fieldProblems) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range problems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(p.field))
		b.WriteByte(':')
		b.Write(marshal(p.problem))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (e *apiError) Error() string { return e.message }

// headerWith returns a header holding one field, its name as net/http writes it.
func headerWith(name, value string) http.Header {
	h := http.Header{}
	h.Set(name, value)
	return h
}

// newError returns the error of a status with a message and no headers.
func newError(status int, message string) *apiError {
	return &apiError{status: status, message: message}
}

func badRequest(message string) *apiError { return newError(http.StatusBadRequest, message) }

// The errors of the stored state, and the one that every failure nobody foresaw becomes.
var (
	errUserNotFound = newError(http.StatusNotFound, "no user has this id")
	errEmailTaken   = newError(http.StatusConflict, "another user already has this email")
	errNoIDLeft     = newError(http.StatusConflict, "no id is left to give: every id up to 9223372036854775807 has been used once")
	errInternal     = newError(http.StatusInternalServerError, "internal server error")
)

// quoteForMessage quotes a client's text for an error message, cut short if it is long.
func quoteForMessage(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return strconv.Quote(s)
}

// marshal encodes every answer and journal line. It keeps <, > and & (json.Marshal escapes them):
// the bodies are never HTML. Only our own structs are encoded, so an error is a bug: a 500.
func marshal(v any) []byte {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// writeJSON sends a JSON body.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	writeBody(w, status, "application/json", body)
}

// writeBody sends a body with its type and length, so that no answer goes out chunked. net/http
// drops the body of a HEAD.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeError sends err as the error body; any other error is the server's own: logged, and 500.
// An error answer is never stored by a cache, and carries no header of the representation it
// replaces, whatever the handler had set.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		log.Error("request failed", "request_id", w.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "error", err)
		e = errInternal
	}
	for _, name := range []string{"ETag", "Location", "Content-Location", "Link"} {
		w.Header().Del(name)
	}
	w.Header().Set("Cache-Control", "no-store")
	for name, values := range e.header {
		for _, value := range values {
			w.Header().Add(name, value)
		}
	}
	writeJSON(w, e.status, marshal(struct {
		Error  string        `json:"error"`
		Fields fieldProblems `json:"fields,omitempty"`
	}{e.message, e.fields}))
}
