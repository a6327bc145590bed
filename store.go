package main

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The store keeps every user in memory. It serves many readers at once and one writer at a time,
// and it never makes a reader wait for encoding or for the disk. Two locks make that work:
//
//   - mu guards the data against readers. Readers share it. The writer holds it exclusively only to
//     publish changes that are already judged and encoded: a few slice and map assignments.
//   - writeMu lets one writer at a time judge a change against the current state (does the user
//     exist, does If-Match match, is the e-mail free) and publish it, so the judgement is still true
//     when it takes effect. With -data the journal's goroutine is the only writer instead (journal.go).
//
// Because only the writer changes the data, the writer may read it without mu.
type userStore struct {
	mu      sync.RWMutex
	users   []storedUser // indexed by id; a zero storedUser is a deleted id (ids are never reused)
	ids     []int64      // the live ids, ascending: a page in id order is a slice of it
	byEmail *emailIndex  // emailKey(email) to id: keeps e-mails unique and answers ?email=
	nextID  int64
	version uint64 // counts publications; the cached list (list.go) belongs to one version

	writeMu sync.Mutex

	allUsers atomic.Pointer[encodedList] // the unpaged list, encoded for one version (list.go)
}

// user is the representation of a user, in the field order clients see (SPEC §6).
type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// storedUser is a user as the store keeps it: its representation, encoded once per write and sent
// as is on every read, and its FNV-64a hash for the ETag. Nothing else: the id, name and e-mail are
// read back out of the representation where a write, a filter or a sort needs them. Keeping them
// as fields too cost 40 bytes a user, a sixth of the heap of a million users.
type storedUser struct {
	json string // {"id":1,"name":"...","email":"..."}
	etag uint64
}

func (u storedUser) exists() bool { return u.json != "" }

func newStoredUser(id int64, name, email string) storedUser {
	var buffer [256]byte // most users encode without an allocation of their own
	representation := appendUserJSON(buffer[:0], id, name, email)
	hash := fnv.New64a()
	hash.Write(representation)
	return storedUser{json: string(representation), etag: hash.Sum64()}
}

// appendUserJSON appends what json.Marshal would write for the user (without HTML escaping, as
// marshalJSON). A write encodes one user, and the reflection of encoding/json costs more than the
// rest of a create; so a name and e-mail that need no escaping, nearly all of them, are copied as
// they are, and only the others go through encoding/json. TestUserJSONIsWhatEncodingJSONWrites
// and FuzzUserJSON hold the two to the same bytes.
func appendUserJSON(b []byte, id int64, name, email string) []byte {
	if !needsNoEscape(name) || !needsNoEscape(email) {
		representation, _ := marshalJSON(user{ID: id, Name: name, Email: email}) // strings always encode
		return append(b, representation...)
	}
	b = strconv.AppendInt(append(b, `{"id":`...), id, 10)
	b = append(append(append(b, `,"name":"`...), name...), `","email":"`...)
	return append(append(b, email...), `"}`...)
}

// needsNoEscape reports whether JSON holds s as it is between quotes: printable ASCII other than
// the quote and the backslash.
func needsNoEscape(s string) bool {
	for _, c := range []byte(s) {
		if c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (u storedUser) id() int64 {
	digits, _, _ := strings.Cut(strings.TrimPrefix(u.json, `{"id":`), ",")
	id, _ := strconv.ParseInt(digits, 10, 64)
	return id
}

func (u storedUser) name() string  { return u.stringMember(`,"name":`) }
func (u storedUser) email() string { return u.stringMember(`,"email":`) }

// stringMember returns the text of the string member that follows key in the representation.
// Inside a JSON string every quote is escaped, so the first match of key is the member itself, and
// its value ends at the first quote that is not escaped. A value without escapes is returned as a
// slice of the representation, sharing its memory; the rare one with escapes is decoded.
func (u storedUser) stringMember(key string) string {
	start := strings.Index(u.json, key)
	if start < 0 {
		return "" // a deleted user
	}
	value := u.json[start+len(key):] // "...",...}
	end := 1
	for value[end] != '"' {
		if value[end] == '\\' {
			end++ // the escaped character, which may be a quote
		}
		end++
	}
	if !strings.Contains(value[:end], `\`) {
		return value[1:end]
	}
	var text string
	json.Unmarshal([]byte(value[:end+1]), &text) // our own encoding: it decodes
	return text
}

// emailKey is the form in which e-mails are compared: addresses are unique case-insensitively.
func emailKey(email string) string { return strings.ToLower(email) }

// emailIndex finds the user who has an address. It is a map by a 64-bit hash of the address, not
// by the address: a map rehashes every key it holds as it grows, and a string key must then be
// read from wherever the address lives in memory, which cost a create more than the rest of its
// work in the store (README, "Performance"). Two addresses may share a hash, however unlikely: a
// match is confirmed against the address the user has, and a second address with a taken hash is
// kept by its text in a map that is nearly always empty.
type emailIndex struct {
	hash     func(key string) uint64 // a field, so that tests can make addresses collide
	byHash   map[uint64]int64
	collided map[string]int64
}

func newEmailIndex() *emailIndex {
	seed := maphash.MakeSeed() // per process, so that nobody can choose addresses that collide
	return &emailIndex{
		hash:     func(key string) uint64 { return maphash.String(seed, key) },
		byHash:   map[uint64]int64{},
		collided: map[string]int64{},
	}
}

// An indexKey is an address as the index takes it: its emailKey, and the hash of that, worked out
// before the store's lock is taken.
type indexKey struct {
	text string // "" for no address
	hash uint64
}

func (x *emailIndex) key(email string) indexKey {
	text := emailKey(email)
	return indexKey{text: text, hash: x.hash(text)}
}

// find returns the user who has the address. keyOf gives a user's address (its emailKey) as the
// caller sees it: the published users, or a batch's view of them, where a write may have changed it.
func (x *emailIndex) find(key indexKey, keyOf func(id int64) string) (int64, bool) {
	if id, ok := x.byHash[key.hash]; ok && keyOf(id) == key.text {
		return id, true
	}
	if id, ok := x.collided[key.text]; ok && keyOf(id) == key.text {
		return id, true
	}
	return 0, false
}

// add records that user id has the address, which no other user has.
func (x *emailIndex) add(key indexKey, id int64) {
	if other, taken := x.byHash[key.hash]; taken && other != id {
		x.collided[key.text] = id // another user's address has the same hash
		return
	}
	x.byHash[key.hash] = id
}

// remove forgets that user id had the address.
func (x *emailIndex) remove(key indexKey, id int64) {
	if x.byHash[key.hash] == id {
		delete(x.byHash, key.hash)
	} else if x.collided[key.text] == id {
		delete(x.collided, key.text)
	}
}

func (x *emailIndex) len() int { return len(x.byHash) + len(x.collided) }

func newUserStore() *userStore {
	return &userStore{users: make([]storedUser, 1), byEmail: newEmailIndex(), nextID: 1}
}

// emailKeyOf returns the address of a published user, as the e-mail index compares it.
func (s *userStore) emailKeyOf(id int64) string {
	u, _ := s.published(id)
	return emailKey(u.email())
}

// get returns the user with this id, if there is one.
func (s *userStore) get(id int64) (storedUser, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.published(id)
}

// published returns the user with this id as readers see it. The caller holds mu, or is the writer.
func (s *userStore) published(id int64) (storedUser, bool) {
	if id <= 0 || id >= int64(len(s.users)) {
		return storedUser{}, false
	}
	u := s.users[id]
	return u, u.exists()
}

// count returns how many users there are.
func (s *userStore) count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids)
}

// A change is one write a client asked for, not yet judged.
type change struct {
	op      changeOp
	id      int64  // the user changed; the store assigns it on create
	name    string // the new values; on patch, "" keeps the stored one
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

// A write is a change that was judged valid: the user's new state, or its removal.
type write struct {
	id     int64
	user   storedUser // the new state; zero when the user is deleted
	key    indexKey   // the new e-mail; none when deleted
	oldKey indexKey   // the e-mail the user had before; none for a new user
}

// commit judges one change and publishes it. This is how writes happen without -data; the journal
// does the same in batches, writing each batch to disk before publishing it.
func (s *userStore) commit(c change) (storedUser, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	b := s.newBatch()
	w, err := b.judge(c)
	if err != nil {
		return storedUser{}, err
	}
	s.publish(b.writes)
	return w.user, nil
}

// A batch judges changes one after another against the published state plus the batch's own
// earlier writes, which readers cannot see yet. Only the store's one writer makes batches.
type batch struct {
	store  *userStore
	nextID int64
	writes []write
}

func (s *userStore) newBatch() *batch { return &batch{store: s, nextID: s.nextID} }

// judge decides a change: 404 for a missing user, then 412, then 409 (SPEC §3, step 5). A change
// that passes becomes the batch's next write.
func (b *batch) judge(c change) (write, error) {
	w := write{id: c.id}
	if c.op == opCreate {
		w.id = b.nextID
	} else {
		old, ok := b.current(c.id)
		if !ok {
			return write{}, errUserNotFound
		}
		if c.ifMatch != "" && !ifMatchAllows(c.ifMatch, old.etag) {
			return write{}, errPreconditionFailed
		}
		w.oldKey = b.store.byEmail.key(old.email())
		c.name = cmp.Or(c.name, old.name()) // a patch keeps what it does not name
		c.email = cmp.Or(c.email, old.email())
	}
	if c.op != opDelete {
		w.key = b.store.byEmail.key(c.email)
		if owner, taken := b.emailOwner(w.key); taken && owner != w.id {
			return write{}, errEmailTaken
		}
		w.user = newStoredUser(w.id, c.name, c.email)
	}
	if c.op == opCreate {
		b.nextID++
	}
	b.writes = append(b.writes, w)
	return w, nil
}

// current returns the user as the batch sees it: its latest write in the batch, or the published user.
func (b *batch) current(id int64) (storedUser, bool) {
	for i := len(b.writes) - 1; i >= 0; i-- {
		if b.writes[i].id == id {
			return b.writes[i].user, b.writes[i].user.exists()
		}
	}
	return b.store.published(id)
}

// emailOwner returns the id of the user who has this address, as the batch sees it.
func (b *batch) emailOwner(key indexKey) (int64, bool) {
	keyOf := func(id int64) string {
		u, _ := b.current(id)
		return emailKey(u.email())
	}
	for i := len(b.writes) - 1; i >= 0; i-- {
		if w := b.writes[i]; w.key.text == key.text && keyOf(w.id) == key.text {
			return w.id, true
		}
	}
	return b.store.byEmail.find(key, keyOf)
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

// apply makes one write take effect. The caller holds mu, or is replaying the journal before the
// server starts.
func (s *userStore) apply(w write) {
	if w.oldKey.text != "" {
		s.byEmail.remove(w.oldKey, w.id)
	}
	if need := int(w.id) + 1 - len(s.users); need > 0 {
		s.users = append(s.users, make([]storedUser, need)...)
	}
	existed := s.users[w.id].exists()
	s.users[w.id] = w.user
	i, _ := slices.BinarySearch(s.ids, w.id)
	switch {
	case w.user.exists() && !existed:
		s.ids = slices.Insert(s.ids, i, w.id) // new ids are the largest: this appends
	case !w.user.exists() && existed:
		s.ids = slices.Delete(s.ids, i, i+1)
	}
	if w.user.exists() {
		s.byEmail.add(w.key, w.id)
	}
	s.nextID = max(s.nextID, w.id+1)
}
