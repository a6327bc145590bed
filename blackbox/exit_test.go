package blackbox

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The program's exit statuses and signals (README, "Configuration"), as a shell or a service
// manager sees them.

// The exit status is 2 for a mistake of usage or configuration, 1 for anything else that stops the
// program (an address in use; a data file it cannot use: crash_test.go), and 0 for -h and
// -version. An error is one line on stderr after "users: ", then, where the program knows what to
// do about it, one line of advice indented by two spaces; nothing before it: no token, no curl line.
func TestExitStatusIs2ForUsageAnd1ForAnyOtherFailure(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		tokens string // "" for none: the program would make two
		want   int
		advice string // in the line of advice; "" where the error comes alone
	}{
		{"-h", []string{"-h"}, "", 0, ""},
		{"-version", []string{"-version"}, "", 0, ""},
		{"an unknown log format", []string{"-log-format", "xml"}, "w:write", 2, ""},
		{"JSON logs with no USERS_TOKENS", []string{"-log-format", "json"}, "", 2, "set USERS_TOKENS"},
		{"an empty entry in USERS_TOKENS", []string{"-addr", "127.0.0.1:0"}, "w:write,", 2, "TOKEN:ROLE"},
		{"an unknown flag", []string{"-nope"}, "w:write", 2, "-h"},
		{"a delay that is not a duration", []string{"-delay", "abc"}, "w:write", 2, "500ms"},
		{"an origin not written as a browser sends it", []string{"-cors-origin", "http://localhost:03000"}, "w:write", 2, "http://localhost:3000"},
		{"-tls-cert without -tls-key", []string{"-tls-cert", filepath.Join(dir, "cert.pem")}, "w:write", 2, "give both"},
		{"TLS files that are not there", []string{"-tls-cert", filepath.Join(dir, "cert.pem"), "-tls-key", filepath.Join(dir, "key.pem")}, "w:write", 2, ""},
		{"an address in use", []string{"-addr", taken.Addr().String()}, "w:write", 1, "port 0"},
		{"an address in use, no tokens", []string{"-addr", taken.Addr().String()}, "", 1, "port 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := launch(t, tt.tokens, tt.args...)
			if status := p.wait(); status != tt.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", status, tt.want, p.log)
			}
			stdout, stderr := p.stdout.String(), p.log.String()
			if tt.want != 0 {
				message, advice, _ := strings.Cut(strings.TrimSuffix(stderr, "\n"), "\n")
				advised := strings.HasPrefix(advice, "  ") && !strings.Contains(advice, "\n") && strings.Contains(advice, tt.advice)
				if stdout != "" || !strings.HasPrefix(message, "users: ") || (tt.advice == "") != (advice == "") || advice != "" && !advised {
					t.Errorf("stdout %q and stderr %q: want the error alone on stderr, one line after \"users: \", then an indented line of advice naming %q (none if \"\")",
						stdout, stderr, tt.advice)
				}
			}
			if tt.args[0] == "-h" && strings.Count(stdout, "Usage:") != 1 {
				t.Errorf("-h printed the usage %d times, want once", strings.Count(stdout, "Usage:"))
			}
		})
	}
}

// SIGINT (Ctrl-C) or SIGTERM (a service manager) with nothing in flight: the program logs its stop
// and exits 0.
func TestASignalStopsTheProgramWithStatus0(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := start(t, testTokens)
			p.signal(sig)
			if status := p.wait(); status != 0 {
				t.Fatalf("exit status %d, want 0:\n%s", status, p.log)
			}
			if len(p.log.records("stopped")) != 1 {
				t.Errorf("no \"stopped\" record:\n%s", p.log)
			}
		})
	}
}

// A second Ctrl-C during the drain ends the process at once: once the first signal has come,
// the default handling of signals is back (os/signal).
func TestSecondInterruptEndsTheProcessAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	p := start(t, writeToken+":write")

	// A request in flight that the drain waits for: a POST whose body never comes. The server's
	// 100 Continue says that the handler has begun to read it.
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", writeToken)
	conn.SetReadDeadline(time.Now().Add(patience))
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("the server answered %q, %v; want 100 Continue", status, err)
	}
	p.signal(os.Interrupt)
	eventually(t, "the stopping record", func() bool {
		return len(p.log.records("stopping")) == 1
	})

	// The drain would take 10 s, and end with status 1, since the request never ends; a second
	// signal must end the process, killed by SIGINT. The signal is sent again until the process
	// ends, since the default handling comes back just after the first one is handled, not at a
	// moment the log shows.
	second := time.Now()
	giveUp := time.After(patience)
	resend := time.NewTicker(50 * time.Millisecond)
	defer resend.Stop()
	for ended := false; !ended; {
		p.signal(os.Interrupt)
		select {
		case <-p.exited:
			ended = true
		case <-resend.C:
		case <-giveUp:
			t.Fatalf("the process still runs %v after the second SIGINT", patience)
		}
	}
	if p.status != -1 {
		t.Fatalf("the process ended with status %d, want it killed by the second SIGINT, not ended by the drain", p.status)
	}
	tookAtMost(t, "ending the process after the second SIGINT", time.Since(second), 2*time.Second)
}

// A stop waits for the requests in flight, a delayed one like any other, but not forever: at
// most 10 s more than -delay. A request that outlasts that is cut, and the program exits 1, since
// its stop was not clean. Here the request is an upload whose body never comes, sent once its
// -delay of 1 s is over (the 100 Continue says so), and the stop waits 11 s.
func TestAStopWaitsAtMost10sMoreThanTheDelay(t *testing.T) {
	t.Parallel() // it waits, mostly
	const bound = 1*time.Second + 10*time.Second
	p := start(t, writeToken+":write", "-delay", "1s")
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", writeToken)
	conn.SetReadDeadline(time.Now().Add(patience))
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("the server answered %q, %v; want 100 Continue", status, err)
	}

	stopped := time.Now()
	p.signal(syscall.SIGTERM)
	if status := p.wait(); status != 1 {
		t.Errorf("exit status %d, want 1 for a stop that cut a request:\n%s", status, p.log)
	}
	took := time.Since(stopped)
	if took < bound-100*time.Millisecond {
		t.Errorf("the program ended %v after SIGTERM, before its bound of %v", took, bound)
	}
	tookAtMost(t, "the stop", took, bound+2*time.Second)
}
