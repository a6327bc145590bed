package main

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
)

// user is a user as clients see it, in the field order of every answer and of the data file.
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// The store's errors say what went wrong in the store's own words; errorFor (respond.go) gives
// each its HTTP status.
var (
	errNotFound    = errors.New("no user has this id")
	errEmailTaken  = errors.New("another user already has this email")
	errNoIDLeft    = errors.New("no id is left to give: every id up to 9223372036854775807 has been used once")
	errNotWritable = errors.New("writes are refused until a restart: an earlier write to the data file failed")
	errClosed      = errors.New("the store is closed: the server has stopped")
)

// userStore keeps the users in a map in memory and, with -data, a copy of them in a JSON file
// (datafile.go) that each write replaces whole.
//
// Its locking rule: mu guards every field below it, held for reading by every read and for
// writing by every change; a write also holds writeMu from judging its change to applying it, so
// writes take turns, what a write judged still holds when it applies, and reads never wait for the
// disk, which is written under writeMu alone.
type userStore struct {
	writeMu sync.Mutex
	file    *dataFile // nil when the users live in memory only; set once, before the store is shared

	mu       sync.RWMutex
	users    map[int64]user   // the users by id: memory follows them, never the largest id
	ids      []int64          // every id, ascending: a page in id order is a slice of it
	byEmail  map[string]int64 // emailKey(email) to id: keeps e-mails unique and answers ?email=
	lastID   int64            // the largest id ever given, 0 before the first: ids are never reused
	changes  uint64           // counts the changes, so that a copy made earlier can tell it is old
	failed   bool             // a write to the file failed: writes are refused until a restart
	isClosed bool             // the server has stopped: writes are refused
}

// newUserStore returns an empty store that keeps its users in memory only.
func newUserStore() *userStore {
	return &userStore{users: map[int64]user{}, byEmail: map[string]int64{}}
}

// openUserStore returns the store kept in the data file at path: the users it holds, and from then
// on every write is in the file before it is answered. disk is how the file is written: osDisk{}.
func openUserStore(path string, disk disk) (*userStore, error) {
	file, doc, err := openDataFile(path, disk)
	if err != nil {
		return nil, err
	}
	s := newUserStore()
	for _, u := range doc.users {
		s.users[u.ID] = u
		s.ids = append(s.ids, u.ID) // the file's users come sorted by id
		s.byEmail[emailKey(u.Email)] = u.ID
	}
	s.lastID = doc.lastID
	s.file = file
	return s, nil
}

// emailKey is the form in which e-mails are compared: addresses are unique case-insensitively.
func emailKey(email string) string { return strings.ToLower(email) }

// get returns the user with this id, or errNotFound.
func (s *userStore) get(id int64) (user, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[id]
	if !ok {
		return user{}, errNotFound
	}
	return u, nil
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

// writable reports whether writes are taken: false once a write to the file has failed.
func (s *userStore) writable() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return !s.failed
}

// version returns a number that changes with every write, so that a copy can tell it is current.
func (s *userStore) version() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changes
}

// all returns a copy of every user, in id order, and the version it is a copy of.
func (s *userStore) all() ([]user, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	users := make([]user, len(s.ids))
	for i, id := range s.ids {
		users[i] = s.users[id]
	}
	return users, s.changes
}

// A direction is the order of a page in id order.
type direction int

const (
	ascending direction = iota
	descending
)

// pageInIDOrder returns page number page (from 1) of perPage users in id order, and how many users
// there are. It copies only the page, so it costs the same at any size of the store.
func (s *userStore) pageInIDOrder(page, perPage int64, order direction) ([]user, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	total := len(s.ids)
	from, to := pageBounds(total, page, perPage)
	users := make([]user, 0, to-from)
	for i := from; i < to; i++ {
		if order == descending {
			users = append(users, s.users[s.ids[total-1-i]])
		} else {
			users = append(users, s.users[s.ids[i]])
		}
	}
	return users, total
}

// pageBounds returns page number page (from 1) of perPage items, of total, as indexes [from, to).
// A page past the end is empty; page*perPage is computed only for a page that exists, so no page,
// however far, overflows.
func pageBounds(total int, page, perPage int64) (from, to int) {
	if page > (int64(total)+perPage-1)/perPage {
		return total, total
	}
	from = int(page-1) * int(perPage)
	return from, min(from+int(perPage), total)
}

// filter returns, in id order, the users whose e-mail is email (any e-mail when it is empty) and
// whose name or e-mail contains search, both compared case-insensitively.
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

// userFields are the fields a write sets: nil where a PATCH leaves the stored value as it is.
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

// create adds a user with the next id. First allowed, the caller's check (a POST's preconditions
// on the whole collection), must return nil: it runs under the write lock, so no other write comes
// between it and the create. Then an e-mail already taken is errEmailTaken. Ids end at 2^63-1:
// after that one, errNoIDLeft.
func (s *userStore) create(fields userFields, allowed func() error) (user, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.takesWrites(); err != nil {
		return user{}, err
	}
	if err := allowed(); err != nil {
		return user{}, err
	}
	created := fields.applyTo(user{})
	s.mu.RLock()
	_, taken := s.byEmail[emailKey(created.Email)]
	lastID := s.lastID
	s.mu.RUnlock()
	switch {
	case taken:
		return user{}, errEmailTaken
	case lastID == math.MaxInt64:
		return user{}, errNoIDLeft
	}
	created.ID = lastID + 1
	return created, s.commit(change{id: created.ID, after: &created})
}

// update sets the fields of user id: errNotFound for a user that does not exist, then whatever
// allowed says of the user as it is now (the caller's preconditions), then errEmailTaken for an
// e-mail another user has.
func (s *userStore) update(id int64, fields userFields, allowed func(current user) error) (user, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.takesWrites(); err != nil {
		return user{}, err
	}
	before, err := s.get(id)
	if err != nil {
		return user{}, err
	}
	if err := allowed(before); err != nil {
		return user{}, err
	}
	after := fields.applyTo(before)
	s.mu.RLock()
	owner, taken := s.byEmail[emailKey(after.Email)]
	s.mu.RUnlock()
	if taken && owner != id {
		return user{}, errEmailTaken
	}
	return after, s.commit(change{id: id, before: &before, after: &after})
}

// delete removes user id: errNotFound for a user that does not exist, then whatever allowed says
// of the user as it is now.
func (s *userStore) delete(id int64, allowed func(current user) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.takesWrites(); err != nil {
		return err
	}
	before, err := s.get(id)
	if err != nil {
		return err
	}
	if err := allowed(before); err != nil {
		return err
	}
	return s.commit(change{id: id, before: &before})
}

// takesWrites refuses a write before it is judged once the server has stopped or a write to the
// file has failed: then every write fails alike, whatever it would have been. The caller holds
// writeMu.
func (s *userStore) takesWrites() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.isClosed:
		return errClosed
	case s.failed:
		return errNotWritable
	}
	return nil
}

// A change is a write that has been judged: user id as it was before and as it is after, nil
// where there is none (before a create, after a delete).
type change struct {
	id            int64
	before, after *user
}

// commit makes a judged change durable, when there is a file, and only then applies it, so that
// no reader sees a write that a crash could still take away. The caller holds writeMu.
func (s *userStore) commit(c change) error {
	if s.file == nil {
		s.apply(c)
		return nil
	}
	applied := false
	defer func() {
		// A write that failed, or code that panicked between the file and memory, may leave the
		// file holding what memory does not: refuse every write from now on, so the two never
		// part ways while the server goes on answering. (Retrying a failed fsync is not safe:
		// Linux may have dropped the pages it could not write.)
		if !applied {
			s.mu.Lock()
			s.failed = true
			s.mu.Unlock()
		}
	}()
	users, lastID := s.afterChange(c)
	if err := s.file.write(users, lastID); err != nil {
		return err
	}
	s.apply(c)
	applied = true
	return nil
}

// afterChange returns every user, in id order, and the largest id ever given, as they will be once
// c is applied: what the file must hold. The caller holds writeMu, so nothing changes meanwhile.
func (s *userStore) afterChange(c change) ([]user, int64) {
	users, _ := s.all()
	i, found := slices.BinarySearchFunc(users, c.id, func(u user, id int64) int { return cmp.Compare(u.ID, id) })
	switch {
	case c.after == nil:
		users = slices.Delete(users, i, i+1)
	case found:
		users[i] = *c.after
	default:
		users = slices.Insert(users, i, *c.after) // a new id is the largest: this appends
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return users, max(s.lastID, c.id)
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
		s.ids = slices.Delete(s.ids, i, i+1)
	} else {
		s.users[c.id] = *c.after
		s.byEmail[emailKey(c.after.Email)] = c.id
		if !listed {
			s.ids = slices.Insert(s.ids, i, c.id) // a new id is the largest: this appends
		}
		s.lastID = max(s.lastID, c.id)
	}
	s.changes++
}

// close waits for the write in progress, if any, then refuses every later write and lets the file
// go for another server to use. A second close does nothing.
func (s *userStore) close() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed {
		return
	}
	s.isClosed = true
	if s.file != nil {
		s.file.close()
	}
}
