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

// apiError is the API's one error type: a status, a sentence a client can act on, what is wrong
// with each field of a body (for a form), and the headers the status calls for (WWW-Authenticate,
// Allow, Accept-Post, ...).
type apiError struct {
	status  int
	message string
	fields  *fieldProblems // nil unless the fields of a body broke their rules
	header  http.Header
}

// Error returns the message, the sentence the client gets.
func (e *apiError) Error() string { return e.message }

// fieldProblems say what is wrong with each field of a body, "" for a field that is fine. A user
// has exactly these two fields, so a struct names them all, in the order of every answer.
type fieldProblems struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// newError returns the error of a status, with a message and no headers.
func newError(status int, message string) *apiError {
	return &apiError{status: status, message: message}
}

// badRequest returns the 400 of a request that breaks a rule of the API, with this message.
func badRequest(message string) *apiError { return newError(http.StatusBadRequest, message) }

// fieldsError is the 400 of a body whose fields break their rules: every problem in the message,
// name first, and each again in fields.
func fieldsError(problems fieldProblems) *apiError {
	var sentences []string
	for _, problem := range []string{problems.Name, problems.Email} {
		if problem != "" {
			sentences = append(sentences, problem)
		}
	}
	return &apiError{status: http.StatusBadRequest, message: strings.Join(sentences, "; "), fields: &problems}
}

// withHeader returns a copy of e that also sends this header field. The copy has a header of its
// own, so that a shared error such as errNoToken never changes.
func (e *apiError) withHeader(name, value string) *apiError {
	withIt := *e
	withIt.header = e.header.Clone()
	if withIt.header == nil {
		withIt.header = http.Header{}
	}
	withIt.header.Add(name, value)
	return &withIt
}

// errInternal is the answer to every failure nobody foresaw: the cause goes to the log, and the
// client learns nothing more.
var errInternal = newError(http.StatusInternalServerError, "internal server error")

// errorFor returns the answer to err: an *apiError as it is, an error of the store with its status,
// and nil for any other error, a failure of the server's own. It is the one place where a store
// error becomes an HTTP status.
func errorFor(err error) *apiError {
	var e *apiError
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, errNotFound):
		return newError(http.StatusNotFound, err.Error())
	case errors.Is(err, errEmailTaken), errors.Is(err, errNoIDLeft):
		return newError(http.StatusConflict, err.Error()) // the request conflicts with the stored state
	}
	return nil // errNotWritable, errClosed, a failed disk: the server's own failures, 500
}

// quoteForMessage quotes a client's text for an error message, cut short if it is long.
func quoteForMessage(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "..."
	}
	return strconv.Quote(s)
}

// encodeJSON encodes every body of the API: as json.Marshal does, but with <, > and & sent
// as they are, not as \u003c and so on, since the bodies are JSON, never HTML (README, "Decisions").
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// writeJSON sends a JSON body that is already encoded.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	writeBody(w, status, "application/json", body)
}

// writeBody sends a body with its type and length, so that no answer goes out chunked. net/http
// itself drops the body of an answer to HEAD.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers err with the status and message errorFor gives it; a failure of the server's
// own is a bare 500, and its cause goes to the log. An error replaces the representation the
// handler may have begun to describe: its ETag, Location, Content-Location and Link go, and no
// cache may keep the answer.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := errorFor(err)
	if e == nil {
		log.Error("request failed", "request_id", w.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "error", err)
		e = errInternal
	}
	for _, name := range []string{"ETag", "Location", "Content-Location", "Link"} {
		w.Header().Del(name)
	}
	w.Header().Set("Cache-Control", "no-store")
	for name, values := range e.header { // every value of each, not only the first
		w.Header().Del(name)
		for _, value := range values {
			w.Header().Add(name, value)
		}
	}
	body, err := encodeJSON(errorBody{Error: e.message, Fields: e.fields})
	if err != nil { // two strings always encode: this would be a bug of ours
		log.Error("encoding an error body", "request_id", w.Header().Get("X-Request-Id"), "error", err)
		body = []byte(`{"error":"internal server error"}`)
	}
	writeJSON(w, e.status, body)
}

// errorBody is the body of every failure: {"error": "..."}, and "fields" for the field rules.
type errorBody struct {
	Error  string         `json:"error"`
	Fields *fieldProblems `json:"fields,omitempty"`
}
