package main

import (
	"cmp"
	"encoding/json"
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

// storeWithAnnAndBob returns a store holding Ann (1) and Bob (2); id 3 was created and deleted, so
// the next id is 4.
func storeWithAnnAndBob(t *testing.T) *userStore {
	t.Helper()
	s := newUserStore()
	for _, c := range []change{
		{op: opCreate, name: "Ann", email: "ann@example.com"},
		{op: opCreate, name: "Bob", email: "bob@example.com"},
		{op: opCreate, name: "Gone", email: "gone@example.com"},
		{op: opDelete, id: 3},
	} {
		if _, err := s.commit(c); err != nil {
			t.Fatalf("setting up %+v: %v", c, err)
		}
	}
	return s
}

// publishedUsers lists the users readers see, by id.
func publishedUsers(s *userStore) []user {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var users []user
	for _, id := range s.ids {
		users = append(users, s.users[id])
	}
	return users
}

// checkStoreInvariants fails the test if the store's indexes disagree with its users: the ids are
// the live users in ascending order, every e-mail is unique case-insensitively and indexed, and
// nextID is beyond every id ever used.
func checkStoreInvariants(t *testing.T, s *userStore) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	live := 0
	for id := int64(1); id < int64(len(s.users)); id++ {
		u := s.users[id]
		if !u.exists() {
			continue
		}
		live++
		if u.ID != id {
			t.Errorf("users[%d] holds id %d", id, u.ID)
		}
		if owner, ok := s.byEmail[emailKey(u.Email)]; !ok || owner != id {
			t.Errorf("byEmail[%q] = %d, %v; want %d", emailKey(u.Email), owner, ok, id)
		}
	}
	if len(s.byEmail) != live {
		t.Errorf("byEmail has %d e-mails for %d users: an e-mail is held by nobody or twice", len(s.byEmail), live)
	}
	if len(s.ids) != live {
		t.Errorf("ids has %d entries for %d users", len(s.ids), live)
	}
	for i, id := range s.ids {
		if i > 0 && s.ids[i-1] >= id {
			t.Errorf("ids not ascending: %v", s.ids)
			break
		}
		if !s.users[id].exists() {
			t.Errorf("ids lists %d, which is not a user", id)
		}
	}
	if s.nextID < int64(len(s.users)) {
		t.Errorf("nextID %d would reuse an id below %d", s.nextID, len(s.users))
	}
}

func TestBatchJudgesEachWriteAgainstTheBatchsEarlierWrites(t *testing.T) {
	ann := user{1, "Ann", "ann@example.com"}
	annETag := entityTag(marshal(ann))
	bob := user{2, "Bob", "bob@example.com"}

	type step struct {
		change change
		want   error // nil when the write passes
		wantID int64 // the id the passing write has
	}
	tests := []struct {
		name       string
		steps      []step
		want       []user // the published users afterwards
		wantNextID int64
	}{
		{
			name: "two creates in one batch get consecutive new ids",
			steps: []step{
				{change{op: opCreate, name: "Carol", email: "carol@example.com"}, nil, 4},
				{change{op: opCreate, name: "Dan", email: "dan@example.com"}, nil, 5},
			},
			want:       []user{ann, bob, {4, "Carol", "carol@example.com"}, {5, "Dan", "dan@example.com"}},
			wantNextID: 6,
		},
		{
			name: "an e-mail created earlier in the batch is taken, whatever its case",
			steps: []step{
				{change{op: opCreate, name: "Carol", email: "carol@example.com"}, nil, 4},
				{change{op: opCreate, name: "Carol 2", email: "CAROL@example.com"}, errEmailTaken, 0},
			},
			want:       []user{ann, bob, {4, "Carol", "carol@example.com"}},
			wantNextID: 5,
		},
		{
			name: "a refused create uses up no id",
			steps: []step{
				{change{op: opCreate, name: "Ann 2", email: "Ann@Example.com"}, errEmailTaken, 0},
				{change{op: opCreate, name: "Dan", email: "dan@example.com"}, nil, 4},
			},
			want:       []user{ann, bob, {4, "Dan", "dan@example.com"}},
			wantNextID: 5,
		},
		{
			name: "an e-mail freed by a patch earlier in the batch can be taken",
			steps: []step{
				{change{op: opPatch, id: 1, email: "ann.new@example.com"}, nil, 1},
				{change{op: opCreate, name: "Other Ann", email: "ann@example.com"}, nil, 4},
			},
			want:       []user{{1, "Ann", "ann.new@example.com"}, bob, {4, "Other Ann", "ann@example.com"}},
			wantNextID: 5,
		},
		{
			name: "an e-mail freed by a delete earlier in the batch can be taken",
			steps: []step{
				{change{op: opDelete, id: 1}, nil, 1},
				{change{op: opCreate, name: "Other Ann", email: "ANN@example.com"}, nil, 4},
			},
			want:       []user{bob, {4, "Other Ann", "ANN@example.com"}},
			wantNextID: 5,
		},
		{
			name: "an e-mail taken by a patch earlier in the batch is refused to a later patch",
			steps: []step{
				{change{op: opPatch, id: 1, email: "new@example.com"}, nil, 1},
				{change{op: opReplace, id: 2, name: "Bob", email: "NEW@example.com"}, errEmailTaken, 0},
			},
			want:       []user{{1, "Ann", "new@example.com"}, bob},
			wantNextID: 4,
		},
		{
			name: "two users swap e-mails through a third address",
			steps: []step{
				{change{op: opPatch, id: 1, email: "swap@example.com"}, nil, 1},
				{change{op: opPatch, id: 2, email: "ann@example.com"}, nil, 2},
				{change{op: opPatch, id: 1, email: "bob@example.com"}, nil, 1},
			},
			want:       []user{{1, "Ann", "bob@example.com"}, {2, "Bob", "ann@example.com"}},
			wantNextID: 4,
		},
		{
			name: "a user may change the case of its own e-mail",
			steps: []step{
				{change{op: opPatch, id: 1, email: "ANN@example.com"}, nil, 1},
			},
			want:       []user{{1, "Ann", "ANN@example.com"}, bob},
			wantNextID: 4,
		},
		{
			name: "a user created earlier in the batch can be changed and deleted",
			steps: []step{
				{change{op: opCreate, name: "Carol", email: "carol@example.com"}, nil, 4},
				{change{op: opPatch, id: 4, name: "Caroline"}, nil, 4},
				{change{op: opCreate, name: "Dan", email: "dan@example.com"}, nil, 5},
				{change{op: opDelete, id: 4}, nil, 4},
			},
			want:       []user{ann, bob, {5, "Dan", "dan@example.com"}},
			wantNextID: 6,
		},
		{
			name: "a user deleted earlier in the batch is not found",
			steps: []step{
				{change{op: opDelete, id: 2}, nil, 2},
				{change{op: opPatch, id: 2, name: "Bob again"}, errUserNotFound, 0},
				{change{op: opDelete, id: 2}, errUserNotFound, 0},
			},
			want:       []user{ann},
			wantNextID: 4,
		},
		{
			name: "ids that never were, or were deleted before, are not found",
			steps: []step{
				{change{op: opReplace, id: 99, name: "Nobody", email: "nobody@example.com"}, errUserNotFound, 0},
				{change{op: opDelete, id: 3}, errUserNotFound, 0},
			},
			want:       []user{ann, bob},
			wantNextID: 4,
		},
		{
			name: "deleted ids are never given again",
			steps: []step{
				{change{op: opDelete, id: 2}, nil, 2},
				{change{op: opCreate, name: "Bob", email: "bob@example.com"}, nil, 4},
			},
			want:       []user{ann, {4, "Bob", "bob@example.com"}},
			wantNextID: 5,
		},
		{
			name: "If-Match is judged against the batch's earlier write, not the published user",
			steps: []step{
				{change{op: opPatch, id: 1, ifMatch: annETag, name: "Ann Lee"}, nil, 1},
				{change{op: opPatch, id: 1, ifMatch: annETag, name: "Ann Smith"}, errPreconditionFailed, 0},
				{change{op: opPatch, id: 1, ifMatch: "*", name: "Ann Smith"}, nil, 1},
			},
			want:       []user{{1, "Ann Smith", "ann@example.com"}, bob},
			wantNextID: 4,
		},
		{
			name: "a missing user is 404 before its If-Match is looked at",
			steps: []step{
				{change{op: opDelete, id: 99, ifMatch: `"nope"`}, errUserNotFound, 0},
			},
			want:       []user{ann, bob},
			wantNextID: 4,
		},
		{
			name: "412 comes before 409",
			steps: []step{
				{change{op: opPatch, id: 2, ifMatch: `"stale"`, email: "ann@example.com"}, errPreconditionFailed, 0},
			},
			want:       []user{ann, bob},
			wantNextID: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storeWithAnnAndBob(t)
			before := publishedUsers(s)
			b := s.newBatch()
			passed := 0
			for i, st := range tt.steps {
				u, err := b.judge(st.change)
				if !errors.Is(err, st.want) {
					t.Fatalf("step %d (%+v): error %v, want %v", i+1, st.change, err, st.want)
				}
				if err == nil {
					passed++
					if id := cmp.Or(u.ID, st.change.id); id != st.wantID { // a delete gives the zero user
						t.Errorf("step %d: id %d, want %d", i+1, id, st.wantID)
					}
				}
			}
			if len(b.writes) != passed {
				t.Errorf("the batch holds %d writes, want the %d that passed", len(b.writes), passed)
			}
			if got := publishedUsers(s); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("readers saw the batch before it was published: %v", got)
			}
			s.publish(b.writes)
			if got := publishedUsers(s); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("published users\n got %v\nwant %v", got, tt.want)
			}
			if s.nextID != tt.wantNextID {
				t.Errorf("nextID = %d, want %d", s.nextID, tt.wantNextID)
			}
			checkStoreInvariants(t, s)
		})
	}
}

func TestStoreCommitReturnsTheUserAsStored(t *testing.T) {
	s := newUserStore()
	created, err := s.commit(change{op: opCreate, name: "Ann", email: "ann@example.com"})
	if want := (user{1, "Ann", "ann@example.com"}); err != nil || created != want {
		t.Fatalf("create: %+v, %v; want %+v", created, err, want)
	}
	patched, err := s.commit(change{op: opPatch, id: 1, name: "Ann Lee"})
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
			_, errs[i] = s.commit(change{op: opCreate, name: fmt.Sprint("writer ", i), email: email})
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
	if s.nextID != 2 {
		t.Errorf("nextID = %d: refused creates used up ids", s.nextID)
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
				id := r.Int64N(s.nextIDForTest()) + 1
				c := change{op: changeOp(r.IntN(4)), id: id, name: fmt.Sprint("user ", n), email: email}
				if c.op == opPatch && r.IntN(2) == 0 {
					c.email = "" // a patch of the name only
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
	if got, want := string(s.encodedWholeList().body), string(encodeList(s.allUsers(), s.count(), listQuery{}).body); got != want {
		t.Errorf("the cached list is stale:\n got %s\nwant %s", got, want)
	}
}

// nextIDForTest reads nextID under the lock, for tests that pick ids while others write.
func (s *userStore) nextIDForTest() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nextID
}

// A PATCH of the e-mail keeps the name exactly as it was, even one whose JSON needs escapes.
func TestPatchKeepsANameWithEscapesExactly(t *testing.T) {
	s := newTestServer(t)
	created := s.create(t, `Ann "the one" <&>`, "ann@example.com")
	w := s.do("PATCH", userPath(created.ID), `{"email": "ann2@example.com"}`, join(asWriter, asJSON)...)
	var patched user
	if err := json.Unmarshal(w.Body.Bytes(), &patched); err != nil || w.Code != 200 {
		t.Fatalf("PATCH: %d %s", w.Code, w.Body)
	}
	if patched.Name != created.Name || patched.Email != "ann2@example.com" {
		t.Errorf("after the PATCH the user is %+v; want the name %q kept", patched, created.Name)
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
		switch pick := s.ids; {
		case len(pick) == 0 || random.IntN(3) == 0:
			c = change{op: opCreate, name: "Someone", email: address}
		case random.IntN(2) == 0:
			c = change{op: opPatch, id: pick[random.IntN(len(pick))], email: address}
		default:
			c = change{op: opDelete, id: pick[random.IntN(len(pick))]}
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
			c.id = s.nextIDForTest() - 1
		}
		delete(owners, keys[c.id])
		delete(keys, c.id)
		if c.op != opDelete {
			owners[key], keys[c.id] = c.id, key
		}
		checkStoreInvariants(t, s)
		for _, address := range addresses {
			key := emailKey(address)
			id, found := s.byEmail[key]
			if owner, taken := owners[key]; found != taken || id != owner {
				t.Fatalf("step %d: byEmail[%s] = %d, %v; want %d, %v", step, key, id, found, owner, taken)
			}
		}
	}
}
