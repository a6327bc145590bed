package main

// Fuzz targets for the id in the path and, around every parser, whole requests. The parsers' own
// targets sit beside their tests: FuzzDecodeUserBody in body_test.go, FuzzParseListQuery in
// list_test.go, FuzzAuthorization in auth_test.go. Each states what must hold for any input,
// checked against a plain reference where one exists. `go test` runs the seeds (here and in
// testdata/fuzz/); ./fuzz.sh searches beyond them, for FUZZTIME seconds a target.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// An id is a positive integer in canonical decimal form, and nothing else: through the whole stack
// such an id names a user (200) or nothing (404), and anything else is a JSON 404.
func FuzzParseID(f *testing.F) {
	for _, id := range []string{
		"1", "3", "4", "7", "07", "+7", "-7", "0", "7.0", "7e0", "0x7", " 7", "7 ", "", "9223372036854775807",
		"9223372036854775808", "99999999999999999999", "١", "７", "1/2", "%31", "\x00", "1\n",
	} {
		f.Add(id)
	}
	// One service for every input, holding Ann, Bob and Cy: each input is a GET, so none changes
	// what the next one meets.
	ts := newTestServer(f)
	var ids []int64
	for _, name := range []string{"Ann", "Bob", "Cy"} {
		created := ts.create(f, name, strings.ToLower(name)+"@example.com")
		ids = append(ids, created.ID)
	}
	f.Fuzz(func(t *testing.T, id string) {
		reference, err := strconv.ParseInt(id, 10, 64)
		canonical := err == nil && reference > 0 && strconv.FormatInt(reference, 10) == id
		if id == "." || id == ".." {
			return // the path itself is not clean: the service redirects it (308)
		}
		r := httptest.NewRequest("GET", "/api/users/"+url.PathEscape(id), nil)
		r.Header.Set("Authorization", "Bearer "+readToken)
		w := ts.serve(r)
		want := http.StatusNotFound
		if canonical && slices.Contains(ids, reference) {
			want = http.StatusOK
		}
		if w.Code != want {
			t.Fatalf("GET /api/users/%s: status %d, want %d", url.PathEscape(id), w.Code, want)
		}
		var body errorBody
		if want == http.StatusNotFound && (w.Header().Get("Content-Type") != "application/json" ||
			json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error == "") {
			t.Fatalf("GET /api/users/%s: the 404 is not the JSON error body: %q", url.PathEscape(id), w.Body)
		}
	})
}

// Any request at all, as net/http would parse it from the wire, gets an answer that is not a 5xx,
// with the JSON error body on every failure and the headers every answer carries, given once and
// logged on one line; a failure leaves the store exactly as it was, and only a write token can
// change it.
func FuzzRequest(f *testing.F) {
	const eve = `{"name":"Eve","email":"eve@example.com"}`
	for _, seed := range []struct {
		method, target, contentType, body string
		writer                            bool
	}{
		{"POST", "/api/users", "application/json", eve, true},
		{"POST", "/api/users", "application/json", eve, false},
		{"PUT", "/api/users/1", "application/json", `{"id":1,"name":"Ann","email":"ann@example.com"}`, true},
		{"PATCH", "/api/users/2", "application/merge-patch+json", `{"email":"ANN@example.com"}`, true},
		{"DELETE", "/api/users/3", "", "", true},
		{"GET", "/api/users?page=2&per_page=1&sort=-email", "", "", false},
		{"GET", "/api/users/1?x", "", "", true},
		{"OPTIONS", "/api/users/1", "", "", false},
		{"TRACE", "/api/users", "", "", true},
		{"get", "/api//users/../users/%2e%2e", "", "", true},
		{"POST", "/api/users", "application/json; charset=latin1", "{}", true},
		{"GET", "/healthz", "", "", false},
		{"GET", "/", "", "", false},
		{"GET", "/assets/..%2f..%2fgo.mod", "", "", false},
		{"HEAD", "/openapi.json", "", "", false},
	} {
		f.Add(seed.method, seed.target, seed.contentType, []byte(seed.body), seed.writer)
	}
	requestID := regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	f.Fuzz(func(t *testing.T, method, target, contentType string, body []byte, writer bool) {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")))
		if err != nil || r.Method != method || r.RequestURI != target {
			return // net/http answers this itself, before any handler runs
		}
		r.Body, r.ContentLength = http.NoBody, 0
		if len(body) > 0 {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(string(body))), int64(len(body))
		}
		r.Header.Set("Authorization", "Bearer "+readToken)
		if writer {
			r.Header.Set("Authorization", "Bearer "+writeToken)
		}
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}

		ts := newTestServer(t)
		for _, name := range []string{"Ann", "Bob", "Cy"} { // something real to aim at
			ts.create(t, name, strings.ToLower(name)+"@example.com")
		}
		// users is the whole collection as a writer sees it.
		users := func() string {
			r := httptest.NewRequest("GET", "/api/users", nil)
			r.Header.Set("Authorization", "Bearer "+writeToken)
			w := ts.serve(r)
			if w.Code != http.StatusOK {
				t.Fatalf("GET /api/users: status %d, body %s", w.Code, w.Body)
			}
			return w.Body.String()
		}
		before := users()
		logLinesBefore := strings.Count(ts.log.String(), "\n")

		answer := &fuzzAnswerOnce{ResponseRecorder: httptest.NewRecorder()}
		ts.ServeHTTP(answer, r)
		w := answer.ResponseRecorder

		if w.Code >= 500 && w.Code != http.StatusNotImplemented { // 501: a method no route takes
			t.Fatalf("%s %s: status %d, body %s", method, target, w.Code, w.Body)
		}
		if answer.superfluous != "" {
			t.Fatalf("%s %s: %s (net/http would log it)", method, target, answer.superfluous)
		}
		var failure errorBody
		if w.Code >= 400 && (w.Header().Get("Content-Type") != "application/json" ||
			json.Unmarshal(w.Body.Bytes(), &failure) != nil || failure.Error == "") {
			t.Fatalf("%s %s: status %d without the JSON error body: %q", method, target, w.Code, w.Body)
		}
		h := w.Header()
		if h.Get("X-Content-Type-Options") != "nosniff" || !requestID.MatchString(h.Get("X-Request-Id")) {
			t.Fatalf("%s %s: headers %v lack nosniff or a request id", method, target, h)
		}
		if (w.Code == http.StatusNoContent || w.Code == http.StatusNotModified) && (w.Body.Len() > 0 || h.Get("Content-Type") != "") {
			t.Fatalf("%s %s: status %d with a body or a Content-Type", method, target, w.Code)
		}
		if isAPIPath(r.URL.Path) && (!strings.Contains(h.Get("Vary"), "Authorization") ||
			w.Code >= 300 && w.Code != http.StatusNotModified && h.Get("Cache-Control") != "no-store") {
			t.Fatalf("%s %s: status %d with Vary %q and Cache-Control %q", method, target, w.Code, h.Get("Vary"), h.Get("Cache-Control"))
		}
		if lines := strings.Count(ts.log.String(), "\n") - logLinesBefore; lines != 1 {
			t.Fatalf("%s %s: %d log lines, want one:\n%s", method, target, lines, ts.log)
		}
		after := users()
		if after == before {
			return
		}
		if w.Code < 200 || w.Code > 299 || !writer || !slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE"}, method) {
			t.Fatalf("%s %s (write token: %v) answered %d and changed the store:\nbefore %s\nafter  %s",
				method, target, writer, w.Code, before, after)
		}
	})
}

// fuzzAnswerOnce is a recorder that notes a status set twice, or after the body began: net/http
// ignores such a call and logs "superfluous response.WriteHeader call".
type fuzzAnswerOnce struct {
	*httptest.ResponseRecorder
	headerWritten bool
	superfluous   string
}

func (a *fuzzAnswerOnce) WriteHeader(status int) {
	if a.headerWritten && a.superfluous == "" {
		a.superfluous = fmt.Sprintf("WriteHeader(%d) after the answer began with %d", status, a.Code)
	}
	a.headerWritten = true
	a.ResponseRecorder.WriteHeader(status)
}

func (a *fuzzAnswerOnce) Write(b []byte) (int, error) {
	a.headerWritten = true
	return a.ResponseRecorder.Write(b)
}
