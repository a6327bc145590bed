package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The rules of replay.go: a journal at start is created durably, replayed, and its torn tail cut off;
// anything else damaged stops the start (README, "At start").

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

// Creating the journal makes its name durable: the folder is synced once the file is made, since
// a file's own fsync does not keep its name, and the writes in it, through a power loss.
func TestCreatingTheJournalSyncsItsFolder(t *testing.T) {
	folder := t.TempDir()
	path := filepath.Join(folder, "users.jsonl")
	open := func() (synced []string) {
		j := newJournal(path, newLogger("text", io.Discard), 1<<20)
		j.syncFolder = func(folder string) error {
			synced = append(synced, folder)
			return syncFolder(folder)
		}
		s, err := openUserStore(j)
		if err != nil {
			t.Fatal(err)
		}
		s.close()
		return synced
	}
	if synced := open(); len(synced) != 1 || synced[0] != folder {
		t.Errorf("creating the journal synced the folders %q, want %q once", synced, folder)
	}
	if synced := open(); len(synced) != 0 {
		t.Errorf("opening a journal that exists synced %q: its name is durable already", synced)
	}
}

// A new journal whose folder cannot be synced is refused: its writes could vanish with its name.
func TestNewJournalWhoseFolderCannotBeSyncedIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	j := newJournal(path, newLogger("text", io.Discard), 1<<20)
	j.syncFolder = func(string) error { return errDiskFull }
	if s, err := openUserStore(j); err == nil {
		s.close()
		t.Fatal("the journal opened, though its folder could not be synced")
	} else if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), errDiskFull.Error()) {
		t.Errorf("error %q does not name the file and the failure", err)
	}
}

// Ids may be any positive 64-bit integer: a journal whose next id is 2^62 starts, and its next
// user gets that id. The store takes the memory of its users, never of the largest id.
func TestAHugeNextIDTakesNoMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	writeJournalFile(t, path, `{"op":"next_id","id":4611686018427387904}`+"\n")
	before := liveHeap()
	d := openDurableServer(t, path)
	if created := d.create(t, "Ann", "ann@example.com"); created.ID != 1<<62 {
		t.Errorf("the next user has id %d, want 2^62", created.ID)
	}
	if grown := int64(liveHeap()) - int64(before); grown > 64<<20 {
		t.Errorf("the heap grew by %d MiB for one user", grown>>20)
	}
	d = d.restart(t)
	if got := d.users(t); got[1<<62].Name != "Ann" || len(got) != 1 {
		t.Errorf("after a restart: %v, want Ann with id 2^62", got)
	}
}

// liveHeap returns the bytes of heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestJournalDropsATornLastRecord(t *testing.T) {
	good := annRecord + bobRecord
	for name, torn := range map[string]string{
		"half a record":                  `{"op":"put","id":3,"name":"C`,
		"a whole record but its newline": `{"op":"delete","id":1}`, // the newline is what makes a record count
		"one stray byte":                 `{`,
		// A power loss can leave the file's last block zero-filled, after a record or in its middle.
		"NUL bytes":                strings.Repeat("\x00", 4096),
		"half a record, then NULs": `{"op":"put","id":3,"na` + strings.Repeat("\x00", 1000),
		"a single NUL":             "\x00",
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
	{"NUL bytes, then something that is not a record", annRecord + "\x00\x00buy milk", 2},
	{"a line of NUL bytes that ends in a newline", annRecord + "\x00\x00\x00\n", 2},
	{"an id beyond 2^63-1", `{"op":"put","id":9223372036854775808,"name":"Ann","email":"ann@example.com"}` + "\n", 1},
	{"a next_id beyond 2^63", `{"op":"next_id","id":9223372036854775809}` + "\n", 1},
	{"a next_id of zero", `{"op":"next_id","id":0}` + "\n", 1},
	{"a member name in another case", `{"op":"put","ID":1,"name":"Ann","email":"ann@example.com"}` + "\n", 1},
	{"a member given twice", `{"op":"put","id":1,"name":"Ann","email":"ann@example.com","email":"bob@example.com"}` + "\n", 1},
}

func TestJournalRefusesADamagedFileAndLeavesItAsItWas(t *testing.T) {
	for _, c := range damagedJournals {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			writeJournalFile(t, path, c.content)

			store, err := openJournalOrPanic(path)
			if err == nil {
				store.close()
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
func openJournalOrPanic(path string) (s *userStore, err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			err = fmt.Errorf("opening the journal panicked: %v", recovered)
		}
	}()
	return openUserStore(newJournal(path, newLogger("text", io.Discard), 1<<20))
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

// A journal in a folder that does not exist, or whose "folder" is a file, stops the start with a
// message naming the folder, not the lock file beside the journal that could not be made.
func TestRunNamesAMissingFolderOfTheJournal(t *testing.T) {
	aFile := filepath.Join(t.TempDir(), "a-file")
	writeJournalFile(t, aFile, "")
	for _, folder := range []string{filepath.Join(t.TempDir(), "missing", "dir"), aFile} {
		err := run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", filepath.Join(folder, "u.jsonl")},
			journalTestEnv, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "there is no folder "+folder) || strings.Contains(err.Error(), ".lock") {
			t.Errorf("run returned %v, want an error that says there is no folder %s", err, folder)
		}
	}
}

func TestCompactionOverwritesATemporaryFileLeftByACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	d := openDurableServer(t, path)
	d.create(t, "Ann", "ann@example.com")
	d.renameAnn(t, 0, 20)
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

	second, err := openUserStore(newJournal(path, newLogger("text", io.Discard), 1<<20))
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
