package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rules of replay.go: a journal at start is created durably, replayed, and its torn tail cut
// off; anything else damaged stops the start (README, "At start"). Replay checks the structure the
// store needs, never the API's field rules.

// Two records, as the service writes them.
const (
	replayAnn = `{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}` + "\n"
	replayBob = `{"op":"put","id":2,"name":"Bob","email":"bob@example.com"}` + "\n"
)

// replayServer opens the journal at path as a start does, replaying it, and returns the service
// on it and what the journal logged (one JSON record a line).
func replayServer(t *testing.T, path string) (*testServer, *logBuffer) {
	t.Helper()
	store, log := openJournal(t, path, 1<<20)
	return serverOn(t, store, testConfig(t)), log
}

// replayWriteFile writes a journal file as a test wants it, damaged or not.
func replayWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Every write, of every kind, is replayed at start, the e-mail index with it.
func TestJournalReplaysEveryWriteAtStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	ts, _ := replayServer(t, path)
	ann, _ := ts.create(t, "Ann", "ann@example.com")
	bob, _ := ts.create(t, "Bob", "bob@example.com")
	cy, _ := ts.create(t, "Cy", "cy@example.com")
	for _, write := range []struct{ method, target, body string }{
		{"PUT", userPath(ann.ID), `{"name":"Ann Lee","email":"ann.lee@example.com"}`},
		{"PATCH", userPath(bob.ID), `{"email":"bob@example.org"}`},
		{"DELETE", userPath(cy.ID), ""},
	} {
		r := httptest.NewRequest(write.method, write.target, strings.NewReader(write.body))
		r.Header.Set("Authorization", "Bearer "+writeToken)
		r.Header.Set("Content-Type", "application/json")
		if w := ts.serve(r); w.Code != http.StatusOK && w.Code != http.StatusNoContent {
			t.Fatalf("%s %s: %d %s", write.method, write.target, w.Code, w.Body)
		}
	}
	ts.store.close()

	ts, _ = replayServer(t, path)
	want := []user{{ann.ID, "Ann Lee", "ann.lee@example.com"}, {bob.ID, "Bob", "bob@example.org"}}
	if got := ts.users(t); !slices.Equal(got, want) {
		t.Errorf("after the restart: %v, want %v", got, want)
	}
	r := httptest.NewRequest("GET", userPath(cy.ID), nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	wantStatus(t, ts.serve(r), http.StatusNotFound)
	// The e-mail index is replayed too: the old address is free, the new one taken.
	for email, status := range map[string]int{"ANN@example.com": http.StatusCreated, "BOB@example.org": http.StatusConflict} {
		r := httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"Someone","email":"`+email+`"}`))
		r.Header.Set("Authorization", "Bearer "+writeToken)
		r.Header.Set("Content-Type", "application/json")
		wantStatus(t, ts.serve(r), status)
	}
}

// An id is given once: a restart does not give again the id of the newest user, deleted.
func TestIDsAreNeverReusedAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	ts, _ := replayServer(t, path)
	ts.create(t, "Ann", "ann@example.com")
	bob, _ := ts.create(t, "Bob", "bob@example.com")
	r := httptest.NewRequest("DELETE", userPath(bob.ID), nil) // the newest user
	r.Header.Set("Authorization", "Bearer "+writeToken)
	wantStatus(t, ts.serve(r), http.StatusNoContent)
	ts.store.close()

	ts, _ = replayServer(t, path)
	if cy, _ := ts.create(t, "Cy", "cy@example.com"); cy.ID != bob.ID+1 {
		t.Errorf("the first id after the restart is %d, want %d (%d was given, then deleted)", cy.ID, bob.ID+1, bob.ID)
	}
}

// Creating the journal makes its name durable: the folder is synced once the file is made, since
// a file's own fsync does not keep its name, and the writes in it, through a power loss.
func TestCreatingTheJournalSyncsItsFolder(t *testing.T) {
	folder := t.TempDir()
	path := filepath.Join(folder, "users.jsonl")
	open := func() (synced []string) {
		j := newJournal(path, newLogger("json", io.Discard), 1<<20)
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
	if synced := open(); !slices.Equal(synced, []string{folder}) {
		t.Errorf("creating the journal synced the folders %q, want %q once", synced, folder)
	}
	if synced := open(); len(synced) != 0 {
		t.Errorf("opening a journal that exists synced %q: its name is durable already", synced)
	}
}

// A new journal whose folder cannot be synced is refused: its writes could vanish with its name.
func TestNewJournalWhoseFolderCannotBeSyncedIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	j := newJournal(path, newLogger("json", io.Discard), 1<<20)
	failure := errors.New("the folder cannot be synced (a test's stand-in)")
	j.syncFolder = func(string) error { return failure }
	if s, err := openUserStore(j); err == nil {
		s.close()
		t.Fatal("the journal opened, though its folder could not be synced")
	} else if !strings.Contains(err.Error(), path) || !errors.Is(err, failure) {
		t.Errorf("error %q does not name the file and the failure", err)
	}
}

// Ids may be any positive 64-bit integer, given in increasing order: a journal whose next id is
// 2^62, or whose ids jump far ahead, starts, and its next user gets the id after. The store takes
// the memory of its users, never of the largest id (README, "The file").
func TestAHugeIDTakesNoMemory(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		next          int64
	}{
		{"a next_id of 2^62", `{"op":"next_id","id":4611686018427387904}` + "\n", 1 << 62},
		{"ids that jump far ahead", replayAnn + `{"op":"put","id":4000000000000000000,"name":"Bob","email":"bob@example.com"}` + "\n", 4000000000000000001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			replayWriteFile(t, path, tc.content)
			before := replayLiveHeap()
			ts, _ := replayServer(t, path)
			cy, _ := ts.create(t, "Cy", "cy@example.com")
			if cy.ID != tc.next {
				t.Errorf("the next user has id %d, want %d", cy.ID, tc.next)
			}
			if !testing.Short() { // a measure of memory: not in the quick loop
				if grown := int64(replayLiveHeap()) - int64(before); grown > 64<<20 {
					t.Errorf("the heap grew by %d MiB for a few users", grown>>20)
				}
			}
			ts.store.close()
			ts, _ = replayServer(t, path)
			if got := ts.users(t); len(got) == 0 || got[len(got)-1] != cy {
				t.Errorf("after a restart: %v, want %v last", got, cy)
			}
		})
	}
}

// replayLiveHeap returns the bytes of heap in use after a full collection.
func replayLiveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Replay does not judge the API's field rules again (README, "At start"): a journal holding a user
// that breaks today's rules, which an older version, or an older net/mail, let through, starts
// with that user exactly as written, who can still be changed and replayed again.
func TestJournalStartsWithAUserThatBreaksTodaysFieldRules(t *testing.T) {
	for _, tc := range []struct{ name, userName, email string }{
		{"a name of 101 characters", strings.Repeat("n", 101), "ann@example.com"},
		{"an e-mail that Go's mail parser refuses", "Ann", "ann"},
		{"an e-mail with a display name", "Ann", "Ann <ann@example.com>"},
		{"white space around a value", " Ann ", " ann@example.com "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if nameRule(tc.userName) == "" && emailRule(tc.email) == "" && strings.TrimSpace(tc.userName+tc.email) == tc.userName+tc.email {
				t.Fatalf("%q <%s> keeps today's field rules: the case proves nothing", tc.userName, tc.email)
			}
			path := filepath.Join(t.TempDir(), "users.jsonl")
			written, _ := json.Marshal(map[string]any{"op": "put", "id": 1, "name": tc.userName, "email": tc.email})
			replayWriteFile(t, path, string(written)+"\n"+replayBob)

			ts, _ := replayServer(t, path)
			want := []user{{1, tc.userName, tc.email}, {2, "Bob", "bob@example.com"}}
			if got := ts.users(t); !slices.Equal(got, want) {
				t.Fatalf("users %q, want %q", got, want)
			}
			// The user can be renamed, keeping the e-mail as written; the journal starts again.
			r := httptest.NewRequest("PATCH", userPath(1), strings.NewReader(`{"name":"Ann Lee"}`))
			r.Header.Set("Authorization", "Bearer "+writeToken)
			r.Header.Set("Content-Type", "application/json")
			wantStatus(t, ts.serve(r), http.StatusOK)
			ts.store.close()
			ts, _ = replayServer(t, path)
			want[0].Name = "Ann Lee"
			if got := ts.users(t); !slices.Equal(got, want) {
				t.Errorf("after a change and a restart: users %q, want %q", got, want)
			}
		})
	}
}

// A torn tail, what a crash or a power loss leaves after the last newline, was never acknowledged:
// it is dropped, logged with its offset and cut off the file, and its id never given (README, "At
// start").
func TestJournalDropsATornLastRecord(t *testing.T) {
	good := replayAnn + replayBob
	for _, tc := range []struct{ name, torn string }{
		{"half a record", `{"op":"put","id":3,"name":"C`},
		{"a whole record but its newline", `{"op":"delete","id":1}`}, // the newline is what makes a record count
		{"one stray byte", `{`},
		// A power loss can leave the file's last block zero-filled, after a record or in its middle.
		{"NUL bytes", strings.Repeat("\x00", 4096)},
		{"half a record, then NULs", `{"op":"put","id":3,"na` + strings.Repeat("\x00", 1000)},
		{"a single NUL", "\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			replayWriteFile(t, path, good+tc.torn)

			ts, log := replayServer(t, path)
			if got := ts.users(t); len(got) != 2 {
				t.Errorf("users after replay: %v, want Ann and Bob", got)
			}
			if info, err := os.Stat(path); err != nil || info.Size() != int64(len(good)) {
				t.Errorf("file size %v (%v), want %d: the torn record must be cut off", info.Size(), err, len(good))
			}
			torn := log.records(t, "journal: dropping a torn tail")
			if len(torn) != 1 || torn[0]["offset"] != float64(len(good)) || torn[0]["bytes"] != float64(len(tc.torn)) {
				t.Errorf("the log records of the torn tail are %v, want one naming offset %d and %d bytes", torn, len(good), len(tc.torn))
			}
			// The torn write was never acknowledged, so its id was never given.
			if cy, _ := ts.create(t, "Cy", "cy@example.com"); cy.ID != 3 {
				t.Errorf("next id %d, want 3", cy.ID)
			}
			ts.store.close()
			if data, _ := os.ReadFile(path); strings.Count(string(data), "\n") != 3 || !strings.HasPrefix(string(data), good) {
				t.Errorf("the journal after one more write:\n%s\nwant Ann, Bob and Cy, each on a line", data)
			}
		})
	}
}

// replayOpenOrPanic opens a journal, turning a panic into an error, so that a file that makes
// the replay panic fails its own test instead of the whole run. (A panic in main would end the
// process with status 2, which says "usage": a damaged journal must be exit status 1.)
func replayOpenOrPanic(path string) (s *userStore, err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			err = fmt.Errorf("opening the journal panicked: %v", recovered)
		}
	}()
	return openUserStore(newJournal(path, newLogger("json", io.Discard), 1<<20))
}

// A damaged journal, anything but a torn tail that breaks the structure the store needs, stops the
// start naming the file and the line, changes nothing in the file, and releases the lock (README,
// "At start").
func TestJournalRefusesADamagedFileAndLeavesItAsItWas(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		line    int
	}{
		{"a line that is not JSON", replayAnn + "not json\n" + replayBob, 2},
		{"an empty line", replayAnn + "\n" + replayBob, 2},
		{"a record with an unknown op", replayAnn + `{"op":"rename","id":1}` + "\n", 2},
		{"a record with an unknown field", `{"op":"put","id":1,"name":"Ann","email":"ann@example.com","age":3}` + "\n", 1},
		{"a record with trailing data", replayAnn + `{"op":"delete","id":1} {"op":"delete","id":1}` + "\n", 2},
		{"a put without an e-mail", `{"op":"put","id":1,"name":"Ann"}` + "\n", 1},
		{"a delete of a user that does not exist", replayAnn + `{"op":"delete","id":2}` + "\n", 2},
		{"two users with one e-mail", replayAnn + `{"op":"put","id":2,"name":"Ann","email":"ANN@example.com"}` + "\n", 2},
		{"a reused id", replayAnn + `{"op":"delete","id":1}` + "\n" + replayAnn, 3},
		{"an id created out of order", replayBob + replayAnn, 2},
		{"an id of zero", `{"op":"put","id":0,"name":"Ann","email":"ann@example.com"}` + "\n", 1},
		{"an id that is not a number", `{"op":"put","id":"1","name":"Ann","email":"ann@example.com"}` + "\n", 1},
		{"a next_id after the first line", replayAnn + `{"op":"next_id","id":5}` + "\n", 2},
		{"a file that is not a journal", "# notes\nbuy milk\n", 1},
		{"a one-line file that is not a journal, with no newline to end it", "buy milk", 1},
		{"NUL bytes, then something that is not a record", replayAnn + "\x00\x00buy milk", 2},
		{"a line of NUL bytes that ends in a newline", replayAnn + "\x00\x00\x00\n", 2},
		{"an id beyond 2^63-1", `{"op":"put","id":9223372036854775808,"name":"Ann","email":"ann@example.com"}` + "\n", 1},
		{"a next_id beyond 2^63", `{"op":"next_id","id":9223372036854775809}` + "\n", 1},
		{"a next_id of zero", `{"op":"next_id","id":0}` + "\n", 1},
		{"a member name in another case", `{"op":"put","ID":1,"name":"Ann","email":"ann@example.com"}` + "\n", 1},
		{"a member given twice", `{"op":"put","id":1,"name":"Ann","email":"ann@example.com","email":"bob@example.com"}` + "\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			replayWriteFile(t, path, tc.content)

			store, err := replayOpenOrPanic(path)
			if err == nil {
				store.close()
				t.Fatal("the journal opened; want it refused")
			}
			if where := path + ":" + strconv.Itoa(tc.line) + ":"; !strings.Contains(err.Error(), where) {
				t.Errorf("error %q does not name %s", err, where)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content {
				t.Errorf("the file changed:\n%q\nwant\n%q", data, tc.content)
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

// A damaged journal stops the program before it listens, with an error that is not a usage error
// (exit status 1, not 2) and names the file and the line.
func TestRunStopsWithANonUsageErrorOnADamagedJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	content := replayAnn + "{\"op\":\"put\",\"id\":2,\n" + replayBob // line 2 ends in a newline: not torn, damaged
	replayWriteFile(t, path, content)

	stderr := &logBuffer{}
	err := run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", path}, testEnv, io.Discard, stderr)
	if err == nil {
		t.Fatal("run started on a damaged journal")
	}
	if errors.As(err, new(usageError)) {
		t.Errorf("run returned a usage error (exit status 2), want exit status 1: %v", err)
	}
	if !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("error %q does not name %s:2", err, path)
	}
	if strings.Contains(stderr.String(), "listening") {
		t.Errorf("the server listened before refusing:\n%s", stderr)
	}
	if data, _ := os.ReadFile(path); string(data) != content {
		t.Errorf("the file changed:\n%q\nwant\n%q", data, content)
	}
}

// A journal that cannot be opened (a folder where the file should be) stops the program with an
// error naming it, for exit status 1.
func TestRunStopsWhenTheJournalCannotBeOpened(t *testing.T) {
	folder := t.TempDir()
	err := run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", folder}, testEnv, io.Discard, io.Discard)
	if err == nil || errors.As(err, new(usageError)) || !strings.Contains(err.Error(), folder) {
		t.Errorf("run on a folder as the journal returned %v, want an error naming it, for exit status 1", err)
	}
}

// A journal in a folder that does not exist, or whose "folder" is a file, stops the start with a
// message naming the folder, not the lock file beside the journal that could not be made.
func TestRunNamesAMissingFolderOfTheJournal(t *testing.T) {
	aFile := filepath.Join(t.TempDir(), "a-file")
	replayWriteFile(t, aFile, "")
	for name, folder := range map[string]string{"a folder that does not exist": filepath.Join(t.TempDir(), "missing", "dir"), "a file": aFile} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", filepath.Join(folder, "u.jsonl")},
				testEnv, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "there is no folder "+folder) || strings.Contains(err.Error(), ".lock") {
				t.Errorf("run returned %v, want an error that says there is no folder %s", err, folder)
			}
		})
	}
}

// A start removes the temporary file of a compaction a crash cut short, and compacts anew.
func TestCompactionOverwritesATemporaryFileLeftByACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	history := replayAnn
	for i := range 20 {
		history += fmt.Sprintf(`{"op":"put","id":1,"name":"Ann %d","email":"ann@example.com"}`+"\n", i)
	}
	replayWriteFile(t, path, history)
	replayWriteFile(t, path+".compacting", "half a compaction, cut short by a crash")

	store, err := openUserStore(newJournal(path, newLogger("json", io.Discard), 0)) // compacts: 21 records for one user
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	if got, _ := store.snapshot(); !slices.Equal(got, []user{{1, "Ann 19", "ann@example.com"}}) {
		t.Errorf("users after compaction: %v, want Ann 19", got)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"op":"next_id","id":2}`+"\n"+`{"op":"put","id":1,"name":"Ann 19","email":"ann@example.com"}`+"\n" {
		t.Errorf("the journal is\n%s\nwant it compacted", data)
	}
	if _, err := os.Stat(path + ".compacting"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// One server per file: a second journal on a file in use is refused, by the store and by the
// program (exit status 1), until the first server stops (README, "The file").
func TestSecondJournalOnTheSameFileIsRefused(t *testing.T) {
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly": // lock_unix.go
	default:
		t.Skipf("no file lock on %s: a second server is not stopped there", runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "users.jsonl")
	first, _ := replayServer(t, path)
	ann, _ := first.create(t, "Ann", "ann@example.com")

	second, err := openUserStore(newJournal(path, newLogger("json", io.Discard), 1<<20))
	if err == nil {
		second.close()
		t.Fatal("a second journal opened on a file that is in use")
	}
	if !strings.Contains(err.Error(), "locked") {
		t.Errorf("error %q does not say the journal is locked", err)
	}

	err = run(context.Background(), []string{"users", "-addr", "127.0.0.1:0", "-data", path}, testEnv, io.Discard, io.Discard)
	if err == nil || errors.As(err, new(usageError)) {
		t.Errorf("a second server on the same journal: run returned %v, want an error for exit status 1", err)
	}

	first.store.close() // the lock goes with the server that held it
	third, _ := replayServer(t, path)
	if got := third.users(t); !slices.Equal(got, []user{ann}) {
		t.Errorf("users %v, want Ann", got)
	}
}
