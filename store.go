package main

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"
)

// errClosed is the error of a write to a store that was closed: the server has stopped, and the
// data file may be another server's already.
var errClosed = errors.New("store closed")

// userStore keeps the users in a map in memory and, with -data, a copy of them in a JSON file
// (datafile.go) that each write replaces whole. Its methods take a context first, as a store kept
// elsewhere needs (examples/postgres cancels its query with it); this one has nothing to cancel.
//
// Its locking rule: mu guards every field below it, the data file's included. Reads hold it for
// reading; a write, and a look at the data file, hold it for writing, from the look and the
// judgment of the change to its end, the file's rewrite included. So writes take turns, what a
// write judged still holds when it applies, and reads wait for a write in progress.
type userStore struct {
	mu     sync.RWMutex
	users  map[int64]user   // the users by id: memory grows with the users, not with the largest id
	byKey  map[string]int64 // each user's uniqueKey (user.go) to its id: no two users share one
	lastID int64            // the largest id ever given, 0 before the first: ids are never reused
	file   *dataFile        // nil when the users live in memory only
	closed bool             // the server has stopped: writes are refused
}

// newUserStore returns an empty store that keeps its users in memory only.
func newUserStore() *userStore {
	return &userStore{users: map[int64]user{}, byKey: map[string]int64{}}
}

// openUserStore returns the store kept in the data file at path (openDataFile, datafile.go): the
// users the file holds, and from then on every write is in the file before it is answered.
func openUserStore(path string, log *slog.Logger) (*userStore, error) {
	file, contents, err := openDataFile(path, log)
	if err != nil {
		return nil, err
	}
	s := newUserStore()
	s.setUsers(contents.users)
	s.lastID, s.file = contents.lastID, file
	return s, nil
}

// setUsers makes users, checked as the data file's are (checkDocument), the store's users, with
// the index of their unique keys. The caller holds mu for writing.
func (s *userStore) setUsers(users []user) {
	s.users, s.byKey = make(map[int64]user, len(users)), make(map[string]int64, len(users))
	for _, u := range users {
		s.users[u.ID] = u
		s.byKey[u.uniqueKey()] = u.ID
	}
}

// get returns the user with this id, or errNotFound.
func (s *userStore) get(ctx context.Context, id int64) (user, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[id]
	if !ok {
		return user{}, errNotFound
	}
	return u, nil
}

// list returns the users q selects, filtered, sorted and paged (list.go), and how many matched
// before paging. The users are copied under the lock and selected once it is let go, so that a
// list holds up a write only as long as the copy takes.
func (s *userStore) list(ctx context.Context, q listQuery) (page []user, total int, err error) {
	s.mu.RLock()
	users := s.sortedUsers()
	s.mu.RUnlock()
	page, total = q.selectUsers(users)
	return page, total, nil
}

// sortedUsers returns a copy of every user, in id order. The caller holds mu.
func (s *userStore) sortedUsers() []user {
	users := make([]user, 0, len(s.users))
	for _, u := range s.users {
		users = append(users, u)
	}
	sortByID(users)
	return users
}

// neverHadUsers reports whether no user was ever created: -sample-data fills only such a store.
func (s *userStore) neverHadUsers(ctx context.Context) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastID == 0, nil
}

// create adds a user with the next id, once check says nil of the collection: a POST's
// preconditions, judged under the same lock as the write (RFC 9110 §13.1). check reads the
// collection, every user in id order, only if it needs it. Then errEmailTaken when another user
// has the e-mail, and errNoIDLeft once id 2^63-1 has been given.
func (s *userStore) create(ctx context.Context, fields userFields, check func(collection func() ([]user, error)) error) (user, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beforeWrite(); err != nil {
		return user{}, err
	}
	if err := check(func() ([]user, error) { return s.sortedUsers(), nil }); err != nil {
		return user{}, err
	}
	created := fields.applyTo(user{})
	switch {
	case s.isTaken(created):
		return user{}, errEmailTaken
	case s.lastID == math.MaxInt64:
		return user{}, errNoIDLeft
	}
	created.ID = s.lastID + 1
	return created, s.commit(change{id: created.ID, after: &created})
}

// update sets the fields of user id: errNotFound for a user that does not exist, then whatever
// check says of the user as it is now (the caller's preconditions), then errEmailTaken for an
// e-mail another user has.
func (s *userStore) update(ctx context.Context, id int64, fields userFields, check func(current user) error) (user, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beforeWrite(); err != nil {
		return user{}, err
	}
	before, ok := s.users[id]
	if !ok {
		return user{}, errNotFound
	}
	if err := check(before); err != nil {
		return user{}, err
	}
	after := fields.applyTo(before)
	if s.isTaken(after) {
		return user{}, errEmailTaken
	}
	return after, s.commit(change{id: id, before: &before, after: &after})
}

// delete removes user id: errNotFound for a user that does not exist, then whatever check says of
// the user as it is now.
func (s *userStore) delete(ctx context.Context, id int64, check func(current user) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beforeWrite(); err != nil {
		return err
	}
	before, ok := s.users[id]
	if !ok {
		return errNotFound
	}
	if err := check(before); err != nil {
		return err
	}
	return s.commit(change{id: id, before: &before})
}

// isTaken reports whether another user has u's unique key. The caller holds mu.
func (s *userStore) isTaken(u user) bool {
	owner, taken := s.byKey[u.uniqueKey()]
	return taken && owner != u.ID
}

// beforeWrite is what every write does first, under mu: a closed store refuses it, and a person's
// save of the data file is loaded (loadPendingSave, below), so that the write is judged
// against it.
func (s *userStore) beforeWrite() error {
	if s.closed {
		return errClosed // a request left behind by a stop that timed out
	}
	return s.loadPendingSave()
}

// A change is a write that has been judged: user id as it was before and as it is after, nil
// where there is none (before a create, after a delete).
type change struct {
	id            int64
	before, after *user
}

// commit is the one write path. With a data file, the whole document as it will be after c is
// written durably first, and only then does memory change, so that no reader sees a write a crash
// could take back. After a failed write memory holds what the file holds: a write that failed
// before its rename changed neither, and the next write tries again; one whose folder could not be
// synced after its rename (errNotSynced) is in the file, so memory takes it too, and the client is
// told 500: not confirmed. The caller holds mu for writing.
func (s *userStore) commit(c change) error {
	var err error
	if s.file != nil {
		err = s.file.write(s.usersAfter(c), max(s.lastID, c.id))
	}
	if err != nil && !errors.Is(err, errNotSynced) {
		return err
	}
	if c.before != nil {
		delete(s.byKey, c.before.uniqueKey())
	}
	if c.after == nil {
		delete(s.users, c.id)
	} else {
		s.users[c.id] = *c.after
		s.byKey[c.after.uniqueKey()] = c.id
		s.lastID = max(s.lastID, c.id)
	}
	return err
}

// usersAfter returns every user as they will be once c is applied, in id order: what the data
// file must hold. The caller holds mu.
func (s *userStore) usersAfter(c change) []user {
	users := make([]user, 0, len(s.users)+1)
	for id, u := range s.users {
		if id != c.id {
			users = append(users, u)
		}
	}
	if c.after != nil {
		users = append(users, *c.after)
	}
	sortByID(users)
	return users
}

// A person's edits of the data file (docs/durability.md, "Editing it while the server runs"): the
// file's look is datafile.go's; loading what it finds changes the users, so it is the store's.

// watch looks at the data file about once a second, until ctx is done, and loads a person's save
// once its stamp has stayed the same for one look: a file an editor is still writing in place is
// neither read half-written nor logged as broken. openStore (main.go) runs it beside the server.
func (s *userStore) watch(ctx context.Context) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			s.loadSettledSave()
		}
	}
}

// loadSettledSave is the ticker's look: it loads a person's save once the look before saw the
// same save.
func (s *userStore) loadSettledSave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil || s.closed {
		return
	}
	save, saved := s.file.look()
	switch {
	case !saved:
		s.file.seen = fileStamp{}
	case !save.same(s.file.seen):
		s.file.seen = save // not settled: it is loaded at the next look if it stays the same
	default:
		s.loadSave(save) // a save it cannot load is logged, and refuses writes until another save
	}
}

// loadPendingSave is a write's look, before the write is judged: a person's save is loaded at once
// (half-written JSON never parses), so that the write is judged against it and the document it
// writes holds it. A save that cannot be loaded refuses the write: errFileEdited. The caller holds
// mu for writing.
func (s *userStore) loadPendingSave() error {
	if s.file == nil {
		return nil
	}
	save, saved := s.file.look()
	if !saved {
		return nil
	}
	return s.loadSave(save)
}

// loadSave loads a person's save of the file, checked as the start checks a file, in place of the
// users in memory, and logs what it added, changed and removed. Ids are still never reused: the
// next id is the larger of the file's and the server's, and when that is not what the file says,
// the file is written back with it. A save that fails the checks is not loaded: it is logged, once
// and then at most once a minute, and it returns errFileEdited until another save. A file that is
// gone is logged and not loaded: memory keeps its users, and the next write creates it again.
func (s *userStore) loadSave(save fileStamp) error {
	f := s.file
	switch {
	case f.refused != nil && f.refused.save.same(save):
		f.remindRefusal()
		return errFileEdited
	case save.info == nil:
		f.log.Warn("data file missing", "file", f.path)
		f.written, f.refused = save, nil
		return nil
	}
	contents, err := f.read(save)
	if err != nil {
		f.refused = &refusal{save: save, reason: err}
		f.remindRefusal()
		return errFileEdited
	}
	added, changed, removed := s.compare(contents.users)
	s.setUsers(contents.users)
	s.lastID = max(s.lastID, contents.lastID)
	f.written, f.seen, f.refused = save, fileStamp{}, nil
	f.log.Info("data file edit loaded", "file", f.path, "added", added, "changed", changed, "removed", removed)
	if s.lastID > contents.lastID { // next_id left out or lowered: a restart would give old ids again
		if err := f.write(contents.users, s.lastID); err != nil {
			f.log.Error("data file next_id not written", "file", f.path, "next_id", s.lastID+1, "error", err)
		} else {
			f.log.Info("data file next_id written", "file", f.path, "next_id", s.lastID+1)
		}
	}
	return nil
}

// compare returns the ids of the users that loading users would add, change and remove, each in
// id order, and empty rather than nil, for the log. The caller holds mu.
func (s *userStore) compare(users []user) (added, changed, removed []int64) {
	added, changed, removed = []int64{}, []int64{}, []int64{}
	kept := map[int64]bool{}
	for _, u := range users {
		before, ok := s.users[u.ID]
		switch {
		case !ok:
			added = append(added, u.ID)
		case before != u:
			changed = append(changed, u.ID)
		}
		kept[u.ID] = true
	}
	for _, u := range s.sortedUsers() {
		if !kept[u.ID] {
			removed = append(removed, u.ID)
		}
	}
	return added, changed, removed
}

// close refuses every write from now on, once the write in progress, if any, is done, and lets go
// of the data file, for another server to use. A second close does nothing.
func (s *userStore) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil && !s.closed {
		s.file.close()
	}
	s.closed = true
}
