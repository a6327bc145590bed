package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What a crash leaves in the journal: the real binary, killed (SIGKILL) after its writes, or started
// on a journal damaged in the middle. It builds the binary with `go build`, so it is skipped under
// -short. The kill under a concurrent write load, and the lock against a second server, are in
// the battery (blackbox/crash_test.go).

func TestAJournalDamagedByACrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary: skipped with -short")
	}
	binary := buildProgram(t)
	const (
		ann = `{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}` + "\n"
		bob = `{"op":"put","id":2,"name":"Bob","email":"bob@example.com"}` + "\n"
	)

	t.Run("a torn last record is dropped, logged with its offset and cut off", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		server := crashStart(t, binary, path)
		for _, body := range []string{`{"name":"Ann","email":"ann@example.com"}`, `{"name":"Bob","email":"bob@example.com"}`} {
			if status, answer, err := server.send("POST", "/api/users", body); status != http.StatusCreated {
				t.Fatalf("create: %d %s %v", status, answer, err)
			}
		}
		server.kill()
		goodSize := crashFileSize(t, path)
		file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = file.WriteString(`{"op":"put","id":3,"name":"To`) // a crash in the middle of a write
		if closeErr := file.Close(); err != nil || closeErr != nil {
			t.Fatal(err, closeErr)
		}

		server = crashStart(t, binary, path)
		defer server.kill()
		if users := server.users(); len(users) != 2 {
			t.Errorf("users after the restart: %v, want Ann and Bob", users)
		}
		if size := crashFileSize(t, path); size != goodSize {
			t.Errorf("file size %d, want %d: the torn record cut off", size, goodSize)
		}
		torn := server.log.records(t, "journal: dropping a torn tail")
		if len(torn) != 1 || torn[0]["offset"] != float64(goodSize) {
			t.Errorf("the log records of the torn tail are %v, want one naming offset %d:\n%s", torn, goodSize, server.log)
		}
	})
	t.Run("a damaged record in the middle stops the start with exit status 1", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		content := ann + `{"op":"put","id":2,"name":"Bob","email":` + "\n" + bob
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}

		status, stderr := crashRunToExit(t, binary, path)
		if status != 1 {
			t.Errorf("exit status %d, want 1", status)
		}
		if !strings.Contains(stderr, path+":2:") {
			t.Errorf("the message does not name %s:2:\n%s", path, stderr)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("the file changed:\n%q\nwant\n%q", data, content)
		}
	})
}

// crashServer is the binary running on a journal, in a process of its own.
type crashServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string        // http://127.0.0.1:port
	client *http.Client  // its own connections, so none outlives the process
	log    *logBuffer    // stderr, but for the access log
	exited chan struct{} // closed once the process has ended
}

// crashCommand is the binary on the journal at path, with a bound small enough that the journal is
// compacted again and again while the writers run.
func crashCommand(binary, path string) *exec.Cmd {
	cmd := exec.Command(binary, "-addr", "127.0.0.1:0", "-data", path, "-log-format", "json", "-compact-slack", "0")
	cmd.Env = append(os.Environ(), "USERS_TOKENS="+writeToken+":write,"+readToken+":read")
	return cmd
}

// crashStart starts the binary on the journal at path and waits until it listens on the port it
// picked: another process, so its start-up log record is the one place that names the port.
func crashStart(t *testing.T, binary, path string) *crashServer {
	t.Helper()
	s := &crashServer{t: t, cmd: crashCommand(binary, path), log: &logBuffer{}, exited: make(chan struct{})}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.kill) // killing it twice does no harm
	listening := make(chan string, 1)
	go func() {
		defer close(s.exited)
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() { // read it all: a server that cannot write its log stops
			line := lines.Text()
			var record struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &record) == nil && record.Msg == "request" {
				continue
			}
			fmt.Fprintln(s.log, line)
			if record.Msg == "listening" {
				listening <- record.Addr
			}
		}
		io.Copy(io.Discard, stderr)
		s.cmd.Wait()
	}()
	select {
	case addr := <-listening:
		s.base = "http://" + addr
	case <-s.exited:
		t.Fatalf("the server stopped before listening:\n%s", s.log)
	case <-time.After(10 * time.Second):
		s.kill()
		t.Fatalf("the server did not listen within 10s:\n%s", s.log)
	}
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	return s
}

// kill ends the process with SIGKILL (on Windows, TerminateProcess): no clean stop, as in a crash.
func (s *crashServer) kill() {
	s.cmd.Process.Kill()
	<-s.exited
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
}

// send makes a request with the write token. An error means the request got no answer.
func (s *crashServer) send(method, target, body string) (status int, answer []byte, err error) {
	request, err := http.NewRequest(method, s.base+target, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	request.Header.Set("Authorization", "Bearer "+writeToken)
	if body != "" {
		request.Header.Set("Content-Type", "application/json")
	}
	response, err := s.client.Do(request)
	if err != nil {
		return 0, nil, err
	}
	defer response.Body.Close()
	answer, err = io.ReadAll(response.Body)
	return response.StatusCode, answer, err
}

// users returns every user the server lists, by id.
func (s *crashServer) users() map[int64]user {
	s.t.Helper()
	status, answer, err := s.send("GET", "/api/users", "")
	var list struct{ Data []user }
	if err == nil && status == http.StatusOK {
		err = json.Unmarshal(answer, &list)
	}
	if err != nil || status != http.StatusOK {
		s.t.Fatalf("GET /api/users: %d %s %v", status, answer, err)
	}
	byID := map[int64]user{}
	for _, u := range list.Data {
		byID[u.ID] = u
	}
	return byID
}

// crashRunToExit runs the binary on the journal at path, expecting it to refuse to start, and
// returns its exit status and what it wrote to stderr.
func crashRunToExit(t *testing.T, binary, path string) (status int, stderr string) {
	t.Helper()
	cmd := crashCommand(binary, path)
	output := &logBuffer{}
	cmd.Stderr = output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), output.String()
		}
		return 0, output.String()
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the server is still running after 10s; want it to refuse to start:\n%s", output)
		return 0, ""
	}
}

// crashFileSize returns the size of the file at path.
func crashFileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}
