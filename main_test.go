package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests start the whole program through run, as main does, on a free port (README,
// "Configuration").

// runningService is the program started by run.
type runningService struct {
	url    string   // http://127.0.0.1:PORT, the address the start-up log named
	stderr *syncLog // the notice and the log
	stop   func() error
}

// runClient makes a fresh connection for every request, so none outlives the server it went to.
var runClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}

var listeningAddr = regexp.MustCompile(`msg=listening addr=(\S+)|"msg":"listening","addr":"([^"]+)"`)

// startService runs the program with these arguments (after -addr 127.0.0.1:0) and environment,
// finds the address it bound in its log, and waits until /healthz answers. stop ends its context,
// as SIGINT or SIGTERM would, and returns what run returned; the test's cleanup calls it too.
func startService(t *testing.T, env map[string]string, args ...string) *runningService {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncLog{}
	result := make(chan error, 1)
	getenv := func(name string) string { return env[name] }
	go func() {
		result <- run(ctx, append([]string{"users", "-addr", "127.0.0.1:0"}, args...), getenv, io.Discard, stderr)
	}()
	var once sync.Once
	var runErr error
	s := &runningService{stderr: stderr, stop: func() error {
		once.Do(func() { cancel(); runErr = <-result })
		return runErr
	}}
	t.Cleanup(func() { s.stop() })

	deadline := time.Now().Add(10 * time.Second)
	for s.url == "" {
		if m := listeningAddr.FindStringSubmatch(stderr.String()); m != nil {
			s.url = "http://" + m[1] + m[2]
			break
		}
		select {
		case err := <-result:
			t.Fatalf("run returned before listening: %v\n%s", err, stderr)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening log line within 10s:\n%s", stderr)
		}
	}
	for {
		resp, err := runClient.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz did not answer 200 within 10s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// send makes a request with a bearer token ("" for none) and returns the status and body.
func (s *runningService) send(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	var headers []string
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	if body != "" {
		headers = append(headers, "Content-Type", "application/json")
	}
	resp, answer := sendTo(t, runClient, method, s.url+path, body, headers...)
	return resp.StatusCode, string(answer)
}

// canceled is a context that has already ended: a run that wrongly starts to serve stops at once
// and returns nil, instead of hanging the test.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

var someTokens = map[string]string{"USERS_TOKENS": "w-token:write,r-token:read"}

func TestRunServesOnTheAddressItLogsUntilItsContextEnds(t *testing.T) {
	s := startService(t, someTokens)
	if status, body := s.send(t, "GET", "/api/users", "r-token", ""); status != 200 || body != `{"data":[],"total":0}` {
		t.Errorf("GET /api/users: %d %s", status, body)
	}
	if status, body := s.send(t, "POST", "/api/users", "w-token", userJSON("Ann", "ann@example.com")); status != 201 {
		t.Errorf("POST /api/users: %d %s", status, body)
	}
	if status, _ := s.send(t, "POST", "/api/users", "r-token", userJSON("Bob", "bob@example.com")); status != 403 {
		t.Errorf("POST with the read token: %d, want 403", status)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("run returned %v after its context ended, want nil", err)
	}
	logged := s.stderr.String()
	for _, want := range []string{"memory only", "method=POST path=/api/users status=201", "stopped"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the log does not show %q:\n%s", want, logged)
		}
	}
	if resp, err := runClient.Get(s.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("the server still answers after run returned")
	}
}

func TestRunTrimsWhiteSpaceAroundTokenEntries(t *testing.T) {
	s := startService(t, map[string]string{"USERS_TOKENS": " w-token:write ,\tr-token:read\n"})
	for _, token := range []string{"w-token", "r-token"} {
		if status, _ := s.send(t, "GET", "/api/users", token, ""); status != 200 {
			t.Errorf("token %s: %d, want 200", token, status)
		}
	}
}

// On SIGINT or SIGTERM the server stops accepting but lets the requests in flight finish: here a
// POST whose body is still arriving when the context ends.
func TestRunFinishesRequestsInFlightWhenItStops(t *testing.T) {
	s := startService(t, someTokens)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := userJSON("Ann", "ann@example.com")
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer w-token\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
	answers := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if proceed, err := http.ReadResponse(answers, nil); err != nil || proceed.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, which says the handler reads the body: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.stderr.String(), "stopping"); {
		if time.Now().After(deadline) {
			t.Fatalf("run did not begin to stop:\n%s", s.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("run returned %v with a request in flight", err)
	default:
	}
	io.WriteString(conn, body)
	response, err := http.ReadResponse(answers, nil)
	if err != nil || response.StatusCode != http.StatusCreated {
		t.Fatalf("the request in flight got %v, %v; want it finished with 201", response, err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("run returned %v, want nil", err)
	}
	if resp, err := runClient.Get(s.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("the server accepts new requests after it was told to stop")
	}
}

// Header size is bounded (README, "What it withstands"): net/http itself answers 431 for headers
// that are too large.
func TestRunBoundsTheHeaderSize(t *testing.T) {
	s := startService(t, someTokens)
	r, _ := http.NewRequest("GET", s.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer r-token")
	r.Header.Set("X-Padding", strings.Repeat("x", 256<<10))
	resp, err := runClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a request with 256 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

func TestRunWithSampleDataHasTwelveUsers(t *testing.T) {
	s := startService(t, someTokens, "-sample-data")
	status, body := s.send(t, "GET", "/api/users", "r-token", "")
	var list listBody
	if err := json.Unmarshal([]byte(body), &list); status != 200 || err != nil || len(list.Data) != 12 || *list.Total != 12 {
		t.Errorf("GET /api/users: %d %s", status, body)
	}
}

// A configuration mistake stops the program before it listens, with a usage error (exit status
// 2) whose message names the problem and never repeats a token.
func TestBadConfigurationIsAUsageErrorThatNamesTheProblem(t *testing.T) {
	tests := []struct {
		name     string
		tokens   string
		args     []string
		mentions []string
		secret   string // must not appear in the message
	}{
		{"an empty entry at the end", "w-secret:write,", nil, []string{"USERS_TOKENS", "entry 2", "empty"}, "w-secret"},
		{"an empty entry in the middle", "w-secret:write,,r-secret:read", nil, []string{"USERS_TOKENS", "entry 2", "empty"}, "secret"},
		{"an empty token", "w-secret:write, :read", nil, []string{"USERS_TOKENS", "entry 2", "token"}, "w-secret"},
		{"an unknown role", "w-secret:admin", nil, []string{"USERS_TOKENS", "entry 1", "role"}, "w-secret"},
		{"a role in capitals", "w-secret:Write", nil, []string{"USERS_TOKENS", "entry 1", "role"}, "w-secret"},
		{"no role", "w-secret", nil, []string{"USERS_TOKENS", "entry 1", "role"}, "w-secret"},
		{"a space in a token", "w-secret:write,r secret:read", nil, []string{"USERS_TOKENS", "entry 2", "characters"}, "r secret"},
		{"a non-ASCII token", "w-sécret:write", nil, []string{"USERS_TOKENS", "entry 1", "characters"}, "sécret"},
		{"a token with = inside", "w=secret:write", nil, []string{"USERS_TOKENS", "entry 1", "characters"}, "w=secret"},
		{"a duplicate token", "dup-secret:write,dup-secret:read", nil, []string{"USERS_TOKENS", "1", "2", "same token"}, "dup-secret"},
		{"an unknown log format", "w-secret:write", []string{"-log-format", "xml"}, []string{"-log-format", "xml"}, "w-secret"},
		{"a delay above 10s", "w-secret:write", []string{"-delay", "11s"}, []string{"-delay"}, "w-secret"},
		{"a negative delay", "w-secret:write", []string{"-delay", "-1s"}, []string{"-delay"}, "w-secret"},
		{"a delay that is not a duration", "w-secret:write", []string{"-delay", "soon"}, []string{"-delay", "-h"}, "w-secret"},
		{"a CORS origin with another scheme", "w-secret:write", []string{"-cors-origin", "ftp://app.example.com"}, []string{"-cors-origin"}, "w-secret"},
		{"a CORS origin with a path", "w-secret:write", []string{"-cors-origin", "https://app.example.com/app"}, []string{"-cors-origin"}, "w-secret"},
		{"an empty CORS origin in a list", "w-secret:write", []string{"-cors-origin", "https://app.example.com,"}, []string{"-cors-origin"}, "w-secret"},
		{"* in a list", "w-secret:write", []string{"-cors-origin", "*,https://app.example.com"}, []string{"-cors-origin"}, "w-secret"},
		{"an unknown flag", "w-secret:write", []string{"-port", "8080"}, []string{"-port", "-h"}, "w-secret"},
		{"a negative compaction slack", "w-secret:write", []string{"-compact-slack", "-1"}, []string{"-compact-slack"}, "w-secret"},
		{"an argument that is not a flag", "w-secret:write", []string{"serve"}, []string{"serve"}, "w-secret"},
		{"an address without a port", "w-secret:write", []string{"-addr", "localhost"}, []string{"-addr", "localhost"}, "w-secret"},
		{"a port out of range", "w-secret:write", []string{"-addr", "127.0.0.1:99999"}, []string{"-addr", "99999"}, "w-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"users", "-addr", "127.0.0.1:0"}, tt.args...)
			err := run(canceled(), args, func(name string) string {
				if name == "USERS_TOKENS" {
					return tt.tokens
				}
				return ""
			}, &stdout, &stderr)
			var usage usageError
			if !errors.As(err, &usage) {
				t.Fatalf("run returned %v (%T), want a usageError (exit status 2)", err, err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not name %q", err, m)
				}
			}
			if strings.Contains(err.Error(), tt.secret) || strings.Contains(stderr.String(), tt.secret) {
				t.Errorf("the token %q is shown: %q\n%s", tt.secret, err, stderr.String())
			}
			if strings.Contains(stderr.String(), "listening") {
				t.Errorf("the server started half-configured:\n%s", stderr.String())
			}
			if stdout.Len() != 0 || strings.Contains(err.Error(), "\n") {
				t.Errorf("want the one line of the error alone, but stdout holds %q and the error is %q", stdout.String(), err)
			}
		})
	}
}

func TestGoodConfigurationIsTaken(t *testing.T) {
	tests := [][]string{
		{},
		{"-delay", "10s"},
		{"-delay", "300ms", "-log-format", "json"},
		{"-cors-origin", "*"},
		{"-cors-origin", "http://localhost:3000, https://app.example.com:8443"},
		{"-sample-data"},
	}
	for _, args := range tests {
		if _, err := parseConfig(append([]string{"users"}, args...), func(string) string { return "" }, io.Discard); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	cfg, _ := parseConfig([]string{"users"}, func(string) string { return "" }, io.Discard)
	if cfg.addr != "localhost:8080" {
		t.Errorf("the default address is %q, want localhost:8080 (loopback: a demo never exposes itself)", cfg.addr)
	}
}

func TestHelpAndVersionPrintAndReturnNil(t *testing.T) {
	for _, tt := range []struct {
		flag     string
		mentions []string
	}{
		{"-h", []string{"Usage", "-addr", "-data", "-log-format", "-cors-origin", "-delay", "-sample-data", "USERS_TOKENS"}},
		{"-help", []string{"Usage"}},
		{"--help", []string{"Usage"}},
		{"-version", []string{version}},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(canceled(), []string{"users", tt.flag}, func(string) string { return "" }, &stdout, &stderr)
			if err != nil {
				t.Fatalf("run returned %v, want nil (exit status 0)", err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(stdout.String(), m) {
					t.Errorf("stdout does not show %q:\n%s", m, stdout.String())
				}
			}
			if n := strings.Count(stdout.String(), "Usage:"); tt.flag != "-version" && n != 1 {
				t.Errorf("the usage is printed %d times, want once:\n%s", n, stdout.String())
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
		})
	}
}

func TestAddressTakenIsAnErrorButNotAUsageError(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = run(canceled(), []string{"users", "-addr", taken.Addr().String()},
		func(name string) string { return someTokens[name] }, io.Discard, io.Discard)
	var usage usageError
	if err == nil || errors.As(err, &usage) {
		t.Errorf("run returned %v, want an error with exit status 1", err)
	}
}

// main maps run's error to the exit status: 0, 2 for usage and configuration, 1 for anything else.
// The test runs its own binary as the program, with USERS_TEST_MAIN_ARGS as its arguments.
func TestMainExitStatus(t *testing.T) {
	if args, ok := os.LookupEnv("USERS_TEST_MAIN_ARGS"); ok {
		os.Args = append([]string{"users"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		args, tokens string
		want         int
	}{
		{"-h", "", 0},
		{"-version", "", 0},
		{"-log-format xml", "w:write", 2},
		{"-addr 127.0.0.1:0", "w:write,", 2},
		{"-nope", "w:write", 2},
		{"-delay abc", "w:write", 2},
		{"-tls-cert /nonexistent/cert.pem", "w:write", 2},
		{"-tls-cert /nonexistent/cert.pem -tls-key /nonexistent/key.pem", "w:write", 2},
		{"-addr " + taken.Addr().String(), "w:write", 1},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // in case it serves
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMainExitStatus$")
			cmd.Env = append(os.Environ(), "USERS_TEST_MAIN_ARGS="+tt.args, "USERS_TOKENS="+tt.tokens)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", status, tt.want, stderr.String())
			}
			if tt.want != 0 && !strings.HasPrefix(stderr.String(), "users: ") {
				t.Errorf("stderr %q, want the error after \"users: \"", stderr.String())
			}
			if tt.want == 2 && (stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1) {
				t.Errorf("a usage mistake printed %q on stdout and %q on stderr: want one line on stderr alone", stdout.String(), stderr.String())
			}
			if tt.args == "-h" && strings.Count(stdout.String(), "Usage:") != 1 {
				t.Errorf("-h printed the usage %d times, want once", strings.Count(stdout.String(), "Usage:"))
			}
		})
	}
}

// -h is the flag package's own flag.ErrHelp once the usage is printed: run turns it into exit
// status 0.
func TestHelpIsFlagErrHelp(t *testing.T) {
	var stdout bytes.Buffer
	if _, err := parseConfig([]string{"users", "-h"}, func(string) string { return "" }, &stdout); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseConfig(-h) returned %v, want flag.ErrHelp", err)
	}
}

// A second Ctrl-C during the drain ends the process at once: once the first signal has come,
// the default handling of signals is back (os/signal).
func TestSecondInterruptEndsTheProcessAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitStatus$")
	cmd.Env = append(os.Environ(), "USERS_TEST_MAIN_ARGS=-addr 127.0.0.1:0", "USERS_TOKENS=w-token:write")
	stderr := &syncLog{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	waitForLog := func(pattern *regexp.Regexp) []string {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if m := pattern.FindStringSubmatch(stderr.String()); m != nil {
				return m
			}
			select {
			case err := <-exited:
				t.Fatalf("the server ended (%v) before logging %s:\n%s", err, pattern, stderr)
			case <-time.After(10 * time.Millisecond):
			}
		}
		t.Fatalf("no log line %s within 10s:\n%s", pattern, stderr)
		return nil
	}
	addr := waitForLog(listeningAddr)[1]

	// A request in flight that the drain waits for: a POST whose body never comes. The server's
	// 100 Continue says that the handler has begun to read it.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer w-token\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("the server answered %q, %v; want 100 Continue", status, err)
	}
	cmd.Process.Signal(os.Interrupt)
	waitForLog(regexp.MustCompile("stopping"))

	// The drain would take 10 s; a second signal must end it at once. The signal is sent again
	// until the process ends, since the default handling comes back just after the log line.
	deadline := time.After(5 * time.Second)
	for {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != -1 {
				t.Fatalf("the process ended with %v, want it killed by the second SIGINT:\n%s", err, stderr)
			}
			return
		case <-deadline:
			t.Fatalf("the process still runs 5 s after the second SIGINT: it waits for the drain:\n%s", stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Without USERS_TOKENS the server makes a write and a read token and shows them once, in a notice
// before any log record, with a curl line that works as pasted.
func TestGeneratedTokensNoticeHasACurlLineThatWorks(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
	}{
		{"USERS_TOKENS unset", nil},
		{"USERS_TOKENS blank", map[string]string{"USERS_TOKENS": " \t "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startService(t, tt.env)
			notice := s.stderr.String()
			writeToken := regexp.MustCompile(`write token: +(\S+)`).FindStringSubmatch(notice)
			readToken := regexp.MustCompile(`read token: +(\S+)`).FindStringSubmatch(notice)
			curl := regexp.MustCompile(`(?m)^ *curl -H '(Authorization: [^']+)' (\S+)$`).FindStringSubmatch(notice)
			if writeToken == nil || readToken == nil || curl == nil {
				t.Fatalf("no tokens or curl line in the notice:\n%s", notice)
			}
			firstRecord := strings.Index(notice, "time=")
			if firstRecord < 0 || strings.Index(notice, "curl") > firstRecord {
				t.Errorf("the notice does not come before the log records:\n%s", notice)
			}
			for _, token := range []string{writeToken[1], readToken[1]} {
				if len(token) < 22 || !isBearerToken(token) { // 128 bits are at least 22 base64 characters
					t.Errorf("generated token %q is too short to hold 128 random bits", token)
				}
			}
			if writeToken[1] == readToken[1] {
				t.Error("the write and read tokens are the same")
			}

			// Paste the curl line: its header and URL, as curl would send them.
			r, err := http.NewRequest("GET", curl[2], nil)
			if err != nil {
				t.Fatal(err)
			}
			name, value, _ := strings.Cut(curl[1], ": ")
			r.Header.Set(name, value)
			if !strings.HasPrefix(curl[2], "http://") || !strings.HasSuffix(curl[2], "/api/users") {
				t.Errorf("the curl line's URL %q is not the list", curl[2])
			}
			resp, err := runClient.Do(r)
			if err != nil {
				t.Fatalf("the curl line does not work: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the curl line gets %d, want 200", resp.StatusCode)
			}
			if status, _ := s.send(t, "POST", "/api/users", writeToken[1], userJSON("Ann", "ann@example.com")); status != 201 {
				t.Errorf("the write token cannot write: %d", status)
			}
			if status, _ := s.send(t, "POST", "/api/users", readToken[1], userJSON("Bob", "bob@example.com")); status != 403 {
				t.Errorf("the read token can write: %d", status)
			}

			// The notice is the only place a token is printed.
			s.stop()
			for _, token := range []string{writeToken[1], readToken[1]} {
				if strings.Contains(s.stderr.String()[firstRecord:], token) {
					t.Errorf("a log record shows a token:\n%s", s.stderr)
				}
			}
		})
	}
}

// With -log-format json the notice is one record whose fields hold the tokens and the curl line.
func TestGeneratedTokensNoticeInJSONIsOneRecord(t *testing.T) {
	s := startService(t, nil, "-log-format", "json")
	var notices []map[string]any
	records := s.stderr.records(t) // every line of stderr is a JSON record
	for _, record := range records {
		if _, ok := record["write_token"]; ok {
			notices = append(notices, record)
		}
	}
	if len(notices) != 1 {
		t.Fatalf("%d records hold tokens, want one:\n%s", len(notices), s.stderr)
	}
	notice := notices[0]
	writeToken, _ := notice["write_token"].(string)
	readToken, _ := notice["read_token"].(string)
	curl, _ := notice["curl"].(string)
	if writeToken == "" || readToken == "" || !strings.Contains(curl, "Bearer "+readToken) {
		t.Fatalf("notice %v lacks the tokens or the curl line", notice)
	}
	url := regexp.MustCompile(`http://\S+`).FindString(curl)
	r, _ := http.NewRequest("GET", url, nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	resp, err := runClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s with the read token: %d, want 200", url, resp.StatusCode)
	}
	if status, _ := s.send(t, "DELETE", "/api/users/1", writeToken, ""); status != 404 {
		t.Errorf("the write token: DELETE of a missing user is %d, want 404", status)
	}
	s.stop()
	shown := 0
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(line, writeToken) || strings.Contains(line, readToken) {
			shown++
		}
	}
	if shown != 1 {
		t.Errorf("the tokens appear on %d lines, want only the notice's:\n%s", shown, s.stderr)
	}
}
