package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// apiError is the one error type of the API: a status and a sentence a client can act on, plus,
// when fields of a user fail their rules, one problem per field for a form to show (SPEC §5), and
// the headers the status calls for (WWW-Authenticate on 401, Allow on 405, ...).
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

// The errors of the stored state (SPEC §3, step 5), and the one every failure we did not foresee
// becomes. Request errors are made where they are found, with newError.
var (
	errUserNotFound       = newError(http.StatusNotFound, "no user has this id")
	errPreconditionFailed = newError(http.StatusPreconditionFailed, "the user has changed since you read it: If-Match does not match its current ETag")
	errEmailTaken         = newError(http.StatusConflict, "another user already has this email")
	errInternal           = newError(http.StatusInternalServerError, "internal server error")
)

// Header values that never change are built once: setting a header to a shared slice costs no
// allocation on each request.
var (
	jsonContentType   = []string{"application/json"}
	noStore           = []string{"no-store"}
	revalidate        = []string{"private, no-cache"} // caches may keep it, but must ask first (ETag)
	nosniff           = []string{"nosniff"}
	varyAuthorization = []string{"Authorization"}
)

// writeJSON sends a JSON body that is already encoded.
func writeJSON(w http.ResponseWriter, status int, body string) {
	setJSONHeaders(w.Header(), len(body))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// writeJSONBytes is writeJSON for a body held as bytes, as long lists are (list.go says why).
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	setJSONHeaders(w.Header(), len(body))
	w.WriteHeader(status)
	w.Write(body)
}

func setJSONHeaders(h http.Header, length int) {
	h["Content-Type"] = jsonContentType
	// net/http gives a body that fits its 2 KiB buffer a Content-Length itself, and cheaper than
	// a header set here; a longer body would go out chunked, so its length is set here.
	if length > 2048 {
		h["Content-Length"] = []string{strconv.Itoa(length)}
	}
}

// marshalJSON is json.Marshal without its HTML escaping: these bodies are served as
// application/json with nosniff, never as HTML, so "<" can stay "<" for people to read.
func marshalJSON(v any) (string, error) {
	var b strings.Builder
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	err := encoder.Encode(v)
	return strings.TrimSuffix(b.String(), "\n"), err
}

// fieldProblems is the "fields" member of an error body: a struct, not a map, so that name comes
// before email as it does in the message (a map would be written in alphabetical order).
type fieldProblems struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// writeError sends err as the JSON error body. An error that is not an *apiError is a failure of
// the server's own: it is logged, and the client learns only that it happened (SPEC §6).
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
	body, _ := marshalJSON(struct {
		Error  string         `json:"error"`
		Fields *fieldProblems `json:"fields,omitempty"`
	}{e.message, fields})
	for name, values := range e.header {
		w.Header()[name] = values
	}
	if isAPIPath(r.URL.Path) {
		w.Header()["Cache-Control"] = noStore
	}
	writeJSON(w, e.status, body)
}
