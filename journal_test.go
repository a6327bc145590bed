package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
	log     *syncLog // what the journal logged
	closing sync.Once
}

// openDurableServer opens (and replays) the journal at path and routes the API's writes through it.
func openDurableServer(t testing.TB, path string) *durableServer {
	t.Helper()
	s := newTestServer(t)
	log := &syncLog{}
	j, err := openJournal(path, s.store, newLogger("text", log))
	if err != nil {
		t.Fatalf("opening the journal: %v", err)
	}
	s.writer = j
	s.build()
	d := &durableServer{testServer: s, journal: j, path: path, log: log}
	t.Cleanup(d.close)
	return d
}

func (d *durableServer) close() { d.closing.Do(d.journal.close) }

// restart stops the server and starts a new one on the same journal, as after a crash: nothing
// but the file carries over.
func (d *durableServer) restart(t testing.TB) *durableServer {
	t.Helper()
	d.close()
	return openDurableServer(t, d.path)
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

func TestJournalReplaysEveryWriteAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.create(t, "Bob", "bob@example.com")
	d.create(t, "Cy", "cy@example.com")
	d.mustStatus(t, http.StatusOK, "PUT", "/api/users/1", `{"name":"Ann Lee","email":"ann.lee@example.com"}`)
	d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/2", `{"email":"bob@example.org"}`)
	d.mustStatus(t, http.StatusNoContent, "DELETE", "/api/users/3", "")

	d = d.restart(t)
	want := map[int64]user{
		1: {1, "Ann Lee", "ann.lee@example.com"},
		2: {2, "Bob", "bob@example.org"},
	}
	if got := d.users(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the restart: %v, want %v", got, want)
	}
	d.mustStatus(t, http.StatusNotFound, "GET", "/api/users/3", "")
	// The e-mail index is replayed too: the old address is free, the new one taken.
	d.mustStatus(t, http.StatusCreated, "POST", "/api/users", `{"name":"Ann","email":"ANN@example.com"}`)
	d.mustStatus(t, http.StatusConflict, "POST", "/api/users", `{"name":"Bob","email":"BOB@example.org"}`)
}

func TestIDsAreNeverReusedAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.create(t, "Bob", "bob@example.com")
	d.mustStatus(t, http.StatusNoContent, "DELETE", "/api/users/2", "") // the newest user

	d = d.restart(t)
	if got := d.create(t, "Cy", "cy@example.com"); got.ID != 3 {
		t.Errorf("the first id after the restart is %d, want 3 (2 was given, then deleted)", got.ID)
	}
}

func TestJournalDropsATornLastRecord(t *testing.T) {
	good := annRecord + bobRecord
	for name, torn := range map[string]string{
		"half a record":                  `{"op":"put","id":3,"name":"C`,
		"a whole record but its newline": `{"op":"delete","id":1}`, // the newline is what makes a record count
		"one stray byte":                 `{`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			writeJournalFile(t, path, good+torn)

			d := openDurableServer(t, path)
			if got := d.users(t); len(got) != 2 {
				t.Errorf("users after replay: %v, want Ann and Bob", got)
			}
			if size := journalSize(t, path); size != int64(len(good)) {
				t.Errorf("file size %d, want %d: the torn record must be cut off", size, len(good))
			}
			logged := d.log.String()
			if !strings.Contains(logged, "torn") || !strings.Contains(logged, "offset="+strconv.Itoa(len(good))) {
				t.Errorf("the log does not name the torn record and its offset %d:\n%s", len(good), logged)
			}
			// The torn write was never acknowledged, so its id was never given.
			if got := d.create(t, "Cy", "cy@example.com"); got.ID != 3 {
				t.Errorf("next id %d, want 3", got.ID)
			}
			d.close()
			if lines := journalLines(t, path); len(lines) != 3 {
				t.Errorf("the journal has %d lines after one more write, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
			}
		})
	}
}

// damagedJournals are files a server must refuse to start on, with the line it must name.
var damagedJournals = []struct {
	name    string
	content string
	line    int
}{
	{"a line that is not JSON", annRecord + "not json\n" + bobRecord, 2},
	{"an empty line", annRecord + "\n" + bobRecord, 2},
	{"a record with an unknown op", annRecord + `{"op":"rename","id":1}` + "\n", 2},
	{"a record with an unknown field", `{"op":"put","id":1,"name":"Ann","email":"ann@example.com","age":3}` + "\n", 1},
	{"a record with trailing data", annRecord + `{"op":"delete","id":1} {"op":"delete","id":1}` + "\n", 2},
	{"a put without an e-mail", `{"op":"put","id":1,"name":"Ann"}` + "\n", 1},
	{"a put that breaks the field rules", `{"op":"put","id":1,"name":" Ann ","email":"ann@example.com"}` + "\n", 1},
	{"a put with an invalid e-mail", `{"op":"put","id":1,"name":"Ann","email":"ann"}` + "\n", 1},
	{"a delete of a user that does not exist", annRecord + `{"op":"delete","id":2}` + "\n", 2},
	{"two users with one e-mail", annRecord + `{"op":"put","id":2,"name":"Ann","email":"ANN@example.com"}` + "\n", 2},
	{"a reused id", annRecord + `{"op":"delete","id":1}` + "\n" + annRecord, 3},
	{"an id of zero", `{"op":"put","id":0,"name":"Ann","email":"ann@example.com"}` + "\n", 1},
	{"an id that is not a number", `{"op":"put","id":"1","name":"Ann","email":"ann@example.com"}` + "\n", 1},
	{"a next_id after the first line", annRecord + `{"op":"next_id","id":5}` + "\n", 2},
	{"an id far beyond the next one", annRecord + `{"op":"put","id":4000000000000000000,"name":"Bob","email":"bob@example.com"}` + "\n", 2},
	{"a file that is not a journal", "# notes\nbuy milk\n", 1},
	{"a one-line file that is not a journal, with no newline to end it", "buy milk", 1},
}

const (
	annRecord = `{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}` + "\n"
	bobRecord = `{"op":"put","id":2,"name":"Bob","email":"bob@example.com"}` + "\n"
)

func TestJournalRefusesADamagedFileAndLeavesItAsItWas(t *testing.T) {
	for _, c := range damagedJournals {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			writeJournalFile(t, path, c.content)

			j, err := openJournalOrPanic(path)
			if err == nil {
				j.close()
				t.Fatal("the journal opened; want it refused")
			}
			if where := path + ":" + strconv.Itoa(c.line) + ":"; !strings.Contains(err.Error(), where) {
				t.Errorf("error %q does not name %s", err, where)
			}
			if data, _ := os.ReadFile(path); string(data) != c.content {
				t.Errorf("the file changed:\n%q\nwant\n%q", data, c.content)
			}
			// A refused start releases the lock, so the file can be mended and the server started.
			unlock, err := lockFile(path + ".lock")
			if err != nil {
				t.Errorf("the lock is still held after the refusal: %v", err)
			} else {
				unlock()
			}
		})
	}
}

// openJournalOrPanic opens a journal, turning a panic into an error, so that a file that makes
// the replay panic fails its own test instead of the whole run. (A panic in main would end the
// process with status 2, which says "usage": a damaged journal must be exit status 1.)
func openJournalOrPanic(path string) (j *journal, err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			err = fmt.Errorf("openJournal panicked: %v", recovered)
		}
	}()
	return openJournal(path, newUserStore(), newLogger("text", io.Discard))
}

func TestRunStopsWithANonUsageErrorOnADamagedJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	content := annRecord + "{\"op\":\"put\",\"id\":2,\n" + bobRecord // line 2 ends in a newline: not torn, damaged
	writeJournalFile(t, path, content)

	var stderr syncLog
	err := run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", path},
		journalTestEnv, io.Discard, &stderr)
	if err == nil {
		t.Fatal("run started on a damaged journal")
	}
	var usage usageError
	if errors.As(err, &usage) {
		t.Errorf("run returned a usage error (exit status 2), want exit status 1: %v", err)
	}
	if !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("error %q does not name %s:2", err, path)
	}
	if strings.Contains(stderr.String(), "listening") {
		t.Errorf("the server listened before refusing:\n%s", stderr.String())
	}
	if data, _ := os.ReadFile(path); string(data) != content {
		t.Errorf("the file changed:\n%q\nwant\n%q", data, content)
	}
}

func TestRunStopsWhenTheJournalCannotBeOpened(t *testing.T) {
	folder := t.TempDir() // a folder where a file is expected
	err := run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", folder},
		journalTestEnv, io.Discard, io.Discard)
	var usage usageError
	if err == nil || errors.As(err, &usage) || !strings.Contains(err.Error(), folder) {
		t.Errorf("run on a folder as the journal returned %v, want an error naming it, for exit status 1", err)
	}
}

func journalTestEnv(name string) string {
	if name == "USERS_TOKENS" {
		return writeToken + ":write," + readToken + ":read"
	}
	return ""
}

func TestJournalIsCompactedAtStartOnlyWhenWellPastTheLiveData(t *testing.T) {
	// One live user and n records in all: compaction starts above 2*1+16 = 18 records.
	journalWithRecords := func(t *testing.T, n int) string {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		d := openDurableServer(t, path)
		d.create(t, "Ann", "ann@example.com")
		for i := 1; i < n; i++ {
			d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/1", `{"name":"Ann `+strconv.Itoa(i)+`"}`)
		}
		d.close()
		return path
	}

	t.Run("18 records for 1 user: kept as it is", func(t *testing.T) {
		path := journalWithRecords(t, 18)
		before, _ := os.ReadFile(path)
		d := openDurableServer(t, path)
		d.close()
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("the journal was rewritten:\n%s", after)
		}
	})

	t.Run("19 records for 1 user: compacted", func(t *testing.T) {
		path := journalWithRecords(t, 19)
		d := openDurableServer(t, path)
		if !strings.Contains(d.log.String(), "compacted") {
			t.Errorf("no log line says the journal was compacted:\n%s", d.log.String())
		}
		d.close()
		want := []string{
			`{"op":"next_id","id":2}`,
			`{"op":"put","id":1,"name":"Ann 18","email":"ann@example.com"}`,
		}
		if got := journalLines(t, path); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("compacted journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
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
	for i := 0; i < 30; i++ {
		d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/1", `{"name":"Ann `+strconv.Itoa(i)+`"}`)
	}
	want := d.users(t)

	d = d.restart(t) // compacts: 34 records for 2 users
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

func TestCompactionOverwritesATemporaryFileLeftByACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	for i := 0; i < 20; i++ {
		d.mustStatus(t, http.StatusOK, "PATCH", "/api/users/1", `{"name":"Ann `+strconv.Itoa(i)+`"}`)
	}
	d.close()
	writeJournalFile(t, path+".compacting", "half a compaction, cut short by a crash")

	d = openDurableServer(t, path)
	if got := d.users(t); len(got) != 1 || got[1].Name != "Ann 19" {
		t.Errorf("users after compaction: %v, want Ann 19", got)
	}
	if _, err := os.Stat(path + ".compacting"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// The lock is flock(2), where the system has it (lock_unix.go); elsewhere nothing is locked.
func flockAvailable() bool {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return true
	}
	return false
}

func TestSecondJournalOnTheSameFileIsRefused(t *testing.T) {
	if !flockAvailable() {
		t.Skipf("no file lock on %s: a second server is not stopped there", runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "users.jsonl")
	first := openDurableServer(t, path)
	first.create(t, "Ann", "ann@example.com")

	second, err := openJournal(path, newUserStore(), newLogger("text", io.Discard))
	if err == nil {
		second.close()
		t.Fatal("a second journal opened on a file that is in use")
	}
	if !strings.Contains(err.Error(), "locked") {
		t.Errorf("error %q does not say the journal is locked", err)
	}

	err = run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", path},
		journalTestEnv, io.Discard, io.Discard)
	var usage usageError
	if err == nil || errors.As(err, &usage) {
		t.Errorf("a second server on the same journal: run returned %v, want an error for exit status 1", err)
	}

	first.close() // the lock goes with the server that held it
	third := openDurableServer(t, path)
	if got := third.users(t); len(got) != 1 {
		t.Errorf("users %v, want Ann", got)
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
			disk := &failingFile{File: d.journal.file.(*os.File), failWrite: failWrite}
			d.journal.file = disk // the journal's goroutine is idle: no write is in flight

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
	disk := &gatedFile{File: d.journal.file.(*os.File), syncing: make(chan struct{}, 1), proceed: make(chan struct{})}
	d.journal.file = disk
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
	disk := &slowSyncFile{File: d.journal.file.(*os.File)}
	d.journal.file = disk

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
	d.journal.file = &slowSyncFile{File: d.journal.file.(*os.File)} // so that batches hold many writers

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

	// One batch, judged in this order. The journal's goroutine is idle, so the test may hand it a
	// batch itself; that fixes which writes share it.
	changes := []struct {
		change change
		want   error
	}{
		{change{op: opPatch, id: 1, email: "ann@example.org"}, nil},       // frees ann@example.com
		{change{op: opPatch, id: 2, email: "ann@example.com"}, nil},       // and Bob takes it
		{change{op: opCreate, name: "Cy", email: "bob@example.com"}, nil}, // Bob's old one is free
		{change{op: opCreate, name: "Cy", email: "ANN@example.org"}, errEmailTaken},
		{change{op: opDelete, id: 3}, nil}, // the create earlier in the batch
		{change{op: opReplace, id: 3, name: "Cy", email: "cy@example.com"}, errUserNotFound},
		{change{op: opCreate, name: "Dee", email: "dee@example.com"}, nil}, // id 4: 3 was given
		{change{op: opPatch, id: 1, ifMatch: `"0000000000000000"`}, errPreconditionFailed},
	}
	pending := make([]*pendingWrite, len(changes))
	for i, c := range changes {
		pending[i] = &pendingWrite{change: c.change, done: make(chan struct{})}
	}
	d.journal.writeBatch(pending)
	for i, c := range changes {
		if <-pending[i].done; !errors.Is(pending[i].err, c.want) {
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
