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
func TestErrorAnswerIsNeverStoredAndCarriesNoHeaderOfTheRepresentation(t *testing.T) {
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

// A failure the API did not foresee (here a disk that fails every write) is 500 with nothing more
// said, stored by no cache, and without the headers of the answer it replaces; its cause goes to
// the log under the request id the client got, and reads go on.
func TestFailureTheAPIDidNotForeseeIs500WithoutDetail(t *testing.T) {
	for _, write := range []struct {
		method, body string
		onAnn        bool // the target is Ann's URI, else the collection
	}{
		{"POST", `{"name":"Carol","email":"carol@example.com"}`, false},
		{"PUT", `{"name":"Ann","email":"ann@example.com"}`, true},
		{"PATCH", `{"name":"Ann Lee"}`, true},
		{"DELETE", "", true},
	} {
		t.Run(write.method, func(t *testing.T) {
			disk := &failingDisk{step: stepSync}
			ts := newTestServerOn(t, openFileStore(t, newDataPath(t), disk))
			ann := ts.create(t, "Ann", "ann@example.com")
			disk.failing.Store(true)

			target := "/api/users"
			if write.onAnn {
				target = userPath(ann.ID)
			}
			r := httptest.NewRequest(write.method, target, strings.NewReader(write.body))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("X-Request-Id", "failed-"+write.method)
			w := ts.serve(r)
			wantError(t, w, http.StatusInternalServerError, "internal server error")
			wantHeaders(t, w.Header(), map[string]string{"Cache-Control": "no-store", "Location": "", "ETag": "", "Content-Location": ""})
			wantBody(t, w, `{"error":"internal server error"}`)

			failed := ts.log.records(t, "request failed")
			if len(failed) != 1 || failed[0]["request_id"] != "failed-"+write.method ||
				!strings.Contains(fmt.Sprint(failed[0]["error"]), errDiskFailed.Error()) {
				t.Errorf("the log has %v, want one record of the failed request with its id and cause", failed)
			}

			read := httptest.NewRequest("GET", userPath(ann.ID), nil)
			read.Header.Set("Authorization", "Bearer "+readToken)
			wantStatus(t, ts.serve(read), http.StatusOK) // reads go on
		})
	}
}

// writeError writes what the error holds: every field problem, name first, and every value of
// every header, so a header added later is never lost on the way out.
func TestWriteErrorWritesEveryFieldAndEveryHeaderValue(t *testing.T) {
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
