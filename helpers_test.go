package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The helpers that users_test.go and the other test files share; a file's own helpers sit beside
// its tests. The tests start the service in one of three ways:
//
//   - newTestServer builds the handler as the program does, from flags, with newServer. A test
//     sends it requests made with httptest.NewRequest and reads the answer from a recorder
//     (ts.serve), or serves it over a real connection with httptest.NewServer (for HTTPS,
//     NewUnstartedServer and StartTLS);
//   - main_test.go runs the whole program through run, as main does;
//   - blackbox/ builds the program and runs the binary.
//
// Besides, two checks build copies of the program, to prove that they build and pass: the
// README's copy with users_test.go beside it (example_test.go), and a copy that serves books
// (conformance_test.go). They are checks of the copies, outside -short, not ways into the service.

// The tokens of the tests: testEnv's USERS_TOKENS holds both.
const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
)

// testEnv is the environment of the tests, as run's getenv reads it: USERS_TOKENS, and nothing else.
func testEnv(name string) string {
	if name == "USERS_TOKENS" {
		return writeToken + ":write," + readToken + ":read"
	}
	return ""
}

// testServer is the service as newServer builds it, the store behind it, and its log.
type testServer struct {
	http.Handler
	store *userStore
	log   *logBuffer // JSON records, unless the flags say -log-format text
}

// newTestServer is the service built as the program builds it with these flags: on an empty store
// in memory, or on the file that -data names. The test's end stops what the store runs.
func newTestServer(t testing.TB, flags ...string) *testServer {
	t.Helper()
	cfg, err := parseConfig(append([]string{"users", "-log-format", "json"}, flags...), testEnv, io.Discard)
	if err != nil {
		t.Fatalf("parseConfig(%q): %v", flags, err)
	}
	log := &logBuffer{}
	logger := newLogger(cfg.logFormat, log)
	ctx, cancel := context.WithCancel(context.Background()) // done at the test's end, as run's at a stop
	store, _, err := openStore(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); store.close() })
	handler, err := newServer(*cfg, logger, store)
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{Handler: handler, store: store, log: log}
}

// serve sends r through the service and returns the answer.
func (ts *testServer) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	ts.ServeHTTP(w, r)
	return w
}

// create adds a user through the API, as a client would, and returns it.
func (ts *testServer) create(t testing.TB, name, email string) user {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "email": email})
	r := httptest.NewRequest("POST", "/api/users", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	w := ts.serve(r)
	var created user
	if err := json.Unmarshal(w.Body.Bytes(), &created); w.Code != http.StatusCreated || err != nil {
		t.Fatalf("creating %s: %d %s", email, w.Code, w.Body)
	}
	return created
}

// allUsers returns every user of the store, in id order, failing the test if it cannot.
func allUsers(t testing.TB, s *userStore) []user {
	t.Helper()
	users, _, err := s.list(context.Background(), listQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return users
}

// logBuffer is a log that many goroutines may write to, and a test read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records returns the records, as slog's JSON handler writes them, whose msg is this, each as its
// attributes.
func (b *logBuffer) records(msg string) []map[string]any {
	var found []map[string]any
	for _, line := range strings.Split(b.String(), "\n") {
		var record map[string]any
		if json.Unmarshal([]byte(line), &record) == nil && record["msg"] == msg {
			found = append(found, record)
		}
	}
	return found
}

// wantError fails the test unless the answer is the JSON error body of this status and message.
func wantError(t testing.TB, w *httptest.ResponseRecorder, status int, message string) {
	t.Helper()
	var body struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s: not the JSON error body (%v)", w.Code, w.Body, err)
	}
	if w.Code != status || body.Error != message {
		t.Errorf("%d %q, want %d %q", w.Code, body.Error, status, message)
	}
}
