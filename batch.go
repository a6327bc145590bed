package main

import "math"

// A batch is the changes one writer judges together (store.go), each against the published users
// and the batch's own earlier writes, which readers cannot see yet: so e-mails stay unique and each
// id is given once, even among changes that readers will see all at once.
type batch struct {
	store  *userStore
	lastID int64
	writes []write
	latest map[int64]*user  // each user the batch wrote, as it left it: nil once deleted
	emails map[string]int64 // each e-mail the batch gave, by emailKey, and whom it gave it to last
}

// newBatch begins a batch on the published state.
func (s *userStore) newBatch() *batch {
	return &batch{store: s, lastID: s.lastGivenID(), latest: map[int64]*user{}, emails: map[string]int64{}}
}

// judge decides one change, 404 then 412 then 409 (docs/api.md, "The order of the checks"), and
// returns the user it leaves: after a delete, the user as it was.
func (b *batch) judge(c change) (user, error) {
	if c.op == opCreate {
		return b.create(c)
	}
	before, exists := b.current(c.id)
	if !exists {
		return user{}, errUserNotFound
	}
	if c.conditions.present() {
		if err := c.conditions.checkWrite(entityTag(marshal(before))); err != nil {
			return user{}, err
		}
	}
	if c.op == opDelete {
		b.add(write{id: c.id, before: &before})
		return before, nil
	}
	after := c.fields.applyTo(before)
	if owner, taken := b.emailOwner(after.Email); taken && owner != c.id {
		return user{}, errEmailTaken
	}
	b.add(write{id: c.id, before: &before, after: &after})
	return after, nil
}

// create gives a new user the next id. Ids end at 2^63-1: a create after that one is refused, as
// an id is never given twice, nor wraps around to a negative one.
func (b *batch) create(c change) (user, error) {
	if c.conditions.present() { // the target is the collection: its ETag is the whole list's
		if err := c.conditions.checkWrite(b.store.encodedWholeList().etag); err != nil {
			return user{}, err
		}
	}
	created := c.fields.applyTo(user{})
	if _, taken := b.emailOwner(created.Email); taken {
		return user{}, errEmailTaken
	}
	if b.lastID == math.MaxInt64 {
		return user{}, errNoIDLeft
	}
	b.lastID++
	created.ID = b.lastID
	b.add(write{id: created.ID, after: &created})
	return created, nil
}

// add records a judged write, which later changes of the batch see.
func (b *batch) add(w write) {
	b.writes = append(b.writes, w)
	b.latest[w.id] = w.after
	if w.after != nil {
		b.emails[emailKey(w.after.Email)] = w.id
	}
}

// current returns the user as the batch sees it: as its latest write left it, or as published.
func (b *batch) current(id int64) (user, bool) {
	if u, written := b.latest[id]; written {
		if u == nil {
			return user{}, false
		}
		return *u, true
	}
	return b.store.get(id)
}

// emailOwner returns the id of the user who has this e-mail, as the batch sees it: the user the
// batch last gave it to, or its published owner, if that user still has it.
func (b *batch) emailOwner(email string) (int64, bool) {
	if id, given := b.emails[emailKey(email)]; given && b.hasEmail(id, email) {
		return id, true
	}
	if id, taken := b.store.emailOwner(email); taken && b.hasEmail(id, email) {
		return id, true
	}
	return 0, false
}

// hasEmail reports whether user id has this e-mail, in any case, as the batch sees it.
func (b *batch) hasEmail(id int64, email string) bool {
	u, exists := b.current(id)
	return exists && emailKey(u.Email) == emailKey(email)
}
