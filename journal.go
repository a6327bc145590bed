package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
)

// With -data FILE, the store stays in memory and the file becomes its write-ahead journal (SPEC §9).
// Every write is a line of JSON appended to the file:
//
//	{"op":"put","id":7,"name":"Ann","email":"ann@example.com"}   the user as it now is
//	{"op":"delete","id":7}                                        the user is gone
//	{"op":"next_id","id":12}                                      ids below 12 are used (after compaction)
//
// A write is answered only once its line is on the disk (fsync), and only then do readers see it,
// so a crash at any instant loses nothing a client was told had happened. One goroutine owns the
// file. It takes every write that is waiting as one batch, judges each against the published state
// plus the batch's own earlier writes, appends the whole batch with one write and one fsync, then
// publishes it. Many writers thus share one fsync (group commit): the slow part is paid per batch,
// not per write.

// maxBatch bounds a batch, so that judging it (which scans the batch) stays cheap.
const maxBatch = 256

var errJournalBroken = errors.New("the journal is broken after a failed write: writes are refused until a restart")

type journal struct {
	path     string
	file     journalFile
	unlock   func()
	store    *userStore
	log      *slog.Logger
	size     int64 // where the last good record ends: a failed write is cut back to here
	requests chan journalRequest
	closing  chan struct{}
	closed   chan struct{}
	broken   atomic.Bool
}

// journalFile is what the journal needs of its file; tests stand in a file that fails.
type journalFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

type journalRequest struct {
	change change
	reply  chan journalReply
}

type journalReply struct {
	user storedUser
	err  error
}

// openJournal locks the file, replays it into store, compacts it if it has grown well past the live
// data, and starts the goroutine that appends to it. A file it cannot trust stops the start.
func openJournal(path string, store *userStore, log *slog.Logger) (*journal, error) {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	j := &journal{path: path, unlock: unlock, store: store, log: log,
		requests: make(chan journalRequest), closing: make(chan struct{}), closed: make(chan struct{})}
	if err := j.open(); err != nil {
		unlock()
		return nil, err
	}
	go j.run()
	return j, nil
}

// open replays the file and leaves it ready for appending.
func (j *journal) open() (err error) {
	file, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			file.Close()
		}
	}()
	records, goodSize, err := replay(file, j.path, j.store)
	if err != nil {
		return err
	}
	end, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if goodSize < end { // a crash cut the last record short: it was never acknowledged
		j.log.Warn("journal: dropping a torn last record", "file", j.path, "offset", goodSize, "bytes", end-goodSize)
		if err := file.Truncate(goodSize); err != nil {
			return err
		}
		if err := file.Sync(); err != nil {
			return err
		}
	}
	if live := j.store.count(); records > 2*live+16 {
		file.Close() // first: Windows cannot rename over an open file
		if err := compact(j.path, j.store); err != nil {
			return fmt.Errorf("compacting %s: %w", j.path, err)
		}
		j.log.Info("journal: compacted", "file", j.path, "records_before", records, "users", live)
		if file, err = os.OpenFile(j.path, os.O_RDWR, 0); err != nil {
			return err
		}
	}
	j.file = file
	j.size, err = file.Seek(0, io.SeekEnd)
	return err
}

// A record is one line of the journal.
type record struct {
	Op    string  `json:"op"`
	ID    int64   `json:"id"`
	Name  *string `json:"name,omitempty"`
	Email *string `json:"email,omitempty"`
}

// replay applies every complete line of the file to the store and returns how many it read and
// where the last complete line ends. A damaged line is an error naming the file and line: better
// to refuse to start than to serve data that is not what was acknowledged.
func replay(file io.Reader, path string, store *userStore) (records int, goodSize int64, err error) {
	reader := bufio.NewReaderSize(file, 1<<20)
	var newestID int64 // the largest id a put has created so far
	for line := 1; ; line++ {
		text, err := reader.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// Whatever follows the last newline is a record a crash cut short, so it must look
			// like the start of one: a file that is not a journal is refused, not cut.
			prefix := []byte(`{"op":"`)
			if !bytes.HasPrefix(text, prefix) && !bytes.HasPrefix(prefix, text) {
				return records, goodSize, fmt.Errorf("%s:%d: this is not a journal, so the server will not start", path, line)
			}
			return records, goodSize, nil
		}
		if err != nil {
			return records, goodSize, err
		}
		if err := replayRecord(text, store, records == 0, &newestID); err != nil {
			return records, goodSize, fmt.Errorf("%s:%d: the journal is damaged, so the server will not start: %v", path, line, err)
		}
		records++
		goodSize += int64(len(text))
	}
}

// maxReplayID bounds the ids a journal may hold: the store keeps a slot for every id ever given,
// so an id this large can only come from a damaged file.
const maxReplayID = 1 << 31

// replayRecord applies one line, checking that it could have been written by this service: a
// create takes the next id, in order, and names and e-mails follow the field rules.
func replayRecord(line []byte, store *userStore, first bool, newestID *int64) error {
	var r record
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&r); err != nil {
		return fmt.Errorf("not a journal record: %v", err)
	}
	if _, err := decoder.Token(); err != io.EOF {
		return errors.New("not a journal record: something follows the JSON object")
	}
	old, existed := store.published(r.ID)
	switch {
	case r.ID <= 0 || r.ID > maxReplayID:
		return fmt.Errorf("the id must be a positive integer up to %d", maxReplayID)
	case r.Op == "next_id" && !first:
		return errors.New("next_id may only be the first record (compaction writes it there)")
	case r.Op == "next_id":
		store.nextID = r.ID
		return nil
	case r.Op == "delete":
		if !existed {
			return fmt.Errorf("deletes user %d, which does not exist", r.ID)
		}
		store.apply(write{id: r.ID, oldKey: store.byEmail.key(old.email())})
		return nil
	case r.Op != "put":
		return fmt.Errorf("unknown op %q", r.Op)
	case r.Name == nil || r.Email == nil:
		return errors.New("a put needs name and email")
	case !existed && (r.ID <= *newestID || r.ID > store.nextID):
		return fmt.Errorf("user %d is created out of order: ids are given once, in increasing order", r.ID)
	}
	name, problem := checkName(bodyField{given: true, text: *r.Name}, true)
	email, emailProblem := checkEmail(bodyField{given: true, text: *r.Email}, true)
	if problem = cmp.Or(problem, emailProblem); problem != "" || name != *r.Name || email != *r.Email {
		return fmt.Errorf("the user breaks the field rules: %s", cmp.Or(problem, "white space around a value"))
	}
	key := store.byEmail.key(email)
	if owner, taken := store.byEmail.find(key, store.emailKeyOf); taken && owner != r.ID {
		return fmt.Errorf("user %d has the e-mail of user %d", r.ID, owner)
	}
	w := write{id: r.ID, user: newStoredUser(r.ID, name, email), key: key}
	if existed {
		w.oldKey = store.byEmail.key(old.email())
	} else {
		*newestID = r.ID
	}
	store.apply(w)
	return nil
}

// appendRecord adds a write's line to buffer. A put is the user's representation with the op in
// front, so nothing is encoded twice.
func appendRecord(buffer []byte, w write) []byte {
	if !w.user.exists() {
		return fmt.Appendf(buffer, "{\"op\":\"delete\",\"id\":%d}\n", w.id)
	}
	buffer = append(buffer, `{"op":"put",`...)
	buffer = append(buffer, w.user.json[1:]...)
	return append(buffer, '\n')
}

// compact rewrites the journal as one put per live user, atomically: a new file is written and
// synced beside the old, renamed over it, and the folder synced, so a crash leaves the old file
// or the new one, never neither. The first line keeps the next id, so ids are never reused even
// when the newest users were deleted.
func compact(path string, store *userStore) error {
	var buffer []byte
	buffer = fmt.Appendf(buffer, "{\"op\":\"next_id\",\"id\":%d}\n", store.nextID)
	for _, id := range store.ids {
		buffer = appendRecord(buffer, write{id: id, user: store.users[id]})
	}
	temporary := path + ".compacting"
	file, err := os.OpenFile(temporary, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = file.Write(buffer)
	if err == nil {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(temporary, path)
	}
	if err != nil {
		os.Remove(temporary)
		return err
	}
	return syncFolder(filepath.Dir(path))
}

// syncFolder makes a rename in the folder durable.
func syncFolder(folder string) error {
	if runtime.GOOS == "windows" {
		return nil // Windows cannot sync a folder; NTFS journals the rename itself
	}
	dir, err := os.Open(folder)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// commit hands a change to the journal's goroutine and waits until it is durable and published.
func (j *journal) commit(c change) (storedUser, error) {
	reply := make(chan journalReply, 1)
	select {
	case j.requests <- journalRequest{change: c, reply: reply}:
	case <-j.closed:
		return storedUser{}, errors.New("the journal is closed")
	}
	answer := <-reply
	return answer.user, answer.err
}

// run is the journal's goroutine, the store's only writer.
func (j *journal) run() {
	defer close(j.closed)
	for {
		select {
		case first := <-j.requests:
			j.writeBatch(j.takeWaiting(first))
		case <-j.closing:
			j.file.Close()
			j.unlock()
			return
		}
	}
}

// takeWaiting returns first and every request already waiting: those whose writers arrived while
// the last batch was being written.
func (j *journal) takeWaiting(first journalRequest) []journalRequest {
	batch := []journalRequest{first}
	for len(batch) < maxBatch {
		select {
		case next := <-j.requests:
			batch = append(batch, next)
		default:
			return batch
		}
	}
	return batch
}

// writeBatch judges a batch, makes it durable and publishes it, then answers every writer.
func (j *journal) writeBatch(requests []journalRequest) {
	replies := make([]journalReply, len(requests))
	b := j.store.newBatch()
	var lines []byte
	for i, request := range requests {
		if j.broken.Load() {
			replies[i].err = errJournalBroken
			continue
		}
		w, err := b.judge(request.change)
		replies[i] = journalReply{user: w.user, err: err}
		if err == nil {
			lines = appendRecord(lines, w)
		}
	}
	if len(lines) > 0 {
		if err := j.append(lines); err != nil {
			for i := range replies {
				replies[i] = journalReply{err: err} // durability unknown: 500 (SPEC §9)
			}
		} else {
			j.store.publish(b.writes)
		}
	}
	for i, request := range requests {
		request.reply <- replies[i]
	}
}

// append writes lines and syncs them to the disk. If either fails, the file is cut back to its last
// good record and the journal is marked broken: an fsync that failed must not be retried and
// trusted, since Linux may have dropped the pages it could not write.
func (j *journal) append(lines []byte) error {
	_, err := j.file.Write(lines)
	if err == nil {
		err = j.file.Sync()
	}
	if err == nil {
		j.size += int64(len(lines))
		return nil
	}
	j.broken.Store(true)
	j.log.Error("journal: a write failed; writes are refused until a restart", "file", j.path, "error", err)
	if cutErr := j.file.Truncate(j.size); cutErr != nil {
		j.log.Error("journal: could not cut the failed write off", "file", j.path, "error", cutErr)
	}
	return fmt.Errorf("%w: %v", errJournalBroken, err)
}

// close stops the goroutine once the batch it is writing is done, and releases the file.
func (j *journal) close() {
	close(j.closing)
	<-j.closed
}

func (j *journal) describe() string {
	return "journal " + j.path + " (" + strconv.Itoa(j.store.count()) + " users)"
}
