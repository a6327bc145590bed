package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
)

// With -data FILE, the store stays in memory and the file becomes its write-ahead journal (README,
// "Durability with -data"): each write is a line of JSON, answered only once it is on the disk
// (fsync), and only then seen by readers, so a crash at any instant loses no acknowledged write.
// The store calls the journal while it holds writeMu: append for each write (store.go), and at
// start open, which replays the file into the store (replay.go). Once the file passes 4 × the live
// data plus a slack, it is rewritten as the live users alone (compaction), so it stays small
// however long the server runs.

// errJournalBroken refuses every write once a write has failed on the disk: a 500, until a restart.
var errJournalBroken = errors.New("the journal is broken after a failed write: writes are refused until a restart")

// A journal is the file of one store. Only the store's writer uses it, while it holds writeMu;
// broken may be asked at any time.
type journal struct {
	path    string
	log     *slog.Logger
	slack   int64 // the file is compacted once it passes 4 × live + slack
	file    journalFile
	unlock  func() // releases the lock that keeps the file to one server
	size    int64  // where the last good record ends: a failed write is cut back to here
	live    int64  // the size the file would have if it were compacted now
	retryAt int64  // after a compaction failed, the size at which to try again
	failed  atomic.Bool

	// The file system as the journal uses it. Tests replace these to make each step fail.
	createFile func(name string) (journalFile, error)
	rename     func(from, to string) error
	syncFolder func(folder string) error
}

// journalFile is what the journal needs of its file.
type journalFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// newJournal returns the journal of the file at path, for openUserStore to open.
func newJournal(path string, log *slog.Logger, slack int64) *journal {
	return &journal{path: path, log: log, slack: slack, rename: os.Rename, syncFolder: syncFolder,
		createFile: func(name string) (journalFile, error) {
			return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		}}
}

// A record is one line of the journal.
type record struct {
	Op string `json:"op"` // put, delete, or next_id
	// ID is a user's id, or in next_id the next id to give: 2^63 once every id has been given.
	ID    uint64  `json:"id"`
	Name  *string `json:"name,omitempty"`
	Email *string `json:"email,omitempty"`
}

// line encodes a record as a line of JSON Lines. The file's format is its own, so it has its own
// encoding: json.Marshal's, whatever the API's bodies do.
func (r record) line() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// putRecord is the record of a user as it now is.
func putRecord(u *user) record {
	return record{Op: "put", ID: uint64(u.ID), Name: &u.Name, Email: &u.Email}
}

// append writes the record of a change and syncs it: once it returns nil, the change is durable.
// A failure breaks the journal: an fsync that failed must not be retried and trusted, since Linux
// may have dropped the pages it could not write.
func (j *journal) append(c change) error {
	if j.broken() {
		return errJournalBroken
	}
	written := record{Op: "delete", ID: uint64(c.id)}
	if c.after != nil {
		written = putRecord(c.after)
	}
	line, err := written.line()
	if err != nil {
		return err
	}
	liveBefore, err := liveSize(c.before)
	if err != nil {
		return err
	}
	if err := writeSynced(j.file, line); err != nil {
		j.breaks("a write failed", err)
		if cutErr := j.file.Truncate(j.size); cutErr != nil {
			j.log.Error("journal: could not cut the failed write off", "file", j.path, "error", cutErr)
		}
		return fmt.Errorf("%w: %v", errJournalBroken, err)
	}
	j.size += int64(len(line))
	j.live -= liveBefore
	if c.after != nil {
		j.live += int64(len(line)) // the line compaction would write for this user
	}
	return nil
}

// liveSize is the size of u's line in a compacted journal: 0 when there is no user.
func liveSize(u *user) (int64, error) {
	if u == nil {
		return 0, nil
	}
	line, err := putRecord(u).line()
	return int64(len(line)), err
}

// broken reports whether a write has failed: writes are then refused until a restart.
func (j *journal) broken() bool { return j.failed.Load() }

// breaks marks the journal broken: writes are refused until a restart, reads go on.
func (j *journal) breaks(what string, err error) {
	j.failed.Store(true)
	j.log.Error("journal: "+what+"; writes are refused until a restart", "file", j.path, "error", err)
}

// breakOnPanic, deferred, marks the journal broken if the code it guards panics, then lets the
// panic go on to be answered 500.
func (j *journal) breakOnPanic() {
	if p := recover(); p != nil {
		j.breaks("a write panicked, so the file may hold a change memory does not", fmt.Errorf("panic: %v", p))
		panic(p)
	}
}

// compactIfDue compacts the journal of s once it passes 4 × the live data + slack: after 3 × the
// live data of writes at least, so each write pays a bounded share of a compaction, whose cost is
// the live data's. A failure is logged and returned, and the next attempt waits for as many bytes
// again.
func (j *journal) compactIfDue(s *userStore) error {
	if j.broken() || j.size-j.slack <= 4*j.live || j.size < j.retryAt { // size-slack cannot overflow
		return nil
	}
	before := j.size
	if err := j.compact(s.snapshot()); err != nil {
		j.retryAt = j.size + j.live + j.slack
		if !j.broken() {
			j.log.Error("journal: compaction failed; the file is as it was", "file", j.path, "error", err)
		}
		return err
	}
	j.retryAt = 0
	j.log.Info("journal: compacted", "file", j.path, "bytes_before", before, "bytes_after", j.size)
	return nil
}

// compacted is the journal of these users alone: next_id, so that ids are never reused, then a put
// for each user.
func compacted(users []user, lastID int64) ([]byte, error) {
	lines, err := record{Op: "next_id", ID: uint64(lastID) + 1}.line()
	if err != nil {
		return nil, err
	}
	for i := range users {
		line, err := putRecord(&users[i]).line()
		if err != nil {
			return nil, err
		}
		lines = append(lines, line...)
	}
	return lines, nil
}

// compact writes the compacted journal beside the file, syncs it, renames it over the file and
// syncs the folder, so that a crash at any moment leaves one file or the other, each with every
// acknowledged write. A failure before the rename keeps the old file; one after it breaks the
// journal, as the rename may not be durable.
func (j *journal) compact(users []user, lastID int64) error {
	lines, err := compacted(users, lastID)
	if err != nil {
		return err
	}
	temporary := j.path + ".compacting"
	file, err := j.createFile(temporary)
	if err == nil {
		err = writeSynced(file, lines)
		if closeErr := file.Close(); err == nil {
			err = closeErr
		}
	}
	if err != nil {
		os.Remove(temporary)
		return err
	}
	j.file.Close() // first: Windows cannot rename over an open file
	renameErr := j.rename(temporary, j.path)
	if renameErr != nil {
		os.Remove(temporary)
	}
	reopened, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0) // the new file, or the old one again
	if err != nil {
		j.breaks("the journal could not be opened again after a compaction", err)
		return err
	}
	j.file = reopened
	if renameErr != nil {
		return renameErr
	}
	j.size, j.live = int64(len(lines)), int64(len(lines))
	if err := j.syncFolder(filepath.Dir(j.path)); err != nil {
		j.breaks("the rename of a compaction could not be made durable", err)
		return err
	}
	return nil
}

// writeSynced writes data and syncs the file: once it returns nil, data is on the disk.
func writeSynced(file journalFile, data []byte) error {
	if _, err := file.Write(data); err != nil {
		return err
	}
	return file.Sync()
}

// close releases the file and its lock.
func (j *journal) close() {
	j.file.Close()
	j.unlock()
}

// syncFolder makes the names in a folder durable: a file just created, or a rename.
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
