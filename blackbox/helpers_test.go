// Package blackbox is the battery: it builds the program once and drives it from outside, as a
// client and an operator would, over real sockets. Each test starts the built binary with flags
// and USERS_TOKENS, learns the address it bound from its start-up log line, sends it requests,
// and stops it with a signal (or kills it). Nothing here sees the program's code: a package main
// cannot be imported, and the battery must not need to.
//
// go test -short skips it all: the battery builds the program, waits out time-outs and floods
// the server. go test ./blackbox/ runs it.
package blackbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
func TestMain(m *testing.M) {
	flag.Parse()
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

// needsProgram skips a test under -short, where no program was built.
func needsProgram(t testing.TB) {
	t.Helper()
	if binary == "" {
		t.Skip("-short: the battery builds and runs the program")
	}
}

const (
	writeToken = "test-write-token"
	readToken  = "test-read-token"
	// testTokens is the USERS_TOKENS the battery starts the program with.
	testTokens = writeToken + ":write," + readToken + ":read"
)

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
	url    string     // http://127.0.0.1:port, or https:// with -tls-cert
	addr   string     // 127.0.0.1:port
	log    *logBuffer // what it wrote to stderr: the token notice, the log, an error
	stdout *logBuffer // what it wrote to stdout: -h and -version
	exited chan struct{}
	status int // the exit status once exited is closed; -1 if a signal ended it
}

// start runs the program with USERS_TOKENS=tokens ("" leaves it unset: the program makes two) and
// these flags after -addr 127.0.0.1:0, and returns once its start-up log line names the address it
// bound. The test's cleanup kills it if the test has not stopped it.
func start(t testing.TB, tokens string, flags ...string) *program {
	t.Helper()
	p := launch(t, tokens, append([]string{"-addr", "127.0.0.1:0"}, flags...)...)
	listening := regexp.MustCompile(`msg=listening addr=(\S+)|"msg":"listening".*?"addr":"([^"]+)"`)
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond) // the log is read again on each tick
	defer tick.Stop()
	for p.addr == "" {
		select {
		case <-p.exited:
			t.Fatalf("the program ended with status %d before listening:\n%s", p.status, p.log)
		case <-deadline:
			t.Fatalf("the program did not listen within 20 s:\n%s", p.log)
		case <-tick.C:
			if m := listening.FindStringSubmatch(p.log.String()); m != nil {
				p.addr = m[1] + m[2]
			}
		}
	}
	p.url = "http://" + p.addr
	if slices.Contains(flags, "-tls-cert") {
		p.url = "https://" + p.addr
	}
	return p
}

// launch runs the program with these arguments as they are, and does not wait for anything.
func launch(t testing.TB, tokens string, args ...string) *program {
	t.Helper()
	needsProgram(t)
	p := &program{t: t, cmd: exec.Command(binary, args...), log: &logBuffer{}, stdout: &logBuffer{}, exited: make(chan struct{})}
	p.cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "USERS_TOKENS=") })
	if tokens != "" {
		p.cmd.Env = append(p.cmd.Env, "USERS_TOKENS="+tokens)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.status = exit.ExitCode()
		}
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	return p
}

// wait returns the exit status once the program has ended, or fails the test after within.
func (p *program) wait(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.status
	case <-time.After(within):
		p.t.Fatalf("the program still runs %v later:\n%s", within, p.log)
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

// stop sends SIGTERM and returns the exit status, which the program gives within its 10 s bound.
func (p *program) stop() int {
	p.t.Helper()
	p.signal(syscall.SIGTERM)
	return p.wait(15 * time.Second)
}

// kill ends the program with SIGKILL: no clean stop, as in a crash. Killing it twice is harmless.
func (p *program) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// records returns the JSON log records (-log-format json) whose msg is this, each as its fields.
func (p *program) records(msg string) []map[string]any {
	var found []map[string]any
	for _, line := range strings.Split(p.log.String(), "\n") {
		var record map[string]any
		if json.Unmarshal([]byte(line), &record) == nil && record["msg"] == msg {
			found = append(found, record)
		}
	}
	return found
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
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
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
	conn.SetDeadline(time.Now().Add(10 * time.Second))
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

// eventually polls until done reports true, and fails the test if it has not within the time given.
func eventually(t testing.TB, within time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		<-tick.C
	}
}
