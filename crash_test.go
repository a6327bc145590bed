package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The crash test: the real binary, killed (SIGKILL) in the middle of a concurrent write load and
// restarted on the same data file, still has every write it acknowledged (README, "Durability with
// -data"). It builds the binary with `go build`, so it is skipped under -short.

func TestAKilledServerLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary: skipped with -short")
	}
	binary := buildProgram(t)
	t.Run("SIGKILL during concurrent writes loses no acknowledged write", func(t *testing.T) {
		crashUnderLoad(t, binary)
	})
	t.Run("a temporary file a crash left is removed at start", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.json")
		server := crashStart(t, binary, path)
		if status, answer, err := server.send("POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`); status != http.StatusCreated {
			t.Fatalf("create: %d %s %v", status, answer, err)
		}
		server.kill()
		if err := os.WriteFile(path+".tmp", []byte(`{"next_id": 3, "users": [{"id": 1`), 0o600); err != nil { // a crash mid-write
			t.Fatal(err)
		}
		server = crashStart(t, binary, path)
		defer server.kill()
		if users := server.users(); len(users) != 1 {
			t.Errorf("users after the restart: %v, want Ann", users)
		}
		if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
			t.Errorf("the temporary file is still there: %v", err)
		}
	})
	t.Run("a damaged file stops the start with exit status 1", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.json")
		content := "{\"users\": [\n  {\"id\": 1, \"name\": \"Ann\", \"email\": }\n]}\n"
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}

		status, stderr := crashRunToExit(t, binary, path)
		if status != 1 {
			t.Errorf("exit status %d, want 1", status)
		}
		if !strings.Contains(stderr, path+": line 2, column 37") {
			t.Errorf("the message does not name %s and line 2, column 37:\n%s", path, stderr)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("the file changed:\n%q\nwant\n%q", data, content)
		}
	})
	t.Run("a second server on the same data file refuses to start", func(t *testing.T) {
		switch runtime.GOOS {
		case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly": // datafile_unix.go
		default:
			t.Skipf("no file lock on %s", runtime.GOOS)
		}
		path := filepath.Join(t.TempDir(), "users.json")
		first := crashStart(t, binary, path)
		defer first.kill()
		status, stderr := crashRunToExit(t, binary, path)
		if status != 1 || !strings.Contains(stderr, "locked") {
			t.Errorf("second server: exit status %d, want 1 with a message that the data file is locked:\n%s", status, stderr)
		}
		if code, _, err := first.send("GET", "/healthz", ""); code != http.StatusOK {
			t.Errorf("the first server after the second one tried: /healthz %d %v", code, err)
		}
	})
}

// The load: writers goroutines each create users and then PUT, PATCH and DELETE their own, so
// every user has one writer and its last acknowledged state is known. Each round kills the server
// while the load runs, restarts it on the same data file, and compares what it has with what was
// acknowledged.
const (
	crashRounds  = 5
	crashWriters = 24
	crashKillAt  = 50 // acknowledged writes in a round before the kill may come
)

// crashUnderLoad runs the rounds of the load on the binary.
func crashUnderLoad(t *testing.T, binary string) {
	path := filepath.Join(t.TempDir(), "users.json")
	model := map[int64]*crashUser{} // every user ever acknowledged, deleted ones included
	var owned [crashWriters][]*crashUser
	server := crashStart(t, binary, path)

	for round := 1; round <= crashRounds; round++ {
		maxID := int64(0)
		for id := range model {
			maxID = max(maxID, id)
		}
		workers := make([]*crashWorker, crashWriters)
		var acknowledged atomic.Int64
		underWay := make(chan struct{}) // closed by the write that makes crashKillAt acknowledged
		var wg sync.WaitGroup
		for i := range workers {
			workers[i] = &crashWorker{server: server, round: round, number: i, owned: owned[i],
				acknowledged: &acknowledged, underWay: underWay, random: rand.New(rand.NewSource(int64(round*1000 + i)))}
			wg.Add(1)
			go func(w *crashWorker) {
				defer wg.Done()
				w.work()
			}(workers[i])
		}
		select {
		case <-underWay:
		case <-time.After(10 * time.Second):
			t.Errorf("round %d: only %d writes were acknowledged in 10s", round, acknowledged.Load())
		}
		// A random instant once the load is well under way: nothing to wait for, on purpose.
		time.Sleep(time.Duration(rand.Intn(200)) * time.Millisecond)
		server.kill()
		wg.Wait()

		inFlight := 0
		for _, w := range workers {
			if w.failure != nil {
				t.Errorf("round %d, writer %d: %v", round, w.number, w.failure)
			}
			if w.inFlight {
				inFlight++
			}
			for _, u := range w.created {
				if _, seen := model[u.id]; seen || u.id <= maxID {
					t.Errorf("round %d: a create was given id %d, which was given before (largest before the round: %d)", round, u.id, maxID)
				}
				model[u.id] = u
			}
		}
		if acknowledged.Load() == 0 {
			t.Fatalf("round %d: no write was acknowledged before the kill", round)
		}

		server = crashStart(t, binary, path)
		live := crashVerify(t, round, server.users(), model, workers)
		t.Logf("round %d: %d writes acknowledged, %d in flight at the kill; after the restart %d users live",
			round, acknowledged.Load(), inFlight, len(live))
		for i := range owned {
			owned[i] = nil
		}
		for i, u := range live { // the next round goes on changing the survivors
			owned[i%crashWriters] = append(owned[i%crashWriters], u)
		}
		if t.Failed() {
			break
		}
	}
	server.kill()
}

// crashState is a user as a client knows it; exists is false once it was deleted.
type crashState struct {
	exists      bool
	name, email string
}

func (s crashState) String() string {
	if !s.exists {
		return "deleted"
	}
	return fmt.Sprintf("{%s %s}", s.name, s.email)
}

// crashUser is a user of the load: the last state the server acknowledged and, when a write to it
// was in flight at the kill, the state that write would have made. Either may survive it.
type crashUser struct {
	id           int64
	acknowledged crashState
	inFlight     *crashState
}

// crashVerify compares the users the restarted server has with the model, then brings the model up
// to date with the writes in flight that did land, and returns the live users.
func crashVerify(t *testing.T, round int, got map[int64]user, model map[int64]*crashUser, workers []*crashWorker) []*crashUser {
	t.Helper()
	var live []*crashUser
	for _, id := range crashIDs(model) {
		u := model[id]
		now := crashState{}
		if g, ok := got[id]; ok {
			now = crashState{true, g.Name, g.Email}
		}
		switch {
		case now == u.acknowledged:
		case u.inFlight != nil && now == *u.inFlight: // the write in flight at the kill landed
		case !u.acknowledged.exists:
			t.Errorf("round %d: user %d was deleted (204), yet came back as %v", round, id, now)
		default:
			t.Errorf("round %d: user %d is %v after the restart; the last acknowledged state was %v (in flight: %v)",
				round, id, now, u.acknowledged, u.inFlight)
		}
		u.acknowledged, u.inFlight = now, nil
		if now.exists {
			live = append(live, u)
		}
	}
	// A user the model does not know must come from a create that was in flight at the kill.
	for _, id := range crashIDs(got) {
		if _, known := model[id]; known {
			continue
		}
		g, landed := got[id], false
		for _, w := range workers {
			if w.pendingCreate != nil && *w.pendingCreate == (crashState{true, g.Name, g.Email}) {
				landed, w.pendingCreate = true, nil
			}
		}
		if !landed {
			t.Errorf("round %d: user %v is there, but nobody created it", round, g)
			continue
		}
		u := &crashUser{id: id, acknowledged: crashState{true, g.Name, g.Email}}
		model[id] = u
		live = append(live, u)
	}
	return live
}

// crashIDs returns the keys of m in increasing order.
func crashIDs[V any](m map[int64]V) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// crashWorker is one client of the load. Its users are its own: nobody else writes to them.
type crashWorker struct {
	server       *crashServer
	round        int
	number       int
	random       *rand.Rand
	owned        []*crashUser  // its live users
	acknowledged *atomic.Int64 // counts acknowledged writes across the workers
	underWay     chan struct{} // closed when acknowledged reaches crashKillAt

	created       []*crashUser // users it created this round
	pendingCreate *crashState  // a create in flight at the kill: the server may have it, under an id nobody knows
	inFlight      bool         // a write was in flight at the kill
	failure       error        // an answer that no write of the load should get
	sequence      int
}

// acknowledge counts an acknowledged write.
func (w *crashWorker) acknowledge() {
	if w.acknowledged.Add(1) == crashKillAt {
		close(w.underWay)
	}
}

// work writes until the server is gone.
func (w *crashWorker) work() {
	for w.failure == nil && !w.inFlight {
		w.sequence++
		name := fmt.Sprintf("User %d.%d.%d", w.round, w.number, w.sequence)
		email := fmt.Sprintf("r%d.w%d.%d@example.com", w.round, w.number, w.sequence)
		choice := w.random.Intn(10) // as many creates as deletes: the users change more than they grow
		if len(w.owned) < 3 || choice < 3 {
			w.create(name, email)
			continue
		}
		i := w.random.Intn(len(w.owned))
		u := w.owned[i]
		next := u.acknowledged
		var method, body string
		switch choice {
		case 3, 4:
			method, body = "PUT", fmt.Sprintf(`{"name":%q,"email":%q}`, name, email)
			next.name, next.email = name, email
		case 5:
			method, body = "PATCH", fmt.Sprintf(`{"name":%q}`, name)
			next.name = name
		case 6:
			method, body = "PATCH", fmt.Sprintf(`{"email":%q}`, email)
			next.email = email
		default:
			method, next = "DELETE", crashState{}
		}
		u.inFlight = &next
		status, answer, err := w.server.send(method, userPath(u.id), body)
		want, _ := encodeJSON(user{u.id, next.name, next.email})
		switch {
		case err != nil:
			w.inFlight = true // killed: this write may or may not have landed
			return
		case method == "DELETE" && status == http.StatusNoContent:
			w.owned = append(w.owned[:i], w.owned[i+1:]...)
		case status != http.StatusOK:
			w.failure = fmt.Errorf("%s %s: %d %s", method, userPath(u.id), status, answer)
			return
		case string(answer) != string(want):
			w.failure = fmt.Errorf("%s %s answered %s, want %s", method, userPath(u.id), answer, want)
			return
		}
		u.acknowledged, u.inFlight = next, nil
		w.acknowledge()
	}
}

func (w *crashWorker) create(name, email string) {
	w.pendingCreate = &crashState{true, name, email}
	status, answer, err := w.server.send("POST", "/api/users", fmt.Sprintf(`{"name":%q,"email":%q}`, name, email))
	if err != nil {
		w.inFlight = true
		return
	}
	var created user
	if status != http.StatusCreated || json.Unmarshal(answer, &created) != nil || created.Name != name || created.Email != email {
		w.failure = fmt.Errorf("POST /api/users: %d %s", status, answer)
		return
	}
	w.pendingCreate = nil
	u := &crashUser{id: created.ID, acknowledged: crashState{true, name, email}}
	w.created = append(w.created, u)
	w.owned = append(w.owned, u)
	w.acknowledge()
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

// crashCommand is the binary on the data file at path.
func crashCommand(binary, path string) *exec.Cmd {
	cmd := exec.Command(binary, "-addr", "127.0.0.1:0", "-data", path, "-log-format", "json")
	cmd.Env = append(os.Environ(), "USERS_TOKENS="+writeToken+":write,"+readToken+":read")
	return cmd
}

// crashStart starts the binary on the data file at path and waits until it listens on the port it
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
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashWriters}}
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

// crashRunToExit runs the binary on the data file at path, expecting it to refuse to start, and
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
