package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The tests go through the real handler stack (newServer), so each one checks what a client sees.

const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
)

// Header pairs for do, named for what they say.
var (
	asWriter = []string{"Authorization", "Bearer " + writeToken}
	asReader = []string{"Authorization", "Bearer " + readToken}
	asJSON   = []string{"Content-Type", "application/json"}
)

// testServer is the service on a fresh, empty store.
type testServer struct {
	t       testing.TB
	api     *api
	handler http.Handler
}

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	tokenSet, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		t.Fatal(err)
	}
	store := newUserStore()
	a := &api{
		store:           store,
		commit:          store.commit,
		broken:          func() bool { return false },
		tokens:          tokenSet,
		log:             slog.New(slog.NewTextHandler(io.Discard, nil)),
		requestIDPrefix: "test-",
	}
	return &testServer{t: t, api: a, handler: newServer(a)}
}

// do sends a request through the handler. headers come in pairs of name and value; combine
// asWriter, asJSON and others with join.
func (s *testServer) do(method, target, body string, headers ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body == "" {
		r.Body = http.NoBody
		r.ContentLength = 0
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w
}

// create adds a user through the API and returns it as the answer's body decoded.
func (s *testServer) create(name, email string) user {
	s.t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "email": email})
	w := s.do("POST", "/api/users", string(body), join(asWriter, asJSON)...)
	if w.Code != http.StatusCreated {
		s.t.Fatalf("creating %s: status %d, body %s", email, w.Code, w.Body)
	}
	var u user
	if err := json.Unmarshal(w.Body.Bytes(), &u); err != nil {
		s.t.Fatal(err)
	}
	return u
}

func join(pairs ...[]string) []string {
	var all []string
	for _, p := range pairs {
		all = append(all, p...)
	}
	return all
}

// errorBody decodes an error answer, failing the test if it is not the JSON error body.
func errorBody(t testing.TB, w *httptest.ResponseRecorder) (message string, fields map[string]string) {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	var body struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error == "" {
		t.Fatalf("body %q is not the JSON error body", w.Body)
	}
	return body.Error, body.Fields
}
