package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
)

// The rules of respond.go: the API's one error type, the one place that turns an error into a
// status, and the one error body (docs/api.md, "Responses").

// errorFor answers an *apiError as it is, and each sentinel error, wrapped or not, with its status
// and the header fields the status calls for: the challenges of RFC 6750 §3 for 401 and 403, and
// Retry-After for the 503 of a data file edit. Any other error is a failure of the server's own
// (ok false), which writeError answers with a bare 500.
func TestErrorForGivesEachErrorItsStatus(t *testing.T) {
	refusal := badRequest("name must not be empty")
	challenge := func(value string) http.Header {
		h := http.Header{}
		h.Set("WWW-Authenticate", value)
		return h
	}
	for _, tt := range []struct {
		name   string
		err    error
		status int
		header http.Header // nil for none
		ours   bool        // the API's own answer; false for a failure of the server's own, a 500
	}{
		{"an *apiError", refusal, http.StatusBadRequest, nil, true},
		{"an *apiError, wrapped", fmt.Errorf("creating: %w", refusal), http.StatusBadRequest, nil, true},
		{"no such user", errNotFound, http.StatusNotFound, nil, true},
		{"no such user, wrapped", fmt.Errorf("patching 7: %w", errNotFound), http.StatusNotFound, nil, true},
		{"an e-mail taken", errEmailTaken, http.StatusConflict, nil, true},
		{"no id left", errNoIDLeft, http.StatusConflict, nil, true},
		{"no token", errNoToken, http.StatusUnauthorized, challenge(`Bearer realm="users"`), true},
		{"a token unknown", errInvalidToken, http.StatusUnauthorized, challenge(`Bearer realm="users", error="invalid_token"`), true},
		{"a read-only token writes", errReadOnly, http.StatusForbidden, challenge(`Bearer realm="users", error="insufficient_scope"`), true},
		{"If-Match fails", errIfMatchFailed, http.StatusPreconditionFailed, nil, true},
		{"If-Match holds no strong tag", errIfMatchNotAnETag, http.StatusPreconditionFailed, nil, true},
		{"If-None-Match fails", errIfNoneMatchFailed, http.StatusPreconditionFailed, nil, true},
		{"a body too large", errBodyTooLarge, http.StatusRequestEntityTooLarge, nil, true},
		{"a data file edit that cannot be loaded", fmt.Errorf("writing users.json: %w", errFileEdited),
			http.StatusServiceUnavailable, http.Header{"Retry-After": {"1"}}, true},
		{"anything else", errors.New("write users.json.tmp: no space left on device"), http.StatusInternalServerError, nil, false},
		{"the store closed", errClosed, http.StatusInternalServerError, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := errorFor(tt.err)
			if e.status != tt.status || e.message == "" || !reflect.DeepEqual(e.header, tt.header) || ok != tt.ours {
				t.Errorf("errorFor = %#v, %v; want status %d, a message, the header %v, %v", e, ok, tt.status, tt.header, tt.ours)
			}
		})
	}
	if e, _ := errorFor(refusal); e != refusal {
		t.Errorf("errorFor(an *apiError) = %#v, want it as it is", e)
	}
}

// writeError sends the one error body, JSON with its length: the message, and fields when the
// field rules failed; and every value of every header field the error carries.
func TestWriteErrorSendsTheErrorBody(t *testing.T) {
	err := &apiError{
		status:  http.StatusBadRequest,
		message: "name must not be empty; email must be a plain address such as ann@example.com",
		fields:  map[string]string{"name": "name must not be empty", "email": "email must be a plain address such as ann@example.com"},
		header:  http.Header{"Link": {`</a>; rel="help"`, `</b>; rel="about"`}},
	}
	w := httptest.NewRecorder()
	writeError(w, httptest.NewRequest("POST", "/api/users", nil), newLogger("json", &logBuffer{}), err)

	var body struct {
		Error  string
		Fields map[string]string
	}
	if jsonErr := json.Unmarshal(w.Body.Bytes(), &body); jsonErr != nil || w.Code != err.status || body.Error != err.message ||
		!reflect.DeepEqual(body.Fields, err.fields) {
		t.Errorf("%d %s, want 400 with the message and both fields", w.Code, w.Body)
	}
	h := w.Header()
	if h.Get("Content-Type") != "application/json" || h.Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
		t.Errorf("Content-Type %q, Content-Length %q; want application/json and %d", h.Get("Content-Type"), h.Get("Content-Length"), w.Body.Len())
	}
	if got := h.Values("Link"); !reflect.DeepEqual(got, err.header.Values("Link")) {
		t.Errorf("Link %q, want both values", got)
	}
	w = httptest.NewRecorder()
	writeError(w, httptest.NewRequest("GET", "/api/users/9", nil), newLogger("json", &logBuffer{}), errNotFound)
	if w.Body.String() != `{"error":"no user has this id"}` {
		t.Errorf("a 404's body is %s, want the message and no fields", w.Body)
	}
}

// A failure nobody foresaw is 500 and tells the client nothing more: its cause may name a file,
// a path or a value of the server's. The log has the cause, under the request id the client got,
// so that the two can be matched.
func TestUnforeseenErrorIs500AndOnlyTheLogSaysWhy(t *testing.T) {
	log := &logBuffer{}
	w := httptest.NewRecorder()
	w.Header().Set("X-Request-Id", "req-7")
	cause := errors.New("rename /var/lib/users/users.json.tmp: no space left on device")
	writeError(w, httptest.NewRequest("DELETE", "/api/users/7", nil), newLogger("json", log), cause)

	if w.Code != http.StatusInternalServerError || w.Body.String() != `{"error":"internal server error"}` {
		t.Errorf("%d %s, want 500 and internal server error alone", w.Code, w.Body)
	}
	records := log.records("request failed")
	if len(records) != 1 || records[0]["error"] != cause.Error() || records[0]["request_id"] != "req-7" ||
		records[0]["method"] != "DELETE" || records[0]["path"] != "/api/users/7" {
		t.Errorf("the log has %v, want one record with the cause, the request id, the method and the path", records)
	}
}

// fieldsError is nil when no field has a problem; otherwise one 400 whose message lists every
// problem in the order given, and whose fields name each by its field.
func TestFieldsErrorListsEveryProblem(t *testing.T) {
	ok := func(field string) fieldProblem { return fieldProblem{field, ""} }
	for _, tt := range []struct {
		name  string
		given []fieldProblem
		want  error
	}{
		{"none", []fieldProblem{ok("name"), ok("email")}, nil},
		{"one", []fieldProblem{ok("name"), {"email", "email is required"}},
			&apiError{status: 400, message: "email is required", fields: map[string]string{"email": "email is required"}}},
		{"two, in order", []fieldProblem{{"name", "name is required"}, {"email", "email is required"}},
			&apiError{status: 400, message: "name is required; email is required",
				fields: map[string]string{"name": "name is required", "email": "email is required"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := fieldsError(tt.given...); !reflect.DeepEqual(err, tt.want) {
				t.Errorf("error %#v\nwant  %#v", err, tt.want)
			}
		})
	}
}
