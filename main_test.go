package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The rules of main.go (README, "Configuration"): the flags and USERS_TOKENS read by parseConfig,
// and the whole program run through run, by runProgram on a free port, as main runs it. This is
// the one file that runs the program: the other files test the handler (newTestServer) or call a
// function. The exit statuses and signals of the built binary are blackbox/exit_test.go's; here
// run's error says which status main gives: nil is 0, errUsage 2, any other error 1.
//
// The HTTPS tests use the test-only certificate in testdata/ (testdata/test-only-certificates.md).

// program is the whole program, run by runProgram in the test's process.
type program struct {
	url            string     // where it listens, from its start-up record; "" if run returned without listening
	stdout, stderr *logBuffer // stdout: -h and -version; stderr: the token notice and the log
	stop           func() error
}

// runProgram runs the program through run, as main does, with -addr 127.0.0.1:0 (a free port),
// these arguments and this environment, and -log-format json when the environment sets
// USERS_TOKENS (JSON logs need it). It returns once the program names its URL, in the start-up
// record as slog's JSON handler writes it, or without USERS_TOKENS in the token notice's curl
// line, and /healthz answers there. Both are written once the server listens, so no clock is
// needed. If run returns without listening (-h, a mistake, a failed start), runProgram returns
// then, with no url. stop cancels run's context, as SIGINT does, and returns what run returned,
// once the log is copied whole; the test's end calls it too.
func runProgram(t testing.TB, getenv func(string) string, args ...string) *program {
	t.Helper()
	args = append([]string{"users", "-addr", "127.0.0.1:0"}, args...)
	if strings.TrimSpace(getenv("USERS_TOKENS")) != "" {
		args = append(args, "-log-format", "json")
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr, logged := io.Pipe()
	p := &program{stdout: &logBuffer{}, stderr: &logBuffer{}}
	result := make(chan error, 1)
	go func() {
		result <- run(ctx, args, getenv, p.stdout, logged)
		logged.Close()
	}()
	urls := make(chan string, 2) // the program names its URL once, in the record or in the notice
	go func() {                  // copies the log, and hands on the URL the program names
		defer close(urls) // once run has returned and its log is copied
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			fmt.Fprintln(p.stderr, line)
			var record struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &record) == nil && record.Msg == "listening" {
				urls <- record.URL
			} else if curl, ok := strings.CutPrefix(line, "  curl "); ok { // the notice: "... http://host:port/api/users"
				urls <- strings.TrimSuffix(curl[strings.LastIndexByte(curl, ' ')+1:], "/api/users")
			}
		}
		io.Copy(p.stderr, stderr) // what a line too long for the scanner leaves, so that run never blocks
	}()
	var once sync.Once
	var runErr error
	p.stop = func() error {
		once.Do(func() {
			cancel()
			runErr = <-result
			for range urls { // until the log is copied whole
			}
		})
		return runErr
	}
	t.Cleanup(func() { p.stop() })

	url, named := <-urls
	if !named {
		if err := p.stop(); err != nil {
			t.Logf("run returned without listening: %v", err)
		}
		return p
	}
	// The probe sends no token, so it needs no trust in a test's certificate.
	probe := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := probe.Get(url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/healthz: %v %v", url, resp, err)
	}
	resp.Body.Close()
	probe.CloseIdleConnections()
	p.url = url
	return p
}

// noTokens is an environment without USERS_TOKENS: the program makes two tokens and prints them.
func noTokens(string) string { return "" }

// roundTrip sends r with client and returns the answer and its whole body.
func roundTrip(t testing.TB, client *http.Client, r *http.Request) (*http.Response, string) {
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

// The program serves on the address it bound until its context ends (SIGINT or SIGTERM, in main):
// then it stops accepting, logs that it stopped, and run returns nil. Its start-up record names
// the address actually bound, says the users live in memory only, and names the origins
// -cors-origin allows; with USERS_TOKENS set it prints no token notice.
func TestRunServesUntilItsContextEnds(t *testing.T) {
	program := runProgram(t, testEnv, "-cors-origin", "http://localhost:3000,https://app.example")
	r, _ := http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	if resp, body := roundTrip(t, &http.Client{}, r); resp.StatusCode != http.StatusCreated {
		t.Errorf("POST /api/users: %d %s, want 201", resp.StatusCode, body)
	}

	if err := program.stop(); err != nil {
		t.Fatalf("run returned %v once its context ended, want nil (exit status 0)", err)
	}
	addr := strings.TrimPrefix(program.url, "http://")
	if _, port, _ := net.SplitHostPort(addr); port == "0" {
		t.Errorf("the start-up log names %s, not the port it bound", addr)
	}
	listening := program.stderr.records("listening")
	if len(listening) != 1 {
		t.Fatalf("%d start-up records, want one:\n%s", len(listening), program.stderr)
	}
	for name, want := range map[string]any{
		"addr":         addr,
		"storage":      "memory",
		"cors_origins": "http://localhost:3000,https://app.example",
		"version":      version,
	} {
		if got := listening[0][name]; got != want {
			t.Errorf("the start-up record's %s is %v, want %v", name, got, want)
		}
	}
	if strings.Contains(program.stderr.String(), "curl") {
		t.Errorf("a token notice with USERS_TOKENS set:\n%s", program.stderr)
	}
	if len(program.stderr.records("stopped")) != 1 {
		t.Errorf("the log does not say the program stopped:\n%s", program.stderr)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Error("the port still takes connections after run returned")
	}
}

// A stop waits for a request in its -delay as for any request in flight: the request is answered
// when its delay ends, and run returns nil. The test knows that the delayed request is in flight
// when the stop begins without a clock: over HTTP/2 the server reads a connection's frames in
// order, so once a later request on the same connection is answered, the server has begun the
// delayed one.
func TestStopWaitsForARequestInItsDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the request waits out a real -delay of 500ms")
	}
	const certFile = "testdata/test-only-self-signed-cert.pem"
	program := runProgram(t, testEnv, "-tls-cert", certFile, "-tls-key", "testdata/test-only-self-signed-key.pem", "-delay", "500ms")
	roots := x509.NewCertPool()
	if pem, err := os.ReadFile(certFile); err != nil || !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: %v", certFile, err)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	sent := make(chan struct{})
	trace := &httptrace.ClientTrace{WroteHeaders: func() { close(sent) }}
	delayed, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", program.url+"/api/users", nil)
	delayed.Header.Set("Authorization", "Bearer "+readToken)
	answered := make(chan string, 1)
	go func() {
		resp, err := client.Do(delayed)
		if err != nil {
			answered <- err.Error()
			return
		}
		resp.Body.Close()
		answered <- resp.Status
	}()
	<-sent
	reused := false
	trace = &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	health, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", program.url+"/healthz", nil)
	if resp, body := roundTrip(t, client, health); resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || !reused {
		t.Fatalf("GET /healthz: %d %s over %s, on the delayed request's connection: %v; want 200 there over HTTP/2",
			resp.StatusCode, body, resp.Proto, reused)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- program.stop() }()
	if status := <-answered; status != "200 OK" {
		t.Errorf("the request in its delay got %s, want 200 OK", status)
	}
	if err := <-stopped; err != nil {
		t.Errorf("run returned %v, want nil", err)
	}
	// The log says when the stop began and when the delayed request was answered.
	stopping, answers := program.stderr.records("stopping"), program.stderr.records("request")
	if len(stopping) != 1 {
		t.Fatalf("%d records of the stop, want one:\n%s", len(stopping), program.stderr)
	}
	began, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(stopping[0]["time"]))
	for _, answer := range answers {
		if answered, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(answer["time"])); answer["path"] == "/api/users" && answered.Before(began) {
			t.Errorf("the delayed request was answered at %s, before the stop began at %s", answered, began)
		}
	}
}

// A mistake in the flags or USERS_TOKENS is found before the program does anything: a usage error
// (exit status 2) that names the problem, and advice where the input says what to write instead,
// which printError prints on a line of its own; never a token. An origin for -cors-origin not
// written as a browser writes it in Origin (RFC 6454 §6.2) would never match, so it is refused
// too, showing the form to write. (TestFailedStartPrintsNoToken runs a mistake through run.)
func TestUsageMistakesStopTheStart(t *testing.T) {
	const tokens = "s3cr3t-w:write"
	tests := []struct {
		name     string
		tokens   string // USERS_TOKENS
		flags    []string
		mentions []string // in what printError prints
	}{
		{"a malformed USERS_TOKENS", "s3cr3t-w:admin", nil, []string{"USERS_TOKENS", "entry 1", "TOKEN:ROLE"}},
		{"JSON logs without USERS_TOKENS", "", []string{"-log-format", "json"}, []string{"-log-format json", "set USERS_TOKENS"}},
		{"an unknown log format", tokens, []string{"-log-format", "xml"}, []string{"-log-format", `"xml"`}},
		{"a delay above 10s", tokens, []string{"-delay", "10.001s"}, []string{"-delay 10.001s"}},
		{"a negative delay", tokens, []string{"-delay", "-1ns"}, []string{"-delay -1ns"}},
		{"a delay that is not a duration", tokens, []string{"-delay", "soon"}, []string{"-delay soon"}},
		{"a delay without its unit", tokens, []string{"-delay", "500"}, []string{"-delay 500", "write -delay 500ms"}},
		{"an unknown flag", tokens, []string{"-port", "8080"}, []string{"-port", "-h"}},
		{"an argument that is not a flag", tokens, []string{"serve"}, []string{`"serve"`}},
		{"an address without a port", tokens, []string{"-addr", "localhost"}, []string{"-addr", `"localhost"`}},
		{"a port out of range", tokens, []string{"-addr", "127.0.0.1:65536"}, []string{"-addr", "65536"}},
		{"an origin with a leading zero in its port", tokens, []string{"-cors-origin", "http://localhost:03000"}, []string{"-cors-origin", "write it http://localhost:3000"}},
		{"an origin in capitals", tokens, []string{"-cors-origin", "HTTP://App.Example"}, []string{"-cors-origin", "write it http://app.example"}},
		{"an origin with a trailing slash", tokens, []string{"-cors-origin", "http://app.example/"}, []string{"-cors-origin", "write it http://app.example\n"}},
		{"an origin with its default port", tokens, []string{"-cors-origin", "https://app.example:443"}, []string{"-cors-origin", "write it https://app.example\n"}},
		{"an origin with a path", tokens, []string{"-cors-origin", "https://app.example/app"}, []string{"-cors-origin", `"https://app.example/app"`}},
		{"an origin of another scheme", tokens, []string{"-cors-origin", "ftp://app.example"}, []string{"-cors-origin", `"ftp://app.example"`}},
		{"an empty origin in a list", tokens, []string{"-cors-origin", "https://app.example,"}, []string{"-cors-origin", `""`}},
		{"* in a list", tokens, []string{"-cors-origin", "*,https://app.example"}, []string{"-cors-origin", `"*"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout strings.Builder
			_, err := parseConfig(append([]string{"users"}, tt.flags...), func(name string) string {
				if name == "USERS_TOKENS" {
					return tt.tokens
				}
				return ""
			}, &stdout)
			if !errors.Is(err, errUsage) {
				t.Fatalf("parseConfig returned %v, want a usage error (exit status 2)", err)
			}
			var printed strings.Builder
			printError(&printed, err)
			for _, m := range tt.mentions {
				if !strings.Contains(printed.String(), m) {
					t.Errorf("what is printed, %q, does not say %q", printed.String(), m)
				}
			}
			if strings.Contains(printed.String(), "s3cr3t") || stdout.Len() != 0 {
				t.Errorf("want no token shown, and nothing on stdout: %q, stdout %q", printed.String(), stdout.String())
			}
		})
	}
}

// Good flags are taken, at the ends of their ranges too; the default address is loopback, so a
// demo never exposes itself.
func TestGoodFlagsAreTaken(t *testing.T) {
	for _, flags := range [][]string{
		nil,
		{"-delay", "10s"},
		{"-delay", "0", "-log-format", "json"},
		{"-addr", ":0"},
		{"-cors-origin", "*"},
		{"-cors-origin", "http://localhost:3000, https://app.example:8443,http://[::1]:3000"},
		{"-sample-data"},
	} {
		if _, err := parseConfig(append([]string{"users"}, flags...), testEnv, io.Discard); err != nil {
			t.Errorf("%q: %v", flags, err)
		}
	}
	cfg, err := parseConfig([]string{"users"}, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(cfg.addr); host != "localhost" {
		t.Errorf("the default address is %q, want one on loopback", cfg.addr)
	}
}

// -h prints the usage, once, naming every flag and USERS_TOKENS, and -version the version,
// whatever the other flags say, both on stdout; run returns nil (exit status 0) without serving.
func TestHelpAndVersionExitZero(t *testing.T) {
	usage := []string{"Usage", "-addr", "-data", "-log-format", "-cors-origin", "-delay", "-sample-data", "-tls-cert", "-tls-key", "-version", "USERS_TOKENS"}
	for _, tt := range []struct {
		args     string
		mentions []string
	}{
		{"-h", usage},
		{"-help", usage},
		{"--help", usage},
		{"-version", []string{version}},
		{"-version -delay 1h -cors-origin HTTP://x", []string{version}},
	} {
		t.Run(tt.args, func(t *testing.T) {
			program := runProgram(t, testEnv, strings.Fields(tt.args)...)
			if err := program.stop(); err != nil || program.url != "" {
				t.Fatalf("run returned %v, serving at %q; want nil (exit status 0) without serving", err, program.url)
			}
			stdout := program.stdout.String()
			for _, m := range tt.mentions {
				if !strings.Contains(stdout, m) {
					t.Errorf("stdout does not show %s:\n%s", m, stdout)
				}
			}
			if strings.Count(stdout, "Usage") > 1 || program.stderr.String() != "" {
				t.Errorf("stdout %q, stderr %q: want the usage once, and nothing on stderr", stdout, program.stderr)
			}
		})
	}
}

// A start that fails prints nothing but its error: a usage mistake (exit status 2) is found
// before the program does anything, and a failure after the configuration was read (an address
// in use, a data file that cannot be read; exit status 1) comes before the token notice, since
// the store is opened and the address bound first: no generated token and no curl line is shown
// for a server that never ran. A port in use is met with advice that names another port to try.
func TestFailedStartPrintsNoToken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	next, _ := strconv.Atoi(port)
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.json")
	if err := os.WriteFile(damaged, []byte("{\n  \"users\": [}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		flags  []string
		status int      // the exit status main gives for run's error: 2 for errUsage, else 1
		says   []string // in what printError prints
	}{
		{"a delay that is not a duration", []string{"-delay", "soon"}, 2, []string{"-delay soon"}},
		{"-tls-cert without -tls-key", []string{"-tls-cert", "testdata/test-only-self-signed-cert.pem"}, 2, []string{"without -tls-key"}},
		{"an address in use", []string{"-addr", taken.Addr().String()}, 1,
			[]string{taken.Addr().String(), fmt.Sprintf("choose another port, such as -addr 127.0.0.1:%d", next+1)}},
		{"-data in a folder that does not exist", []string{"-data", filepath.Join(dir, "no-such-folder", "users.json")}, 1, []string{"no-such-folder"}},
		{"-data a file that is not JSON", []string{"-data", damaged}, 1, []string{damaged}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, noTokens, tt.flags...)
			err := program.stop()
			if err == nil || errors.Is(err, errUsage) != (tt.status == 2) || program.url != "" {
				t.Fatalf("run returned %v, serving at %q; want an error of exit status %d", err, program.url, tt.status)
			}
			var printed strings.Builder
			printError(&printed, err)
			for _, s := range tt.says {
				if !strings.Contains(printed.String(), s) {
					t.Errorf("what is printed, %q, does not say %q", printed.String(), s)
				}
			}
			if out := program.stdout.String() + program.stderr.String(); out != "" {
				t.Errorf("a failed start printed:\n%s", out)
			}
		})
	}
}

// Without USERS_TOKENS (unset, or only white space) the program makes a write and a read token of
// at least 128 random bits and shows them once, in plain lines before any log record, with a curl
// line that works as pasted in a POSIX shell. That notice is the only place a token is ever
// printed. With a self-signed certificate the curl line trusts it with --cacert, naming it by its
// absolute path (README, "HTTPS"), so a client that trusts that certificate alone (never curl -k)
// reaches the server.
func TestGeneratedTokensAreShownOnceWithACurlLineThatWorks(t *testing.T) {
	const certFile, keyFile = "testdata/test-only-self-signed-cert.pem", "testdata/test-only-self-signed-key.pem"
	absCert, err := filepath.Abs(certFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		getenv func(string) string
		flags  []string
		cacert string // what the curl line's --cacert names, if anything
	}{
		{"USERS_TOKENS unset", noTokens, nil, ""},
		{"USERS_TOKENS only white space", func(string) string { return " \t " }, nil, ""},
		{"a self-signed certificate", noTokens, []string{"-tls-cert", certFile, "-tls-key", keyFile}, absCert},
	} {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, tt.getenv, tt.flags...)
			stderr := program.stderr.String()
			notice, _, _ := strings.Cut(stderr, "\n\n") // the notice ends with an empty line
			if !strings.HasPrefix(notice, "No USERS_TOKENS set") {
				t.Fatalf("stderr does not begin with the token notice:\n%s", stderr)
			}
			write := regexp.MustCompile(`write token: +(\S+)`).FindStringSubmatch(notice)
			read := regexp.MustCompile(`read token: +(\S+)`).FindStringSubmatch(notice)
			curl := regexp.MustCompile(`(?m)^  curl (?:--cacert '([^']+)' )?-H '(Authorization: [^']+)' (\S+)$`).FindStringSubmatch(notice)
			if write == nil || read == nil || curl == nil {
				t.Fatalf("no tokens or curl line in the notice:\n%s", notice)
			}
			writeSecret, readSecret := write[1], read[1]
			if len(writeSecret) < 22 || len(readSecret) < 22 || writeSecret == readSecret { // 128 bits are 22 characters of base64, 32 of hex
				t.Errorf("tokens %q and %q: want two different ones, each long enough for 128 random bits", writeSecret, readSecret)
			}
			if curl[1] != tt.cacert {
				t.Errorf("the curl line's --cacert names %q, want %q", curl[1], tt.cacert)
			}

			client := &http.Client{} // what curl trusts: the system's CAs, or the one --cacert names
			if curl[1] != "" {
				roots := x509.NewCertPool()
				if pem, err := os.ReadFile(curl[1]); err != nil || !roots.AppendCertsFromPEM(pem) {
					t.Fatalf("--cacert %s: %v", curl[1], err)
				}
				client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
			}
			r, _ := http.NewRequest("GET", curl[3], nil) // the curl line, as curl would send it
			name, value, _ := strings.Cut(curl[2], ": ")
			r.Header.Set(name, value)
			if resp, body := roundTrip(t, client, r); resp.StatusCode != http.StatusOK || curl[3] != program.url+"/api/users" {
				t.Errorf("the curl line, GET %s, gets %d %s; want the list at %s/api/users, 200", curl[3], resp.StatusCode, body, program.url)
			}
			for _, token := range []struct {
				role, secret string
				want         int
			}{{"write", writeSecret, http.StatusCreated}, {"read", readSecret, http.StatusForbidden}} {
				r, _ := http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
				r.Header.Set("Authorization", "Bearer "+token.secret)
				r.Header.Set("Content-Type", "application/json")
				if resp, body := roundTrip(t, client, r); resp.StatusCode != token.want {
					t.Errorf("POST with the %s token: %d %s, want %d", token.role, resp.StatusCode, body, token.want)
				}
			}

			program.stop()
			_, log, _ := strings.Cut(program.stderr.String(), "\n\n") // the log after the notice, now whole
			for _, secret := range []string{writeSecret, readSecret} {
				if strings.Contains(log, secret) {
					t.Errorf("the log shows a token:\n%s", log)
				}
			}
		})
	}
}

// With -tls-cert and -tls-key the program speaks only HTTPS (README, "HTTPS"; RFC 6750 §5.3 asks
// TLS for bearer tokens): its start-up record names an https:// URL; ALPN picks HTTP/2 for a client
// that offers it; TLS older than 1.2 (RFC 8996) is refused, and so is plain HTTP to its port.
func TestRunWithACertificateServesOnlyHTTPS(t *testing.T) {
	const certFile = "testdata/test-only-self-signed-cert.pem"
	program := runProgram(t, testEnv, "-tls-cert", certFile, "-tls-key", "testdata/test-only-self-signed-key.pem")
	addr, isHTTPS := strings.CutPrefix(program.url, "https://")
	if !isHTTPS {
		t.Fatalf("the start-up record names %s, want an https:// URL", program.url)
	}
	roots := x509.NewCertPool()
	if pem, err := os.ReadFile(certFile); err != nil || !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: %v", certFile, err)
	}

	transport := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots}, // trust this certificate only, as curl --cacert does
		ForceAttemptHTTP2: true,                        // a Transport with its own TLS settings needs it to offer h2
	}
	defer transport.CloseIdleConnections()
	r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	resp, body := roundTrip(t, &http.Client{Transport: transport}, r)
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.ProtoMajor != 2 {
		t.Errorf("GET /api/users: %d %s over %s; want 200 over TLS 1.2 or newer and HTTP/2", resp.StatusCode, body, resp.Proto)
	}

	old := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	if conn, err := tls.Dial("tcp", addr, old); err == nil {
		conn.Close()
		t.Error("a client offering TLS 1.1 at most completed a handshake")
	}

	plain, _ := http.NewRequest("GET", "http://"+addr+"/healthz", nil)
	if resp, _ := roundTrip(t, &http.Client{}, plain); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS port: %d, want 400", resp.StatusCode)
	}
}

// Without TLS on an address other machines can reach, the start-up log warns once that tokens
// travel in clear text (RFC 6750 §5.3). On loopback, or with TLS, it does not. (The test sends
// nothing to any of these addresses but runProgram's /healthz.)
func TestClearTextWarningOffLoopbackOnly(t *testing.T) {
	https := []string{"-tls-cert", "testdata/test-only-self-signed-cert.pem", "-tls-key", "testdata/test-only-self-signed-key.pem"}
	tests := []struct {
		name  string
		flags []string
		warns bool
	}{
		{"every interface, plain HTTP", []string{"-addr", "0.0.0.0:0"}, true},
		{"127.0.0.1, plain HTTP", []string{"-addr", "127.0.0.1:0"}, false},
		{"localhost, plain HTTP", []string{"-addr", "localhost:0"}, false},
		{"every interface, HTTPS", append([]string{"-addr", "0.0.0.0:0"}, https...), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, testEnv, tt.flags...)
			if err := program.stop(); err != nil {
				t.Fatal(err)
			}
			warnings := program.stderr.records("bearer tokens in clear text")
			switch {
			case tt.warns && (len(warnings) != 1 || warnings[0]["level"] != "WARN"):
				t.Errorf("%d warnings, want one WARN record:\n%s", len(warnings), program.stderr)
			case !tt.warns && len(warnings) != 0:
				t.Errorf("a warning, want none:\n%s", program.stderr)
			}
		})
	}
}

// The server's time-outs bound how long any client may hold a connection (a zero http.Server has
// none: README, "What it withstands"), whatever -delay says: the write time-out covers the delay
// and 10 s more, and a stop waits for the requests in flight 10 s more than -delay. The header
// size is bounded too, below net/http's default of 1 MiB (TestHeaderSizeIsBounded sends more).
func TestServerTimeoutsBoundEveryClient(t *testing.T) {
	for _, delay := range []time.Duration{0, 300 * time.Millisecond, 10 * time.Second} {
		cfg, err := parseConfig([]string{"users", "-delay", delay.String()}, testEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		server := newHTTPServer(http.NotFoundHandler(), cfg.timeouts, newLogger("text", io.Discard))
		if server.ReadHeaderTimeout <= 0 || server.ReadTimeout <= 0 || server.IdleTimeout <= 0 {
			t.Errorf("-delay %s: read-header %s, read %s, idle %s: each must be set", delay, server.ReadHeaderTimeout, server.ReadTimeout, server.IdleTimeout)
		}
		if server.WriteTimeout < delay+10*time.Second {
			t.Errorf("-delay %s: write time-out %s, want at least 10s more than the delay", delay, server.WriteTimeout)
		}
		if server.MaxHeaderBytes <= 0 || server.MaxHeaderBytes >= http.DefaultMaxHeaderBytes {
			t.Errorf("-delay %s: MaxHeaderBytes %d, want a bound below net/http's default of 1 MiB", delay, server.MaxHeaderBytes)
		}
		if cfg.timeouts.shutdown != delay+10*time.Second {
			t.Errorf("-delay %s: a stop waits %s, want 10s more than the delay", delay, cfg.timeouts.shutdown)
		}
	}
}

// Header size is bounded: net/http itself answers 431 for headers over the limit that
// newHTTPServer sets (README, "What it withstands"), far below its own default of 1 MiB.
// (TestServerTimeoutsBoundEveryClient checks the limit in -short.)
func TestHeaderSizeIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: net/http waits 500ms before it closes the connection it refused")
	}
	program := runProgram(t, testEnv)
	r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("X-Padding", strings.Repeat("x", 256<<10))
	if resp, _ := roundTrip(t, &http.Client{}, r); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a request with 256 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

// -sample-data adds 12 example users to a store that never had one, and to no other: a data file
// whose users were all deleted (its next_id is past 1) stays empty. The start-up record names the
// storage, and counts the users.
func TestSampleDataFillsOnlyAStoreThatNeverHadAUser(t *testing.T) {
	emptied := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(emptied, []byte(`{"next_id": 2, "users": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		flags   []string
		users   int
		storage string
	}{
		{"a store in memory", []string{"-sample-data"}, 12, "memory"},
		{"a data file whose users were deleted", []string{"-sample-data", "-data", emptied}, 0, "file " + emptied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, testEnv, tt.flags...)
			r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
			r.Header.Set("Authorization", "Bearer "+readToken)
			resp, body := roundTrip(t, &http.Client{}, r)
			var list struct{ Total int }
			if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != http.StatusOK || list.Total != tt.users {
				t.Errorf("GET /api/users: %d %s, want %d users", resp.StatusCode, body, tt.users)
			}
			listening := program.stderr.records("listening")
			if len(listening) != 1 || listening[0]["storage"] != tt.storage || listening[0]["users"] != float64(tt.users) {
				t.Errorf("the start-up records are %v, want one with storage %q and users %d", listening, tt.storage, tt.users)
			}
		})
	}
}
