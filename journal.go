package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
)

// With -data FILE, the store stays in memory and the file becomes its write-ahead journal (README,
// "Durability with -data"). Every write is a line of JSON appended to the file:
//
//	{"op":"put","id":7,"name":"Ann","email":"ann@example.com"}   the user as it now is
//	{"op":"delete","id":7}                                        the user is gone
//	{"op":"next_id","id":12}                                      ids below 12 are used (after compaction)
//
// A write is answered only once its line is on the disk (fsync), and only then do readers see it,
// so a crash at any instant loses nothing a client was told had happened. One goroutine owns the
// file. It takes every write that is waiting as one batch, judges each against the published state
// plus the batch's own earlier writes, appends the whole batch with one write and one fsync, then
// publishes it. Many writers thus share one fsync (group commit): the slow part is paid per batch.

const maxBatch = 256 // writes in one batch, so that no writer waits for a very long write

var errJournalBroken = errors.New("the journal is broken after a failed write: writes are refused until a restart")

type journal struct {
	path     string
	file     journalFile
	unlock   func()
	store    *userStore
	log      *slog.Logger
	size     int64 // where the last good record ends: a failed write is cut back to here
	requests chan *pendingWrite
	closing  chan struct{}
	closed   chan struct{}
	failed   atomic.Bool
}

// journalFile is what the journal needs of its file; tests stand in a file that fails.
type journalFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// A pendingWrite is a change that waits for the journal's goroutine, which fills in its outcome.
type pendingWrite struct {
	change change
	user   user
	err    error
	done   chan struct{}
}

// A record is one line of the journal.
type record struct {
	Op    string  `json:"op"`
	ID    int64   `json:"id"`
	Name  *string `json:"name,omitempty"`
	Email *string `json:"email,omitempty"`
}

// recordOf is the line that makes a write durable: the user as it now is, or its deletion.
func recordOf(w write) record {
	if !w.after.exists() {
		return record{Op: "delete", ID: w.id}
	}
	return record{Op: "put", ID: w.id, Name: &w.after.Name, Email: &w.after.Email}
}

// appendRecord appends a record and its newline: JSON Lines.
func appendRecord(lines []byte, r record) []byte {
	return append(append(lines, marshal(r)...), '\n')
}

// openJournal locks the file, replays it into store, compacts it if it has grown well past the
// live data, and starts the goroutine that appends to it. A file it cannot trust stops the start.
func openJournal(path string, store *userStore, log *slog.Logger) (*journal, error) {
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	j := &journal{path: path, unlock: unlock, store: store, log: log,
		requests: make(chan *pendingWrite), closing: make(chan struct{}), closed: make(chan struct{})}
	if err := j.open(); err != nil {
		unlock()
		return nil, err
	}
	go j.run()
	return j, nil
}

// commit hands a change to the journal's goroutine and waits until it is durable and published.
func (j *journal) commit(c change) (user, error) {
	w := &pendingWrite{change: c, done: make(chan struct{})}
	select {
	case j.requests <- w:
	case <-j.closed:
		return user{}, errors.New("the journal is closed")
	}
	<-w.done
	return w.user, w.err
}

// broken reports whether a write has failed: writes are then refused until a restart.
func (j *journal) broken() bool { return j.failed.Load() }

// run is the journal's goroutine, the store's only writer. Each batch is the first write that
// comes and every write already waiting: those whose writers came while the last batch was synced.
func (j *journal) run() {
	defer close(j.closed)
	for {
		select {
		case first := <-j.requests:
			batch := []*pendingWrite{first}
			for waiting := true; waiting && len(batch) < maxBatch; {
				select {
				case next := <-j.requests:
					batch = append(batch, next)
				default:
					waiting = false
				}
			}
			j.writeBatch(batch)
		case <-j.closing:
			j.file.Close()
			j.unlock()
			return
		}
	}
}

// writeBatch judges a batch, makes it durable and publishes it, then answers every writer.
func (j *journal) writeBatch(pending []*pendingWrite) {
	b := j.store.newBatch()
	for _, p := range pending {
		p.user, p.err = b.judge(p.change)
	}
	var lines []byte
	for _, w := range b.writes {
		lines = appendRecord(lines, recordOf(w))
	}
	if err := j.append(lines); err != nil {
		for _, p := range pending {
			p.user, p.err = user{}, err // whether the batch is on the disk is unknown: 500
		}
	} else if len(b.writes) > 0 {
		j.store.publish(b.writes)
	}
	for _, p := range pending {
		close(p.done)
	}
}

// append writes lines and syncs them to the disk. If either fails, the file is cut back to its
// last good record and the journal is marked broken: an fsync that failed must not be retried and
// trusted, since Linux may have dropped the pages it could not write.
func (j *journal) append(lines []byte) error {
	if j.broken() {
		return errJournalBroken // until a restart: the file may hold a write whose fsync failed
	} else if len(lines) == 0 {
		return nil
	}
	_, err := j.file.Write(lines)
	if err == nil {
		err = j.file.Sync()
	}
	if err == nil {
		j.size += int64(len(lines))
		return nil
	}
	j.failed.Store(true)
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
