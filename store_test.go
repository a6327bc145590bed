package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The store's tests (store.go): a write takes the writer's lock, is judged against the current
// state (404, 412, 409), and is applied under the data's lock, so what it judged still holds when
// it applies, and readers see every write whole. These call the store as the handlers do.

// storeFields are the fields of a create or a replace: both.
func storeFields(name, email string) userFields { return userFields{name: &name, email: &email} }

// storeName and storeEmail are the fields of a PATCH of one field.
func storeName(name string) userFields { return userFields{name: &name} }

func storeEmail(email string) userFields { return userFields{email: &email} }

// storeIfMatch and storeIfNoneMatch are the preconditions of a request with that header.
func storeIfMatch(value string) preconditions {
	tags := parseTagList(value)
	return preconditions{ifMatch: &tags}
}

func storeIfNoneMatch(value string) preconditions {
	tags := parseTagList(value)
	return preconditions{ifNoneMatch: &tags}
}

// storeWithAnnAndBob returns a store in memory holding Ann and Bob, and a third user created and
// deleted, so the next id is not the one after Bob's.
func storeWithAnnAndBob(t *testing.T) (s *userStore, ann, bob user) {
	t.Helper()
	s = newUserStore()
	var err error
	if ann, err = s.create(storeFields("Ann", "ann@example.com"), preconditions{}); err != nil {
		t.Fatal(err)
	}
	if bob, err = s.create(storeFields("Bob", "bob@example.com"), preconditions{}); err != nil {
		t.Fatal(err)
	}
	gone, err := s.create(storeFields("Gone", "gone@example.com"), preconditions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.delete(gone.ID, preconditions{}); err != nil {
		t.Fatal(err)
	}
	return s, ann, bob
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

// A write returns the user as stored: a create with its new id, a patch with the fields it left
// as they were; and get returns the same.
func TestStoreWritesReturnTheUserAsStored(t *testing.T) {
	s := newUserStore()
	created, err := s.create(storeFields("Ann", "ann@example.com"), preconditions{})
	if want := (user{created.ID, "Ann", "ann@example.com"}); err != nil || created != want || created.ID <= 0 {
		t.Fatalf("create: %+v, %v; want %+v with a positive id", created, err, want)
	}
	patched, err := s.update(created.ID, storeName("Ann Lee"), preconditions{})
	if want := (user{created.ID, "Ann Lee", "ann@example.com"}); err != nil || patched != want {
		t.Fatalf("patch: %+v, %v; want %+v, the e-mail kept", patched, err, want)
	}
	if got, err := s.get(created.ID); err != nil || got != patched {
		t.Errorf("get(%d) = %+v, %v; want what update returned, %+v", created.ID, got, err, patched)
	}
}

// Creates of one e-mail, in any case, sent at once: exactly one wins, the others are 409, and the
// refused creates use up no id.
func TestConcurrentCreatesOfOneEmailLetExactlyOneWin(t *testing.T) {
	s := newUserStore()
	const writers = 64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			email := "same@example.com"
			if i%2 == 1 {
				email = "SAME@example.com" // unique means unique case-insensitively
			}
			_, errs[i] = s.create(storeFields(fmt.Sprint("writer ", i), email), preconditions{})
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
	if users, last := s.snapshot(); len(users) != 1 || last != users[0].ID {
		t.Errorf("the last id given is %d for %v: refused creates used up ids", last, users)
	}
	checkStoreInvariants(t, s)
}

// Run with -race: writers create, replace, patch and delete over a small set of e-mails while
// readers read, list and page. E-mails stay unique, the indexes consistent and the cached list
// current; with a journal, a restart finds the same users as memory holds.
func TestConcurrentWritesKeepEmailsUniqueAndIndexesConsistent(t *testing.T) {
	for _, inJournal := range []bool{false, true} {
		name := "in memory"
		if inJournal {
			name = "in a journal"
		}
		t.Run(name, func(t *testing.T) {
			s, path := newUserStore(), ""
			if inJournal {
				path = newJournalPath(t)
				s, _ = openJournal(t, path, 1<<20)
			}
			emails := []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com", "e@example.com",
				"f@example.com", "g@example.com", "h@example.com"}
			const writers, readers, rounds = 8, 4, 150
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(i), 42))
					for n := range rounds {
						email := emails[r.IntN(len(emails))]
						if r.IntN(2) == 0 {
							email = strings.ToUpper(email)
						}
						id := r.Int64N(s.lastGivenID()+2) + 1 // an id given, or the next one, or none
						var err error
						switch r.IntN(4) {
						case 0:
							_, err = s.create(storeFields(fmt.Sprint("user ", n), email), preconditions{})
						case 1:
							_, err = s.update(id, storeFields(fmt.Sprint("user ", n), email), preconditions{})
						case 2:
							_, err = s.update(id, storeName(fmt.Sprint("user ", n)), preconditions{})
						default:
							err = s.delete(id, preconditions{})
						}
						if err != nil && !errors.Is(err, errEmailTaken) && !errors.Is(err, errUserNotFound) {
							t.Errorf("writer %d, round %d: %v", i, n, err)
						}
					}
				}()
			}
			stop := make(chan struct{})
			var readersDone sync.WaitGroup
			for range readers {
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
						s.wholeList()
						s.list(listQuery{paged: true, page: 1, perPage: 3, sort: "-id"})
						s.list(listQuery{search: "example", sort: "name"})
					}
				}()
			}
			wg.Wait()
			close(stop)
			readersDone.Wait()
			checkStoreInvariants(t, s)
			users, lastID := s.snapshot()
			cached, err := s.wholeList()
			if err != nil {
				t.Fatal(err)
			}
			if fresh, _ := encodeList(users, len(users), listQuery{}); string(cached.body) != string(fresh.body) {
				t.Errorf("the cached list is stale:\n got %s\nwant %s", cached.body, fresh.body)
			}
			if !inJournal {
				return
			}
			s.close()
			replayed, err := openUserStore(newJournal(path, newLogger("json", io.Discard), 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			defer replayed.close()
			if got, gotLast := replayed.snapshot(); !slices.Equal(got, users) || gotLast != lastID {
				t.Errorf("replayed %v (last id %d), want what memory held, %v (last id %d)", got, gotLast, users, lastID)
			}
		})
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
		users, _ := s.snapshot()
		var id int64 // the user the step changes; 0 for a create
		var err error
		switch choice := random.IntN(3); {
		case len(users) == 0 || choice == 0:
			var created user
			created, err = s.create(storeFields("Someone", address), preconditions{})
			id = created.ID
		case choice == 1:
			id = users[random.IntN(len(users))].ID
			_, err = s.update(id, storeEmail(address), preconditions{})
		default:
			id = users[random.IntN(len(users))].ID
			if err := s.delete(id, preconditions{}); err != nil {
				t.Fatalf("step %d: deleting %d: %v", step, id, err)
			}
			delete(owners, keys[id])
			delete(keys, id)
			checkStoreInvariants(t, s)
			continue
		}
		if owner, taken := owners[key]; taken && owner != id {
			if !errors.Is(err, errEmailTaken) {
				t.Fatalf("step %d: %s for user %d: got %v, want 409: user %d has it", step, address, id, err, owner)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %s for user %d: %v", step, address, id, err)
		}
		delete(owners, keys[id])
		owners[key], keys[id] = id, key
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

// A conditional create is judged, and made, while it holds the writer's lock: creates sent at once
// with the same If-Match, the ETag of the list a client read, let exactly one win, as the others
// find the collection changed (412). The next create with the ETag of the list as it now is wins.
func TestConcurrentConditionalCreatesWithOneListETagLetExactlyOneWin(t *testing.T) {
	s, _, _ := storeWithAnnAndBob(t)
	read, err := s.wholeList()
	if err != nil {
		t.Fatal(err)
	}
	const writers = 32
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.create(storeFields(fmt.Sprint("User ", i), fmt.Sprintf("user%d@example.com", i)), storeIfMatch(read.etag))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, errIfMatchFailed):
			t.Errorf("unexpected error %v", err)
		}
	}
	if won != 1 || s.count() != 3 {
		t.Errorf("%d conditional creates won and the store holds %d users; want exactly 1 more than Ann and Bob", won, s.count())
	}

	users, _ := s.snapshot()
	now, _ := encodeList(users, len(users), listQuery{}) // the ETag GET /api/users gives now
	if _, err := s.create(storeFields("Dan", "dan@example.com"), storeIfMatch(now.etag)); err != nil {
		t.Errorf("creating Dan with the ETag of the list as it now is: %v", err)
	}
	checkStoreInvariants(t, s)
}

// The lost update, avoided: two clients read the same user; the second write, sent with the ETag
// both read, fails instead of silently undoing the first (RFC 9110 §13.1.1).
func TestIfMatchStopsALostUpdate(t *testing.T) {
	s, ann, _ := storeWithAnnAndBob(t)
	representation, err := encodeJSON(ann)
	if err != nil {
		t.Fatal(err)
	}
	etag := entityTag(representation)
	first, err := s.update(ann.ID, storeName("Ann Lee"), storeIfMatch(etag))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.update(ann.ID, storeName("Ann Smith"), storeIfMatch(etag)); !errors.Is(err, errIfMatchFailed) {
		t.Errorf("the second write: %v, want %v", err, errIfMatchFailed)
	}
	if got, _ := s.get(ann.ID); got != first {
		t.Errorf("the user is %+v, want the first client's write %+v", got, first)
	}
}

// The target of a create is the collection, whose ETag is that of the whole list (docs/api.md,
// "Conditional requests"): it always exists, so If-None-Match: * fails, and If-Match with the
// list's ETag creates the user only if the collection has not changed since the client read it.
func TestPreconditionsOfACreateAreJudgedAgainstTheWholeList(t *testing.T) {
	s, _, _ := storeWithAnnAndBob(t)
	listTag := func() string {
		t.Helper()
		list, err := s.wholeList()
		if err != nil {
			t.Fatal(err)
		}
		return list.etag
	}
	read := listTag()
	page, err := s.list(listQuery{paged: true, page: 1, perPage: 1, sort: "id"})
	if err != nil {
		t.Fatal(err)
	}
	for _, refused := range []struct {
		name       string
		conditions preconditions
		want       error
	}{
		{"If-None-Match: *", storeIfNoneMatch("*"), errIfNoneMatchFailed},
		{"If-None-Match with the list's ETag", storeIfNoneMatch(read), errIfNoneMatchFailed},
		{"If-Match with a page's ETag", storeIfMatch(page.etag), errIfMatchFailed},
	} {
		if _, err := s.create(storeFields("Nobody", "nobody@example.com"), refused.conditions); !errors.Is(err, refused.want) {
			t.Errorf("%s: %v, want %v", refused.name, err, refused.want)
		}
	}
	if listTag() != read {
		t.Fatal("a create that failed its precondition changed the collection")
	}
	for _, step := range []struct {
		name       string
		conditions preconditions
		want       error
	}{
		{"Carol", storeIfMatch(read), nil},
		{"Dan", storeIfMatch(read), errIfMatchFailed}, // Carol changed it
		{"Eve", storeIfMatch("*"), nil},
		{"Fay", storeIfNoneMatch(read), nil},
	} {
		email := strings.ToLower(step.name) + "@example.com"
		if _, err := s.create(storeFields(step.name, email), step.conditions); !errors.Is(err, step.want) {
			t.Errorf("creating %s: %v, want %v", step.name, err, step.want)
		}
	}
	if _, err := s.create(storeFields("Dan", "dan@example.com"), storeIfMatch(listTag())); err != nil {
		t.Errorf("creating Dan with the current list's ETag: %v", err)
	}
}
