package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The rules of respond.go: every answer is JSON with its length, and every error the one error body
// (docs/api.md, "Responses").

// writeBody sends every body with its type and its length, so that no answer goes out chunked.
func TestWriteBodySendsItsTypeAndLength(t *testing.T) {
	body := []byte(strings.Repeat(`{"id":1,"name":"Ann","email":"ann@example.com"},`, 100)) // past net/http's 2 KiB buffer
	w := httptest.NewRecorder()
	writeBody(w, http.StatusCreated, "text/css; charset=utf-8", body)
	wantStatus(t, w, http.StatusCreated)
	wantHeaders(t, w.Header(), map[string]string{"Content-Type": "text/css; charset=utf-8", "Content-Length": fmt.Sprint(len(body))})
	wantBody(t, w, string(body))
}

// An error answer replaces the representation a handler began: no cache may store it, and it
// carries none of the representation's headers (ETag, Location, Content-Location, Link), whatever
// the handler had set; the headers of every answer stay.
func TestErrorAnswerCarriesNoRepresentation(t *testing.T) {
	w := httptest.NewRecorder()
	for name, value := range map[string]string{"ETag": `"abc"`, "Location": "/api/users/1", "Content-Location": "/api/users/1",
		"Link": `</api/users?page=2>; rel="next"`, "Cache-Control": "private, no-cache", "Vary": "Authorization", "X-Request-Id": "r-1"} {
		w.Header().Set(name, value)
	}
	writeError(w, httptest.NewRequest("GET", "/api/users?page=1", nil), newLogger("text", io.Discard), errIfMatchFailed)
	wantError(t, w, http.StatusPreconditionFailed, errIfMatchFailed.message)
	wantHeaders(t, w.Header(), map[string]string{
		"ETag": "", "Location": "", "Content-Location": "", "Link": "",
		"Cache-Control": "no-store", "Vary": "Authorization", "X-Request-Id": "r-1",
	})
	wantBody(t, w, `{"error":"`+errIfMatchFailed.message+`"}`)
}

// A failure the API did not foresee (a disk whose write or fsync fails, or panics) is 500 with
// nothing more said, stored by no cache, and without the headers of the answer it replaces; its
// cause goes to the log under the request id the client got. Reads go on, and writes are refused
// until a restart, as /healthz says (README, "Durability with -data").
func TestUnforeseenFailureIs500WithoutDetail(t *testing.T) {
	failures := []struct {
		name   string
		step   diskStep // the step of the write that fails
		panics bool     // rather than return an error
		logged string   // the log record's msg
		cause  string   // what it says of the cause
	}{
		{"an error at write", stepWrite, false, "request failed", errDiskFailed.Error()},
		{"an error at fsync", stepSync, false, "request failed", errDiskFailed.Error()},
		{"a panic at write", stepWrite, true, "panic in handler", "the disk panicked at write"},
	}
	writes := []struct {
		method, target, body string
	}{
		{"POST", "/api/users", `{"name":"Carol","email":"carol@example.com"}`},
		{"PUT", "/api/users/1", `{"name":"Ann","email":"ann@example.com"}`},
		{"PATCH", "/api/users/1", `{"name":"Ann Lee"}`},
		{"DELETE", "/api/users/1", ""},
	}
	for _, failure := range failures {
		for _, write := range writes {
			t.Run(write.method+" "+failure.name, func(t *testing.T) {
				disk := &failingDisk{step: failure.step, panics: failure.panics}
				ts := newTestServerOn(t, openFileStore(t, newDataPath(t), disk))
				ts.create(t, "Ann", "ann@example.com") // /api/users/1
				disk.failing.Store(true)

				r := httptest.NewRequest(write.method, write.target, strings.NewReader(write.body))
				r.Header.Set("Authorization", "Bearer "+writeToken)
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("X-Request-Id", "failed-1")
				w := ts.serve(r)

				wantError(t, w, http.StatusInternalServerError, "internal server error")
				wantHeaders(t, w.Header(), map[string]string{"Cache-Control": "no-store", "Location": "", "ETag": "", "Content-Location": ""})
				wantBody(t, w, `{"error":"internal server error"}`)
				records := ts.log.records(t, failure.logged)
				if len(records) != 1 || records[0]["request_id"] != "failed-1" ||
					!strings.Contains(fmt.Sprint(records[0]["error"], records[0]["panic"]), failure.cause) {
					t.Errorf("the log has %v, want one record %q with the request's id and its cause", records, failure.logged)
				}

				read := httptest.NewRequest("GET", "/api/users/1", nil)
				read.Header.Set("Authorization", "Bearer "+readToken)
				wantStatus(t, ts.serve(read), http.StatusOK) // reads go on
				health := ts.serve(httptest.NewRequest("GET", "/healthz", nil))
				wantStatus(t, health, http.StatusServiceUnavailable)
				wantBody(t, health, `{"status":"data file not writable"}`)
			})
		}
	}
}

// writeError writes what the error holds: every field problem, name first, and every value of
// every header, so a header added later is never lost on the way out.
func TestWriteErrorWritesAllFieldsAndHeaders(t *testing.T) {
	err := &apiError{
		status:  http.StatusBadRequest,
		message: "name must not be empty; email must be a plain address such as ann@example.com",
		fields:  &fieldProblems{Email: "email must be a plain address such as ann@example.com", Name: "name must not be empty"},
		header:  http.Header{"Link": {`</a>; rel="help"`, `</b>; rel="about"`}},
	}
	w := httptest.NewRecorder()
	writeError(w, httptest.NewRequest("POST", "/api/users", nil), newLogger("text", io.Discard), err)
	wantStatus(t, w, http.StatusBadRequest)
	wantBody(t, w, `{"error":"name must not be empty; email must be a plain address such as ann@example.com",`+
		`"fields":{"name":"name must not be empty","email":"email must be a plain address such as ann@example.com"}}`)
	if got, want := w.Header().Values("Link"), err.header.Values("Link"); !slices.Equal(got, want) {
		t.Errorf("Link %q, want both values %q", got, want)
	}
}
