package main

import (
	"cmp"
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

// userStore keeps every user in memory. No reader ever waits for encoding or for the disk:
//
//   - mu guards the data. Readers share it; the writer holds it alone only to publish changes
//     already judged, a few slice and map assignments.
//   - writeMu lets one writer at a time judge a change against the current state (does the user
//     exist, does If-Match hold, is the e-mail free) and publish it, so the judgement still holds
//     when it takes effect. With -data the journal's writeMu is held by the only writer instead.
//
// Only the writer changes the data, so the writer may read it without mu.
type userStore struct {
	mu      sync.RWMutex
	users   []user           // by id, a slice rather than a map: a third of the memory
	ids     []int64          // the live ids, ascending: a page in id order is a slice of it
	byEmail map[string]int64 // emailKey(email) to id: keeps e-mails unique and answers ?email=
	nextID  int64
	version uint64 // counts publications: the cached list belongs to one version

	writeMu   sync.Mutex
	wholeList atomic.Pointer[encodedList] // the unpaged list, encoded once per version (list.go)
}

func newUserStore() *userStore {
	return &userStore{users: make([]user, 1), byEmail: map[string]int64{}, nextID: 1}
}

// emailKey is the form in which e-mails are compared: addresses are unique case-insensitively.
func emailKey(email string) string { return strings.ToLower(email) }

// exists reports whether u is a user: the zero user stands for an id deleted or not yet given.
func (u user) exists() bool { return u.ID != 0 }

func (s *userStore) get(id int64) (user, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.published(id)
}

// published returns the user with this id as readers see it. The caller holds mu, or is the writer.
func (s *userStore) published(id int64) (user, bool) {
	if id <= 0 || id >= int64(len(s.users)) {
		return user{}, false
	}
	return s.users[id], s.users[id].exists()
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
	return s.nextID == 1
}

// A change is one write a client asked for, not yet judged.
type change struct {
	op      changeOp
	id      int64  // the user changed; a create is given the next id
	name    string // the new values; a patch keeps the stored value of a field left ""
	email   string
	ifMatch string // the If-Match header as sent, "" when absent
}

type changeOp int

const (
	opCreate changeOp = iota
	opReplace
	opPatch
	opDelete
)

// A write is a change judged valid: the user before and after it (the zero user where there is none).
type write struct {
	id            int64
	before, after user
}

// commit judges one change and publishes it: how writes happen without -data.
func (s *userStore) commit(c change) (user, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	b := s.newBatch()
	u, err := b.judge(c)
	if err == nil {
		s.publish(b.writes)
	}
	return u, err
}

// broken is always false: memory does not fail to write (the journal's can).
func (s *userStore) broken() bool { return false }

// A batch judges changes against the published state plus its own writes, unseen by readers yet.
type batch struct {
	store  *userStore
	nextID int64
	writes []write
	users  map[int64]user   // the latest write of each user, the zero user once deleted
	emails map[string]int64 // the e-mails the batch gave (to an id) or freed (0)
}

func (s *userStore) newBatch() *batch {
	return &batch{store: s, nextID: s.nextID, users: map[int64]user{}, emails: map[string]int64{}}
}

// judge decides a change, 404 then 412 then 409 (docs/api.md, "The order of the checks"), and
// returns the user after it.
func (b *batch) judge(c change) (user, error) {
	id := c.id
	if c.op == opCreate {
		id = b.nextID
	}
	before, exists := b.current(id)
	if c.op != opCreate && !exists {
		return user{}, errUserNotFound
	}
	if c.ifMatch != "" && !ifMatchAllows(c.ifMatch, before) {
		return user{}, errPreconditionFailed
	}
	var after user
	if c.op != opDelete {
		after = user{ID: id, Name: cmp.Or(c.name, before.Name), Email: cmp.Or(c.email, before.Email)}
		if owner, taken := b.emailOwner(after.Email); taken && owner != id {
			return user{}, errEmailTaken
		}
	}
	if c.op == opCreate {
		b.nextID++
	}
	b.writes = append(b.writes, write{id: id, before: before, after: after})
	b.users[id] = after
	if exists {
		b.emails[emailKey(before.Email)] = 0
	}
	if after.exists() {
		b.emails[emailKey(after.Email)] = id
	}
	return after, nil
}

// current returns the user as the batch sees it: its latest write in the batch, or the published user.
func (b *batch) current(id int64) (user, bool) {
	if u, written := b.users[id]; written {
		return u, u.exists()
	}
	return b.store.published(id)
}

// emailOwner returns the id of the user who has this e-mail, as the batch sees it.
func (b *batch) emailOwner(email string) (int64, bool) {
	if id, written := b.emails[emailKey(email)]; written {
		return id, id != 0
	}
	id, taken := b.store.byEmail[emailKey(email)]
	return id, taken
}

// publish makes judged writes visible to readers, all at once.
func (s *userStore) publish(writes []write) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range writes {
		s.apply(w)
	}
	s.version++
}

// apply makes one write take effect. The caller holds mu, or replays the journal before serving.
func (s *userStore) apply(w write) {
	if w.before.exists() {
		delete(s.byEmail, emailKey(w.before.Email))
	}
	if w.after.exists() {
		s.byEmail[emailKey(w.after.Email)] = w.id
	}
	if missing := w.id + 1 - int64(len(s.users)); missing > 0 {
		s.users = append(s.users, make([]user, missing)...)
	}
	s.users[w.id] = w.after
	i, listed := slices.BinarySearch(s.ids, w.id)
	switch {
	case w.after.exists() && !listed:
		s.ids = slices.Insert(s.ids, i, w.id) // new ids are the largest: this appends
	case !w.after.exists() && listed:
		s.ids = slices.Delete(s.ids, i, i+1)
	}
	s.nextID = max(s.nextID, w.id+1)
}

// allUsers returns every user in id order. The caller holds mu, or is the writer.
func (s *userStore) allUsers() []user {
	users := make([]user, len(s.ids))
	for i, id := range s.ids {
		users[i] = s.users[id]
	}
	return users
}
