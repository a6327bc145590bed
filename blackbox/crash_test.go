package blackbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Durability with -data (docs/durability.md): a kill in the middle of a write load, a second
// server on the same file, a temporary file a crash left, a data file the program cannot use.

// A second program on the same -data file refuses to start (exit status 1, naming the lock), and
// the first goes on serving.
func TestASecondServerOnTheSameFileRefusesToStart(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly": // datafile_unix.go
	default:
		t.Skipf("no file lock on %s", runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "users.json")
	first := crashStart(t, path)
	second := launch(t, testTokens, "-addr", "127.0.0.1:0", "-data", path)
	if status := second.wait(); status != 1 || !strings.Contains(second.log.String(), "locked") {
		t.Errorf("second server: exit status %d, want 1 with a message that the file is locked:\n%s", status, second.log)
	}
	if code, _, err := first.send("GET", "/healthz", ""); code != http.StatusOK {
		t.Errorf("the first server after the second one tried: /healthz %d %v", code, err)
	}
}

// A temporary file that a crash in the middle of a write left beside the data file is removed at
// start, and the users are those of the last write acknowledged.
func TestATemporaryFileACrashLeftIsRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	server := crashStart(t, path)
	if status, answer, err := server.send("POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`); status != http.StatusCreated {
		t.Fatalf("create: %d %s %v", status, answer, err)
	}
	server.kill()
	if err := os.WriteFile(path+".tmp", []byte(`{"next_id": 3, "users": [{"id": 1`), 0o600); err != nil {
		t.Fatal(err)
	}
	server = crashStart(t, path)
	defer server.kill()
	if users := server.users(); len(users) != 1 {
		t.Errorf("users after the restart: %v, want Ann", users)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// A data file the program cannot use stops the start before it listens, with exit status 1, a
// line naming the file and the problem and a line saying what to do, printing no token; and the file stays as it was
// (docs/durability.md). A file a person broke is refused by line and column, or by the ids of the
// users at fault; a file the program could read but not replace, at start rather than at the
// first write.
func TestADataFileTheProgramCannotUseStopsTheStart(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the path the program names, links followed
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file, content string
		blocked             bool   // a folder, not empty, stands where FILE.tmp goes
		want                string // in the message, after "users: -data FILE: "
	}{
		{name: "a folder that does not exist", file: filepath.Join(dir, "missing", "users.json"),
			want: "no folder " + filepath.Join(dir, "missing") + "\n  create the folder"},
		{name: "broken JSON", file: filepath.Join(dir, "broken.json"),
			content: "{\"users\": [\n  {\"id\": 1, \"name\": \"Ann\", \"email\": }\n]}\n", want: "line 2, column 37"},
		{name: "two users with one id", file: filepath.Join(dir, "ids.json"),
			content: `{"users": [{"id": 2, "name": "Ann", "email": "ann@example.com"}, {"id": 2, "name": "Bob", "email": "bob@example.com"}]}`,
			want:    "the id 2"},
		{name: "two users with one e-mail, case aside", file: filepath.Join(dir, "emails.json"),
			content: `{"users": [{"id": 1, "name": "Ann", "email": "ann@example.com"}, {"id": 3, "name": "Ann", "email": "ANN@example.com"}]}`,
			want:    "users 1 and 3"},
		// Permission bits stop no write of root, which the tests may run as: a folder in the way does.
		{name: "a file the program cannot replace", file: filepath.Join(dir, "blocked", "users.json"), blocked: true,
			content: `{"users": []}`, want: "write access to the folder " + filepath.Join(dir, "blocked")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.blocked {
				if err := os.MkdirAll(filepath.Join(tt.file+".tmp", "in the way"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tt.content != "" {
				if err := os.WriteFile(tt.file, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := launch(t, "", "-addr", "127.0.0.1:0", "-data", tt.file) // no USERS_TOKENS: tokens to print
			if status := p.wait(); status != 1 {
				t.Errorf("exit status %d, want 1", status)
			}
			stderr := p.log.String()
			if !strings.HasPrefix(stderr, "users: -data "+tt.file+": ") || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 2 {
				t.Errorf("stderr:\n%s\nwant \"users: -data %s: \" naming %q, and a line of advice", stderr, tt.file, tt.want)
			}
			if data, _ := os.ReadFile(tt.file); string(data) != tt.content {
				t.Errorf("the file changed:\n%q\nwant\n%q", data, tt.content)
			}
		})
	}
}

// The load of TestAKilledServerLosesNoAcknowledgedWrite.
const (
	crashRounds  = 5
	crashWriters = 24
	crashKillAt  = 50 // acknowledged writes in a round before the kill may come
)

// The program, killed (SIGKILL) in the middle of a concurrent write load, leaves one whole JSON
// document, and restarted on the same file still has every write it acknowledged, read back over
// HTTP (docs/durability.md, "How a write is made durable"). In each of its rounds, crashWriters
// goroutines each create users and then PUT, PATCH and DELETE their own, so every user has one
// writer and its last acknowledged state is known; the round kills the server while the load
// runs, restarts it on the same -data file, and compares what it has with what was acknowledged.
func TestAKilledServerLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel() // it waits, mostly on the disk
	path := filepath.Join(t.TempDir(), "users.json")
	model := map[int64]*crashUser{} // every user ever acknowledged, deleted ones included
	var owned [crashWriters][]*crashUser
	server := crashStart(t, path)
	seed := time.Now().UnixNano()
	t.Logf("seed %d: the writers' choices and the moments of the kills", seed)
	random := rand.New(rand.NewSource(seed))

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
				acknowledged: &acknowledged, underWay: underWay, random: rand.New(rand.NewSource(random.Int63()))}
			wg.Add(1)
			go func(w *crashWorker) {
				defer wg.Done()
				w.work()
			}(workers[i])
		}
		select {
		case <-underWay:
		case <-time.After(patience):
			t.Errorf("round %d: only %d writes were acknowledged in %v", round, acknowledged.Load(), patience)
		}
		// A random instant once the load is well under way: nothing waits for it, on purpose.
		time.Sleep(time.Duration(random.Intn(200)) * time.Millisecond)
		server.kill()
		wg.Wait()
		if data, err := os.ReadFile(path); err != nil || !json.Valid(data) {
			t.Fatalf("round %d: after the kill the data file is not one whole JSON document (%v):\n%.300s", round, err, data)
		}

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

		server = crashStart(t, path)
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
		want, _ := json.Marshal(user{u.id, next.name, next.email})
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

// crashServer is the program running on a -data file, with a client of its own.
type crashServer struct {
	*program
	client *http.Client // its own connections, so none outlives the process
}

// crashStart starts the program on the -data file at path.
func crashStart(t *testing.T, path string) *crashServer {
	t.Helper()
	p := start(t, testTokens, "-data", path)
	return &crashServer{program: p, client: &http.Client{Timeout: patience,
		Transport: &http.Transport{MaxIdleConnsPerHost: crashWriters}}}
}

// kill ends the program with SIGKILL, and closes the client's connections to it.
func (s *crashServer) kill() {
	s.program.kill()
	s.client.CloseIdleConnections()
}

// send makes a request with the write token. An error means the request got no answer.
func (s *crashServer) send(method, target, body string) (status int, answer []byte, err error) {
	request, err := http.NewRequest(method, s.url+target, strings.NewReader(body))
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
