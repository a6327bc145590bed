package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// apiError is the API's one error type: a status, a sentence a client can act on, what is wrong
// with each field of a body (for a form), and the header fields the status calls for
// (WWW-Authenticate, Allow, Accept-Post, ...). Each is made for the answer it is in: none is shared.
type apiError struct {
	status  int
	message string
	fields  map[string]string // field name to its problem; nil unless a body broke the field rules
	header  http.Header
}

// Error returns the message, the sentence the client gets.
func (e *apiError) Error() string { return e.message }

// newError returns the error of a status, with a message and no header fields.
func newError(status int, message string) *apiError {
	return &apiError{status: status, message: message}
}

// badRequest returns the 400 of a request that breaks a rule of the API, with this message.
func badRequest(message string) *apiError { return newError(http.StatusBadRequest, message) }

// withHeader adds a header field to the answer of e, and returns e.
func (e *apiError) withHeader(name, value string) *apiError {
	if e.header == nil {
		e.header = http.Header{}
	}
	e.header.Add(name, value)
	return e
}

// A fieldProblem is what is wrong with one field of a body; "" when nothing is.
type fieldProblem struct{ field, problem string }

// fieldsError is the 400 of a body whose fields break their rules, or nil when none does: the
// message names every problem in the order given, and "fields" names each again by its field.
func fieldsError(problems ...fieldProblem) error {
	e := &apiError{status: http.StatusBadRequest, fields: map[string]string{}}
	var sentences []string
	for _, p := range problems {
		if p.problem != "" {
			sentences = append(sentences, p.problem)
			e.fields[p.field] = p.problem
		}
	}
	if len(sentences) == 0 {
		return nil
	}
	e.message = strings.Join(sentences, "; ")
	return e
}

// errorFor returns the answer to err: an *apiError as it is, and for each sentinel error its
// status, the message a client reads and the header fields the status calls for. It is the one
// place where they are decided: rewording an error's own text changes no answer. ok is false for
// any other error, a failure of the server's own: a bare 500.
func errorFor(err error) (answer *apiError, ok bool) {
	var e *apiError
	switch {
	case errors.As(err, &e):
		return e, true
	case errors.Is(err, errNoToken): // RFC 6750 §3.1: no error code without credentials
		return newError(http.StatusUnauthorized, "this API needs a bearer token: send the header Authorization: Bearer TOKEN").
			withHeader("WWW-Authenticate", `Bearer realm="users"`), true
	case errors.Is(err, errInvalidToken):
		return newError(http.StatusUnauthorized, "the bearer token is malformed or unknown").
			withHeader("WWW-Authenticate", `Bearer realm="users", error="invalid_token"`), true
	case errors.Is(err, errReadOnly):
		return newError(http.StatusForbidden, "this token may only read: any other method needs a token with the write role").
			withHeader("WWW-Authenticate", `Bearer realm="users", error="insufficient_scope"`), true
	case errors.Is(err, errNotFound):
		return newError(http.StatusNotFound, "no user has this id"), true
	// 409: the stored state, not the request, stands in the way (RFC 9110 §15.5.10).
	case errors.Is(err, errEmailTaken):
		return newError(http.StatusConflict, "another user already has this email"), true
	case errors.Is(err, errNoIDLeft):
		return newError(http.StatusConflict, "no id is left to give: every id up to 9223372036854775807 has been used once"), true
	// 412: the request went no further, and nothing changed (RFC 9110 §13.1).
	case errors.Is(err, errIfMatchFailed):
		return newError(http.StatusPreconditionFailed, "the resource has changed since you read it: If-Match does not match its current ETag"), true
	case errors.Is(err, errIfMatchNotAnETag):
		return newError(http.StatusPreconditionFailed,
			"If-Match holds no strong ETag, so none can be current: send the ETag header's value as it is, with its quotes and without W/"), true
	case errors.Is(err, errIfNoneMatchFailed):
		return newError(http.StatusPreconditionFailed,
			"the request did not go ahead: If-None-Match matches the current ETag of the resource, or is * and the resource exists"), true
	case errors.Is(err, errBodyTooLarge):
		return newError(http.StatusRequestEntityTooLarge, "the body is larger than 1 MiB (1048576 bytes)"), true
	case errors.Is(err, errFileEdited): // docs/durability.md, "Editing it while the server runs"
		return newError(http.StatusServiceUnavailable,
			"the data file was edited by hand and the edit cannot be loaded yet: the server's log says why; nothing changed").
			withHeader("Retry-After", "1"), true
	}
	return internalError(), false
}

// internalError is the answer to every failure nobody foresaw: the cause goes to the log, and the
// client learns nothing more.
func internalError() *apiError {
	return newError(http.StatusInternalServerError, "internal server error")
}

// writeError answers err with the status and message errorFor gives it; a failure of the server's
// own (a disk that fails a write, say) is a bare 500, and its cause goes to the log.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e, ok := errorFor(err)
	if !ok {
		log.Error("request failed", "request_id", w.Header().Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "error", err)
	}
	for name, values := range e.header {
		for _, value := range values {
			w.Header().Add(name, value)
		}
	}
	body, _ := json.Marshal(errorBody{Error: e.message, Fields: e.fields}) // a string and a map of strings always encode
	writeJSON(w, e.status, body)
}

// errorBody is the body of every failure: {"error": "..."}, and "fields" for the field rules.
type errorBody struct {
	Error  string            `json:"error"`
	Fields map[string]string `json:"fields,omitempty"`
}

// writeJSON sends a JSON body, encoded by json.Marshal: every JSON answer goes out through it.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	writeBody(w, status, "application/json", body)
}

// writeBody sends a body with its media type and its length, so that no answer goes out chunked
// and HEAD says the length GET sends. net/http itself drops the body of an answer to HEAD.
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
