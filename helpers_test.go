package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The helpers that users_test.go and most other test files share. A file's own helpers sit beside
// its tests; a few also serve the tests of a neighbouring file, named in their comments (the
// store's and the data file's tests share a temporary data file, the HTTPS tests' certificate
// serves the program's tests). The tests start the service in one of two ways:
//
//   - newTestServer builds the handler as the program does, from flags, with newServer. A test
//     sends it requests made with httptest.NewRequest and reads the answer from a recorder
//     (ts.serve), or serves it over a real connection with httptest.NewServer.
//   - runProgram runs the whole program through run, as main does: its flags, its start-up, its
//     stop.
//
// Besides, a middleware's own tests wrap a handler of theirs with it (middleware_test.go), and
// example_test.go builds the README's copy of the service. What only the built program shows from
// outside (signals, exit statuses, sockets, crashes) is tested in blackbox/.

// The tokens of the tests: USERS_TOKENS holds both.
const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
)

// testEnv is the environment of the tests, as run's getenv reads it.
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
// in memory, or on the file that -data names.
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

// program is the whole program, run by runProgram in the test's process.
type program struct {
	url    string     // where it listens, from its start-up log
	stderr *logBuffer // the token notice and the log
	stop   func() error
}

// runProgram runs the program through run with -addr 127.0.0.1:0 (a free port), these arguments
// and this environment, and returns once its start-up log names the address it listens on. stop
// cancels run's context, as SIGINT does, and returns what run returned; the test's end calls it
// too.
func runProgram(t testing.TB, getenv func(string) string, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stderr: &logBuffer{}}
	result := make(chan error, 1)
	args = append([]string{"users", "-addr", "127.0.0.1:0"}, args...)
	go func() { result <- run(ctx, args, getenv, io.Discard, p.stderr) }()
	var once sync.Once
	var runErr error
	p.stop = func() error {
		once.Do(func() { cancel(); runErr = <-result })
		return runErr
	}
	t.Cleanup(func() { p.stop() })

	listening := regexp.MustCompile(`msg"?[=:]"?listening"?[ ,]"?addr"?[=:]"?([^" ]+)"?[ ,]"?url"?[=:]"?(https?)://`)
	deadline, poll := time.After(10*time.Second), time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for p.url == "" {
		select {
		case <-poll.C: // the log is read again at each tick, until it names the address
			if m := listening.FindStringSubmatch(p.stderr.String()); m != nil {
				p.url = m[2] + "://" + m[1]
			}
		case err := <-result:
			t.Fatalf("run returned before listening: %v\n%s", err, p.stderr)
		case <-deadline:
			t.Fatalf("the program did not listen within 10s:\n%s", p.stderr)
		}
	}
	return p
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

// records returns the JSON log records whose msg is this, each as its fields.
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
