package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests' shared harness: two ways to start the service, and a handful of assertions.
//
//   - newTestServer builds the handler with newServer, as the program does, for httptest: a test
//     sends it requests made with httptest.NewRequest and reads the answer from a recorder.
//   - startProgram runs the whole program on a free port of 127.0.0.1, for what needs a real
//     connection: time-outs, HEAD, HTTPS (newSelfSignedCertificate), a stop. It calls what run
//     calls after -h and -version, parseConfig and then start, so that start can hand it the
//     address it bound; tests of -h, -version and of starts that fail call run itself.
//
// Every other helper lives beside the tests that use it.

const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
)

// testEnv is the environment the tests start the service in: a write and a read token.
func testEnv(name string) string {
	if name == "USERS_TOKENS" {
		return writeToken + ":write," + readToken + ":read"
	}
	return ""
}

// noTokens is an environment without USERS_TOKENS: the program makes two tokens and prints them.
func noTokens(string) string { return "" }

// testConfig is the configuration of the flags given, read by parseConfig with the test tokens, so
// that a test starts from what the program itself would use. The flags come after
// -addr 127.0.0.1:0 (a free port) and -log-format json (records a test can read), and may change them.
func testConfig(t testing.TB, flags ...string) *config {
	t.Helper()
	cfg, err := parseConfig(append([]string{"users", "-addr", "127.0.0.1:0", "-log-format", "json"}, flags...), testEnv, io.Discard)
	if err != nil {
		t.Fatalf("parseConfig(%q): %v", flags, err)
	}
	return cfg
}

// testServer is the whole service as newServer builds it, with the store behind it and its log.
type testServer struct {
	http.Handler
	store *userStore
	log   *logBuffer // the server's log, in the format of -log-format (JSON unless a test says text)
}

// newTestServer is the service on an empty store in memory, as the flags given configure it.
func newTestServer(t testing.TB, flags ...string) *testServer {
	t.Helper()
	return serverOn(t, newUserStore(), testConfig(t, flags...))
}

// serverOn is the service on a store of the test's own (one kept in a journal, say).
func serverOn(t testing.TB, store *userStore, cfg *config) *testServer {
	t.Helper()
	log := &logBuffer{}
	handler, err := newServer(*cfg, newLogger(cfg.logFormat, log), store)
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

// create adds a user through the API, as a client would, and returns it with its ETag.
func (ts *testServer) create(t testing.TB, name, email string) (user, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "email": email})
	r := httptest.NewRequest("POST", "/api/users", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	w := ts.serve(r)
	if w.Code != http.StatusCreated {
		t.Fatalf("creating %s: %d %s", email, w.Code, w.Body)
	}
	var created user
	if err := json.Unmarshal(w.Body.Bytes(), &created); err != nil {
		t.Fatalf("creating %s: %v", email, err)
	}
	return created, w.Header().Get("ETag")
}

// users returns the users GET /api/users lists, in id order.
func (ts *testServer) users(t testing.TB) []user {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	w := ts.serve(r)
	wantStatus(t, w, http.StatusOK)
	var list struct{ Data []user }
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	return list.Data
}

// openFileStore opens the store kept in the data file at path, as -data FILE does, on the disk
// given: osDisk{}, or one that fails (datafile_test.go). The store is closed at the end of the
// test, if the test has not closed it to open the file again.
func openFileStore(t testing.TB, path string, d disk) *userStore {
	t.Helper()
	store, err := openUserStore(path, d)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	t.Cleanup(store.close) // closing a store twice is harmless: the second finds it closed
	return store
}

// newDataPath names a data file in a new temporary folder.
func newDataPath(t testing.TB) string { return filepath.Join(t.TempDir(), "users.json") }

// program is the whole program, running in the test's process.
type program struct {
	url    string     // http://127.0.0.1:port, or https:// with -tls-cert
	stderr *logBuffer // the token notice and the log
	stop   func() error
}

// startProgram runs the program with these flags (after -addr 127.0.0.1:0) and environment, as
// main would after -h and -version: parseConfig, then start. It learns the address from the
// start-up log, as a person does. stop ends the program's context, as SIGINT or SIGTERM would, and returns what start
// returned; the test's cleanup calls it too. Its log is in the format the flags give (text unless
// they say -log-format json), as the program writes it.
func startProgram(t testing.TB, getenv func(string) string, flags ...string) *program {
	t.Helper()
	cfg, err := parseConfig(append([]string{"users", "-addr", "127.0.0.1:0"}, flags...), getenv, io.Discard)
	if err != nil {
		t.Fatalf("parseConfig: %v", err)
	}
	return startWith(t, cfg)
}

// startWith runs the program with a configuration the test has changed (shorter time-outs, say).
func startWith(t testing.TB, cfg *config) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stderr: &logBuffer{}}
	result := make(chan error, 1)
	go func() { result <- start(ctx, cfg, p.stderr) }()
	var once sync.Once
	var startErr error
	p.stop = func() error {
		once.Do(func() { cancel(); startErr = <-result })
		return startErr
	}
	t.Cleanup(func() { p.stop() })
	deadline, poll := time.After(10*time.Second), time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for p.url == "" {
		select {
		case <-poll.C:
			if addr := listeningAddr(p.stderr.String()); addr != "" {
				p.url = cfg.scheme() + "://" + addr
			}
		case err := <-result:
			t.Fatalf("start returned before listening: %v\n%s", err, p.stderr)
		case <-deadline:
			t.Fatalf("start did not listen within 10s:\n%s", p.stderr)
		}
	}
	return p
}

// listeningAddr returns the address the start-up record "listening" names, in a text or JSON log,
// or "" before the program has logged it.
func listeningAddr(log string) string {
	match := regexp.MustCompile(`msg"?[=:]"?listening"?[ ,]"?addr"?[=:]"?([^" ]+)`).FindStringSubmatch(log)
	if match == nil {
		return ""
	}
	return match[1]
}

// testCertificate is a certificate for 127.0.0.1, ::1 and localhost, and its key, in PEM files.
type testCertificate struct {
	certFile, keyFile string
	roots             *x509.CertPool // what a client must trust: the certificate itself, or its CA
}

// flags are the flags that serve HTTPS with this certificate.
func (c testCertificate) flags() []string {
	return []string{"-tls-cert", c.certFile, "-tls-key", c.keyFile}
}

// newSelfSignedCertificate makes a certificate signed by its own key, as the openssl command of
// docs/https.md does.
func newSelfSignedCertificate(t testing.TB) testCertificate {
	t.Helper()
	key := newTestKey(t)
	template := certificateTemplate("localhost")
	template.IsCA = true // openssl req -x509 marks it a CA too
	template.KeyUsage |= x509.KeyUsageCertSign
	return writeCertificate(t, template, template, key, key)
}

// newTestKey is an ECDSA P-256 key, as openssl ec_paramgen_curve:P-256 makes.
func newTestKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// certificateTemplate is a certificate for 127.0.0.1, ::1 and localhost, for a day.
func certificateTemplate(name string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
}

// writeCertificate signs template with parentKey and writes it and key as cert.pem and key.pem
// (PKCS #8, as openssl writes keys) in a folder of the test's own. Its roots hold the certificate.
func writeCertificate(t testing.TB, template, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) testCertificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := testCertificate{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"), roots: x509.NewCertPool()}
	c.roots.AddCert(cert)
	for file, block := range map[string]*pem.Block{c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// exchange sends r with client, as a test of a running program does, and returns the answer and its
// whole body.
func exchange(t testing.TB, client *http.Client, r *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := client.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", r.Method, r.URL, err)
	}
	return resp, string(body)
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
func (b *logBuffer) records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var found []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var record map[string]any
		if err := json.Unmarshal([]byte(line), &record); err != nil {
			continue // the token notice, in text
		}
		if record["msg"] == msg {
			found = append(found, record)
		}
	}
	return found
}

// wantStatus fails the test unless the answer has this status.
func wantStatus(t testing.TB, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
}

// wantHeaders fails the test unless the header has each of these fields with exactly this value;
// "" means the field must be absent.
func wantHeaders(t testing.TB, h http.Header, want map[string]string) {
	t.Helper()
	for name, value := range want {
		if got := strings.Join(h.Values(name), ", "); got != value {
			t.Errorf("%s: %q, want %q", name, got, value)
		}
	}
}

// wantBody fails the test unless the body is exactly this.
func wantBody(t testing.TB, w *httptest.ResponseRecorder, body string) {
	t.Helper()
	if got := w.Body.String(); got != body {
		t.Errorf("body\n  %s\nwant\n  %s", got, body)
	}
}

// wantError fails the test unless the answer is the JSON error body of this status and message.
func wantError(t testing.TB, w *httptest.ResponseRecorder, status int, message string) {
	t.Helper()
	wantStatus(t, w, status)
	wantHeaders(t, w.Header(), map[string]string{"Content-Type": "application/json"})
	var body errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %s is not JSON: %v", w.Body, err)
	}
	if body.Error != message {
		t.Errorf("error %q, want %q", body.Error, message)
	}
}

// buildProgram builds the program with go build into a temporary folder, for the tests of what
// only a process shows: its exit status (go run reports a program's status as its own 1), a kill.
// The quick loop, go test -short, builds no program: the test is skipped there.
func buildProgram(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the program")
	}
	binary := filepath.Join(t.TempDir(), "users")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	if out, err := exec.Command(goCommand(t), "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return binary
}

// goCommand is the go command, or the test is skipped where there is none.
func goCommand(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build a program")
	}
	return goTool
}

// newTestServerOn is the service on a store of the test's own (one kept in a file, say), as the
// flags given configure it.
func newTestServerOn(t testing.TB, store *userStore, flags ...string) *testServer {
	t.Helper()
	return serverOn(t, store, testConfig(t, flags...))
}
