package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// apiError is the one error type of the API: a status, a sentence a client can act on, one problem
// per field when fields of a user break their rules (for a form to show them), and the headers the
// status calls for (WWW-Authenticate on 401, Allow on 405, Accept-Post on 415).
type apiError struct {
	status  int
	message string
	fields  map[string]string
	header  http.Header
}

func (e *apiError) Error() string { return e.message }

func newError(status int, message string) *apiError {
	return &apiError{status: status, message: message}
}

func badRequest(message string) *apiError { return newError(http.StatusBadRequest, message) }

// The errors of the stored state, and the one that every failure nobody foresaw becomes.
var (
	errUserNotFound       = newError(http.StatusNotFound, "no user has this id")
	errPreconditionFailed = newError(http.StatusPreconditionFailed, "the user has changed since you read it: If-Match does not match its current ETag")
	errEmailTaken         = newError(http.StatusConflict, "another user already has this email")
	errInternal           = newError(http.StatusInternalServerError, "internal server error")
)

// quoteForMessage quotes a client's text for an error message, cut short if it is long.
func quoteForMessage(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return strconv.Quote(s)
}

// marshal encodes v as every answer and journal line is encoded. Unlike json.Marshal it leaves <,
// > and & as they are: the bodies are JSON with nosniff, never HTML, so "Tom & Jerry" stays
// readable. Only the service's own structs of strings and integers are encoded, and those always
// encode: a failure would be a bug, and the panic becomes a 500.
func marshal(v any) []byte {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// writeJSON sends a JSON body with its length, so that no answer goes out chunked.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeError sends err as the JSON error body. An error that is not an *apiError is a failure of
// the server's own: it is logged, and the client learns only that it happened.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		e = errInternal
	}
	for name := range e.header {
		w.Header().Set(name, e.header.Get(name))
	}
	type fieldProblems struct { // a struct, not a map, so that name comes first, as in the message
		Name  string `json:"name,omitempty"`
		Email string `json:"email,omitempty"`
	}
	var fields *fieldProblems
	if len(e.fields) > 0 {
		fields = &fieldProblems{Name: e.fields["name"], Email: e.fields["email"]}
	}
	writeJSON(w, e.status, marshal(struct {
		Error  string         `json:"error"`
		Fields *fieldProblems `json:"fields,omitempty"`
	}{e.message, fields}))
}
