package blackbox

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The program's exit statuses and signals (README, "Configuration"), as a shell or a service
// manager sees them.

// The exit status is 2 for a mistake of usage or configuration, 1 for anything else that stops the
// program (an address in use, a data file that cannot be opened or read), and 0 for -h and
// -version. An error is one line on stderr after "users: ", with nothing before it: no token, no
// curl line.
func TestExitStatusIs2ForUsageAnd1ForAnyOtherFailure(t *testing.T) {
	needsProgram(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	damaged := filepath.Join(dir, "users.json")
	if err := os.WriteFile(damaged, []byte("not a data file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		tokens string // "" for none: the program would make two
		want   int
	}{
		{"-h", []string{"-h"}, "", 0},
		{"-version", []string{"-version"}, "", 0},
		{"an unknown log format", []string{"-log-format", "xml"}, "w:write", 2},
		{"an empty entry in USERS_TOKENS", []string{"-addr", "127.0.0.1:0"}, "w:write,", 2},
		{"an unknown flag", []string{"-nope"}, "w:write", 2},
		{"a delay that is not a duration", []string{"-delay", "abc"}, "w:write", 2},
		{"-tls-cert without -tls-key", []string{"-tls-cert", filepath.Join(dir, "cert.pem")}, "w:write", 2},
		{"TLS files that are not there", []string{"-tls-cert", filepath.Join(dir, "cert.pem"), "-tls-key", filepath.Join(dir, "key.pem")}, "w:write", 2},
		{"an address in use", []string{"-addr", taken.Addr().String()}, "w:write", 1},
		{"an address in use, no tokens", []string{"-addr", taken.Addr().String()}, "", 1},
		{"-data in a missing folder", []string{"-addr", "127.0.0.1:0", "-data", filepath.Join(dir, "missing", "users.json")}, "", 1},
		{"-data a damaged file", []string{"-addr", "127.0.0.1:0", "-data", damaged}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := launch(t, tt.tokens, tt.args...)
			if status := p.wait(20 * time.Second); status != tt.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", status, tt.want, p.log)
			}
			stdout, stderr := p.stdout.String(), p.log.String()
			if tt.want != 0 && (stdout != "" || !strings.HasPrefix(stderr, "users: ") || strings.Count(stderr, "\n") != 1) {
				t.Errorf("stdout %q and stderr %q: want the error alone, one line on stderr after \"users: \"", stdout, stderr)
			}
			if tt.args[0] == "-h" && strings.Count(stdout, "Usage:") != 1 {
				t.Errorf("-h printed the usage %d times, want once", strings.Count(stdout, "Usage:"))
			}
		})
	}
}

// SIGTERM (or the first Ctrl-C) with nothing in flight: the program logs its stop and exits 0.
func TestSIGTERMStopsTheProgramWithStatus0(t *testing.T) {
	p := start(t, testTokens, "-log-format", "json")
	if status := p.stop(); status != 0 {
		t.Fatalf("exit status %d, want 0:\n%s", status, p.log)
	}
	if len(p.records("stopped")) != 1 {
		t.Errorf("no \"stopped\" record:\n%s", p.log)
	}
}

// A second Ctrl-C during the drain ends the process at once: once the first signal has come,
// the default handling of signals is back (os/signal).
func TestSecondInterruptEndsTheProcessAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	p := start(t, writeToken+":write", "-log-format", "json")

	// A request in flight that the drain waits for: a POST whose body never comes. The server's
	// 100 Continue says that the handler has begun to read it.
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", writeToken)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if status, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("the server answered %q, %v; want 100 Continue", status, err)
	}
	p.signal(os.Interrupt)
	eventually(t, 10*time.Second, "the stopping record", func() bool {
		return len(p.records("stopping: finishing the requests in flight")) == 1
	})

	// The drain would take 10 s; a second signal must end it at once. The signal is sent again
	// until the process ends, since the default handling comes back just after the first one is
	// handled, not at a moment the log shows.
	deadline := time.After(5 * time.Second)
	resend := time.NewTicker(50 * time.Millisecond)
	defer resend.Stop()
	for {
		p.signal(os.Interrupt)
		select {
		case <-p.exited:
			if p.status != -1 {
				t.Fatalf("the process ended with status %d, want it killed by the second SIGINT", p.status)
			}
			return
		case <-deadline:
			t.Fatal("the process still runs 5 s after the second SIGINT: it waits for the drain")
		case <-resend.C:
		}
	}
}
