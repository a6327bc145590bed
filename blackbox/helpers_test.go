// Package blackbox is the battery: it builds the program once and drives it from outside, as a
// client and an operator would, over real sockets. Each test starts the built binary with flags
// and USERS_TOKENS, learns the address it bound from its start-up record (or, with tokens it
// made, from its token notice), sends it requests, and stops it with a signal (or kills it). Nothing here sees the program's code: a package main
// cannot be imported, and the battery must not need to.
//
// go test -short skips it all: the battery builds the program, waits out time-outs and floods
// the server. go test ./blackbox/ runs it.
//
// Time. The battery waits on the program's real time-outs, and checks each is not too short: a
// lower bound, which load cannot break, since a busy machine only makes things come later. That
// a thing comes soon enough is an upper bound, which load can break: a test checks it only with
//
//	USERS_BATTERY_TIMING=strict go test -count=1 ./blackbox/
//
// on a quiet machine (tookAtMost). Without it, what must come is awaited for up to patience, a
// guard against a hang rather than a bound on time, and the tests prove the rest by the order of
// events: the others were served while the slow clients still held their connections, the stop
// ended with the status of a cut request.
package blackbox

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the program built by TestMain; "" under -short, where every test is skipped.
var binary string

// TestMain builds the program once, from the module's root (the folder above this one).
//
// The battery's slow tests call t.Parallel, and go test runs as many parallel tests at once as
// -parallel says, one per CPU by default. Those tests wait, on the program's time-outs and on the
// disk, far more than they compute, so unless -parallel is given they all (12) run at once, and
// their waits overlap: the battery takes about as long as its slowest test, 15 s and more.
func TestMain(m *testing.M) {
	flag.Parse()
	parallelGiven := false
	flag.Visit(func(f *flag.Flag) { parallelGiven = parallelGiven || f.Name == "test.parallel" })
	if !parallelGiven {
		flag.Set("test.parallel", "32")
	}
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "blackbox")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "users")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	build := exec.Command("go", "build", "-o", binary, ".") // go test puts its own go first on PATH
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// strictTiming says whether the tests check upper bounds on time too: USERS_BATTERY_TIMING=strict.
var strictTiming = os.Getenv("USERS_BATTERY_TIMING") == "strict"

// patience is how long the battery waits for what must come: a program's start or stop, an
// answer, a record in the log. It is a guard against a hang, not a bound on time: a busy machine
// must never reach it.
const patience = time.Minute

// tookAtMost is an upper bound on time: with USERS_BATTERY_TIMING=strict it fails the test if what
// took longer than bound; without, it only logs it, since load alone can make it so.
func tookAtMost(t testing.TB, what string, took, bound time.Duration) {
	t.Helper()
	switch {
	case took <= bound:
	case strictTiming:
		t.Errorf("%s took %v, more than %v", what, took, bound)
	default:
		t.Logf("%s took %v, more than %v: USERS_BATTERY_TIMING=strict would fail this run", what, took, bound)
	}
}

const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
	// testTokens is the USERS_TOKENS the battery starts the program with.
	testTokens = writeToken + ":write," + readToken + ":read"
)

// maxBodyBytes is the limit on a request's body: 1 MiB (docs/api.md, "Request bodies", rule 2).
const maxBodyBytes = 1 << 20

// user is a user as the API sends it.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// userPath is the path of the user with this id.
func userPath(id int64) string { return "/api/users/" + strconv.FormatInt(id, 10) }

// program is the built binary, running in a process of its own.
type program struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string      // http://127.0.0.1:port, or https:// with -tls-cert
	addr   string      // 127.0.0.1:port
	log    *logBuffer  // what it wrote to stderr: the token notice, the log, an error
	stdout *logBuffer  // what it wrote to stdout: -h and -version
	named  chan string // the URL it names as it starts
	exited chan struct{}
	status int // the exit status once exited is closed; -1 if a signal ended it
}

// start runs the program with USERS_TOKENS=tokens and these flags after -addr 127.0.0.1:0, and
// returns once it listens. With tokens, its log is JSON (-log-format json), and it names its URL
// in the "listening" record; with tokens "", USERS_TOKENS is unset, the program makes two tokens,
// logs text, and names its URL in the token notice's curl line. The test's cleanup kills it if
// the test has not stopped it.
func start(t testing.TB, tokens string, flags ...string) *program {
	t.Helper()
	args := append([]string{"-addr", "127.0.0.1:0"}, flags...)
	if tokens != "" {
		args = append(args, "-log-format", "json")
	}
	p := launch(t, tokens, args...)
	select {
	case p.url = <-p.named:
	case <-p.exited:
		t.Fatalf("the program ended with status %d before listening:\n%s", p.status, p.log)
	case <-time.After(patience):
		t.Fatalf("the program did not listen within %v:\n%s", patience, p.log)
	}
	_, p.addr, _ = strings.Cut(p.url, "://")
	return p
}

// launch runs the program with these arguments as they are, and does not wait for anything.
func launch(t testing.TB, tokens string, args ...string) *program {
	t.Helper()
	if binary == "" {
		t.Skip("-short: the battery builds and runs the program")
	}
	p := &program{t: t, cmd: exec.Command(binary, args...), log: &logBuffer{}, stdout: &logBuffer{},
		named: make(chan string, 1), exited: make(chan struct{})}
	p.cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "USERS_TOKENS=") })
	if tokens != "" {
		p.cmd.Env = append(p.cmd.Env, "USERS_TOKENS="+tokens)
	}
	stderr, logged := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, logged
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() { // copies stderr into p.log, and hands on the URL the program names there
		defer close(copied)
		lines := bufio.NewReader(stderr)
		for {
			line, err := lines.ReadString('\n')
			p.log.Write([]byte(line))
			var record struct{ Msg, URL string }
			url := ""
			if json.Unmarshal([]byte(line), &record) == nil && record.Msg == "listening" {
				url = record.URL
			} else if curl, ok := strings.CutPrefix(line, "  curl "); ok { // "... http://127.0.0.1:port/api/users"
				url = strings.TrimSuffix(curl[strings.LastIndexByte(curl, ' ')+1:], "/api/users\n")
			}
			if url != "" {
				select {
				case p.named <- url:
				default: // named once already
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := p.cmd.Wait()
		logged.Close()
		<-copied // so that p.log holds all it wrote once exited is closed
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.status = exit.ExitCode()
		}
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	return p
}

// wait returns the exit status once the program has ended.
func (p *program) wait() int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.status
	case <-time.After(patience):
		p.t.Fatalf("the program still runs %v later:\n%s", patience, p.log)
		return 0
	}
}

// signal sends sig (os.Interrupt or syscall.SIGTERM), as Ctrl-C or a service manager does.
func (p *program) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.t.Fatalf("sending %v: %v", sig, err)
	}
}

// stop sends SIGTERM and returns the exit status.
func (p *program) stop() int {
	p.t.Helper()
	p.signal(syscall.SIGTERM)
	return p.wait()
}

// kill ends the program with SIGKILL: no clean stop, as in a crash. Killing it twice is harmless.
func (p *program) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// logBuffer is what a program writes, which a test may read while it runs.
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

// A client sends one request and returns the status and the body of the answer.
type client func(method, target, body string, header http.Header) (status int, answer []byte)

// Header fields the tests combine with headers.
var (
	asWriter = http.Header{"Authorization": {"Bearer " + writeToken}}
	asReader = http.Header{"Authorization": {"Bearer " + readToken}}
	asJSON   = http.Header{"Content-Type": {"application/json"}}
)

// headers returns the fields of every header given, in one: a field in two of them is sent twice.
func headers(hs ...http.Header) http.Header {
	all := http.Header{}
	for _, h := range hs {
		for name, values := range h {
			for _, value := range values {
				all.Add(name, value)
			}
		}
	}
	return all
}

// newClient sends requests to the program at baseURL, on connections of its own; a request that
// gets no answer fails the test.
func newClient(t testing.TB, baseURL string) client {
	c := &http.Client{Timeout: patience, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	t.Cleanup(c.CloseIdleConnections)
	return via(t, c, baseURL)
}

// via sends requests to the program at baseURL with c, such as an HTTPS client that speaks HTTP/2.
func via(t testing.TB, c *http.Client, baseURL string) client {
	return func(method, target, body string, header http.Header) (int, []byte) {
		request, err := http.NewRequest(method, baseURL+target, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		request.Header = headers(header)
		response, err := c.Do(request)
		if err != nil {
			t.Errorf("%s %s: %v", method, target, err)
			return 0, nil
		}
		defer response.Body.Close()
		answer, _ := io.ReadAll(response.Body)
		return response.StatusCode, answer
	}
}

// create adds a user, and fails the test unless it is created.
func (send client) create(t testing.TB, name, email string) user {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "email": email})
	status, answer := send("POST", "/api/users", string(body), headers(asWriter, asJSON))
	var created user
	if status != http.StatusCreated || json.Unmarshal(answer, &created) != nil {
		t.Fatalf("creating %s: status %d, body %s", email, status, answer)
	}
	return created
}

// seed adds Ann, Bob and Cy, so that hostile requests aim at something real.
func (send client) seed(t testing.TB) (ann, bob, cy user) {
	t.Helper()
	return send.create(t, "Ann", "ann@example.com"), send.create(t, "Bob", "bob@example.com"), send.create(t, "Cy", "cy@example.com")
}

// probeUnchanged fails the test unless the collection is what it was, and a user created now gets
// nextID, as a refused request must not even use up an id. It is more than an assertion: it
// creates that user and deletes it again, so that the collection stays as it was, and returns
// the id the next user will get.
func (send client) probeUnchanged(t testing.TB, before string, nextID int64) int64 {
	t.Helper()
	if after := send.users(t); after != before {
		t.Fatalf("the store changed:\nbefore %s\nafter  %s", before, after)
	}
	probe := send.create(t, "Probe", "probe@example.com")
	if probe.ID != nextID {
		t.Errorf("the next user created got id %d, want %d: a refused request used up an id", probe.ID, nextID)
	}
	if status, answer := send("DELETE", userPath(probe.ID), "", asWriter); status != http.StatusNoContent {
		t.Fatalf("deleting the probe user: status %d, body %s", status, answer)
	}
	return probe.ID + 1
}

// users returns the whole collection as a writer sees it.
func (send client) users(t testing.TB) string {
	t.Helper()
	status, answer := send("GET", "/api/users", "", asWriter)
	if status != http.StatusOK {
		t.Fatalf("GET /api/users: status %d, body %s", status, answer)
	}
	return string(answer)
}

// sendRaw sends bytes as they are on a new connection and reads the first answer, with its body.
func sendRaw(t testing.TB, addr, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(patience))
	go io.WriteString(conn, request) // the server may answer before it has read everything
	response, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(response.Body)
	return response, body
}

// wantErrorBody fails the test unless an answer is the JSON error body, {"error": "..."}, with a
// message that stays short whatever was sent.
func wantErrorBody(t testing.TB, header http.Header, answer []byte) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %.300s", ct, answer)
	}
	var body struct{ Error string }
	if err := json.Unmarshal(answer, &body); err != nil || body.Error == "" {
		t.Fatalf("body %.300q is not the JSON error body", answer)
	}
	if len(body.Error) > 400 {
		t.Fatalf("the error message is %d bytes long: messages must stay short whatever was sent", len(body.Error))
	}
}

// eventually polls until done reports true, and fails the test if it has not within patience.
func eventually(t testing.TB, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, patience)
		}
		<-tick.C
	}
}

// certificate is a certificate for 127.0.0.1, ::1 and localhost, and its key, in PEM files.
type certificate struct {
	certFile, keyFile string
	roots             *x509.CertPool // what a client must trust: the certificate itself, or its CA
}

// flags are the flags that serve HTTPS with this certificate.
func (c certificate) flags() []string {
	return []string{"-tls-cert", c.certFile, "-tls-key", c.keyFile}
}

// selfSigned makes a certificate signed by its own key, as docs/https.md's openssl command does.
func selfSigned(t testing.TB) certificate {
	t.Helper()
	key := newKey(t)
	template := certificateTemplate("localhost")
	template.IsCA = true // openssl req -x509 marks it a CA too
	template.KeyUsage |= x509.KeyUsageCertSign
	return writeCertificate(t, template, template, key, key)
}

// newKey is an ECDSA P-256 key, as openssl ec_paramgen_curve:P-256 makes.
func newKey(t testing.TB) *ecdsa.PrivateKey {
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
func writeCertificate(t testing.TB, template, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := certificate{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"), roots: x509.NewCertPool()}
	c.roots.AddCert(parsed)
	for file, block := range map[string]*pem.Block{c.certFile: {Type: "CERTIFICATE", Bytes: der}, c.keyFile: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// caIssued makes a certificate signed by a CA made for the test, as mkcert does:
// clients trust the CA (mkcert -install puts it where they look), not the certificate.
func caIssued(t testing.TB) certificate {
	t.Helper()
	caKey, key := newKey(t), newKey(t)
	ca := certificateTemplate("users test CA")
	ca.IsCA, ca.KeyUsage = true, x509.KeyUsageCertSign
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issued := writeCertificate(t, certificateTemplate("localhost"), caCert, key, caKey)
	issued.roots = x509.NewCertPool()
	issued.roots.AddCert(caCert)
	return issued
}
