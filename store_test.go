package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// The store judges every write against the state it would change: the published users plus the
// earlier writes of the same batch, which readers cannot see yet (store.go). These tests drive a
// batch step by step, the way the journal does with many writers at once.

// Changes as the handlers make them.
func createChange(name, email string) change {
	return change{op: opCreate, fields: userFields{name: &name, email: &email}}
}

func replaceChange(id int64, name, email string) change {
	return change{op: opUpdate, id: id, fields: userFields{name: &name, email: &email}}
}

func patchName(id int64, name string) change {
	return change{op: opUpdate, id: id, fields: userFields{name: &name}}
}

func patchEmail(id int64, email string) change {
	return change{op: opUpdate, id: id, fields: userFields{email: &email}}
}

func deleteChange(id int64) change { return change{op: opDelete, id: id} }

// withIfMatch is c with an If-Match header.
func withIfMatch(c change, ifMatch string) change {
	tags := parseTagList(ifMatch)
	c.conditions.ifMatch = &tags
	return c
}

// withIfNoneMatch is c with an If-None-Match header.
func withIfNoneMatch(c change, ifNoneMatch string) change {
	tags := parseTagList(ifNoneMatch)
	c.conditions.ifNoneMatch = &tags
	return c
}

// storeWithAnnAndBob returns a store holding Ann (1) and Bob (2); id 3 was created and deleted, so
// the next id is 4.
func storeWithAnnAndBob(t *testing.T) *userStore {
	t.Helper()
	s := newUserStore()
	for _, c := range []change{
		createChange("Ann", "ann@example.com"),
		createChange("Bob", "bob@example.com"),
		createChange("Gone", "gone@example.com"),
		deleteChange(3),
	} {
		if _, err := s.commit(c); err != nil {
			t.Fatalf("setting up %+v: %v", c, err)
		}
	}
	return s
}

// publishedUsers lists the users readers see, by id.
func publishedUsers(s *userStore) []user {
	users, _ := s.allUsers()
	return users
}

// checkStoreInvariants fails the test if the store's indexes disagree with its users: the ids are
// the live users in ascending order, every e-mail is unique case-insensitively and indexed, and
// no live id is above the last id given.
func checkStoreInvariants(t *testing.T, s *userStore) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for id, u := range s.users {
		if u.ID != id {
			t.Errorf("users[%d] holds id %d", id, u.ID)
		}
		if owner, ok := s.byEmail[emailKey(u.Email)]; !ok || owner != id {
			t.Errorf("byEmail[%q] = %d, %v; want %d", emailKey(u.Email), owner, ok, id)
		}
		if id > s.lastID {
			t.Errorf("user %d is above the last id given, %d: that id would be given again", id, s.lastID)
		}
	}
	if len(s.byEmail) != len(s.users) {
		t.Errorf("byEmail has %d e-mails for %d users: an e-mail is held by nobody or twice", len(s.byEmail), len(s.users))
	}
	if len(s.ids) != len(s.users) {
		t.Errorf("ids has %d entries for %d users", len(s.ids), len(s.users))
	}
	for i, id := range s.ids {
		if i > 0 && s.ids[i-1] >= id {
			t.Errorf("ids not ascending: %v", s.ids)
			break
		}
		if _, ok := s.users[id]; !ok {
			t.Errorf("ids lists %d, which is not a user", id)
		}
	}
}

func TestStoreCommitReturnsTheUserAsStored(t *testing.T) {
	s := newUserStore()
	created, err := s.commit(createChange("Ann", "ann@example.com"))
	if want := (user{1, "Ann", "ann@example.com"}); err != nil || created != want {
		t.Fatalf("create: %+v, %v; want %+v", created, err, want)
	}
	patched, err := s.commit(patchName(1, "Ann Lee"))
	if want := (user{1, "Ann Lee", "ann@example.com"}); err != nil || patched != want {
		t.Fatalf("patch: %+v, %v; want %+v, the e-mail kept", patched, err, want)
	}
	if got, ok := s.get(1); !ok || got != patched {
		t.Errorf("get(1) = %+v, %v; want what commit returned, %+v", got, ok, patched)
	}
}

func TestConcurrentCreatesOfOneEmailLetExactlyOneWin(t *testing.T) {
	s := newUserStore()
	const writers = 64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			email := "same@example.com"
			if i%2 == 1 {
				email = "SAME@example.com" // unique means unique case-insensitively
			}
			_, errs[i] = s.commit(createChange(fmt.Sprint("writer ", i), email))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, errEmailTaken):
			t.Errorf("unexpected error %v", err)
		}
	}
	if won != 1 || s.count() != 1 {
		t.Errorf("%d creates won and the store holds %d users; want exactly 1", won, s.count())
	}
	if last := s.lastGivenID(); last != 1 {
		t.Errorf("the last id given is %d: refused creates used up ids", last)
	}
	checkStoreInvariants(t, s)
}

// Run with -race: writers create, replace, patch and delete over a small set of e-mails while
// readers read, list and page. E-mails must stay unique and the indexes consistent.
func TestConcurrentCommitsKeepEmailsUniqueAndIndexesConsistent(t *testing.T) {
	s := newUserStore()
	emails := []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com",
		"f@example.com", "g@example.com", "h@example.com"}
	const writers, readers, rounds = 8, 4, 150
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 42))
			for n := 0; n < rounds; n++ {
				email := emails[r.IntN(len(emails))]
				if r.IntN(2) == 0 {
					email = strings.ToUpper(email)
				}
				id := r.Int64N(s.lastGivenID()+2) + 1 // an id given, or the next one, or none
				var c change
				switch r.IntN(4) {
				case 0:
					c = createChange(fmt.Sprint("user ", n), email)
				case 1:
					c = replaceChange(id, fmt.Sprint("user ", n), email)
				case 2:
					c = patchName(id, fmt.Sprint("user ", n)) // a patch of the name only
				default:
					c = deleteChange(id)
				}
				if _, err := s.commit(c); err != nil && !errors.Is(err, errEmailTaken) && !errors.Is(err, errUserNotFound) {
					t.Errorf("commit %+v: %v", c, err)
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readersDone sync.WaitGroup
	for i := 0; i < readers; i++ {
		readersDone.Add(1)
		go func() {
			defer readersDone.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s.get(1)
				s.count()
				s.encodedWholeList()
				s.list(listQuery{paged: true, page: 1, perPage: 3, sort: "-id"})
				s.list(listQuery{search: "example", sort: "name"})
			}
		}()
	}
	wg.Wait()
	close(stop)
	readersDone.Wait()
	checkStoreInvariants(t, s)
	users, _ := s.allUsers()
	if got, want := string(s.encodedWholeList().body), string(encodeList(users, len(users), listQuery{}).body); got != want {
		t.Errorf("the cached list is stale:\n got %s\nwant %s", got, want)
	}
}

// Against a model: through creates, changes of address and deletes in any order, e-mails stay
// unique case-insensitively and the index finds each user by address.
func TestEmailIndexFollowsEveryChangeOfAddress(t *testing.T) {
	addresses := []string{"a@x.test", "B@x.test", "b@x.test", "cc@x.test", "dd@x.test", "eee@x.test"}
	s := newUserStore()
	owners := map[string]int64{} // emailKey to id: what the index must answer
	keys := map[int64]string{}   // the other way round
	random := rand.New(rand.NewPCG(1, 2))
	for step := range 3000 {
		address := addresses[random.IntN(len(addresses))]
		key := emailKey(address)
		var c change
		var pick []int64
		for _, u := range publishedUsers(s) {
			pick = append(pick, u.ID)
		}
		switch {
		case len(pick) == 0 || random.IntN(3) == 0:
			c = createChange("Someone", address)
		case random.IntN(2) == 0:
			c = patchEmail(pick[random.IntN(len(pick))], address)
		default:
			c = deleteChange(pick[random.IntN(len(pick))])
		}
		_, err := s.commit(c)
		if owner, taken := owners[key]; c.op != opDelete && taken && owner != c.id {
			if !errors.Is(err, errEmailTaken) {
				t.Fatalf("step %d: %+v: got %v, want 409: user %d has %s", step, c, err, owner, key)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %+v: %v", step, c, err)
		}
		if c.op == opCreate {
			c.id = s.lastGivenID()
		}
		delete(owners, keys[c.id])
		delete(keys, c.id)
		if c.op != opDelete {
			owners[key], keys[c.id] = c.id, key
		}
		checkStoreInvariants(t, s)
		for _, address := range addresses {
			key := emailKey(address)
			id, found := s.emailOwner(address)
			if owner, taken := owners[key]; found != taken || id != owner {
				t.Fatalf("step %d: byEmail[%s] = %d, %v; want %d, %v", step, key, id, found, owner, taken)
			}
		}
	}
}

// A create with preconditions is judged against the collection that readers can have seen: the
// changes queued before it are published first, and its If-Match must name the list they left.
func TestConditionalCreateIsJudgedAfterTheChangesQueuedBeforeIt(t *testing.T) {
	s := storeWithAnnAndBob(t)
	ann, bob := user{1, "Ann", "ann@example.com"}, user{2, "Bob", "bob@example.com"}
	carol := user{4, "Carol", "carol@example.com"}
	before := encodeList([]user{ann, bob}, 2, listQuery{}).etag
	afterCarol := encodeList([]user{ann, bob, carol}, 3, listQuery{}).etag
	withListTag := func(c change, etag string) change {
		tags := tagList{etag}
		c.conditions.ifMatch = &tags
		return c
	}
	queued := []*pendingChange{
		{change: createChange("Carol", "carol@example.com")},
		{change: withListTag(createChange("Dan", "dan@example.com"), before)},
		{change: withListTag(createChange("Eve", "eve@example.com"), afterCarol)},
	}
	s.writeMu.Lock()
	for _, p := range queued {
		s.queue <- p
	}
	s.writeQueued()
	s.writeMu.Unlock()
	for i, want := range []error{nil, errIfMatchFailed, nil} {
		if !errors.Is(queued[i].err, want) || !queued[i].done {
			t.Errorf("change %d: error %v, done %v; want %v", i+1, queued[i].err, queued[i].done, want)
		}
	}
	if got, want := publishedUsers(s), []user{ann, bob, carol, {5, "Eve", "eve@example.com"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("published %v, want %v", got, want)
	}
}

// The lost update, avoided: two clients read the same user; the second write, sent with the ETag
// both read, fails instead of silently undoing the first.
func TestIfMatchStopsALostUpdate(t *testing.T) {
	s := storeWithAnnAndBob(t)
	read, _ := s.get(1)
	etag := entityTag(marshal(read))
	first, err := s.commit(withIfMatch(patchName(1, "Ann Lee"), etag))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.commit(withIfMatch(patchName(1, "Ann Smith"), etag)); !errors.Is(err, errIfMatchFailed) {
		t.Errorf("the second write: %v, want %v", err, errIfMatchFailed)
	}
	if got, _ := s.get(1); got != first {
		t.Errorf("the user is %+v, want the first client's write %+v", got, first)
	}
}

// The target of a create is the collection, whose ETag is that of the whole list: it always
// exists, so If-None-Match: * fails, and If-Match with the list's ETag creates the user only if
// the collection has not changed since the client read it.
func TestPreconditionsOfACreateAreJudgedAgainstTheWholeList(t *testing.T) {
	s := storeWithAnnAndBob(t)
	listTag := func() string { return s.encodedWholeList().etag }
	read := listTag()
	pageTag := s.list(listQuery{paged: true, page: 1, perPage: 1, sort: "id"}).etag
	for _, refused := range []struct {
		change change
		want   error
	}{
		{withIfNoneMatch(createChange("Nobody", "nobody@example.com"), "*"), errIfNoneMatchFailed},
		{withIfNoneMatch(createChange("Nobody", "nobody@example.com"), read), errIfNoneMatchFailed},
		{withIfMatch(createChange("Nobody", "nobody@example.com"), pageTag), errIfMatchFailed},
	} {
		if _, err := s.commit(refused.change); !errors.Is(err, refused.want) {
			t.Errorf("%+v: %v, want %v", refused.change.conditions, err, refused.want)
		}
	}
	if listTag() != read {
		t.Fatal("a create that failed its precondition changed the collection")
	}
	for _, step := range []struct {
		change change
		want   error
	}{
		{withIfMatch(createChange("Carol", "carol@example.com"), read), nil},
		{withIfMatch(createChange("Dan", "dan@example.com"), read), errIfMatchFailed}, // Carol changed it
		{withIfMatch(createChange("Eve", "eve@example.com"), "*"), nil},
		{withIfNoneMatch(createChange("Fay", "fay@example.com"), read), nil},
	} {
		if _, err := s.commit(step.change); !errors.Is(err, step.want) {
			t.Errorf("creating %s with %+v: %v, want %v", *step.change.fields.name, step.change.conditions, err, step.want)
		}
	}
	if _, err := s.commit(withIfMatch(createChange("Dan", "dan@example.com"), listTag())); err != nil {
		t.Errorf("creating Dan with the current list's ETag: %v", err)
	}
}
