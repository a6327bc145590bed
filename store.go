package main

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// user is a user as clients see it, in the field order of every answer.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// userStore keeps every user in memory and, with -data, in a journal too (journal.go). Its one
// locking rule: every read of the data holds mu for reading, every change holds it for writing,
// and writeMu orders the writers. The writer that holds writeMu judges a batch of changes under
// mu's read lock like any reader, makes the batch durable, and only then takes mu for writing to
// publish it, so readers never wait for judging, encoding or the disk.
type userStore struct {
	mu      sync.RWMutex
	users   map[int64]user   // the live users by id: memory follows them, never the largest id
	ids     []int64          // the live ids, ascending: a page in id order is a slice of it
	byEmail map[string]int64 // emailKey(email) to id: keeps e-mails unique and answers ?email=
	lastID  int64            // the largest id ever given, 0 before the first: ids are never reused
	version uint64           // counts publications: the cached whole list belongs to one version

	writeMu sync.Mutex
	queue   chan *pendingChange // the changes waiting for a writer (commit); 1,024 at most
	journal *journal            // nil in memory only; set before the store is shared
	closed  bool                // the server has stopped: later writes fail

	wholeList atomic.Pointer[encodedList] // the unpaged list, encoded once per version (list.go)
}

// newUserStore returns an empty store that keeps its users in memory only.
func newUserStore() *userStore {
	return &userStore{users: map[int64]user{}, byEmail: map[string]int64{}, queue: make(chan *pendingChange, 1024)}
}

// openUserStore returns the store kept in a journal: the users are replayed from its file, and
// from then on every write is in the file before it is answered (journal.go).
func openUserStore(j *journal) (*userStore, error) {
	s := newUserStore()
	s.writeMu.Lock() // replaying is writing: the rule holds from the first record
	defer s.writeMu.Unlock()
	if err := j.open(s); err != nil {
		return nil, err
	}
	s.journal = j
	return s, nil
}

// emailKey is the form in which e-mails are compared: addresses are unique case-insensitively.
func emailKey(email string) string { return strings.ToLower(email) }

// get returns the user with this id, if there is one.
func (s *userStore) get(id int64) (user, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[id]
	return u, ok
}

// emailOwner returns the id of the user who has this e-mail, in any case.
func (s *userStore) emailOwner(email string) (int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byEmail[emailKey(email)]
	return id, ok
}

func (s *userStore) count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids)
}

// neverHadUsers reports whether no user was ever created: -sample-data fills only such a store.
func (s *userStore) neverHadUsers() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastID == 0
}

// allUsers returns every user in id order, and the version of the store they belong to.
func (s *userStore) allUsers() ([]user, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	users := make([]user, len(s.ids))
	for i, id := range s.ids {
		users[i] = s.users[id]
	}
	return users, s.version
}

// lastGivenID returns the largest id ever given, 0 before the first.
func (s *userStore) lastGivenID() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastID
}

// broken reports whether durable writes have failed: writes are refused until a restart.
func (s *userStore) broken() bool { return s.journal != nil && s.journal.broken() }

// A change is one write a client asked for, not yet judged.
type change struct {
	op         changeOp
	id         int64         // the user to change; a create's id is the store's to give
	fields     userFields    // what a create or an update sets
	conditions preconditions // judged against the target's current ETag, atomically with the write
}

// changeOp is what a change does to its user.
type changeOp int

const (
	opCreate changeOp = iota
	opUpdate          // PUT and PATCH: they differ in the fields they require, not in the store
	opDelete
)

// userFields are the fields a write sets, after the field rules: nil where a PATCH leaves the
// stored value as it is.
type userFields struct {
	name, email *string
}

// applyTo returns u with the fields set.
func (f userFields) applyTo(u user) user {
	if f.name != nil {
		u.Name = *f.name
	}
	if f.email != nil {
		u.Email = *f.email
	}
	return u
}

// errStoreClosed answers a write that comes after the server has stopped.
var errStoreClosed = errors.New("the store is closed: the server has stopped")

// A pendingChange is a change in the queue; the writer of its batch fills in the outcome.
type pendingChange struct {
	change change
	outcome
	done bool // the outcome is in; guarded by writeMu
}

// An outcome is what a change comes to: the user it leaves, or why it was refused or did not
// reach the disk.
type outcome struct {
	user user
	err  error
}

// commit makes one change: it is judged, made durable when there is a journal, then published,
// in that order, before commit returns. The changes that arrive while a batch is being written
// wait in the queue, and the next writer takes all of them as one batch with one fsync (group
// commit): the disk's cost is paid per batch, not per write.
func (s *userStore) commit(c change) (user, error) {
	p := &pendingChange{change: c}
	s.queue <- p
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if !p.done { // no writer has taken it into a batch yet: this one writes all that wait
		s.writeQueued()
	}
	return p.user, p.err
}

// writeQueued takes every change in the queue and writes it. The caller holds writeMu.
//
// A create with preconditions is judged against the whole collection, whose ETag is that of the
// list as readers see it, so it begins a batch of its own: the changes before it are published
// first.
func (s *userStore) writeQueued() {
	var pending []*pendingChange
	for len(s.queue) > 0 {
		pending = append(pending, <-s.queue)
	}
	// Should a writer panic (a bug), no change it took is left without an answer, let alone a
	// success it never had: each is a 500.
	defer failUnanswered(pending)
	if s.closed {
		failAll(pending, errStoreClosed)
		return
	}
	for len(pending) > 0 {
		n := 1
		for n < len(pending) && !pending[n].change.judgesCollection() {
			n++
		}
		s.writeBatch(pending[:n])
		pending = pending[n:]
	}
}

// judgesCollection reports whether a change's preconditions are judged against the collection.
func (c change) judgesCollection() bool { return c.op == opCreate && c.conditions.present() }

// failAll answers every pending change with err.
func failAll(pending []*pendingChange, err error) {
	for _, p := range pending {
		p.outcome, p.done = outcome{err: err}, true
	}
}

// failUnanswered answers with a 500 every pending change that has no outcome yet.
func failUnanswered(pending []*pendingChange) {
	for _, p := range pending {
		if !p.done {
			p.outcome, p.done = outcome{err: errInternal}, true
		}
	}
}

// writeBatch judges each change after the ones before it, appends the batch's writes to the
// journal, publishes them, and compacts the journal when it is due. A change's outcome is given
// only then, once its write is durable. The caller holds writeMu.
func (s *userStore) writeBatch(pending []*pendingChange) {
	if s.broken() {
		failAll(pending, errJournalBroken)
		return
	}
	b := s.newBatch()
	outcomes := make([]outcome, len(pending))
	for i, p := range pending {
		outcomes[i].user, outcomes[i].err = b.judge(p.change)
	}
	switch err := s.persist(b.writes); {
	case err != nil:
		for i := range outcomes {
			if outcomes[i].err == nil { // whether its write reached the disk is unknown: 500
				outcomes[i] = outcome{err: err}
			}
		}
	case len(b.writes) > 0:
		s.publish(b.writes)
		if s.journal != nil {
			s.journal.compactWhenDue(s) // a failure is logged, and the old file stays in use
		}
	}
	for i, p := range pending {
		p.outcome, p.done = outcomes[i], true
	}
}

// persist makes writes durable: appended to the journal, when there is one.
func (s *userStore) persist(writes []write) error {
	if s.journal == nil || len(writes) == 0 {
		return nil
	}
	return s.journal.append(writes)
}

// A write is a change judged valid: the user before and after it, nil where there is none
// (before a create, after a delete).
type write struct {
	id            int64
	before, after *user
}

// publish makes a batch's writes visible to readers, all at once.
func (s *userStore) publish(writes []write) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range writes {
		if old, ok := s.users[w.id]; ok {
			delete(s.byEmail, emailKey(old.Email))
		}
		i, listed := slices.BinarySearch(s.ids, w.id)
		if w.after == nil {
			delete(s.users, w.id)
			if listed {
				s.ids = slices.Delete(s.ids, i, i+1)
			}
			continue
		}
		s.users[w.id] = *w.after
		s.byEmail[emailKey(w.after.Email)] = w.id
		if !listed {
			s.ids = slices.Insert(s.ids, i, w.id) // a new id is the largest: this appends
		}
		s.lastID = max(s.lastID, w.id)
	}
	s.version++
}

// giveIDsUpTo records that every id up to last has been given, though no user has it now: what
// a compacted journal's next_id line says.
func (s *userStore) giveIDsUpTo(last int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID = max(s.lastID, last)
}

// close waits for the batch being written, if any, and closes the journal: later writes fail.
func (s *userStore) close() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.closed = true
	if s.journal != nil {
		s.journal.close()
	}
}
