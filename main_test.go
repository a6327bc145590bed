package main

import (
	"bufio"
	"context"
	"crypto/tls"
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
// and the whole program run through run, by runProgram on a free port. The exit statuses and
// signals of the built binary are blackbox/exit_test.go's; here run's error says which status
// main gives: nil is 0, errUsage 2, any other error 1.

// program is the whole program, run by runProgram in the test's process.
type program struct {
	url    string     // where it listens, from its start-up record
	stderr *logBuffer // the token notice and the log
	stop   func() error
}

// runProgram runs the program through run, as main does, with -addr 127.0.0.1:0 (a free port),
// these arguments and this environment, and -log-format json when the environment sets
// USERS_TOKENS (JSON logs need it). It returns once the program names its URL, in the start-up
// record as slog's JSON handler writes it, or without USERS_TOKENS in the token notice's curl
// line, and /healthz answers there. Both are written once the server listens, so no clock is
// needed. stop cancels run's context, as SIGINT does, and returns what run returned; the test's
// end calls it too.
func runProgram(t testing.TB, getenv func(string) string, args ...string) *program {
	t.Helper()
	args = append([]string{"users", "-addr", "127.0.0.1:0"}, args...)
	if strings.TrimSpace(getenv("USERS_TOKENS")) != "" {
		args = append(args, "-log-format", "json")
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr, logged := io.Pipe()
	p := &program{stderr: &logBuffer{}}
	result := make(chan error, 1)
	go func() {
		result <- run(ctx, args, getenv, io.Discard, logged)
		logged.Close()
	}()
	urls := make(chan string, 2) // the program names its URL once, in the record or in the notice
	go func() {                  // copies the log, and hands on the URL the program names
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
		close(urls)
	}()
	var once sync.Once
	var runErr error
	p.stop = func() error {
		once.Do(func() { cancel(); runErr = <-result })
		return runErr
	}
	t.Cleanup(func() { p.stop() })

	url, named := <-urls
	if !named {
		t.Fatalf("run returned before listening: %v\n%s", p.stop(), p.stderr)
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

// The program serves on the address it bound until its context ends (SIGINT or SIGTERM, in main):
// then it stops accepting, logs that it stopped, and run returns nil. Its start-up log names the
// address actually bound and says the users live in memory only; with USERS_TOKENS set it prints
// no token notice.
func TestRunServesUntilItsContextEnds(t *testing.T) {
	program := runProgram(t, testEnv, "-log-format", "json")
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
	if listening := program.stderr.records("listening"); len(listening) != 1 {
		t.Errorf("%d start-up records, want one:\n%s", len(listening), program.stderr)
	} else if listening[0]["storage"] != "memory" || listening[0]["version"] != version {
		t.Errorf("the start-up record is %v, want it to say memory, and the version", listening[0])
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
	cert := newCertificate(t, t.TempDir(), false)
	program := runProgram(t, testEnv, append(cert.flags(), "-delay", "500ms", "-log-format", "json")...)
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.roots}, ForceAttemptHTTP2: true}
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
	log := program.stderr.String()
	if stopping, answer := strings.Index(log, `"msg":"stopping`), strings.Index(log, `"path":"/api/users"`); stopping < 0 || stopping > answer {
		t.Errorf("the delayed request was not answered after the stop began:\n%s", log)
	}
}

// A mistake in the flags or USERS_TOKENS is found before the program does anything: a usage error
// (exit status 2) that names the problem, and advice where the input says what to write instead,
// which printError prints on a line of its own; never a token. An origin for -cors-origin not
// written as a browser writes it in Origin (RFC 6454 §6.2) would never match, so it is refused
// too, showing the form to write.
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
// whatever the other flags say, both on stdout; run returns nil (exit status 0).
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
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr strings.Builder
			if err := run(ctx, append([]string{"users"}, strings.Fields(tt.args)...), testEnv, &stdout, &stderr); err != nil {
				t.Fatalf("run returned %v, want nil (exit status 0)", err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(stdout.String(), m) {
					t.Errorf("stdout does not show %s:\n%s", m, stdout.String())
				}
			}
			if strings.Count(stdout.String(), "Usage") > 1 || stderr.Len() != 0 {
				t.Errorf("stdout %q, stderr %q: want the usage once, and nothing on stderr", stdout.String(), stderr.String())
			}
		})
	}
}

// A start that fails after the configuration was read (an address in use, a data file that
// cannot be read) is an error of exit status 1, and prints nothing before it: the store is opened
// and the address bound before the token notice, so no generated token and no curl line is shown
// for a server that never ran.
func TestFailedStartPrintsNoToken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.json")
	if err := os.WriteFile(damaged, []byte("{\n  \"users\": [}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		flags    []string
		mentions string
	}{
		{"an address in use", []string{"-addr", taken.Addr().String()}, taken.Addr().String()},
		{"-data in a folder that does not exist", []string{"-data", filepath.Join(dir, "no-such-folder", "users.json")}, "no-such-folder"},
		{"-data a file that is not JSON", []string{"-data", damaged}, damaged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr strings.Builder
			err := run(ctx, append([]string{"users", "-addr", "127.0.0.1:0"}, tt.flags...), noTokens, &stdout, &stderr)
			if err == nil || errors.Is(err, errUsage) {
				t.Fatalf("run returned %v, want an error of exit status 1", err)
			}
			if !strings.Contains(err.Error(), tt.mentions) {
				t.Errorf("the error %q does not name %s", err, tt.mentions)
			}
			if stdout.Len()+stderr.Len() != 0 {
				t.Errorf("a failed start printed:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
}

// Without USERS_TOKENS (unset, or only white space) the program makes a write and a read token of
// at least 128 random bits and shows them once, in plain lines before any log record, with a curl
// line that works as pasted. That notice is the only place a token is ever printed.
func TestGeneratedTokensAreShownOnceWithACurlLineThatWorks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		getenv func(string) string
	}{
		{"USERS_TOKENS unset", noTokens},
		{"USERS_TOKENS only white space", func(string) string { return " \t " }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, tt.getenv)
			notice := program.stderr.String()
			write := regexp.MustCompile(`write token: +(\S+)`).FindStringSubmatch(notice)
			read := regexp.MustCompile(`read token: +(\S+)`).FindStringSubmatch(notice)
			curl := regexp.MustCompile(`(?m)^ *curl -H '(Authorization: [^']+)' (http://\S+)$`).FindStringSubmatch(notice)
			if write == nil || read == nil || curl == nil {
				t.Fatalf("no tokens or curl line in the notice:\n%s", notice)
			}
			firstRecord := strings.Index(notice, "time=")
			if firstRecord < strings.Index(notice, curl[0]) {
				t.Errorf("a log record comes before the notice:\n%s", notice)
			}
			writeSecret, readSecret := write[1], read[1]
			if len(writeSecret) < 22 || len(readSecret) < 22 || writeSecret == readSecret { // 128 bits are 22 characters of base64, 32 of hex
				t.Errorf("tokens %q and %q: want two different ones, each long enough for 128 random bits", writeSecret, readSecret)
			}

			r, _ := http.NewRequest("GET", curl[2], nil) // the curl line, as curl would send it
			name, value, _ := strings.Cut(curl[1], ": ")
			r.Header.Set(name, value)
			if resp, body := roundTrip(t, &http.Client{}, r); resp.StatusCode != http.StatusOK || !strings.HasSuffix(curl[2], "/api/users") {
				t.Errorf("the curl line, GET %s, gets %d %s; want the list, 200", curl[2], resp.StatusCode, body)
			}
			for _, token := range []struct {
				role, secret string
				want         int
			}{{"write", writeSecret, http.StatusCreated}, {"read", readSecret, http.StatusForbidden}} {
				r, _ := http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
				r.Header.Set("Authorization", "Bearer "+token.secret)
				r.Header.Set("Content-Type", "application/json")
				if resp, body := roundTrip(t, &http.Client{}, r); resp.StatusCode != token.want {
					t.Errorf("POST with the %s token: %d %s, want %d", token.role, resp.StatusCode, body, token.want)
				}
			}

			program.stop()
			for _, secret := range []string{writeSecret, readSecret} {
				if strings.Contains(program.stderr.String()[firstRecord:], secret) {
					t.Errorf("a log record shows a token:\n%s", program.stderr)
				}
			}
		})
	}
}

// The server's time-outs bound how long any client may hold a connection (a zero http.Server has
// none: README, "What it withstands"), whatever -delay says: the write time-out covers the delay
// and 10 s more, and a stop waits for the requests in flight 10 s more than -delay.
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
		if cfg.timeouts.shutdown != delay+10*time.Second {
			t.Errorf("-delay %s: a stop waits %s, want 10s more than the delay", delay, cfg.timeouts.shutdown)
		}
	}
}

// Header size is bounded: net/http itself answers 431 for headers over the limit that
// newHTTPServer sets (README, "What it withstands"), far below its own default of 1 MiB.
func TestHeaderSizeIsBounded(t *testing.T) {
	program := runProgram(t, testEnv)
	r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("X-Padding", strings.Repeat("x", 256<<10))
	if resp, _ := roundTrip(t, &http.Client{}, r); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a request with 256 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

// -sample-data adds 12 example users to a store that never had one, and to no other: a data file
// whose users were all deleted (its next_id is past 1) stays empty. The start-up log names the
// data file.
func TestSampleDataFillsOnlyAStoreThatNeverHadAUser(t *testing.T) {
	emptied := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(emptied, []byte(`{"next_id": 2, "users": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags []string
		users int
	}{
		{"a store in memory", []string{"-sample-data"}, 12},
		{"a data file whose users were deleted", []string{"-sample-data", "-data", emptied}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, testEnv, append(tt.flags, "-log-format", "json")...)
			r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
			r.Header.Set("Authorization", "Bearer "+readToken)
			resp, body := roundTrip(t, &http.Client{}, r)
			var list struct{ Total int }
			if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != http.StatusOK || list.Total != tt.users {
				t.Errorf("GET /api/users: %d %s, want %d users", resp.StatusCode, body, tt.users)
			}
			if listening := program.stderr.records("listening"); len(tt.flags) > 1 && (len(listening) != 1 || !strings.Contains(fmt.Sprint(listening[0]["storage"]), emptied)) {
				t.Errorf("the start-up log does not name the data file:\n%s", program.stderr)
			}
		})
	}
}

// A start on a port another program listens on stops with exit status 1, and advice that names
// another port to try.
func TestAPortInUseSuggestsAnother(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, port, _ := net.SplitHostPort(taken.Addr().String())
	err = run(context.Background(), []string{"users", "-addr", taken.Addr().String()}, testEnv, io.Discard, io.Discard)
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("run returned %v, want an error of exit status 1", err)
	}
	var printed strings.Builder
	printError(&printed, err)
	next, _ := strconv.Atoi(port)
	if want := fmt.Sprintf("choose another port, such as -addr 127.0.0.1:%d", next+1); !strings.Contains(printed.String(), want) {
		t.Errorf("what is printed, %q, does not say %q", printed.String(), want)
	}
}
