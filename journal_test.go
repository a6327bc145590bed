package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The journal's tests (README, "Durability with -data"). Each opens a journal in t.TempDir() under
// the real handler stack, writes through the API, and then looks at what a restart finds and at the
// file itself.

// durableServer is the test server of users_test.go with its store kept in a journal.
type durableServer struct {
	*testServer
	journal *journal
	path    string
	slack   int64
	log     *syncLog // what the journal logged
	closing sync.Once
}

// openDurableServer opens (and replays) the journal at path, with the service's default bound, and
// routes the API's writes through it.
func openDurableServer(t testing.TB, path string) *durableServer {
	t.Helper()
	return openCompactingServer(t, path, 1<<20)
}

// openCompactingServer is openDurableServer with a journal compacted once it passes 4 × the live
// data plus slack.
func openCompactingServer(t testing.TB, path string, slack int64) *durableServer {
	t.Helper()
	s := newTestServer(t)
	log := &syncLog{}
	store, err := openUserStore(newJournal(path, newLogger("text", log), slack))
	if err != nil {
		t.Fatalf("opening the journal: %v", err)
	}
	s.store = store
	s.build()
	d := &durableServer{testServer: s, journal: store.journal, path: path, slack: slack, log: log}
	t.Cleanup(d.close)
	return d
}

func (d *durableServer) close() { d.closing.Do(d.store.close) }

// changeJournal changes the journal as its writer would: holding writeMu.
func (d *durableServer) changeJournal(change func(j *journal)) {
	d.store.writeMu.Lock()
	defer d.store.writeMu.Unlock()
	change(d.journal)
}

// useFile puts a stand-in, made from the open file, in place of the journal's file.
func (d *durableServer) useFile(standIn func(*os.File) journalFile) {
	d.changeJournal(func(j *journal) { j.file = standIn(j.file.(*os.File)) })
}

// restart stops the server and starts a new one on the same journal, as after a crash: nothing
// but the file carries over.
func (d *durableServer) restart(t testing.TB) *durableServer {
	t.Helper()
	d.close()
	return openCompactingServer(t, d.path, d.slack)
}

// users returns every user the list shows, by id.
func (d *durableServer) users(t testing.TB) map[int64]user {
	t.Helper()
	w := d.do("GET", "/api/users", "", asReader...)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /api/users: status %d, body %s", w.Code, w.Body)
	}
	var list struct{ Data []user }
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	byID := map[int64]user{}
	for _, u := range list.Data {
		byID[u.ID] = u
	}
	return byID
}

// mustStatus sends a request and fails the test unless the answer has the status given.
func (d *durableServer) mustStatus(t testing.TB, status int, method, target, body string) {
	t.Helper()
	w := d.do(method, target, body, join(asWriter, asJSON)...)
	if w.Code != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, target, w.Code, status, w.Body)
	}
}

// renameAnn gives user 1, Ann, the names "Ann <from>" to "Ann <to-1>", one PATCH each: a journal
// with more history than live data.
func (d *durableServer) renameAnn(t testing.TB, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/1", `{"name":"Ann `+strconv.Itoa(i)+`"}`)
	}
}

// journalLines returns the lines of the journal file, without their newlines.
func journalLines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func writeJournalFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func journalSize(t testing.TB, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

func TestJournalIsJSONLinesOfPutsAndDeletes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/1", `{"name":"Ann Lee"}`)
	d.mustStatus(t, http.StatusNoContent, "DELETE", "/api/users/1", "")
	d.close()

	want := []string{
		`{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}`,
		`{"op":"put","id":1,"name":"Ann Lee","email":"ann@example.com"}`,
		`{"op":"delete","id":1}`,
	}
	if got := journalLines(t, path); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The last id is 2^63-1 (README, "Decisions"): it is given once, and every create after it is 409,
// never a negative id, also after a restart and a compaction.
func TestTheLastIDIsGivenOnceAndThenCreatesAre409(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	writeJournalFile(t, path, `{"op":"next_id","id":9223372036854775807}`+"\n")
	d := openCompactingServer(t, path, 0)
	if created := d.create(t, "Ann", "ann@example.com"); created.ID != math.MaxInt64 {
		t.Fatalf("the next user has id %d, want 2^63-1", created.ID)
	}
	noIDLeft := func(d *durableServer) {
		t.Helper()
		w := d.do("POST", "/api/users", userJSON("Bob", "bob@example.com"), join(asWriter, asJSON)...)
		if message, _ := wantError(t, w, http.StatusConflict); !strings.Contains(message, "no id is left") {
			t.Errorf("message %q does not say that no id is left", message)
		}
	}
	noIDLeft(d)
	for _, name := range []string{"Ann Lee", "Ann Smith", "Ann Jones"} { // history for compaction to drop
		d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/9223372036854775807", `{"name":"`+name+`"}`)
	}
	d.mustStatus(t, http.StatusNoContent, "DELETE", "/api/users/9223372036854775807", "")
	noIDLeft(d)

	d = d.restart(t) // replays, then compacts the file to its next_id alone
	if lines := journalLines(t, path); len(lines) != 1 || lines[0] != `{"op":"next_id","id":9223372036854775808}` {
		t.Errorf("the compacted journal is %q, want only the next_id 2^63: every id is given", lines)
	}
	noIDLeft(d)
	if got := d.users(t); len(got) != 0 {
		t.Errorf("users %v, want none", got)
	}
}

const (
	annRecord = `{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}` + "\n"
	bobRecord = `{"op":"put","id":2,"name":"Bob","email":"bob@example.com"}` + "\n"
)

func journalTestEnv(name string) string {
	if name == "USERS_TOKENS" {
		return writeToken + ":write," + readToken + ":read"
	}
	return ""
}

// compactedSize is the size of the journal that compaction would write for these users, given in id
// order, and the next id: what the bound counts as the live data.
func compactedSize(nextID int64, users ...user) int64 {
	size := len(fmt.Sprintf(`{"op":"next_id","id":%d}`, nextID)) + 1
	for _, u := range users {
		size += len(fmt.Sprintf(`{"op":"put","id":%d,"name":%q,"email":%q}`, u.ID, u.Name, u.Email)) + 1
	}
	return int64(size)
}

// At start, as after every batch of writes, a journal past 4 × the live data plus the slack is
// rewritten as the live users alone, and one at or under it is left as it is.
func TestJournalIsCompactedAtStartOncePastItsBound(t *testing.T) {
	// One live user, Ann, patched 19 times: 20 records, a little over 1 KiB.
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.renameAnn(t, 1, 20)
	d.close()
	before, _ := os.ReadFile(path)
	live := compactedSize(2, user{1, "Ann 19", "ann@example.com"})
	atTheBound := int64(len(before)) - 4*live // the slack that puts the bound at the file's size

	t.Run("at its bound: kept as it is", func(t *testing.T) {
		d := openCompactingServer(t, path, atTheBound)
		d.close()
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("the journal was rewritten:\n%s", after)
		}
	})
	t.Run("one byte past it: compacted", func(t *testing.T) {
		d := openCompactingServer(t, path, atTheBound-1)
		if !strings.Contains(d.log.String(), "journal: compacted") {
			t.Errorf("no log line says the journal was compacted:\n%s", d.log.String())
		}
		d.close()
		want := []string{
			`{"op":"next_id","id":2}`,
			`{"op":"put","id":1,"name":"Ann 19","email":"ann@example.com"}`,
		}
		if got := journalLines(t, path); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("compacted journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if size := journalSize(t, path); size != live {
			t.Errorf("the compacted journal has %d bytes, want the live data's %d", size, live)
		}
		if _, err := os.Stat(path + ".compacting"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the temporary file is still there: %v", err)
		}
	})
}

func TestCompactedJournalKeepsUsersAndNeverReusesIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.create(t, "Bob", "bob@example.com")
	d.create(t, "Cy", "cy@example.com")
	d.mustStatus(t, http.StatusNoContent, "DELETE", "/api/users/3", "") // the newest user
	d.renameAnn(t, 0, 30)
	want := d.users(t)

	d.slack = 0
	d = d.restart(t) // compacts: 34 records for 2 users is far past 4 × the live data
	if lines := journalLines(t, path); len(lines) != 3 || lines[0] != `{"op":"next_id","id":4}` {
		t.Fatalf("compacted journal:\n%s\nwant next_id 4 and a put for each of the 2 users", strings.Join(lines, "\n"))
	}
	if got := d.users(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("users after compaction: %v, want %v", got, want)
	}

	d = d.restart(t) // replays the compacted file itself
	if got := d.users(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("users after a restart on the compacted journal: %v, want %v", got, want)
	}
	if got := d.create(t, "Dee", "dee@example.com"); got.ID != 4 {
		t.Errorf("the first id after compaction is %d, want 4 (3 was given, then deleted)", got.ID)
	}

	d = d.restart(t)
	if got := d.create(t, "Eve", "eve@example.com"); got.ID != 5 {
		t.Errorf("the next id is %d, want 5", got.ID)
	}
}

// failingFile stands in for the journal's file (journalFile) and fails like a full disk: from
// failAt on, a Write stores half its bytes and fails, or a Sync fails after the bytes were written.
type failingFile struct {
	*os.File
	failWrite bool // else Sync fails
	writes    atomic.Int32
	syncs     atomic.Int32
	failed    atomic.Bool
}

var errDiskFull = errors.New("no space left on device (a test's stand-in)")

func (f *failingFile) Write(p []byte) (int, error) {
	f.writes.Add(1)
	if f.failWrite && !f.failed.Swap(true) {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, errDiskFull
	}
	return f.File.Write(p)
}

func (f *failingFile) Sync() error {
	f.syncs.Add(1)
	if !f.failWrite && !f.failed.Swap(true) {
		return errDiskFull
	}
	return f.File.Sync()
}

func TestFailedJournalWriteRefusesLaterWritesButKeepsReads(t *testing.T) {
	for _, failWrite := range []bool{true, false} {
		name := "a failed fsync"
		if failWrite {
			name = "a failed write that stored half a record"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			d := openDurableServer(t, path)
			d.create(t, "Ann", "ann@example.com")
			goodSize := journalSize(t, path)
			disk := &failingFile{failWrite: failWrite}
			d.useFile(func(file *os.File) journalFile { disk.File = file; return disk })

			w := d.do("POST", "/api/users", `{"name":"Bob","email":"bob@example.com"}`, join(asWriter, asJSON)...)
			if message, _ := errorBody(t, w); w.Code != http.StatusInternalServerError || message != "internal server error" {
				t.Errorf("the write that failed: status %d %q, want 500 internal server error", w.Code, message)
			}
			if size := journalSize(t, path); size != goodSize {
				t.Errorf("file size %d after the failure, want %d: cut back to the last good record", size, goodSize)
			}
			if !strings.Contains(d.log.String(), "no space left on device") {
				t.Errorf("the log does not say why the write failed:\n%s", d.log.String())
			}

			// The disk works again, but a journal that failed is not trusted until a restart.
			d.mustStatus(t, http.StatusInternalServerError, "POST", "/api/users", `{"name":"Cy","email":"cy@example.com"}`)
			d.mustStatus(t, http.StatusInternalServerError, "PATCH", "/api/users/1", `{"name":"Ann Lee"}`)
			d.mustStatus(t, http.StatusInternalServerError, "DELETE", "/api/users/1", "")
			if writes, syncs := disk.writes.Load(), disk.syncs.Load(); writes != 1 || syncs > 1 {
				t.Errorf("the broken journal was written %d times and synced %d times, want once (a failed fsync is not retried)", writes, syncs)
			}
			if got := d.users(t); len(got) != 1 || got[1].Name != "Ann" {
				t.Errorf("reads after the failure: %v, want Ann alone, unchanged", got)
			}
			d.mustStatus(t, http.StatusOK, "GET", "/api/users/1", "")
			w = d.do("GET", "/healthz", "")
			if w.Code != http.StatusServiceUnavailable || w.Body.String() != `{"status":"journal broken"}` {
				t.Errorf("/healthz: %d %s, want 503 {\"status\":\"journal broken\"}", w.Code, w.Body)
			}

			d = d.restart(t)
			if got := d.users(t); len(got) != 1 || got[1].Name != "Ann" {
				t.Errorf("after the restart: %v, want Ann alone", got)
			}
			if w := d.do("GET", "/healthz", ""); w.Code != http.StatusOK {
				t.Errorf("/healthz after the restart: %d, want 200", w.Code)
			}
			if got := d.create(t, "Bob", "bob@example.com"); got.ID != 2 {
				t.Errorf("id %d, want 2: the write that failed was never given an id", got.ID)
			}
		})
	}
}

// gatedFile stands in for the journal's file and holds every Sync until the test lets it go.
type gatedFile struct {
	*os.File
	syncing chan struct{} // receives when a Sync begins
	proceed chan struct{} // a Sync returns once this is closed
	syncs   atomic.Int32
}

func (f *gatedFile) Sync() error {
	f.syncs.Add(1)
	select {
	case f.syncing <- struct{}{}:
	default:
	}
	<-f.proceed
	return f.File.Sync()
}

func TestWriteIsVisibleOnlyOnceDurableAndReadsNeverWaitForTheDisk(t *testing.T) {
	d := openDurableServer(t, filepath.Join(t.TempDir(), "users.jsonl"))
	disk := &gatedFile{syncing: make(chan struct{}, 1), proceed: make(chan struct{})}
	d.useFile(func(file *os.File) journalFile { disk.File = file; return disk })
	letSyncFinish := sync.OnceFunc(func() { close(disk.proceed) })
	t.Cleanup(letSyncFinish) // a test that stops early must not leave the journal stuck in an fsync

	created := make(chan int, 1)
	go func() {
		w := d.do("POST", "/api/users", `{"name":"Ann","email":"ann@example.com"}`, join(asWriter, asJSON)...)
		created <- w.Code
	}()
	<-disk.syncing // the record is written, not yet durable

	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if w := d.do("GET", "/api/users/1", "", asReader...); w.Code != http.StatusNotFound {
			t.Errorf("GET /api/users/1 during the fsync: %d, want 404 (not durable yet)", w.Code)
		}
		if w := d.do("GET", "/api/users", "", asReader...); !strings.Contains(w.Body.String(), `"total":0`) {
			t.Errorf("GET /api/users during the fsync: %s, want no user yet", w.Body)
		}
	}()
	select {
	case <-answered:
	case <-time.After(5 * time.Second):
		t.Fatal("reads waited for the fsync")
	}
	select {
	case code := <-created:
		t.Fatalf("the create was answered %d before its fsync finished", code)
	default:
	}

	letSyncFinish()
	if code := <-created; code != http.StatusCreated {
		t.Fatalf("create: %d, want 201", code)
	}
	d.mustStatus(t, http.StatusOK, "GET", "/api/users/1", "")
}

// slowSyncFile stands in for the journal's file with a disk whose fsync is slow, and counts them.
type slowSyncFile struct {
	*os.File
	syncs atomic.Int32
}

func (f *slowSyncFile) Sync() error {
	f.syncs.Add(1)
	time.Sleep(5 * time.Millisecond)
	return f.File.Sync()
}

// concurrently sends n requests at once, each made by request(i), and returns their statuses.
func (d *durableServer) concurrently(n int, request func(i int) (method, target, body string)) []int {
	statuses := make([]int, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			method, target, body := request(i)
			start.Wait()
			statuses[i] = d.do(method, target, body, join(asWriter, asJSON)...).Code
		}(i)
	}
	start.Done()
	done.Wait()
	return statuses
}

func TestConcurrentWritersShareFsyncs(t *testing.T) {
	d := openDurableServer(t, filepath.Join(t.TempDir(), "users.jsonl"))
	disk := &slowSyncFile{}
	d.useFile(func(file *os.File) journalFile { disk.File = file; return disk })

	const writers = 64
	statuses := d.concurrently(writers, func(i int) (string, string, string) {
		return "POST", "/api/users", fmt.Sprintf(`{"name":"User %d","email":"user%d@example.com"}`, i, i)
	})
	for i, status := range statuses {
		if status != http.StatusCreated {
			t.Errorf("create %d: status %d, want 201", i, status)
		}
	}
	if syncs := disk.syncs.Load(); syncs > writers/4 {
		t.Errorf("%d creates took %d fsyncs, want at most %d: writers waiting together share one", writers, syncs, writers/4)
	}
	d = d.restart(t)
	got := d.users(t)
	for id := int64(1); id <= writers; id++ {
		if _, ok := got[id]; !ok {
			t.Errorf("after the restart there is no user %d; want ids 1 to %d, each given once", id, writers)
		}
	}
}

func TestConcurrentCreatesWithOneEmailGiveExactlyOne201(t *testing.T) {
	d := openDurableServer(t, filepath.Join(t.TempDir(), "users.jsonl"))
	d.useFile(func(file *os.File) journalFile { return &slowSyncFile{File: file} }) // so that batches hold many writers

	statuses := d.concurrently(32, func(i int) (string, string, string) {
		email := "same@example.com"
		if i%2 == 1 {
			email = "SAME@Example.com" // e-mails are unique case-insensitively
		}
		return "POST", "/api/users", fmt.Sprintf(`{"name":"User %d","email":%q}`, i, email)
	})
	count := map[int]int{}
	for _, status := range statuses {
		count[status]++
	}
	if count[http.StatusCreated] != 1 || count[http.StatusConflict] != 31 {
		t.Errorf("statuses %v, want one 201 and 31 409", count)
	}
	d = d.restart(t)
	if got := d.users(t); len(got) != 1 {
		t.Errorf("users after the restart: %v, want one", got)
	}
}

func TestBatchJudgesEachWriteAfterTheOnesBeforeIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.create(t, "Bob", "bob@example.com")

	// One batch, judged in this order: the test writes it itself, as the writer holding writeMu
	// would, which fixes which writes share it.
	changes := []struct {
		change change
		want   error
	}{
		{patchEmail(1, "ann@example.org"), nil},      // frees ann@example.com
		{patchEmail(2, "ann@example.com"), nil},      // and Bob takes it
		{createChange("Cy", "bob@example.com"), nil}, // Bob's old one is free
		{createChange("Cy", "ANN@example.org"), errEmailTaken},
		{deleteChange(3), nil}, // the create earlier in the batch
		{replaceChange(3, "Cy", "cy@example.com"), errUserNotFound},
		{createChange("Dee", "dee@example.com"), nil}, // id 4: 3 was given
		{withIfMatch(change{op: opUpdate, id: 1}, `"0000000000000000"`), errIfMatchFailed},
	}
	pending := make([]*pendingChange, len(changes))
	for i, c := range changes {
		pending[i] = &pendingChange{change: c.change}
	}
	d.store.writeMu.Lock()
	d.store.writeBatch(pending)
	d.store.writeMu.Unlock()
	for i, c := range changes {
		if !errors.Is(pending[i].err, c.want) {
			t.Errorf("change %d %+v: error %v, want %v", i, c.change, pending[i].err, c.want)
		}
	}

	want := map[int64]user{
		1: {1, "Ann", "ann@example.org"},
		2: {2, "Bob", "ann@example.com"},
		4: {4, "Dee", "dee@example.com"},
	}
	if got := d.users(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("published: %v, want %v", got, want)
	}
	d = d.restart(t)
	if got := d.users(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replayed: %v, want %v", got, want)
	}
}

// startRunOnJournal runs the whole program in the background and waits until it listens. stop ends
// it as SIGINT would and returns what run returned.
func startRunOnJournal(t *testing.T, args ...string) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncLog
	result := make(chan error, 1)
	go func() {
		result <- run(ctx, append([]string{"users", "-addr", "127.0.0.1:0"}, args...), journalTestEnv, io.Discard, &stderr)
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "listening"); {
		select {
		case err := <-result:
			cancel()
			t.Fatalf("run stopped before listening: %v\n%s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("run did not listen within 10s:\n%s", stderr.String())
		}
	}
	return func() error {
		cancel()
		return <-result
	}
}

// The start-up line counts the users once the server is ready: the 12 samples included.
func TestStartUpLineCountsTheSampleUsers(t *testing.T) {
	env := map[string]string{"USERS_TOKENS": writeToken + ":write"}
	service := startService(t, env, "-data", filepath.Join(t.TempDir(), "new.jsonl"), "-sample-data")
	if line := regexp.MustCompile(`msg=listening [^\n]*`).FindString(service.stderr.String()); !strings.Contains(line, " users=12 ") {
		t.Errorf("the start-up line is %q, want users=12", line)
	}
}

func TestSampleDataIsJournalledOnlyIntoAJournalThatNeverHadAUser(t *testing.T) {
	t.Run("a new journal gets the 12 samples, once", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		for start := 1; start <= 2; start++ {
			if err := startRunOnJournal(t, "-data", path, "-sample-data")(); err != nil {
				t.Fatalf("start %d: %v", start, err)
			}
			lines := journalLines(t, path)
			if len(lines) != 12 || !strings.HasPrefix(lines[0], `{"op":"put","id":1,`) {
				t.Fatalf("after start %d the journal has %d lines, want the 12 samples:\n%s", start, len(lines), strings.Join(lines, "\n"))
			}
		}
	})
	t.Run("a journal whose users were all deleted gets none", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		content := annRecord + `{"op":"delete","id":1}` + "\n"
		writeJournalFile(t, path, content)
		if err := startRunOnJournal(t, "-data", path, "-sample-data")(); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("the journal changed:\n%s", data)
		}
	})
}

// Under steady overwrites through the whole program, the journal never grows past its bound by
// more than the batch that passes it, every acknowledged write survives a restart, and no id is
// given twice.
func TestJournalStaysUnderItsBoundUnderSteadyOverwrites(t *testing.T) {
	const users, writers, writesEach, slack = 24, 8, 60, 2048
	path := filepath.Join(t.TempDir(), "users.jsonl")
	env := map[string]string{"USERS_TOKENS": writeToken + ":write," + readToken + ":read"}
	service := startService(t, env, "-data", path, "-compact-slack", strconv.Itoa(slack))
	name := func(id, version int) string { return fmt.Sprintf("User %02d version %04d", id, version) }
	all := make([]user, users) // every name the same length, so the live data keeps its size
	for i := range all {
		all[i] = user{int64(i + 1), name(i+1, 0), fmt.Sprintf("user%02d@example.com", i+1)}
		if status, answer := service.send(t, "POST", "/api/users", writeToken, userJSON(all[i].Name, all[i].Email)); status != 201 {
			t.Fatalf("creating user %d: %d %s", i+1, status, answer)
		}
	}
	live := compactedSize(users+1, all...)
	lineSize := compactedSize(1, all[0]) - compactedSize(1)
	limit := 4*live + slack + writers*lineSize // the bound, and the batch that may pass it before compaction

	var largest atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= writesEach; n++ {
				u := &all[w+writers*(n%(users/writers))] // each writer changes users of its own
				body := userJSON(name(int(u.ID), n), u.Email)
				request, _ := http.NewRequest("PUT", service.url+userPath(u.ID), strings.NewReader(body))
				request.Header.Set("Authorization", "Bearer "+writeToken)
				request.Header.Set("Content-Type", "application/json")
				response, err := runClient.Do(request)
				if err != nil || response.StatusCode != http.StatusOK {
					t.Errorf("PUT %s: %v %v", userPath(u.ID), response, err)
					return
				}
				response.Body.Close()
				u.Name = name(int(u.ID), n) // acknowledged
				if info, err := os.Stat(path); err == nil {
					largest.Store(max(largest.Load(), info.Size()))
				}
			}
		}()
	}
	wg.Wait()
	compactions := strings.Count(service.stderr.String(), "journal: compacted")
	if err := service.stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes, %d compactions; the journal peaked at %d bytes, limit %d (live data %d bytes)",
		writers*writesEach, compactions, largest.Load(), limit, live)
	if compactions == 0 || largest.Load() > limit {
		t.Errorf("%d compactions, and the journal reached %d bytes: want some, and never more than %d", compactions, largest.Load(), limit)
	}

	service = startService(t, env, "-data", path, "-compact-slack", strconv.Itoa(slack))
	for _, u := range all {
		if status, answer := service.send(t, "GET", userPath(u.ID), readToken, ""); status != 200 || answer != userRepresentation(u.ID, u.Name, u.Email) {
			t.Errorf("after the restart %s is %d %s, want %s", userPath(u.ID), status, answer, userRepresentation(u.ID, u.Name, u.Email))
		}
	}
	if _, answer := service.send(t, "POST", "/api/users", writeToken, userJSON("New", "new@example.com")); !strings.Contains(answer, fmt.Sprintf(`"id":%d,`, users+1)) {
		t.Errorf("the next user is %s, want id %d: ids are never given twice", answer, users+1)
	}
}

// A compaction keeps the journal readable by its owner alone, as the journal itself is: it holds
// e-mail addresses.
func TestCompactedJournalIsTheOwnersAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no such file modes")
	}
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openCompactingServer(t, path, 0)
	d.create(t, "Ann", "ann@example.com")
	d.renameAnn(t, 0, 10)
	info, err := os.Stat(path)
	if err != nil || !strings.Contains(d.log.String(), "journal: compacted") || info.Mode().Perm() != 0o600 {
		t.Errorf("after a compaction the journal has the mode %v (%v), want -rw-------:\n%s", info.Mode(), err, d.log.String())
	}
}

// The largest slack means "never compact while running": 4 × the live data plus it must not
// overflow into a bound every file passes.
func TestTheLargestSlackNeverCompacts(t *testing.T) {
	d := openCompactingServer(t, filepath.Join(t.TempDir(), "users.jsonl"), math.MaxInt64)
	d.create(t, "Ann", "ann@example.com")
	d.renameAnn(t, 0, 10)
	if strings.Contains(d.log.String(), "compacted") {
		t.Errorf("compacted with the largest slack:\n%s", d.log.String())
	}
}

// A journal that is due to be compacted at start, and cannot be, stops the start (exit status 1),
// and is left as it was.
func TestCompactionThatFailsAtStartStopsTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.renameAnn(t, 0, 10)
	d.close()
	before, _ := os.ReadFile(path)
	if err := os.MkdirAll(filepath.Join(path+".compacting", "in the way"), 0o700); err != nil { // where the new file goes
		t.Fatal(err)
	}
	_, err := openUserStore(newJournal(path, newLogger("text", io.Discard), 0))
	if err == nil || !strings.Contains(err.Error(), "compacting") {
		t.Errorf("opening the journal returned %v, want the failed compaction", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("the journal changed:\n%s", after)
	}
}

// createFailingFile stands for the journal's createFile: the first file it creates fails at its
// first Write (failWrite) or Sync, as on a full disk; the files after it work.
func createFailingFile(failWrite bool) func(string) (journalFile, error) {
	var created atomic.Bool
	return func(name string) (journalFile, error) {
		file, err := os.Create(name)
		if err != nil || created.Swap(true) {
			return file, err
		}
		return &failingFile{File: file, failWrite: failWrite}, nil
	}
}

// A compaction can fail at each of its steps: writing the temporary file, its fsync, the rename,
// the folder's fsync. Whichever fails, the journal replays to exactly the acknowledged writes. A
// failure before the rename leaves the old file in use, and a later compaction succeeds; a failed
// fsync of the folder breaks the journal, since the rename may not be on the disk.
func TestCompactionThatFailsAtAnyStepLosesNoAcknowledgedWrite(t *testing.T) {
	failingRename := func(j *journal) {
		rename, failed := j.rename, atomic.Bool{}
		j.rename = func(from, to string) error {
			if !failed.Swap(true) {
				return errDiskFull
			}
			return rename(from, to)
		}
	}
	for _, step := range []struct {
		name   string
		inject func(j *journal)
		breaks bool
	}{
		{"writing the temporary file", func(j *journal) { j.createFile = createFailingFile(true) }, false},
		{"the fsync of the temporary file", func(j *journal) { j.createFile = createFailingFile(false) }, false},
		{"the rename", failingRename, false},
		{"the fsync of the folder", func(j *journal) { j.syncFolder = func(string) error { return errDiskFull } }, true},
	} {
		t.Run(step.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			d := openCompactingServer(t, path, 0) // compacted once past 4 × the live data
			d.create(t, "Ann", "ann@example.com")
			d.changeJournal(step.inject)
			acknowledged := "Ann"
			for i := 1; i <= 30; i++ {
				name := fmt.Sprintf("Ann %02d", i)
				switch w := d.do("PATCH", "/api/users/1", `{"name":"`+name+`"}`, join(asWriter, asJSON)...); {
				case w.Code == http.StatusOK:
					acknowledged = name
				case !step.breaks || w.Code != http.StatusInternalServerError:
					t.Fatalf("PATCH %d: %d %s", i, w.Code, w.Body)
				}
			}
			logged := d.log.String()
			health := d.do("GET", "/healthz", "").Code
			if step.breaks {
				if !strings.Contains(logged, "writes are refused until a restart") || health != http.StatusServiceUnavailable || acknowledged == "Ann 30" {
					t.Errorf("the journal is not broken (/healthz %d, last write acknowledged %s):\n%s", health, acknowledged, logged)
				}
				if strings.Contains(logged, "journal: compacted") {
					t.Errorf("a compaction that broke the journal is logged as done:\n%s", logged)
				}
			} else if !strings.Contains(logged, "compaction failed") || !strings.Contains(logged, "journal: compacted") || health != http.StatusOK {
				t.Errorf("want a failed compaction, then one that succeeds, and /healthz 200 (it is %d):\n%s", health, logged)
			}
			// After a failure, the next try waits for the live data's worth of writes, and once one
			// succeeded, every compaction comes at the bound again: 4 × the live data (slack 0).
			live := compactedSize(2, user{1, "Ann 30", "ann@example.com"})
			tries := regexp.MustCompile(`bytes_before=(\d+)`).FindAllStringSubmatch(logged, -1)
			for _, try := range tries[min(1, len(tries)):] {
				if before, _ := strconv.ParseInt(try[1], 10, 64); before > 4*live+live {
					t.Errorf("a compaction came at %d bytes, past the bound of %d and the line after it", before, 4*live)
				}
			}
			if failures := strings.Count(logged, "compaction failed"); failures > 1 {
				t.Errorf("%d failed compactions for one failure: a retry must wait", failures)
			}
			if !strings.Contains(logged, errDiskFull.Error()) {
				t.Errorf("the log does not say what failed:\n%s", logged)
			}

			d = d.restart(t)
			if got, want := d.users(t), map[int64]user{1: {1, acknowledged, "ann@example.com"}}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("after a restart: %v, want the last acknowledged write, %v", got, want)
			}
			if _, err := os.Stat(path + ".compacting"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary file is still there: %v", err)
			}
			if u := d.create(t, "Bob", "bob@example.com"); u.ID != 2 {
				t.Errorf("Bob has id %d, want 2", u.ID)
			}
		})
	}
}

// diskFile is a journal's file that a test writes as a function: to make writes fail, or panic.
type diskFile func(p []byte) (int, error)

func (write diskFile) Write(p []byte) (int, error) { return write(p) }

func (diskFile) Sync() error { return nil }

func (diskFile) Truncate(int64) error { return nil }

func (diskFile) Close() error { return nil }

// journalOn gives the server's store a journal on this file, as -data does, logging to the
// server's log.
func (s *testServer) journalOn(file journalFile) *journal {
	j := newJournal("users.jsonl", s.log, 1<<20)
	j.file, j.unlock = file, func() {}
	s.store.journal = j
	return j
}

// failingCommit makes every write fail as a full disk would, with an error the API did not foresee.
func failingCommit(s *testServer) {
	s.journalOn(diskFile(func([]byte) (int, error) { return 0, errors.New("disk on fire") }))
}

// brokenJournal gives the store a journal broken by an earlier failed write.
func brokenJournal(s *testServer) {
	s.journalOn(diskFile(func(p []byte) (int, error) { return len(p), nil })).failed.Store(true)
}

// A write that fails on the disk fails the changes whose writes were in it, and only those: a
// change the batch refused keeps its own answer.
func TestFailedWriteFailsOnlyTheChangesItHeld(t *testing.T) {
	d := openDurableServer(t, filepath.Join(t.TempDir(), "users.jsonl"))
	d.create(t, "Ann", "ann@example.com")
	d.useFile(func(file *os.File) journalFile { return &failingFile{File: file, failWrite: true} })
	pending := []*pendingChange{
		{change: createChange("Bob", "bob@example.com")},
		{change: deleteChange(99)},
		{change: createChange("Another Ann", "ANN@example.com")},
	}
	d.store.writeMu.Lock()
	d.store.writeBatch(pending)
	d.store.writeMu.Unlock()
	for i, want := range []error{errJournalBroken, errUserNotFound, errEmailTaken} {
		if !errors.Is(pending[i].err, want) || !pending[i].done {
			t.Errorf("change %d: %v (done %v), want %v", i+1, pending[i].err, pending[i].done, want)
		}
	}
}

// A writer that panics (a bug) leaves no change it took without an answer, and none with a
// success it never had: each is a 500, and the next writer goes on.
func TestAWriterThatPanicsAnswersEveryChangeItTook(t *testing.T) {
	s := newTestServer(t)
	s.journalOn(diskFile(func([]byte) (int, error) { panic("the disk is on fire") }))
	pending := []*pendingChange{{change: createChange("Ann", "ann@example.com")}, {change: createChange("Bob", "bob@example.com")}}
	func() {
		defer func() { recover() }()
		s.store.writeMu.Lock()
		defer s.store.writeMu.Unlock()
		for _, p := range pending {
			s.store.queue <- p
		}
		s.store.writeQueued()
	}()
	for i, p := range pending {
		if !p.done || !errors.Is(p.err, errInternal) {
			t.Errorf("change %d: done %v, error %v; want a 500", i+1, p.done, p.err)
		}
	}
	if users, _ := s.store.allUsers(); len(users) != 0 {
		t.Errorf("the store holds %v after the panic, want nothing published", users)
	}
}
