package main

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

func TestStoreWrites(t *testing.T) {
	s := newUserStore()
	ann := create(t, s, "Ann", "ann@example.com")
	bob := create(t, s, "Bob", "bob@example.com")
	if ann.ID != 1 || bob.ID != 2 {
		t.Fatalf("ids %d and %d, want 1 and 2", ann.ID, bob.ID)
	}

	t.Run("update sets the fields given", func(t *testing.T) {
		name := "Ann Lee"
		got, err := s.update(ann.ID, userFields{name: &name}, allowAny)
		if want := (user{ann.ID, "Ann Lee", "ann@example.com"}); err != nil || got != want {
			t.Errorf("update: %v, %v; want %v", got, err, want)
		}
	})
	t.Run("an e-mail is taken in any case", func(t *testing.T) {
		if _, err := s.create(newFields("Bo", "BOB@example.com"), noPrecondition); !errors.Is(err, errEmailTaken) {
			t.Errorf("create: %v, want %v", err, errEmailTaken)
		}
		email := "Bob@Example.com"
		if _, err := s.update(ann.ID, userFields{email: &email}, allowAny); !errors.Is(err, errEmailTaken) {
			t.Errorf("update: %v, want %v", err, errEmailTaken)
		}
	})
	t.Run("a user keeps its own e-mail in another case", func(t *testing.T) {
		email := "BOB@example.com"
		if _, err := s.update(bob.ID, userFields{email: &email}, allowAny); err != nil {
			t.Errorf("update: %v", err)
		}
	})
	t.Run("a missing user is not found", func(t *testing.T) {
		if _, err := s.get(99); !errors.Is(err, errNotFound) {
			t.Errorf("get: %v", err)
		}
		if _, err := s.update(99, newFields("X", "x@example.com"), allowAny); !errors.Is(err, errNotFound) {
			t.Errorf("update: %v", err)
		}
		if err := s.delete(99, allowAny); !errors.Is(err, errNotFound) {
			t.Errorf("delete: %v", err)
		}
	})
	t.Run("ids are never reused", func(t *testing.T) {
		if err := s.delete(bob.ID, allowAny); err != nil {
			t.Fatal(err)
		}
		if carol := create(t, s, "Carol", "carol@example.com"); carol.ID != 3 {
			t.Errorf("id %d after deleting user 2, want 3", carol.ID)
		}
	})
}

// A check the caller hands the store runs under the write lock, and its refusal changes nothing.
func TestStoreWriteRefusedByItsCheckChangesNothing(t *testing.T) {
	refused := errors.New("refused")
	refuse := func(user) error { return refused }
	s := newUserStore()
	ann := create(t, s, "Ann", "ann@example.com")
	version := s.version()

	if _, err := s.create(newFields("Bob", "bob@example.com"), func() error { return refused }); err != refused {
		t.Errorf("create: %v", err)
	}
	if _, err := s.update(ann.ID, newFields("Ann Lee", "ann@example.com"), refuse); err != refused {
		t.Errorf("update: %v", err)
	}
	if err := s.delete(ann.ID, refuse); err != refused {
		t.Errorf("delete: %v", err)
	}
	if users, _ := s.all(); s.version() != version || !equalUsers(users, []user{ann}) {
		t.Errorf("the store changed: %v at version %d, want Ann alone at %d", users, s.version(), version)
	}
}

// Concurrent creates that each require the collection as they read it: exactly one goes ahead,
// since no write comes between a check and its write.
func TestStoreChecksAtomicallyWithTheWrite(t *testing.T) {
	s := newUserStore()
	read := s.version()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unchanged := func() error {
				if s.version() != read {
					return errors.New("changed")
				}
				return nil
			}
			if _, err := s.create(newFields("User", "user"+string(rune('a'+i))+"@example.com"), unchanged); err == nil {
				mu.Lock()
				created++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if created != 1 || s.count() != 1 {
		t.Errorf("%d creates went ahead and the store has %d users, want 1 and 1", created, s.count())
	}
}

func TestStoreGivesEveryIDOnce(t *testing.T) {
	path := newDataPath(t)
	writeFile(t, path, `{"next_id": 9223372036854775807, "users": []}`)
	s := openFileStore(t, path, osDisk{})
	if last := create(t, s, "Ann", "ann@example.com"); last.ID != 9223372036854775807 {
		t.Fatalf("id %d, want 2^63-1", last.ID)
	}
	if _, err := s.create(newFields("Bob", "bob@example.com"), noPrecondition); !errors.Is(err, errNoIDLeft) {
		t.Errorf("create after the last id: %v, want %v", err, errNoIDLeft)
	}
	s.close()
	wantFile(t, path, "{\n  \"next_id\": 9223372036854775808,\n  \"users\": [\n    {\n      \"id\": 9223372036854775807,\n"+
		"      \"name\": \"Ann\",\n      \"email\": \"ann@example.com\"\n    }\n  ]\n}\n")
}

// What a store with a file acknowledged is what the file holds when it opens again.
func TestStoreReopensAsItWas(t *testing.T) {
	path := newDataPath(t)
	s := openFileStore(t, path, osDisk{})
	ann := create(t, s, "Ann", "ann@example.com")
	bob := create(t, s, "Bob", "bob@example.com")
	create(t, s, "Carol", "carol@example.com")
	name := "Bob Ray"
	bob, _ = s.update(bob.ID, userFields{name: &name}, allowAny)
	s.delete(3, allowAny)
	s.close()

	reopened := openFileStore(t, path, osDisk{})
	if users, _ := reopened.all(); !equalUsers(users, []user{ann, bob}) {
		t.Errorf("reopened with %v, want %v", users, []user{ann, bob})
	}
	if dave := create(t, reopened, "Dave", "dave@example.com"); dave.ID != 4 {
		t.Errorf("id %d after a restart, want 4: ids are never reused", dave.ID)
	}
}

func TestStoreRefusesWritesOnceClosed(t *testing.T) {
	path := newDataPath(t)
	s := openFileStore(t, path, osDisk{})
	s.close()
	s.close() // a second close does nothing
	if _, err := s.create(newFields("Ann", "ann@example.com"), noPrecondition); !errors.Is(err, errClosed) {
		t.Errorf("create: %v, want %v", err, errClosed)
	}
	openFileStore(t, path, osDisk{}) // the file is free for another server
}

func TestPageBounds(t *testing.T) {
	tests := []struct {
		name             string
		total            int
		page, perPage    int64
		wantFrom, wantTo int
	}{
		{"first page", 25, 1, 10, 0, 10},
		{"last page, short", 25, 3, 10, 20, 25},
		{"past the end", 25, 4, 10, 25, 25},
		{"far past the end, no overflow", 25, 1 << 62, 100, 25, 25},
		{"empty", 0, 1, 10, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if from, to := pageBounds(tc.total, tc.page, tc.perPage); from != tc.wantFrom || to != tc.wantTo {
				t.Errorf("[%d, %d), want [%d, %d)", from, to, tc.wantFrom, tc.wantTo)
			}
		})
	}
}

func TestStoreReads(t *testing.T) {
	s := newUserStore()
	ann := create(t, s, "Ann", "ann@example.com")
	bob := create(t, s, "Bob", "bob@Example.com")
	carol := create(t, s, "Carol", "carol@example.org")

	tests := []struct {
		name  string
		users []user
		want  []user
	}{
		{"a page ascending", page(s, 1, 2, ascending), []user{ann, bob}},
		{"a page descending", page(s, 1, 2, descending), []user{carol, bob}},
		{"the last page", page(s, 2, 2, descending), []user{ann}},
		{"filter by e-mail in any case", s.filter("BOB@EXAMPLE.COM", ""), []user{bob}},
		{"filter by text in name or e-mail", s.filter("", ".ORG"), []user{carol}},
		{"filter by both", s.filter("ann@example.com", "bob"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !equalUsers(tc.users, tc.want) {
				t.Errorf("got %v, want %v", tc.users, tc.want)
			}
		})
	}
}

// page returns a page of s in id order, without its total.
func page(s *userStore, page, perPage int64, order direction) []user {
	users, _ := s.pageInIDOrder(page, perPage, order)
	return users
}

// create adds a user to s, failing the test if it cannot.
func create(t testing.TB, s *userStore, name, email string) user {
	t.Helper()
	created, err := s.create(newFields(name, email), noPrecondition)
	if err != nil {
		t.Fatalf("create %s: %v", email, err)
	}
	return created
}

// newFields are the fields of a whole user.
func newFields(name, email string) userFields { return userFields{name: &name, email: &email} }

// allowAny lets a write to any user go ahead.
func allowAny(user) error { return nil }

// equalUsers reports whether two lists hold the same users, nil and empty alike.
func equalUsers(a, b []user) bool { return slices.Equal(a, b) }
