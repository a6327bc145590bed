package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The rules of respond.go: every answer is JSON with its length, and every error the one error body
// (docs/api.md, "Responses").

// Every /api/ answer and every error is JSON; 204 and 304 have no body and no Content-Type.
func TestAnswersAreJSONBut204And304HaveNoBody(t *testing.T) {
	for _, e := range anAnswerOfEachKind(t) {
		t.Run(e.name, func(t *testing.T) {
			w := e.send(t)
			switch {
			case w.Code == http.StatusNoContent || w.Code == http.StatusNotModified:
				wantNoBody(t, w)
			case w.Code >= 400 && e.path != "/healthz": // /healthz answers 503 with its status
				errorBody(t, w)
			default:
				wantHeader(t, w.Header(), "Content-Type", "application/json")
				if !json.Valid(w.Body.Bytes()) {
					t.Errorf("body %q is not JSON", w.Body)
				}
			}
		})
	}
}

// Every body goes out with its Content-Length, never chunked: net/http counts the short ones
// (writeJSON leaves them to it), and the service counts a long list. Only a real connection shows
// it.
func TestEveryAnswerHasAContentLength(t *testing.T) {
	ts := newTestServer(t)
	for i := range 40 { // a list longer than net/http's 2 KiB buffer
		ts.create(t, fmt.Sprintf("User %d", i), fmt.Sprintf("user%d@example.com", i))
	}
	server := httptest.NewServer(ts.handler)
	defer server.Close()
	answers := []struct{ method, path, body string }{
		{"GET", "/api/users/1", ""},
		{"GET", "/api/users", ""},
		{"GET", "/api/users?per_page=2", ""},
		{"POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`},
		{"PATCH", "/api/users/2", `{"name":"Bob"}`},
		{"POST", "/api/users", `{"name":""}`},
		{"GET", "/api/users/999", ""},
		{"DELETE", "/api/users", ""},
		{"GET", "/healthz", ""},
		{"GET", "/openapi.json", ""},
	}
	for _, a := range answers {
		t.Run(a.method+" "+a.path, func(t *testing.T) {
			resp, body := sendTo(t, server.Client(), a.method, server.URL+a.path, a.body, join(asWriter, asJSON)...)
			if len(body) == 0 || resp.ContentLength != int64(len(body)) || resp.TransferEncoding != nil {
				t.Errorf("%d: Content-Length %d, transfer encoding %q, for a body of %d bytes",
					resp.StatusCode, resp.ContentLength, resp.TransferEncoding, len(body))
			}
		})
	}
}

// Accept is not negotiated: the API speaks JSON to every client and never answers 406.
func TestAcceptIsNotNegotiated(t *testing.T) {
	ts := withAnnAndBob(t)
	for _, accept := range []string{"text/html", "application/xml", "image/png;q=1, */*;q=0"} {
		w := ts.do("GET", "/api/users/1", "", join(asReader, []string{"Accept", accept})...)
		wantStatus(t, w, http.StatusOK)
		wantHeader(t, w.Header(), "Content-Type", "application/json")
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
