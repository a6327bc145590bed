package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
	wantHeader(t, w.Header(), "Content-Type", "text/css; charset=utf-8")
	wantHeader(t, w.Header(), "Content-Length", fmt.Sprint(len(body)))
	if w.Body.String() != string(body) {
		t.Errorf("body %.80s..., want the %d bytes given", w.Body, len(body))
	}
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
	wantStatus(t, w, http.StatusPreconditionFailed)
	for _, name := range []string{"ETag", "Location", "Content-Location", "Link"} {
		if got := w.Header().Values(name); len(got) > 0 {
			t.Errorf("the error answer carries %s %q", name, got)
		}
	}
	wantHeader(t, w.Header(), "Cache-Control", "no-store")
	wantHeader(t, w.Header(), "Content-Type", "application/json")
	wantHeader(t, w.Header(), "Vary", "Authorization")
	wantHeader(t, w.Header(), "X-Request-Id", "r-1")
	if want := `{"error":"` + errIfMatchFailed.message + `"}`; w.Body.String() != want {
		t.Errorf("body %s, want %s", w.Body, want)
	}
}

func TestFailureTheAPIDidNotForeseeIs500WithoutDetail(t *testing.T) {
	ts := withAnnAndBob(t)
	log := ts.logTo()
	failingCommit(ts)
	for _, write := range []struct{ method, path, body string }{
		{"POST", "/api/users", userJSON("Carol", "carol@example.com")},
		{"PUT", "/api/users/1", userJSON("Ann", "ann@example.com")},
		{"PATCH", "/api/users/1", `{"name":"Ann Lee"}`},
		{"DELETE", "/api/users/1", ""},
	} {
		w := ts.do(write.method, write.path, write.body, join(asWriter, asJSON)...)
		message, _ := wantError(t, w, http.StatusInternalServerError)
		if message != "internal server error" {
			t.Errorf("%s: message %q, want only \"internal server error\"", write.method, message)
		}
		wantHeader(t, w.Header(), "Cache-Control", "no-store")
		for _, name := range []string{"Location", "ETag", "Content-Location"} {
			if w.Header().Get(name) != "" {
				t.Errorf("%s: a 500 carries %s %q", write.method, name, w.Header().Get(name))
			}
		}
	}
	if !strings.Contains(log.String(), "disk on fire") {
		t.Errorf("the detail of the failure is not in the log:\n%s", log)
	}
	// The cause is logged under the request id the client got, so the two can be matched.
	w := ts.do("DELETE", "/api/users/1", "", join(asWriter, []string{"X-Request-Id", "failed-delete"})...)
	wantStatus(t, w, http.StatusInternalServerError)
	logged := false
	for _, record := range log.records(t) {
		logged = logged || record["msg"] == "request failed" && record["request_id"] == "failed-delete"
	}
	if !logged {
		t.Errorf("no \"request failed\" record names the request id failed-delete:\n%s", log)
	}
	wantStatus(t, ts.do("GET", "/api/users", "", asReader...), http.StatusOK) // reads go on
}

// writeError writes what the error holds: every field problem, in the order the rules ran, and
// every value of every header, so a rule or a header added later is never lost on the way out.
func TestWriteErrorWritesEveryFieldAndEveryHeaderValue(t *testing.T) {
	err := &apiError{
		status:  http.StatusBadRequest,
		message: "phone must be digits; name must not be empty",
		fields:  fieldProblems{{"phone", "phone must be digits"}, {"name", "name must not be empty"}},
		header:  http.Header{"Link": {`</a>; rel="help"`, `</b>; rel="about"`}},
	}
	w := httptest.NewRecorder()
	writeError(w, httptest.NewRequest("POST", "/api/users", nil), newLogger("text", io.Discard), err)
	want := `{"error":"phone must be digits; name must not be empty","fields":{"phone":"phone must be digits","name":"name must not be empty"}}`
	if w.Code != http.StatusBadRequest || w.Body.String() != want {
		t.Errorf("got %d %s\nwant 400 %s", w.Code, w.Body, want)
	}
	if got := w.Header().Values("Link"); len(got) != 2 {
		t.Errorf("Link %q, want both values", got)
	}
}
