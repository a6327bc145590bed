package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The journal's tests (README, "Durability with -data"). Each opens a journal in t.TempDir() under
// the real handler stack, writes through the API, and then looks at what a restart finds and at the
// file itself. A write is made one at a time: judged, appended and fsync'd, then applied
// (store.go), so each acknowledged write is one record and one fsync.

// journalServer is the service on a store kept in the journal at path, as -data runs it, with
// what the journal logged (one JSON record a line).
type journalServer struct {
	*testServer
	path       string
	slack      int64 // the file is compacted once it passes 4 × the live data + slack
	journalLog *logBuffer
}

// journalServerOn opens (and replays) the journal at path, and serves the API on it, as serverOn does.
func journalServerOn(t *testing.T, path string, slack int64) *journalServer {
	t.Helper()
	store, log := openJournal(t, path, slack)
	return &journalServer{testServer: serverOn(t, store, testConfig(t)), path: path, slack: slack, journalLog: log}
}

// restart stops the store and opens the same journal again, as after a crash: nothing but the file
// carries over.
func (s *journalServer) restart(t *testing.T) *journalServer {
	t.Helper()
	s.store.close()
	return journalServerOn(t, s.path, s.slack)
}

// useFile puts a stand-in, made from the open file, in place of the journal's file, as the writer
// would: holding writeMu.
func (s *journalServer) useFile(standIn func(*os.File) journalFile) {
	s.store.writeMu.Lock()
	defer s.store.writeMu.Unlock()
	s.store.journal.file = standIn(s.store.journal.file.(*os.File))
}

// changeJournal changes the journal as its writer would: holding writeMu.
func (s *journalServer) changeJournal(change func(j *journal)) {
	s.store.writeMu.Lock()
	defer s.store.writeMu.Unlock()
	change(s.store.journal)
}

// rename gives user id the names "<prefix> <from>" to "<prefix> <to-1>", one PATCH each: a journal
// with more history than live data. It returns the user as the last PATCH left it.
func (s *journalServer) rename(t *testing.T, id int64, prefix string, from, to int) user {
	t.Helper()
	var renamed user
	for i := from; i < to; i++ {
		w := s.serve(journalWrite("PATCH", userPath(id), `{"name":"`+prefix+" "+strconv.Itoa(i)+`"}`))
		wantStatus(t, w, http.StatusOK)
		if err := json.Unmarshal(w.Body.Bytes(), &renamed); err != nil {
			t.Fatal(err)
		}
	}
	return renamed
}

// journalWrite is a write as a client sends it: with the write token and, when it has a body, JSON.
func journalWrite(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+writeToken)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// journalRead is a read with the read token.
func journalRead(target string) *http.Request {
	r := httptest.NewRequest("GET", target, nil)
	r.Header.Set("Authorization", "Bearer "+readToken)
	return r
}

// journalLines returns the lines of the journal file, without their newlines.
func journalLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// journalSize returns the size of the file at path.
func journalSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// journalCompactedSize is the size of the journal that compaction would write for these users, given in id
// order, and the next id: what the bound counts as the live data. Names and e-mails are plain ASCII.
func journalCompactedSize(nextID int64, users ...user) int64 {
	size := len(fmt.Sprintf(`{"op":"next_id","id":%d}`, nextID)) + 1
	for _, u := range users {
		size += len(fmt.Sprintf(`{"op":"put","id":%d,"name":%q,"email":%q}`, u.ID, u.Name, u.Email)) + 1
	}
	return int64(size)
}

// The journal is JSON Lines: a put with the whole user for a create, a replace or a patch, and a
// delete with the id alone (README, "The file").
func TestJournalIsJSONLinesOfPutsAndDeletes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	wantStatus(t, s.serve(journalWrite("PATCH", userPath(ann.ID), `{"name":"Ann Lee"}`)), http.StatusOK)
	wantStatus(t, s.serve(journalWrite("DELETE", userPath(ann.ID), "")), http.StatusNoContent)
	s.store.close()

	want := []string{
		fmt.Sprintf(`{"op":"put","id":%d,"name":"Ann","email":"ann@example.com"}`, ann.ID),
		fmt.Sprintf(`{"op":"put","id":%d,"name":"Ann Lee","email":"ann@example.com"}`, ann.ID),
		fmt.Sprintf(`{"op":"delete","id":%d}`, ann.ID),
	}
	if got := journalLines(t, path); !slices.Equal(got, want) {
		t.Errorf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The last id is 2^63-1 (README, "Decisions"): it is given once, and every create after it is 409,
// never a negative id, also after a restart and a compaction.
func TestTheLastIDIsGivenOnceAndThenCreatesAre409(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	if err := os.WriteFile(path, []byte(`{"op":"next_id","id":9223372036854775807}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := journalServerOn(t, path, 0)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	if ann.ID != math.MaxInt64 {
		t.Fatalf("the next user has id %d, want 2^63-1", ann.ID)
	}
	noIDLeft := func(s *journalServer) {
		t.Helper()
		w := s.serve(journalWrite("POST", "/api/users", `{"name":"Bob","email":"bob@example.com"}`))
		wantError(t, w, http.StatusConflict, "no id is left to give: every id up to 9223372036854775807 has been used once")
	}
	noIDLeft(s)
	s.rename(t, ann.ID, "Ann", 1, 4) // history for compaction to drop
	wantStatus(t, s.serve(journalWrite("DELETE", userPath(ann.ID), "")), http.StatusNoContent)
	noIDLeft(s)

	s = s.restart(t) // replays, then compacts the file to its next_id alone
	if lines := journalLines(t, path); !slices.Equal(lines, []string{`{"op":"next_id","id":9223372036854775808}`}) {
		t.Errorf("the compacted journal is %q, want only the next_id 2^63: every id is given", lines)
	}
	noIDLeft(s)
	if got := s.users(t); len(got) != 0 {
		t.Errorf("users %v, want none", got)
	}
}

// At start, as after every write, a journal past 4 × the live data plus the slack is rewritten as
// the live users alone, and one at or under it is left as it is.
func TestJournalIsCompactedAtStartOncePastItsBound(t *testing.T) {
	// One live user, Ann, patched 19 times: 20 records, a little over 1 KiB.
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	ann = s.rename(t, ann.ID, "Ann", 1, 20)
	s.store.close()
	before, _ := os.ReadFile(path)
	live := journalCompactedSize(ann.ID+1, ann)
	atTheBound := int64(len(before)) - 4*live // the slack that puts the bound at the file's size

	t.Run("at its bound: kept as it is", func(t *testing.T) {
		s := journalServerOn(t, path, atTheBound)
		s.store.close()
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("the journal was rewritten:\n%s", after)
		}
	})
	t.Run("one byte past it: compacted", func(t *testing.T) {
		s := journalServerOn(t, path, atTheBound-1)
		if compacted := s.journalLog.records(t, "journal: compacted"); len(compacted) != 1 {
			t.Errorf("%d log records say the journal was compacted, want 1:\n%s", len(compacted), s.journalLog)
		}
		s.store.close()
		want := []string{
			fmt.Sprintf(`{"op":"next_id","id":%d}`, ann.ID+1),
			fmt.Sprintf(`{"op":"put","id":%d,"name":"Ann 19","email":"ann@example.com"}`, ann.ID),
		}
		if got := journalLines(t, path); !slices.Equal(got, want) {
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

// A compacted journal holds the live users and the next id: ids stay never reused, even the id of
// the newest user, deleted before the compaction.
func TestCompactedJournalKeepsUsersAndNeverReusesIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	s.create(t, "Bob", "bob@example.com")
	cy, _ := s.create(t, "Cy", "cy@example.com")
	wantStatus(t, s.serve(journalWrite("DELETE", userPath(cy.ID), "")), http.StatusNoContent) // the newest user
	s.rename(t, ann.ID, "Ann", 0, 30)
	want := s.users(t)

	s.slack = 0
	s = s.restart(t) // compacts: 34 records for 2 users is far past 4 × the live data
	if lines := journalLines(t, path); len(lines) != 3 || lines[0] != fmt.Sprintf(`{"op":"next_id","id":%d}`, cy.ID+1) {
		t.Fatalf("compacted journal:\n%s\nwant next_id %d and a put for each of the 2 users", strings.Join(lines, "\n"), cy.ID+1)
	}
	if got := s.users(t); !slices.Equal(got, want) {
		t.Errorf("users after compaction: %v, want %v", got, want)
	}

	s = s.restart(t) // replays the compacted file itself
	if got := s.users(t); !slices.Equal(got, want) {
		t.Errorf("users after a restart on the compacted journal: %v, want %v", got, want)
	}
	dee, _ := s.create(t, "Dee", "dee@example.com")
	if dee.ID != cy.ID+1 {
		t.Errorf("the first id after compaction is %d, want %d (%d was given, then deleted)", dee.ID, cy.ID+1, cy.ID)
	}

	s = s.restart(t)
	if eve, _ := s.create(t, "Eve", "eve@example.com"); eve.ID != dee.ID+1 {
		t.Errorf("the next id is %d, want %d", eve.ID, dee.ID+1)
	}
}

// journalFailingFile stands in for the journal's file (journalFile) and fails once like a full disk: a
// Write stores half its bytes and fails, or (failWrite false) a Sync fails after the bytes were
// written. It counts the Writes and Syncs it is asked for.
type journalFailingFile struct {
	*os.File
	failWrite bool
	writes    atomic.Int32
	syncs     atomic.Int32
	failed    atomic.Bool
}

var journalDiskFull = errors.New("no space left on device (a test's stand-in)")

func (f *journalFailingFile) Write(p []byte) (int, error) {
	f.writes.Add(1)
	if f.failWrite && !f.failed.Swap(true) {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, journalDiskFull
	}
	return f.File.Write(p)
}

func (f *journalFailingFile) Sync() error {
	f.syncs.Add(1)
	if !f.failWrite && !f.failed.Swap(true) {
		return journalDiskFull
	}
	return f.File.Sync()
}

// After a failed write or fsync, the file is cut back to its last good record and the journal is
// broken: that write and every later one is 500 and never touches the file again (a failed fsync
// is not retried), reads go on, /healthz is 503; a restart has the acknowledged writes alone
// (README, "When the disk fails").
func TestFailedJournalWriteRefusesLaterWritesButKeepsReads(t *testing.T) {
	for _, failWrite := range []bool{true, false} {
		name := "a failed fsync"
		if failWrite {
			name = "a failed write that stored half a record"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			s := journalServerOn(t, path, 1<<20)
			ann, _ := s.create(t, "Ann", "ann@example.com")
			goodSize := journalSize(t, path)
			disk := &journalFailingFile{failWrite: failWrite}
			s.useFile(func(file *os.File) journalFile { disk.File = file; return disk })

			w := s.serve(journalWrite("POST", "/api/users", `{"name":"Bob","email":"bob@example.com"}`))
			wantError(t, w, http.StatusInternalServerError, "internal server error")
			if size := journalSize(t, path); size != goodSize {
				t.Errorf("file size %d after the failure, want %d: cut back to the last good record", size, goodSize)
			}
			if !strings.Contains(s.journalLog.String(), journalDiskFull.Error()) {
				t.Errorf("the journal's log does not say why the write failed:\n%s", s.journalLog)
			}

			// The disk works again, but a journal that failed is not trusted until a restart.
			for _, r := range []*http.Request{
				journalWrite("POST", "/api/users", `{"name":"Cy","email":"cy@example.com"}`),
				journalWrite("PATCH", userPath(ann.ID), `{"name":"Ann Lee"}`),
				journalWrite("DELETE", userPath(ann.ID), ""),
			} {
				wantError(t, s.serve(r), http.StatusInternalServerError, "internal server error")
			}
			if writes, syncs := disk.writes.Load(), disk.syncs.Load(); writes != 1 || syncs > 1 {
				t.Errorf("the broken journal was written %d times and synced %d times, want once (a failed fsync is not retried)", writes, syncs)
			}
			if got := s.users(t); !slices.Equal(got, []user{ann}) {
				t.Errorf("reads after the failure: %v, want Ann alone, unchanged", got)
			}
			wantStatus(t, s.serve(journalRead(userPath(ann.ID))), http.StatusOK)
			health := s.serve(httptest.NewRequest("GET", "/healthz", nil))
			wantStatus(t, health, http.StatusServiceUnavailable)
			wantBody(t, health, `{"status":"journal broken"}`)

			s = s.restart(t)
			if got := s.users(t); !slices.Equal(got, []user{ann}) {
				t.Errorf("after the restart: %v, want Ann alone", got)
			}
			wantStatus(t, s.serve(httptest.NewRequest("GET", "/healthz", nil)), http.StatusOK)
			if bob, _ := s.create(t, "Bob", "bob@example.com"); bob.ID != ann.ID+1 {
				t.Errorf("Bob has id %d, want %d: the write that failed was never given an id", bob.ID, ann.ID+1)
			}
		})
	}
}

// Once a failed write has broken the journal, every later write is 500 until a restart, before it
// is judged: one that would have been 404, 409 or 412 too (README, "Durability with -data"). None
// of them touches the file.
func TestEveryWriteIs500OnABrokenJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	disk := &journalFailingFile{failWrite: true}
	s.useFile(func(file *os.File) journalFile { disk.File = file; return disk })
	wantStatus(t, s.serve(journalWrite("POST", "/api/users", `{"name":"Bob","email":"bob@example.com"}`)), http.StatusInternalServerError)
	goodSize := journalSize(t, path)

	staleTag := journalWrite("PATCH", userPath(ann.ID), `{"name":"Ann Lee"}`)
	staleTag.Header.Set("If-Match", `"0000000000000000"`)
	for _, tc := range []struct {
		name   string
		r      *http.Request
		status int
	}{
		{"a user that does not exist", journalWrite("DELETE", userPath(ann.ID+100), ""), http.StatusInternalServerError},
		{"an e-mail another user has", journalWrite("POST", "/api/users", `{"name":"Another Ann","email":"ANN@example.com"}`), http.StatusInternalServerError},
		{"an If-Match that is not the current ETag", staleTag, http.StatusInternalServerError},
		{"a write that would change the data", journalWrite("PATCH", userPath(ann.ID), `{"name":"Ann Lee"}`), http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, s.serve(tc.r), tc.status)
		})
	}
	if writes := disk.writes.Load(); writes != 1 {
		t.Errorf("the file was written %d times, want once: the write that broke it", writes)
	}
	if size := journalSize(t, path); size != goodSize {
		t.Errorf("file size %d, want %d", size, goodSize)
	}
}

// journalGatedFile stands in for the journal's file and holds every Sync until the test lets it go.
type journalGatedFile struct {
	*os.File
	syncing chan struct{} // receives when a Sync begins
	proceed chan struct{} // a Sync returns once this is closed
}

func (f *journalGatedFile) Sync() error {
	select {
	case f.syncing <- struct{}{}:
	default:
	}
	<-f.proceed
	return f.File.Sync()
}

// A write is visible to other requests only once it is durable, and reads never wait for the
// disk: a read during the fsync of a create answers at once, with the state before the create
// (README, "Durability with -data").
func TestWriteIsVisibleOnlyOnceDurableAndReadsNeverWaitForTheDisk(t *testing.T) {
	s := journalServerOn(t, filepath.Join(t.TempDir(), "users.jsonl"), 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	before := s.serve(journalRead("/api/users")).Body.String()
	disk := &journalGatedFile{syncing: make(chan struct{}, 1), proceed: make(chan struct{})}
	s.useFile(func(file *os.File) journalFile { disk.File = file; return disk })
	letSyncFinish := sync.OnceFunc(func() { close(disk.proceed) })
	t.Cleanup(letSyncFinish) // a test that stops early must not leave the journal stuck in an fsync

	created := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		created <- s.serve(journalWrite("POST", "/api/users", `{"name":"Bob","email":"bob@example.com"}`))
	}()
	<-disk.syncing // the record is written, not yet durable

	read := make(chan string, 1)
	go func() { read <- s.serve(journalRead("/api/users")).Body.String() }()
	select {
	case during := <-read:
		if during != before {
			t.Errorf("GET /api/users during the fsync:\n%s\nwant the list before the create:\n%s", during, before)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a read waited for the fsync")
	}
	select {
	case w := <-created:
		t.Fatalf("the create was answered %d before its fsync finished", w.Code)
	default:
	}

	letSyncFinish()
	w := <-created
	wantStatus(t, w, http.StatusCreated)
	var bob user
	if err := json.Unmarshal(w.Body.Bytes(), &bob); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.serve(journalRead(userPath(bob.ID))), http.StatusOK)
	if got := s.users(t); !slices.Equal(got, []user{ann, bob}) {
		t.Errorf("users after the fsync: %v, want Ann and Bob", got)
	}
}

// journalCountingFile stands in for the journal's file and counts its Writes and Syncs.
type journalCountingFile struct {
	*os.File
	writes, syncs atomic.Int32
}

func (f *journalCountingFile) Write(p []byte) (int, error) {
	f.writes.Add(1)
	return f.File.Write(p)
}

func (f *journalCountingFile) Sync() error {
	f.syncs.Add(1)
	return f.File.Sync()
}

// concurrently serves the requests all at once, each from its own goroutine, and returns the
// answers in the same order.
func (s *journalServer) concurrently(requests []*http.Request) []*httptest.ResponseRecorder {
	answers := make([]*httptest.ResponseRecorder, len(requests))
	start := make(chan struct{})
	var done sync.WaitGroup
	for i, r := range requests {
		done.Add(1)
		go func() {
			defer done.Done()
			<-start
			answers[i] = s.serve(r)
		}()
	}
	close(start)
	done.Wait()
	return answers
}

// Writes are made one at a time, each with its own fsync (README, "Durability with -data"): every
// acknowledged write, however many writers send them at once, is one record and one fsync; a
// write the store refuses is neither. Concurrent creates each get an id of their own, and a
// restart finds every acknowledged write.
func TestEachWriteIsItsOwnRecordAndItsOwnFsync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 1<<20)
	disk := &journalCountingFile{}
	s.useFile(func(file *os.File) journalFile { disk.File = file; return disk })
	const writers = 32
	wantCounts := func(step string, records int32) {
		t.Helper()
		if writes, syncs := disk.writes.Load(), disk.syncs.Load(); writes != records || syncs != records {
			t.Errorf("after %s: %d writes and %d fsyncs, want %d of each: one per acknowledged write", step, writes, syncs, records)
		}
		if lines := journalLines(t, path); len(lines) != int(records) {
			t.Errorf("after %s the journal has %d records, want %d", step, len(lines), records)
		}
	}

	creates := make([]*http.Request, writers)
	for i := range creates {
		creates[i] = journalWrite("POST", "/api/users", fmt.Sprintf(`{"name":"User %d","email":"user%d@example.com"}`, i, i))
	}
	users := make([]user, writers)
	ids := map[int64]bool{}
	for i, w := range s.concurrently(creates) {
		wantStatus(t, w, http.StatusCreated)
		if err := json.Unmarshal(w.Body.Bytes(), &users[i]); err != nil {
			t.Fatal(err)
		}
		if ids[users[i].ID] {
			t.Errorf("id %d was given twice", users[i].ID)
		}
		ids[users[i].ID] = true
	}
	wantCounts("the creates", writers)

	// Then each user is replaced, patched or deleted, all at once.
	changes := make([]*http.Request, writers)
	var want []user
	for i, u := range users {
		switch i % 3 {
		case 0:
			changes[i] = journalWrite("PUT", userPath(u.ID), fmt.Sprintf(`{"name":"User %d","email":"new%d@example.com"}`, i, i))
			want = append(want, user{u.ID, u.Name, fmt.Sprintf("new%d@example.com", i)})
		case 1:
			changes[i] = journalWrite("PATCH", userPath(u.ID), fmt.Sprintf(`{"name":"Patched %d"}`, i))
			want = append(want, user{u.ID, fmt.Sprintf("Patched %d", i), u.Email})
		default:
			changes[i] = journalWrite("DELETE", userPath(u.ID), "")
		}
	}
	for i, w := range s.concurrently(changes) {
		if w.Code != http.StatusOK && w.Code != http.StatusNoContent {
			t.Errorf("%s %s: status %d, body %s", changes[i].Method, changes[i].URL, w.Code, w.Body)
		}
	}
	wantCounts("the changes", 2*writers)

	staleTag := journalWrite("PATCH", userPath(users[1].ID), `{"name":"Stale"}`)
	staleTag.Header.Set("If-Match", `"0000000000000000"`)
	for i, w := range s.concurrently([]*http.Request{
		journalWrite("POST", "/api/users", fmt.Sprintf(`{"name":"Again","email":%q}`, users[1].Email)), // 409
		journalWrite("DELETE", userPath(users[2].ID), ""),                                              // 404: deleted
		staleTag, // 412
	}) {
		if want := []int{409, 404, 412}[i]; w.Code != want {
			t.Errorf("refused write %d: status %d, want %d", i, w.Code, want)
		}
	}
	wantCounts("the refused writes", 2*writers)

	slices.SortFunc(want, func(a, b user) int { return cmp.Compare(a.ID, b.ID) })
	if got := s.users(t); !slices.Equal(got, want) {
		t.Errorf("users:\n%v\nwant\n%v", got, want)
	}
	s = s.restart(t)
	if got := s.users(t); !slices.Equal(got, want) {
		t.Errorf("users after a restart:\n%v\nwant\n%v", got, want)
	}
}

// Creates sent all at once with one e-mail, in any case, give exactly one 201 and 409s: e-mails
// are unique case-insensitively, as judged against the state each write finds, and a restart has
// the one user.
func TestConcurrentCreatesWithOneEmailGiveExactlyOne201(t *testing.T) {
	s := journalServerOn(t, filepath.Join(t.TempDir(), "users.jsonl"), 1<<20)
	creates := make([]*http.Request, 32)
	for i := range creates {
		email := "same@example.com"
		if i%2 == 1 {
			email = "SAME@Example.com"
		}
		creates[i] = journalWrite("POST", "/api/users", fmt.Sprintf(`{"name":"User %d","email":%q}`, i, email))
	}
	count := map[int]int{}
	for _, w := range s.concurrently(creates) {
		count[w.Code]++
	}
	if want := map[int]int{http.StatusCreated: 1, http.StatusConflict: 31}; !maps.Equal(count, want) {
		t.Errorf("statuses %v, want %v", count, want)
	}
	s = s.restart(t)
	if got := s.users(t); len(got) != 1 {
		t.Errorf("users after the restart: %v, want one", got)
	}
}

// Each write is judged against the state the writes before it left: an e-mail one write frees
// another may take at once, a user just created can be deleted, an id once given is not given
// again. Replay follows the same order, so a restart has the same users.
func TestEachWriteIsJudgedAgainstTheWritesBeforeIt(t *testing.T) {
	s := journalServerOn(t, filepath.Join(t.TempDir(), "users.jsonl"), 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	bob, _ := s.create(t, "Bob", "bob@example.com")

	// Ann's change of address frees ann@example.com, Bob takes it, and Cy takes Bob's old one.
	wantStatus(t, s.serve(journalWrite("PATCH", userPath(ann.ID), `{"email":"ann@example.org"}`)), http.StatusOK)
	wantStatus(t, s.serve(journalWrite("PATCH", userPath(bob.ID), `{"email":"ann@example.com"}`)), http.StatusOK)
	cy, _ := s.create(t, "Cy", "bob@example.com")
	wantStatus(t, s.serve(journalWrite("POST", "/api/users", `{"name":"Cy","email":"ANN@example.org"}`)), http.StatusConflict)
	wantStatus(t, s.serve(journalWrite("DELETE", userPath(cy.ID), "")), http.StatusNoContent)
	wantStatus(t, s.serve(journalWrite("PUT", userPath(cy.ID), `{"name":"Cy","email":"cy@example.com"}`)), http.StatusNotFound)
	dee, _ := s.create(t, "Dee", "dee@example.com")
	if dee.ID != cy.ID+1 {
		t.Errorf("Dee has id %d, want %d: %d was given to Cy", dee.ID, cy.ID+1, cy.ID)
	}
	stale := journalWrite("PATCH", userPath(ann.ID), `{"name":"Ann Lee"}`)
	stale.Header.Set("If-Match", `"0000000000000000"`)
	wantStatus(t, s.serve(stale), http.StatusPreconditionFailed)

	want := []user{{ann.ID, "Ann", "ann@example.org"}, {bob.ID, "Bob", "ann@example.com"}, dee}
	if got := s.users(t); !slices.Equal(got, want) {
		t.Errorf("users: %v, want %v", got, want)
	}
	s = s.restart(t)
	if got := s.users(t); !slices.Equal(got, want) {
		t.Errorf("replayed: %v, want %v", got, want)
	}
}

// journalPanickingFile stands in for the journal's file with a bug: it writes (and, at Sync, syncs) as the
// file does, then panics at Write or at Sync, after the record is in the file and before the
// change is made in memory.
type journalPanickingFile struct {
	*os.File
	panicAt string // "Write" or "Sync"
}

func (f *journalPanickingFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if f.panicAt == "Write" {
		panic("a bug after the record was written")
	}
	return n, err
}

func (f *journalPanickingFile) Sync() error {
	err := f.File.Sync()
	if f.panicAt == "Sync" {
		panic("a bug after the record was synced")
	}
	return err
}

// journalFileUsers reads the users a journal file holds, as jq would (README, "The file"): not
// through replay.go, so that a test can compare what replay finds with what the file says.
func journalFileUsers(t *testing.T, path string) []user {
	t.Helper()
	byID := map[int64]user{}
	for _, line := range journalLines(t, path) {
		var r struct {
			Op          string
			ID          int64
			Name, Email string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		switch r.Op {
		case "put":
			byID[r.ID] = user{r.ID, r.Name, r.Email}
		case "delete":
			delete(byID, r.ID)
		}
	}
	users := make([]user, 0, len(byID))
	for _, u := range byID {
		users = append(users, u)
	}
	slices.SortFunc(users, func(a, b user) int { return cmp.Compare(a.ID, b.ID) })
	return users
}

// A panic between the journal's append and the change in memory (a bug) is answered 500 through
// the real handler stack and marks the journal broken, as a failed fsync does: /healthz is 503,
// every later write is 500, reads go on with the state before it. Memory and file never part ways:
// no later write lands on a memory that lacks a record of the file, and a restart holds exactly
// what the file holds (README, "When the disk fails").
func TestAPanicAfterTheAppendBreaksTheJournal(t *testing.T) {
	for _, panicAt := range []string{"Write", "Sync"} {
		t.Run("a panic in "+panicAt, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			s := journalServerOn(t, path, 1<<20)
			ann, _ := s.create(t, "Ann", "ann@example.com")
			s.useFile(func(file *os.File) journalFile { return &journalPanickingFile{File: file, panicAt: panicAt} })

			w := s.serve(journalWrite("POST", "/api/users", `{"name":"Bob","email":"bob@example.com"}`))
			wantError(t, w, http.StatusInternalServerError, "internal server error")
			if panics := s.log.records(t, "panic in handler"); len(panics) != 1 {
				t.Errorf("%d log records of the panic, want 1:\n%s", len(panics), s.log)
			}
			if !strings.Contains(s.journalLog.String(), "a write panicked") {
				t.Errorf("the journal's log does not say it broke on a panic:\n%s", s.journalLog)
			}
			health := s.serve(httptest.NewRequest("GET", "/healthz", nil))
			wantStatus(t, health, http.StatusServiceUnavailable)
			wantBody(t, health, `{"status":"journal broken"}`)

			// The file holds Bob, whom memory never got: a later create would take his id.
			inFile := journalFileUsers(t, path)
			if len(inFile) != 2 || inFile[1].Email != "bob@example.com" {
				t.Fatalf("the file holds %v, want Ann and the Bob the panic cut short", inFile)
			}
			size := journalSize(t, path)
			for _, r := range []*http.Request{
				journalWrite("POST", "/api/users", `{"name":"Cy","email":"cy@example.com"}`),
				journalWrite("PATCH", userPath(ann.ID), `{"name":"Ann Lee"}`),
				journalWrite("DELETE", userPath(ann.ID), ""),
			} {
				wantError(t, s.serve(r), http.StatusInternalServerError, "internal server error")
			}
			if after := journalSize(t, path); after != size {
				t.Errorf("the file grew from %d to %d bytes after the panic", size, after)
			}
			if got := s.users(t); !slices.Equal(got, []user{ann}) {
				t.Errorf("reads after the panic: %v, want Ann alone", got)
			}

			s = s.restart(t)
			if got := s.users(t); !slices.Equal(got, inFile) {
				t.Errorf("after a restart the store holds %v, want what the file holds, %v", got, inFile)
			}
			wantStatus(t, s.serve(httptest.NewRequest("GET", "/healthz", nil)), http.StatusOK)
			if cy, _ := s.create(t, "Cy", "cy@example.com"); cy.ID != inFile[1].ID+1 {
				t.Errorf("Cy has id %d, want %d: ids in the file are never given again", cy.ID, inFile[1].ID+1)
			}
		})
	}
}

// The start-up line counts the users once the server is ready: the 12 samples included.
func TestStartUpLineCountsTheSampleUsers(t *testing.T) {
	p := startProgram(t, testEnv, "-data", filepath.Join(t.TempDir(), "new.jsonl"), "-sample-data", "-log-format", "json")
	listening := p.stderr.records(t, "listening")
	if len(listening) != 1 || listening[0]["users"] != float64(12) {
		t.Errorf("the start-up records are %v, want one with users 12", listening)
	}
}

// -sample-data adds the 12 examples to a journal that never had a user, once, journalled like any
// other write; a journal whose users were all deleted gets none (README, "Durability with -data").
func TestSampleDataIsJournalledOnlyIntoAJournalThatNeverHadAUser(t *testing.T) {
	t.Run("a new journal gets the 12 samples, once", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		for start := 1; start <= 2; start++ {
			if err := startProgram(t, testEnv, "-data", path, "-sample-data").stop(); err != nil {
				t.Fatalf("start %d: %v", start, err)
			}
			lines := journalLines(t, path)
			if len(lines) != 12 || !strings.HasPrefix(lines[0], `{"op":"put","id":1,"name":"Ada Lovelace",`) {
				t.Fatalf("after start %d the journal has %d lines, want the 12 samples:\n%s", start, len(lines), strings.Join(lines, "\n"))
			}
		}
	})
	t.Run("a journal whose users were all deleted gets none", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "users.jsonl")
		content := `{"op":"put","id":1,"name":"Ann","email":"ann@example.com"}` + "\n" + `{"op":"delete","id":1}` + "\n"
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := startProgram(t, testEnv, "-data", path, "-sample-data").stop(); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("the journal changed:\n%s", data)
		}
	})
}

// Under steady overwrites through the whole program, the journal never grows past its bound by
// more than the one write that passes it (the write that passes it compacts it), every
// acknowledged write survives a restart, and no id is given twice.
func TestJournalStaysUnderItsBoundUnderSteadyOverwrites(t *testing.T) {
	const users, writers, writesEach, slack = 24, 8, 60, 2048
	path := filepath.Join(t.TempDir(), "users.jsonl")
	flags := []string{"-data", path, "-compact-slack", strconv.Itoa(slack), "-log-format", "json"}
	p := startProgram(t, testEnv, flags...)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: writers}}
	t.Cleanup(client.CloseIdleConnections)
	send := func(method, target, token, body string) (int, string, error) {
		r, err := http.NewRequest(method, p.url+target, strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		r.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		answer, err := client.Do(r)
		if err != nil {
			return 0, "", err
		}
		defer answer.Body.Close()
		b, err := io.ReadAll(answer.Body)
		return answer.StatusCode, string(b), err
	}
	name := func(i, version int) string { return fmt.Sprintf("User %02d version %04d", i, version) }
	all := make([]user, users) // every name the same length, so the live data keeps its size
	for i := range all {
		body := fmt.Sprintf(`{"name":%q,"email":"user%02d@example.com"}`, name(i, 0), i)
		status, answer, err := send("POST", "/api/users", writeToken, body)
		if status != http.StatusCreated || json.Unmarshal([]byte(answer), &all[i]) != nil {
			t.Fatalf("creating user %d: %d %s %v", i, status, answer, err)
		}
	}
	live := journalCompactedSize(all[users-1].ID+1, all...)
	lineSize := journalCompactedSize(1, all[0]) - journalCompactedSize(1)
	limit := 4*live + slack + lineSize // the bound, and the one write that may pass it before its compaction

	peaks := make([]int64, writers) // each writer's own largest size seen: no shared bookkeeping to race on
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= writesEach; n++ {
				i := w + writers*(n%(users/writers)) // each writer changes users of its own
				u := all[i]
				u.Name = name(i, n)
				status, answer, err := send("PUT", userPath(u.ID), writeToken, fmt.Sprintf(`{"name":%q,"email":%q}`, u.Name, u.Email))
				if status != http.StatusOK {
					t.Errorf("PUT %s: %d %s %v", userPath(u.ID), status, answer, err)
					return
				}
				all[i] = u // acknowledged
				if info, err := os.Stat(path); err == nil {
					peaks[w] = max(peaks[w], info.Size())
				}
			}
		}()
	}
	wg.Wait()
	compactions := len(p.stderr.records(t, "journal: compacted"))
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	largest := slices.Max(peaks)
	t.Logf("%d writes, %d compactions; the journal peaked at %d bytes, limit %d (live data %d bytes)",
		writers*writesEach, compactions, largest, limit, live)
	if compactions == 0 || largest > limit {
		t.Errorf("%d compactions, and the journal reached %d bytes: want some, and never more than %d", compactions, largest, limit)
	}

	client.CloseIdleConnections()
	p = startProgram(t, testEnv, flags...)
	for _, u := range all {
		want, _ := encodeJSON(u)
		if status, answer, err := send("GET", userPath(u.ID), readToken, ""); status != http.StatusOK || answer != string(want) {
			t.Errorf("after the restart %s is %d %s %v, want %s", userPath(u.ID), status, answer, err, want)
		}
	}
	var next user
	status, answer, err := send("POST", "/api/users", writeToken, `{"name":"New","email":"new@example.com"}`)
	if status != http.StatusCreated || json.Unmarshal([]byte(answer), &next) != nil || next.ID != all[users-1].ID+1 {
		t.Errorf("the next create: %d %s %v, want id %d: ids are never given twice", status, answer, err, all[users-1].ID+1)
	}
}

// A compaction keeps the journal readable by its owner alone, as the journal itself is: it holds
// e-mail addresses.
func TestCompactedJournalIsTheOwnersAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no such file modes")
	}
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 0)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	s.rename(t, ann.ID, "Ann", 0, 10)
	if len(s.journalLog.records(t, "journal: compacted")) == 0 {
		t.Fatalf("no compaction:\n%s", s.journalLog)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("after a compaction the journal has the mode %v (%v), want -rw-------", info.Mode(), err)
	}
}

// The largest slack means "never compact while running": 4 × the live data plus it must not
// overflow into a bound every file passes.
func TestTheLargestSlackNeverCompacts(t *testing.T) {
	s := journalServerOn(t, filepath.Join(t.TempDir(), "users.jsonl"), math.MaxInt64)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	s.rename(t, ann.ID, "Ann", 0, 10)
	if compacted := s.journalLog.records(t, "journal: compacted"); len(compacted) != 0 {
		t.Errorf("compacted with the largest slack:\n%s", s.journalLog)
	}
}

// A journal that is due to be compacted at start, and cannot be, stops the start (exit status 1),
// and is left as it was (README, "Compaction").
func TestCompactionThatFailsAtStartStopsTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	s := journalServerOn(t, path, 1<<20)
	ann, _ := s.create(t, "Ann", "ann@example.com")
	s.rename(t, ann.ID, "Ann", 0, 10)
	s.store.close()
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

// journalCreateFailing stands for the journal's createFile: the first file it creates fails at its
// first Write (failWrite) or Sync, as on a full disk; the files after it work.
func journalCreateFailing(failWrite bool) func(string) (journalFile, error) {
	var created atomic.Bool
	return func(name string) (journalFile, error) {
		file, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil || created.Swap(true) {
			return file, err
		}
		return &journalFailingFile{File: file, failWrite: failWrite}, nil
	}
}

// A compaction can fail at each of its steps: writing the temporary file, its fsync, the rename,
// the folder's fsync. Whichever fails, the journal replays to exactly the acknowledged writes. A
// failure before the rename leaves the old file in use, and a later compaction succeeds; a failed
// fsync of the folder breaks the journal, since the rename may not be on the disk (README,
// "Compaction").
func TestCompactionThatFailsAtAnyStepLosesNoAcknowledgedWrite(t *testing.T) {
	failingRename := func(j *journal) {
		rename, failed := j.rename, atomic.Bool{}
		j.rename = func(from, to string) error {
			if !failed.Swap(true) {
				return journalDiskFull
			}
			return rename(from, to)
		}
	}
	for _, step := range []struct {
		name   string
		inject func(j *journal)
		breaks bool
	}{
		{"writing the temporary file", func(j *journal) { j.createFile = journalCreateFailing(true) }, false},
		{"the fsync of the temporary file", func(j *journal) { j.createFile = journalCreateFailing(false) }, false},
		{"the rename", failingRename, false},
		{"the fsync of the folder", func(j *journal) { j.syncFolder = func(string) error { return journalDiskFull } }, true},
	} {
		t.Run(step.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "users.jsonl")
			s := journalServerOn(t, path, 0) // compacted once past 4 × the live data
			ann, _ := s.create(t, "Ann", "ann@example.com")
			s.changeJournal(step.inject)
			acknowledged := ann
			for i := 1; i <= 30; i++ {
				name := fmt.Sprintf("Ann %02d", i)
				switch w := s.serve(journalWrite("PATCH", userPath(ann.ID), `{"name":"`+name+`"}`)); {
				case w.Code == http.StatusOK:
					acknowledged.Name = name
				case !step.breaks || w.Code != http.StatusInternalServerError:
					t.Fatalf("PATCH %d: %d %s", i, w.Code, w.Body)
				}
			}
			compacted := s.journalLog.records(t, "journal: compacted")
			failures := s.journalLog.records(t, "journal: compaction failed; the file is as it was")
			logged := s.journalLog.String()
			health := s.serve(httptest.NewRequest("GET", "/healthz", nil)).Code
			if step.breaks {
				if !strings.Contains(logged, "writes are refused until a restart") || health != http.StatusServiceUnavailable || acknowledged.Name == "Ann 30" {
					t.Errorf("the journal is not broken (/healthz %d, last write acknowledged %s):\n%s", health, acknowledged.Name, logged)
				}
				if len(compacted) != 0 {
					t.Errorf("a compaction that broke the journal is logged as done:\n%s", logged)
				}
			} else if len(failures) == 0 || len(compacted) == 0 || health != http.StatusOK {
				t.Errorf("want a failed compaction, then one that succeeds, and /healthz 200 (it is %d):\n%s", health, logged)
			}
			// After a failure, the next try waits for the live data's worth of writes, and once one
			// succeeded, every compaction comes at the bound again: 4 × the live data (slack 0),
			// passed by one write.
			live := journalCompactedSize(ann.ID+1, acknowledged)
			for _, c := range compacted[min(1, len(compacted)):] {
				if before, _ := c["bytes_before"].(float64); int64(before) > 4*live+live {
					t.Errorf("a compaction came at %v bytes, past the bound of %d and the line after it", before, 4*live)
				}
			}
			if len(failures) > 1 {
				t.Errorf("%d failed compactions for one failure: a retry must wait", len(failures))
			}
			if !strings.Contains(logged, journalDiskFull.Error()) {
				t.Errorf("the log does not say what failed:\n%s", logged)
			}

			s = s.restart(t)
			if got := s.users(t); !slices.Equal(got, []user{acknowledged}) {
				t.Errorf("after a restart: %v, want the last acknowledged write, %v", got, acknowledged)
			}
			if _, err := os.Stat(path + ".compacting"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the temporary file is still there: %v", err)
			}
			if bob, _ := s.create(t, "Bob", "bob@example.com"); bob.ID != ann.ID+1 {
				t.Errorf("Bob has id %d, want %d", bob.ID, ann.ID+1)
			}
		})
	}
}
