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
// per field when fields of a user fail their rules (for a form to show), and the headers the status
// calls for (WWW-Authenticate on 401, Allow on 405, Accept-Post on 415).
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

// marshal encodes v as every answer and journal line is encoded. It does not escape <, > and &
// as json.Marshal does: the bodies are served as application/json with nosniff, never as HTML,
// so a name such as "Tom & Jerry" can stay readable. The service encodes only its own structs of
// strings and integers, which always encode: a failure would be a bug, answered as a 500.
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

// fieldProblems is the "fields" member of an error body: a struct, not a map, so that name comes
// before email as it does in the message.
type fieldProblems struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// writeError sends err as the JSON error body. An error that is not an *apiError is a failure of
// the server's own: it is logged, and the client learns only that it happened.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		e = errInternal
	}
	var fields *fieldProblems
	if len(e.fields) > 0 {
		fields = &fieldProblems{Name: e.fields["name"], Email: e.fields["email"]}
	}
	for name := range e.header {
		w.Header().Set(name, e.header.Get(name))
	}
	writeJSON(w, e.status, marshal(struct {
		Error  string         `json:"error"`
		Fields *fieldProblems `json:"fields,omitempty"`
	}{e.message, fields}))
}
