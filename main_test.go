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
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The rules of main.go (README, "Configuration"): the flags and USERS_TOKENS read by parseConfig,
// and the whole program run through run, by runProgram on a free port. The exit statuses
// and signals of the built binary are the battery's: blackbox/exit_test.go.

// mainExchange sends r on a fresh connection, so that none outlives the program it went to, and
// returns the answer and its whole body.
func mainExchange(t *testing.T, r *http.Request) (*http.Response, string) {
	t.Helper()
	return exchange(t, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}, r)
}

// The program serves on the address it bound until its context ends (SIGINT or SIGTERM), logs
// its storage, each request and its stop, and then returns nil (exit status 0).
func TestProgramServesUntilItsContextEnds(t *testing.T) {
	program := runProgram(t, testEnv, "-log-format", "json")

	r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	if resp, body := mainExchange(t, r); resp.StatusCode != http.StatusOK || body != `{"data":[],"total":0}` {
		t.Errorf("GET /api/users: %d %s", resp.StatusCode, body)
	}
	r, _ = http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	r.Header.Set("Content-Type", "application/json")
	if resp, body := mainExchange(t, r); resp.StatusCode != http.StatusCreated {
		t.Errorf("POST /api/users: %d %s", resp.StatusCode, body)
	}
	r, _ = http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Bob","email":"bob@example.com"}`))
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("Content-Type", "application/json")
	if resp, body := mainExchange(t, r); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST with the read token: %d %s, want 403", resp.StatusCode, body)
	}

	if err := program.stop(); err != nil {
		t.Fatalf("run returned %v after its context ended, want nil", err)
	}
	if listening := program.stderr.records(t, "listening"); len(listening) != 1 {
		t.Errorf("%d start-up records, want one:\n%s", len(listening), program.stderr)
	} else if storage, _ := listening[0]["storage"].(string); !strings.HasPrefix(storage, "memory only") {
		t.Errorf("the start-up record says the storage is %q, want memory only", storage)
	}
	created := false
	for _, record := range program.stderr.records(t, "request") {
		created = created || record["method"] == "POST" && record["path"] == "/api/users" && record["status"] == float64(201)
	}
	if !created {
		t.Errorf("the log has no record of the POST answered 201:\n%s", program.stderr)
	}
	if len(program.stderr.records(t, "stopped")) != 1 {
		t.Errorf("the log does not say the program stopped:\n%s", program.stderr)
	}
	if conn, err := net.Dial("tcp", strings.TrimPrefix(program.url, "http://")); err == nil {
		conn.Close()
		t.Error("the port still takes connections after run returned")
	}
}

// White space around the entries of USERS_TOKENS is trimmed: the tokens are those of the same
// entries written without it.
func TestTokenEntriesAreTrimmed(t *testing.T) {
	cfg, err := parseConfig([]string{"users"}, func(name string) string {
		if name == "USERS_TOKENS" {
			return " " + writeToken + ":write ,\t" + readToken + ":read\n"
		}
		return ""
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseTokens(writeToken + ":write," + readToken + ":read")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.tokens, want) {
		t.Errorf("the tokens of the entries with white space are not those of the entries without")
	}
}

// On SIGINT or SIGTERM the program stops accepting connections but lets the requests in flight
// finish: here a POST whose body is still arriving when its context ends.
func TestStopFinishesTheRequestsInFlight(t *testing.T) {
	program := runProgram(t, testEnv)
	addr := strings.TrimPrefix(program.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"Ann","email":"ann@example.com"}`
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", writeToken, len(body))
	answers := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if proceed, err := http.ReadResponse(answers, nil); err != nil || proceed.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue, which says the handler reads the body: %v", err)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- program.stop() }()
	refused := func() bool { // once the stop has begun, the port takes no new connection
		probe, err := net.Dial("tcp", addr)
		if err == nil {
			probe.Close()
		}
		return err != nil
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); !refused(); <-tick.C {
		if time.Now().After(deadline) {
			t.Fatal("the port still took connections 10 s after the stop")
		}
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
}

// Header size is bounded (README, "What it withstands"): net/http itself answers 431 for headers
// over the 64 KiB that newHTTPServer allows.
func TestHeaderSizeIsBounded(t *testing.T) {
	program := runProgram(t, testEnv)
	r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	r.Header.Set("X-Padding", strings.Repeat("x", 256<<10))
	if resp, _ := mainExchange(t, r); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a request with 256 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

// -sample-data adds 12 example users to an empty store.
func TestSampleDataAddsTwelveUsers(t *testing.T) {
	program := runProgram(t, testEnv, "-sample-data")
	r, _ := http.NewRequest("GET", program.url+"/api/users", nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	resp, body := mainExchange(t, r)
	var list struct {
		Data  []user `json:"data"`
		Total int    `json:"total"`
	}
	if err := json.Unmarshal([]byte(body), &list); resp.StatusCode != http.StatusOK || err != nil || len(list.Data) != 12 || list.Total != 12 {
		t.Errorf("GET /api/users: %d %s, want the 12 sample users", resp.StatusCode, body)
	}
}

// A configuration mistake stops the program before it listens, with a usage error (exit status
// 2) whose one-line message names the problem and never repeats a token.
func TestBadConfigIsAUsageError(t *testing.T) {
	tests := []struct {
		name     string
		tokens   string
		flags    []string
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
		{"-compact-slack, which version 2 no longer has", "w-secret:write", []string{"-compact-slack", "0"}, []string{"-compact-slack"}, "w-secret"},
		{"JSON logs without USERS_TOKENS", "", []string{"-log-format", "json"}, []string{"-log-format json needs USERS_TOKENS"}, "no-secret"},
		{"an argument that is not a flag", "w-secret:write", []string{"serve"}, []string{"serve"}, "w-secret"},
		{"an address without a port", "w-secret:write", []string{"-addr", "localhost"}, []string{"-addr", "localhost"}, "w-secret"},
		{"a port out of range", "w-secret:write", []string{"-addr", "127.0.0.1:99999"}, []string{"-addr", "99999"}, "w-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a program that wrongly starts to serve stops at once, instead of hanging the test
			var stdout, stderr bytes.Buffer
			args := append([]string{"users", "-addr", "127.0.0.1:0"}, tt.flags...)
			err := run(ctx, args, func(name string) string {
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
			if strings.Contains(err.Error(), tt.secret) {
				t.Errorf("the token %q is shown: %q", tt.secret, err)
			}
			if stdout.Len() != 0 || stderr.Len() != 0 || strings.Contains(err.Error(), "\n") {
				t.Errorf("want the one line of the error alone, but stdout holds %q, stderr %q, and the error is %q", stdout.String(), stderr.String(), err)
			}
		})
	}
}

// Good flags are taken, and the default address is loopback: a demo never exposes itself.
func TestGoodConfigIsTaken(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"no flags", nil},
		{"the longest delay", []string{"-delay", "10s"}},
		{"a delay and text logs", []string{"-delay", "300ms", "-log-format", "text"}},
		{"any CORS origin", []string{"-cors-origin", "*"}},
		{"a list of CORS origins", []string{"-cors-origin", "http://localhost:3000, https://app.example.com:8443"}},
		{"sample data", []string{"-sample-data"}},
		{"every interface", []string{"-addr", ":0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseConfig(append([]string{"users"}, tt.flags...), noTokens, io.Discard); err != nil {
				t.Errorf("%q: %v", tt.flags, err)
			}
		})
	}
	t.Run("loopback by default", func(t *testing.T) {
		cfg, err := parseConfig([]string{"users"}, noTokens, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.addr != "localhost:8080" {
			t.Errorf("the default address is %q, want localhost:8080", cfg.addr)
		}
	})
}

// parseCORSOrigins keeps each origin as a browser writes it in Origin: scheme and host in lower
// case, no default port, brackets around an IPv6 address.
func Example_corsOrigins() {
	policy, err := parseCORSOrigins("HTTP://LocalHost:80, https://App.Example.com:443, https://app.example.com:8443, http://[::1]:3000")
	if err != nil {
		fmt.Println(err)
	}
	for _, origin := range policy.origins {
		fmt.Println(origin)
	}
	// Output:
	// http://localhost
	// https://app.example.com
	// https://app.example.com:8443
	// http://[::1]:3000
}

// -h prints the usage, once, and -version the version, on stdout; run returns nil (exit status 0).
func TestHelpAndVersionPrintAndReturnNil(t *testing.T) {
	for _, tt := range []struct {
		flag     string
		mentions []string
	}{
		{"-h", []string{"Usage", "-addr", "-data", "-log-format", "-cors-origin", "-delay", "-sample-data", "-tls-cert", "-tls-key", "USERS_TOKENS"}},
		{"-help", []string{"Usage"}},
		{"--help", []string{"Usage"}},
		{"-version", []string{version}},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a program that wrongly starts to serve stops at once
			var stdout, stderr bytes.Buffer
			if err := run(ctx, []string{"users", tt.flag}, noTokens, &stdout, &stderr); err != nil {
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

// -h is the flag package's own flag.ErrHelp once the usage is printed: run turns it into exit
// status 0.
func TestHelpIsFlagErrHelp(t *testing.T) {
	if _, err := parseConfig([]string{"users", "-h"}, noTokens, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseConfig(-h) returned %v, want flag.ErrHelp", err)
	}
}

// A start that fails (a data file that cannot be opened, an address in use) is an error with exit
// status 1, and prints nothing before it: no generated token, no curl line, no listening record;
// it never listens.
func TestFailedStartPrintsNothing(t *testing.T) {
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
	tests := []struct {
		name     string
		flags    []string
		mentions string
	}{
		{"-data in a folder that does not exist", []string{"-data", filepath.Join(dir, "no-such-folder", "users.json")}, "there is no folder"},
		{"-data a file that is not valid JSON", []string{"-data", damaged}, damaged + ": line 2, column 13"},
		{"an address in use", []string{"-addr", taken.Addr().String()}, taken.Addr().String()},
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" { // where the data file's lock is a flock
		held := newDataPath(t)
		openFileStore(t, held, osDisk{})
		tests = append(tests, struct {
			name     string
			flags    []string
			mentions string
		}{"-data a file another server holds", []string{"-data", held}, "locked"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a program that wrongly starts to serve stops at once
			var stdout, stderr logBuffer
			err := run(ctx, append([]string{"users", "-addr", "127.0.0.1:0"}, tt.flags...), noTokens, &stdout, &stderr)
			var usage usageError
			if err == nil || errors.As(err, &usage) {
				t.Fatalf("run returned %v, want an error of exit status 1", err)
			}
			if !strings.Contains(err.Error(), tt.mentions) {
				t.Errorf("the error %q does not say %q", err, tt.mentions)
			}
			if stdout.String() != "" || stderr.String() != "" {
				t.Errorf("a failed start printed:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
}

// Nothing listens while the data file is read: the port takes no connection (that would hang)
// and nothing is printed until the store is open. The data file here is a named pipe, so the test
// holds the reading at its first byte for as long as it looks.
func TestNothingListensWhileDataIsRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes on Windows")
	}
	path := filepath.Join(t.TempDir(), "users.json")
	if err := exec.Command("mkfifo", path).Run(); err != nil {
		t.Skip("no named pipes here (mkfifo):", err)
	}
	t.Cleanup(func() { // should run never open the file, this lets the test's own open return
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	})
	probe, err := net.Listen("tcp", "127.0.0.1:0") // a free port, to know where to knock
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr logBuffer
	result := make(chan error, 1)
	go func() {
		result <- run(ctx, []string{"users", "-addr", addr, "-data", path}, noTokens, io.Discard, &stderr)
	}()

	// Opening a named pipe to write waits for its reader: the data file, opened to be read.
	journal := make(chan *os.File, 1)
	go func() {
		w, _ := os.OpenFile(path, os.O_WRONLY, 0)
		journal <- w
	}()
	var w *os.File
	select {
	case w = <-journal:
	case err := <-result:
		t.Fatalf("run returned %v before it opened the data file", err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not open the data file within 10 s")
	}
	if w == nil {
		t.Fatal("the data file could not be opened to write")
	}
	defer w.Close()

	// Reading the file now waits for what the test writes.
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Errorf("%s takes connections while the data file is read", addr)
	}
	if stderr.String() != "" {
		t.Errorf("start printed before the store was open:\n%s", stderr.String())
	}

	io.WriteString(w, "not a document\n") // the start refuses it, and ends
	w.Close()
	select {
	case err := <-result:
		if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
			t.Errorf("run returned %v, want the file refused", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return within 10 s of a damaged line")
	}
	if stderr.String() != "" {
		t.Errorf("a start that refused its file printed:\n%s", stderr.String())
	}
}

// Without USERS_TOKENS (unset, or only white space) the program makes a write and a read token of
// 128 random bits and shows them once, in a notice before any log record, with a curl line that
// works as pasted.
func TestGeneratedTokensCurlLineWorks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		getenv func(string) string
	}{
		{"USERS_TOKENS unset", noTokens},
		{"USERS_TOKENS blank", func(name string) string {
			if name == "USERS_TOKENS" {
				return " \t "
			}
			return ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			program := runProgram(t, tt.getenv)
			notice := program.stderr.String()
			write := regexp.MustCompile(`write token: +(\S+)`).FindStringSubmatch(notice)
			read := regexp.MustCompile(`read token: +(\S+)`).FindStringSubmatch(notice)
			curl := regexp.MustCompile(`(?m)^ *curl -H '(Authorization: [^']+)' (\S+)$`).FindStringSubmatch(notice)
			if write == nil || read == nil || curl == nil {
				t.Fatalf("no tokens or curl line in the notice:\n%s", notice)
			}
			writeSecret, readSecret := write[1], read[1]
			firstRecord := strings.Index(notice, "time=")
			if firstRecord < 0 || strings.Index(notice, "curl") > firstRecord {
				t.Errorf("the notice does not come before the log records:\n%s", notice)
			}
			for _, token := range []string{writeSecret, readSecret} {
				if len(token) < 22 || !isBearerToken(token) { // 128 bits take 22 characters of base64, 32 of hex
					t.Errorf("generated token %q is too short to hold 128 random bits", token)
				}
			}
			if writeSecret == readSecret {
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
			if resp, body := mainExchange(t, r); resp.StatusCode != http.StatusOK {
				t.Errorf("the curl line gets %d %s, want 200", resp.StatusCode, body)
			}
			r, _ = http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
			r.Header.Set("Authorization", "Bearer "+writeSecret)
			r.Header.Set("Content-Type", "application/json")
			if resp, body := mainExchange(t, r); resp.StatusCode != http.StatusCreated {
				t.Errorf("the write token cannot write: %d %s", resp.StatusCode, body)
			}
			r, _ = http.NewRequest("POST", program.url+"/api/users", strings.NewReader(`{"name":"Bob","email":"bob@example.com"}`))
			r.Header.Set("Authorization", "Bearer "+readSecret)
			r.Header.Set("Content-Type", "application/json")
			if resp, body := mainExchange(t, r); resp.StatusCode != http.StatusForbidden {
				t.Errorf("the read token can write: %d %s", resp.StatusCode, body)
			}

			// The notice is the only place a token is printed.
			program.stop()
			for _, token := range []string{writeSecret, readSecret} {
				if strings.Contains(program.stderr.String()[firstRecord:], token) {
					t.Errorf("a log record shows a token:\n%s", program.stderr)
				}
			}
		})
	}
}

// noTokens is an environment without USERS_TOKENS: the program makes two tokens and prints them.
func noTokens(string) string { return "" }
