package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// With -data FILE, the store stays in memory and the file becomes its write-ahead journal (README,
// "Durability with -data"): each write is a line of JSON, answered only once it is on the disk
// (fsync), and only then seen by readers, so a crash at any instant loses no acknowledged write.
// Writers queue their changes; the writer that holds writeMu takes every change queued so far as
// one batch, judges each, appends the batch with one write and one fsync, then publishes it: the
// writers that waited for one fsync share the next (group commit). Once the file passes 4 × the
// live data plus a slack, it is rewritten as the live users alone (compact), so the journal stays
// small however long the server runs.

var errJournalBroken = errors.New("the journal is broken after a failed write: writes are refused until a restart")

type journal struct {
	path    string
	file    journalFile
	unlock  func()
	store   *userStore
	log     *slog.Logger
	size    int64 // where the last good record ends: a failed write is cut back to here
	live    int64 // the size of the file if it were compacted now
	slack   int64 // the file is compacted once it passes 4 × live + slack
	retryAt int64 // after a compaction failed, the size at which to try again
	failed  atomic.Bool

	queueMu sync.Mutex
	queue   []*pendingWrite // the changes waiting for the next batch
	writeMu sync.Mutex      // held by the one writer that writes a batch: the store's only writer
	closed  bool            // once the server has stopped; guarded by writeMu

	// The file system as a compaction uses it; tests replace these to make each step fail.
	createFile func(name string) (journalFile, error)
	rename     func(from, to string) error
	syncFolder func(folder string) error
}

// journalFile is what the journal needs of a file; tests stand in files that fail.
type journalFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// A pendingWrite is a change in the queue; the writer of its batch fills in the outcome.
type pendingWrite struct {
	change  change
	user    user
	err     error
	written bool // guarded by writeMu
}

// A record is one line of the journal.
type record struct {
	Op    string  `json:"op"`
	ID    int64   `json:"id"`
	Name  *string `json:"name,omitempty"`
	Email *string `json:"email,omitempty"`
}

// recordOf is the record that makes a write durable: the user as it now is, or its deletion.
func recordOf(w write) record {
	if !w.after.exists() {
		return record{Op: "delete", ID: w.id}
	}
	return record{Op: "put", ID: w.id, Name: &w.after.Name, Email: &w.after.Email}
}

// appendLine appends a record and its newline: JSON Lines.
func appendLine(lines []byte, r record) []byte {
	return append(append(lines, marshal(r)...), '\n')
}

// liveSize is the size of u's line in a compacted journal: none for the zero user.
func liveSize(u user) int64 {
	if !u.exists() {
		return 0
	}
	return int64(len(appendLine(nil, recordOf(write{id: u.ID, after: u}))))
}

// compacted is the journal of the live users alone: next_id, so ids are never reused, and a put each.
func (j *journal) compacted() []byte {
	lines := appendLine(nil, record{Op: "next_id", ID: j.store.nextID})
	for _, u := range j.store.allUsers() {
		lines = appendLine(lines, recordOf(write{id: u.ID, after: u}))
	}
	return lines
}

// openJournal locks the file and replays it (replay.go).
func openJournal(path string, store *userStore, log *slog.Logger, slack int64) (*journal, error) {
	if info, err := os.Stat(filepath.Dir(path)); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("-data %s: there is no folder %s: create it, or name a file in another one", path, filepath.Dir(path))
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	j := &journal{path: path, unlock: unlock, store: store, log: log, slack: slack, rename: os.Rename, syncFolder: syncFolder,
		createFile: func(name string) (journalFile, error) {
			return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		}}
	if err := j.open(); err != nil {
		unlock()
		return nil, err
	}
	return j, nil
}

// commit queues a change, and returns once a writer has made it durable and published it.
func (j *journal) commit(c change) (user, error) {
	w := &pendingWrite{change: c}
	j.queueMu.Lock()
	j.queue = append(j.queue, w)
	j.queueMu.Unlock()
	j.writeMu.Lock() // while a batch is written, the changes that come gather in the queue
	defer j.writeMu.Unlock()
	if !w.written && !j.closed { // no writer has taken it with its batch: this one writes them all
		j.queueMu.Lock()
		batch := j.queue
		j.queue = nil
		j.queueMu.Unlock()
		j.writeBatch(batch)
	}
	if !w.written {
		return user{}, errors.New("the journal is closed")
	}
	return w.user, w.err
}

// broken reports whether a write has failed: writes are then refused until a restart.
func (j *journal) broken() bool { return j.failed.Load() }

// writeBatch judges a batch, makes it durable, publishes it and compacts if due, then answers it.
func (j *journal) writeBatch(pending []*pendingWrite) {
	b := j.store.newBatch()
	for _, p := range pending {
		p.user, p.err = b.judge(p.change)
	}
	var lines []byte
	var liveChange int64 // how the size of the compacted journal changes
	for _, w := range b.writes {
		line := appendLine(nil, recordOf(w))
		lines = append(lines, line...)
		liveChange -= liveSize(w.before)
		if w.after.exists() {
			liveChange += int64(len(line)) // a put: the line compaction would write for this user
		}
	}
	if err := j.appendLines(lines); err != nil {
		for _, p := range pending {
			p.user, p.err = user{}, err // whether the batch is on the disk is unknown: 500
		}
	} else if len(b.writes) > 0 {
		j.store.publish(b.writes)
		j.live += liveChange
		if err := j.compactWhenDue(); err != nil && !j.broken() {
			j.log.Error("journal: compaction failed; the journal is as it was, and is compacted later", "file", j.path, "error", err)
		}
	}
	for _, p := range pending {
		p.written = true
	}
}

// appendLines writes lines and syncs them. A failure breaks the journal: an fsync that failed must not be
// retried and trusted, since Linux may have dropped the pages it could not write.
func (j *journal) appendLines(lines []byte) error {
	if j.broken() {
		return errJournalBroken
	} else if len(lines) == 0 {
		return nil
	}
	if err := writeSynced(j.file, lines); err != nil {
		j.breaks("a write failed", err)
		if cutErr := j.file.Truncate(j.size); cutErr != nil {
			j.log.Error("journal: could not cut the failed write off", "file", j.path, "error", cutErr)
		}
		return fmt.Errorf("%w: %v", errJournalBroken, err)
	}
	j.size += int64(len(lines))
	return nil
}

// breaks marks the journal broken: writes are refused until a restart, reads go on.
func (j *journal) breaks(what string, err error) {
	j.failed.Store(true)
	j.log.Error("journal: "+what+"; writes are refused until a restart", "file", j.path, "error", err)
}

// compactWhenDue compacts past 4 × the live data + slack: after 3 × the live data of writes at least,
// so each write pays a bounded share of a compaction's cost, which is the live data's.
func (j *journal) compactWhenDue() error {
	if j.broken() || j.size-j.slack <= 4*j.live || j.size < j.retryAt { // size-slack cannot overflow
		return nil
	}
	before := j.size
	if err := j.compact(); err != nil {
		j.retryAt = j.size + j.live + j.slack // a compaction costs the live data: not again at once
		return err
	}
	j.retryAt = 0
	j.log.Info("journal: compacted", "file", j.path, "bytes_before", before, "bytes_after", j.size)
	return nil
}

// compact writes the compacted journal beside the old one, syncs it, renames it over the old one
// and syncs the folder, so a crash at any moment leaves either file, each with every acknowledged
// write. Readers never wait: the store's only writer reads it without their lock. A failure before
// the rename keeps the old file; one after it breaks the journal, as the rename may not be durable.
func (j *journal) compact() error {
	lines, temporary := j.compacted(), j.path+".compacting"
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

func writeSynced(file journalFile, data []byte) error {
	if _, err := file.Write(data); err != nil {
		return err
	}
	return file.Sync()
}

// close waits for the batch being written, if any, and releases the file.
func (j *journal) close() {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	j.closed = true
	j.file.Close()
	j.unlock()
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
