package main

import (
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
// Once the file passes 4 × the live data plus a slack, the goroutine rewrites it as the live users
// alone (compact), so the file stays small however long the server runs.

const maxBatch = 256 // writes in one batch, so that no writer waits for a very long write

var errJournalBroken = errors.New("the journal is broken after a failed write: writes are refused until a restart")

type journal struct {
	path     string
	file     journalFile
	unlock   func()
	store    *userStore
	log      *slog.Logger
	size     int64 // where the last good record ends: a failed write is cut back to here
	live     int64 // the size of the file if it were compacted now
	slack    int64 // the file is compacted once it passes 4 × live + slack
	retryAt  int64 // after a compaction failed, the size at which to try again
	requests chan *pendingWrite
	closing  chan struct{}
	closed   chan struct{}
	failed   atomic.Bool

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

// compacted is the journal as compaction writes it: a next_id line that keeps ids from ever being
// reused, then one put per live user.
func (j *journal) compacted() []byte {
	lines := appendLine(nil, record{Op: "next_id", ID: j.store.nextID})
	for _, u := range j.store.allUsers() {
		lines = appendLine(lines, recordOf(write{id: u.ID, after: u}))
	}
	return lines
}

// openJournal locks the file, replays it into store (replay.go), compacts it if it has grown past
// its bound, and starts the goroutine that appends to it. A file it cannot trust stops the start.
func openJournal(path string, store *userStore, log *slog.Logger, slack int64) (*journal, error) {
	if info, err := os.Stat(filepath.Dir(path)); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("-data %s: the folder %s does not exist: create it, or name a file in another one", path, filepath.Dir(path))
	}
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	j := &journal{path: path, unlock: unlock, store: store, log: log, slack: slack,
		requests: make(chan *pendingWrite), closing: make(chan struct{}), closed: make(chan struct{}),
		createFile: func(name string) (journalFile, error) { return os.Create(name) },
		rename:     os.Rename, syncFolder: syncFolder}
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

// writeBatch judges a batch, makes it durable and publishes it, compacts the journal if it is due
// (so that it is within its bound whenever no write is in flight), then answers every writer.
func (j *journal) writeBatch(pending []*pendingWrite) {
	b := j.store.newBatch()
	for _, p := range pending {
		p.user, p.err = b.judge(p.change)
	}
	var lines []byte
	for _, w := range b.writes {
		lines = appendLine(lines, recordOf(w))
	}
	if err := j.append(lines); err != nil {
		for _, p := range pending {
			p.user, p.err = user{}, err // whether the batch is on the disk is unknown: 500
		}
	} else if len(b.writes) > 0 {
		j.store.publish(b.writes)
		for _, w := range b.writes {
			j.live += liveSize(w.after) - liveSize(w.before)
		}
		j.compactWhenDue()
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
		return errJournalBroken
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
	j.breaks("a write failed", err)
	if cutErr := j.file.Truncate(j.size); cutErr != nil {
		j.log.Error("journal: could not cut the failed write off", "file", j.path, "error", cutErr)
	}
	return fmt.Errorf("%w: %v", errJournalBroken, err)
}

// breaks marks the journal broken: writes are refused until a restart, reads go on.
func (j *journal) breaks(what string, err error) {
	j.failed.Store(true)
	j.log.Error("journal: "+what+"; writes are refused until a restart", "file", j.path, "error", err)
}

// compactWhenDue compacts the journal once it has passed its bound: 4 × the live data plus the
// slack. The cost of a compaction is that of the live data, and it comes only after the file has
// grown by 3 × the live data at least, so each write pays a bounded share of it.
func (j *journal) compactWhenDue() {
	if j.broken() || j.size <= 4*j.live+j.slack || j.size < j.retryAt {
		return
	}
	before := j.size
	if err := j.compact(); err != nil && !j.broken() {
		j.retryAt = j.size + j.slack
		j.log.Error("journal: compaction failed; the journal is as it was, and is compacted later", "file", j.path, "error", err)
		return
	}
	j.log.Info("journal: compacted", "file", j.path, "bytes_before", before, "bytes_after", j.size)
}

// compact rewrites the journal as compacted says. It is atomic: the new file is written and synced
// beside the old one, renamed over it, and the folder synced, so a crash at any moment leaves the
// old file or the new one, each holding every acknowledged write. Readers never wait for it: the
// journal's goroutine reads the store as its only writer, without the readers' lock. A failure
// before the rename leaves the old file in use; one after it breaks the journal, since the new file
// may not be durable.
func (j *journal) compact() error {
	lines, temporary := j.compacted(), j.path+".compacting"
	if err := j.writeSynced(temporary, lines); err != nil {
		os.Remove(temporary)
		return err
	}
	j.file.Close() // first: Windows cannot rename over an open file
	renameErr := j.rename(temporary, j.path)
	if renameErr != nil {
		os.Remove(temporary)
	}
	file, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND, 0) // the new file, or the old one again
	if err != nil {
		j.breaks("the journal could not be opened again after a compaction", err)
		return err
	}
	j.file = file
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

// writeSynced writes a new file and syncs it to the disk.
func (j *journal) writeSynced(name string, data []byte) error {
	file, err := j.createFile(name)
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	if err == nil {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	return err
}

// close stops the goroutine once the batch it is writing is done, and releases the file.
func (j *journal) close() {
	close(j.closing)
	<-j.closed
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
