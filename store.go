package main

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
)

// user is a user as clients see it, in the field order of every answer.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// userStore keeps the users in a map in memory and, with -data, in a journal too (journal.go).
//
// Its locking rule: mu guards the data, held for reading by every read and for writing by every
// change, and a write also holds writeMu from judging its change to applying it, so writes take
// turns and what a write judged still holds when it applies, while reads never wait for the disk.
type userStore struct {
	writeMu sync.Mutex
	journal *journal // nil in memory only; set before the store is shared
	closed  bool     // the server has stopped, so later writes fail; guarded by writeMu

	mu      sync.RWMutex
	users   map[int64]user   // the live users by id: memory follows them, never the largest id
	ids     []int64          // the live ids, ascending: a page in id order is a slice of it
	byEmail map[string]int64 // emailKey(email) to id: keeps e-mails unique and answers ?email=
	lastID  int64            // the largest id ever given, 0 before the first: ids are never reused
	version uint64           // counts changes: a whole list encoded at an older one is not cached
	cached  *encodedList     // the whole list as it is now, once a reader has encoded it; nil after a change
}

// newUserStore returns an empty store that keeps its users in memory only.
func newUserStore() *userStore {
	return &userStore{users: map[int64]user{}, byEmail: map[string]int64{}}
}

// openUserStore returns the store kept in a journal: the users are replayed from its file, and
// from then on every write is in the file before it is answered (journal.go).
func openUserStore(j *journal) (*userStore, error) {
	s := newUserStore()
	s.writeMu.Lock() // replaying is writing: the locking rule holds from the first record
	defer s.writeMu.Unlock()
	if err := j.open(s); err != nil {
		return nil, err
	}
	s.journal = j
	return s, nil
}

// emailKey is the form in which e-mails are compared: addresses are unique case-insensitively.
func emailKey(email string) string { return strings.ToLower(email) }

// get returns the user with this id, or errUserNotFound.
func (s *userStore) get(id int64) (user, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[id]
	if !ok {
		return user{}, errUserNotFound
	}
	return u, nil
}

// emailOwner returns the id of the user who has this e-mail, in any case.
func (s *userStore) emailOwner(email string) (int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byEmail[emailKey(email)]
	return id, ok
}

// count returns how many users there are.
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

// lastGivenID returns the largest id ever given, 0 before the first.
func (s *userStore) lastGivenID() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastID
}

// snapshot returns every user in id order, and the largest id ever given.
func (s *userStore) snapshot() ([]user, int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.inIDOrder(), s.lastID
}

// inIDOrder returns a copy of every user, in id order. The caller holds mu.
func (s *userStore) inIDOrder() []user {
	users := make([]user, len(s.ids))
	for i, id := range s.ids {
		users[i] = s.users[id]
	}
	return users
}

// list answers a query of the list, encoded outside the lock. A page in id order is a slice of the
// sorted ids, the same cost at any size; filters and the other orders look at every user.
func (s *userStore) list(q listQuery) (*encodedList, error) {
	switch {
	case q.search != "" || q.email != "" || strings.TrimPrefix(q.sort, "-") != "id":
		matches := s.filter(q.email, q.search)
		sortUsers(matches, q.sort)
		from, to := q.window(len(matches))
		return encodeList(matches[from:to], len(matches), q)
	case !q.paged && q.sort == "id":
		return s.wholeList()
	}
	page, total := s.page(q)
	return encodeList(page, total, q)
}

// page returns the users of a page in id order, ascending or descending, and how many users
// there are.
func (s *userStore) page(q listQuery) ([]user, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	total := len(s.ids)
	from, to := q.window(total)
	page := make([]user, 0, to-from)
	for i := from; i < to; i++ {
		if q.sort == "-id" {
			page = append(page, s.users[s.ids[total-1-i]])
		} else {
			page = append(page, s.users[s.ids[i]])
		}
	}
	return page, total
}

// wholeList returns the list with no query, encoded once per change of the store: it is what
// clients ask for most, and until the next write it costs what a constant answer costs.
func (s *userStore) wholeList() (*encodedList, error) {
	cached, users, version := s.cachedList()
	if cached != nil {
		return cached, nil
	}
	fresh, err := encodeList(users, len(users), listQuery{})
	if err != nil {
		return nil, err
	}
	s.cacheList(fresh, version)
	return fresh, nil
}

// cachedList returns the whole list as last encoded, or, when a change has come since, every user
// in id order, to be encoded outside the lock; and the version of the store they belong to.
func (s *userStore) cachedList() (*encodedList, []user, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cached != nil {
		return s.cached, nil, s.version
	}
	return nil, s.inIDOrder(), s.version
}

// cacheList keeps the whole list encoded at version, unless a write has come since.
func (s *userStore) cacheList(list *encodedList, version uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version == version {
		s.cached = list
	}
}

// filter returns the users with this e-mail (unless "") whose name or e-mail contains search, all
// compared case-insensitively.
func (s *userStore) filter(email, search string) []user {
	search = strings.ToLower(search)
	s.mu.RLock()
	defer s.mu.RUnlock()
	candidates := s.ids
	if email != "" {
		id, found := s.byEmail[emailKey(email)]
		if !found {
			return nil
		}
		candidates = []int64{id}
	}
	var matches []user
	for _, id := range candidates {
		u := s.users[id]
		if strings.Contains(strings.ToLower(u.Name), search) || strings.Contains(strings.ToLower(u.Email), search) {
			matches = append(matches, u)
		}
	}
	return matches
}

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

// create adds a user with the next id. Its preconditions are judged against the collection, whose
// ETag is the whole list's (docs/api.md, "Conditional requests"); then an e-mail already taken is
// 409. Ids end at 2^63-1: a create after that one is 409 too, as no id is given twice.
func (s *userStore) create(fields userFields, conditions preconditions) (user, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return user{}, err
	}
	if conditions.present() {
		collection, err := s.wholeList()
		if err != nil {
			return user{}, err
		}
		if err := conditions.checkWrite(collection.etag); err != nil {
			return user{}, err
		}
	}
	created := fields.applyTo(user{})
	if _, taken := s.emailOwner(created.Email); taken {
		return user{}, errEmailTaken
	}
	lastID := s.lastGivenID()
	if lastID == math.MaxInt64 {
		return user{}, errNoIDLeft
	}
	created.ID = lastID + 1
	return created, s.commit(change{id: created.ID, after: &created})
}

// update sets the fields of user id: 404 for a user that does not exist, then its preconditions,
// then 409 for an e-mail another user has.
func (s *userStore) update(id int64, fields userFields, conditions preconditions) (user, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return user{}, err
	}
	before, err := s.target(id, conditions)
	if err != nil {
		return user{}, err
	}
	after := fields.applyTo(before)
	if owner, taken := s.emailOwner(after.Email); taken && owner != id {
		return user{}, errEmailTaken
	}
	return after, s.commit(change{id: id, before: &before, after: &after})
}

// delete removes user id: 404 for a user that does not exist, then its preconditions.
func (s *userStore) delete(id int64, conditions preconditions) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	before, err := s.target(id, conditions)
	if err != nil {
		return err
	}
	return s.commit(change{id: id, before: &before})
}

// target returns the user a write would change, once the write's preconditions hold against its
// current ETag: 404, then 412 (RFC 9110 §13.2.1). The caller holds writeMu.
func (s *userStore) target(id int64, conditions preconditions) (user, error) {
	current, err := s.get(id)
	if err != nil || !conditions.present() {
		return current, err
	}
	_, etag, err := userRepresentation(current)
	if err != nil {
		return user{}, err
	}
	return current, conditions.checkWrite(etag)
}

// A change is a write that has been judged: user id as it was before and as it is after, nil
// where there is none (before a create, after a delete).
type change struct {
	id            int64
	before, after *user
}

// errStoreClosed answers a write that comes after the server has stopped.
var errStoreClosed = errors.New("the store is closed: the server has stopped")

// writable refuses every write, before it is judged, once the store cannot write: the server has
// stopped, or the journal is broken (a write failed on the disk). The caller holds writeMu.
func (s *userStore) writable() error {
	switch {
	case s.closed:
		return errStoreClosed
	case s.broken():
		return errJournalBroken
	}
	return nil
}

// commit makes a judged change durable, when there is a journal, and only then applies it, so no
// reader sees a write that a crash could still take away. The caller holds writeMu.
func (s *userStore) commit(c change) error {
	if s.journal == nil {
		s.apply(c)
		return nil
	}
	// Should this code panic (a bug) after the append, the file would hold a change that memory
	// does not: the journal is marked broken, so the two never part ways while the server goes on.
	defer s.journal.breakOnPanic()
	if err := s.journal.append(c); err != nil {
		return err
	}
	s.apply(c)
	// A compaction that fails is logged, and the old file stays in use: the write is durable anyway.
	_ = s.journal.compactIfDue(s)
	return nil
}

// apply changes the data, all under mu: the map, the sorted ids, the e-mail index and the last id.
// The caller holds writeMu.
func (s *userStore) apply(c change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.before != nil {
		delete(s.byEmail, emailKey(c.before.Email))
	}
	i, listed := slices.BinarySearch(s.ids, c.id)
	if c.after == nil {
		delete(s.users, c.id)
		if listed {
			s.ids = slices.Delete(s.ids, i, i+1)
		}
	} else {
		s.users[c.id] = *c.after
		s.byEmail[emailKey(c.after.Email)] = c.id
		if !listed {
			s.ids = slices.Insert(s.ids, i, c.id) // a new id is the largest: this appends
		}
		s.lastID = max(s.lastID, c.id)
	}
	s.version++
	s.cached = nil
}

// giveIDsUpTo records that every id up to last has been given, though no user has it now: what a
// compacted journal's next_id line says. The caller holds writeMu.
func (s *userStore) giveIDsUpTo(last int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID = max(s.lastID, last)
}

// close waits for the write in progress, if any, and closes the journal: later writes fail. A
// second close does nothing.
func (s *userStore) close() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.journal != nil {
		s.journal.close()
	}
}

// broken reports whether durable writes have failed: writes are refused until a restart.
func (s *userStore) broken() bool { return s.journal != nil && s.journal.broken() }
