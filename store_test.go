package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// The store's rules, tested on the store itself. Its errors become statuses in one place,
// errorFor (respond.go): errNotFound is 404, errEmailTaken and errNoIDLeft are 409, and an error
// of the file is 500.

// Ids start at 1 and grow by one, and an id is never given again, not even after its user is
// deleted (docs/api.md, "Routes").
func TestStoreGivesEachIDOnce(t *testing.T) {
	s := newUserStore()
	for want := int64(1); want <= 3; want++ {
		if u := mustCreate(t, s, "User", fmt.Sprintf("user%d@example.com", want)); u.ID != want {
			t.Fatalf("user %d got the id %d", want, u.ID)
		}
	}
	if err := s.delete(context.Background(), 3, allowAny); err != nil {
		t.Fatal(err)
	}
	if u := mustCreate(t, s, "Dee", "dee@example.com"); u.ID != 4 {
		t.Errorf("after user 3 was deleted the next user got the id %d, want 4", u.ID)
	}
}

// Ids may be any positive int64. Once 2^63-1 has been given no id is left: a create is
// errNoIDLeft, and the file keeps next_id at 2^63.
func TestStoreGivesTheLastIDOnce(t *testing.T) {
	path := dataPath(t)
	writeDataFile(t, path, `{"next_id": 9223372036854775807, "users": []}`)
	s, _ := openStoreAt(t, path)

	if last := mustCreate(t, s, "Ann", "ann@example.com"); last.ID != math.MaxInt64 {
		t.Fatalf("the user got the id %d, want 2^63-1", last.ID)
	}
	if _, err := s.create(context.Background(), fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); !errors.Is(err, errNoIDLeft) {
		t.Errorf("a create once every id was given: %v, want %v", err, errNoIDLeft)
	}
	if users := allUsers(t, s); len(users) != 1 {
		t.Errorf("the store holds %v, want Ann alone", users)
	}
	if contents := parseFileAt(t, path); contents.lastID != math.MaxInt64 {
		t.Errorf("the file's next_id is %d+1, want 2^63", contents.lastID)
	}
}

// A user that does not exist is errNotFound, before the caller's check is asked: preconditions are
// judged only against a target that exists (RFC 9110 §13.2.1).
func TestStoreMissingUserIsNotFound(t *testing.T) {
	s := newUserStore()
	ann := mustCreate(t, s, "Ann", "ann@example.com")
	notAsked := func(user) error {
		t.Error("the check was asked about a user that does not exist")
		return nil
	}
	if _, err := s.get(context.Background(), 2); !errors.Is(err, errNotFound) {
		t.Errorf("get: %v, want %v", err, errNotFound)
	}
	if _, err := s.update(context.Background(), 2, fieldsOf("Bob", "bob@example.com"), notAsked); !errors.Is(err, errNotFound) {
		t.Errorf("update: %v, want %v", err, errNotFound)
	}
	if err := s.delete(context.Background(), 2, notAsked); !errors.Is(err, errNotFound) {
		t.Errorf("delete: %v, want %v", err, errNotFound)
	}
	if users := allUsers(t, s); !slices.Equal(users, []user{ann}) {
		t.Errorf("the store holds %v, want Ann alone, as before", users)
	}
}

// No two users have the same e-mail, whatever its case (docs/api.md, "Request bodies"), and an
// e-mail is free again once its user changed it or was deleted. A refused write changes nothing.
func TestStoreEmailIsUniqueInAnyCase(t *testing.T) {
	tests := []struct {
		name  string
		write func(s *userStore) error
		want  error
	}{
		{"a create with another user's e-mail", func(s *userStore) error {
			_, err := s.create(context.Background(), fieldsOf("Bobby", "BOB@example.com"), preconditions{}.onCollection)
			return err
		}, errEmailTaken},
		{"an update to another user's e-mail", func(s *userStore) error {
			_, err := s.update(context.Background(), 1, fieldsOf("Ann", "Bob@Example.COM"), allowAny)
			return err
		}, errEmailTaken},
		{"a user keeps its own e-mail in another case", func(s *userStore) error {
			_, err := s.update(context.Background(), 2, fieldsOf("Bob", "BOB@EXAMPLE.COM"), allowAny)
			return err
		}, nil},
		{"an e-mail its user changed is free", func(s *userStore) error {
			if _, err := s.update(context.Background(), 2, fieldsOf("Bob", "robert@example.com"), allowAny); err != nil {
				return err
			}
			_, err := s.create(context.Background(), fieldsOf("Bobby", "bob@example.com"), preconditions{}.onCollection)
			return err
		}, nil},
		{"an e-mail its user took away is free", func(s *userStore) error {
			if err := s.delete(context.Background(), 2, allowAny); err != nil {
				return err
			}
			_, err := s.create(context.Background(), fieldsOf("Bobby", "bob@example.com"), preconditions{}.onCollection)
			return err
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newUserStore()
			mustCreate(t, s, "Ann", "ann@example.com")
			mustCreate(t, s, "Bob", "bob@example.com")
			before := allUsers(t, s)

			err := tc.write(s)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if users := allUsers(t, s); err != nil && !slices.Equal(users, before) {
				t.Errorf("the refused write changed the store: %v, want %v", users, before)
			}
		})
	}
}

// A write asks the caller's check (a request's preconditions, conditional.go) while it holds the
// store's lock for writing, about the users as they are then, so no other write comes between the
// check and the write it guards (docs/api.md, "Conditional requests"). createIf's check sees the
// whole collection in id order. A refusal changes nothing and comes before errEmailTaken: 412
// before 409 (docs/api.md, "The order of the checks").
func TestStoreAsksTheCheckUnderItsWriteLock(t *testing.T) {
	refused := errors.New("refused by the check")
	tests := []struct {
		name  string
		write func(s *userStore, check func(seen any) error) error
		want  func(users []user) any // what the check must see, from the users as they are
	}{
		{"createIf sees every user in id order", func(s *userStore, check func(any) error) error {
			_, err := s.create(context.Background(), fieldsOf("Bobby", "USER2@example.com"), func(collection func() ([]user, error)) error { users, _ := collection(); return check(users) })
			return err
		}, func(users []user) any { return users }},
		{"update sees the user as it is now", func(s *userStore, check func(any) error) error {
			_, err := s.update(context.Background(), 1, fieldsOf("Ann", "USER2@example.com"), func(current user) error { return check(current) })
			return err
		}, func(users []user) any { return users[0] }},
		{"delete sees the user as it is now", func(s *userStore, check func(any) error) error {
			return s.delete(context.Background(), 1, func(current user) error { return check(current) })
		}, func(users []user) any { return users[0] }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newUserStore()
			for i := 1; i <= 20; i++ {
				mustCreate(t, s, "User", fmt.Sprintf("user%d@example.com", i))
			}
			for _, id := range []int64{4, 9, 13} {
				if err := s.delete(context.Background(), id, allowAny); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.update(context.Background(), 1, fieldsOf("Ann Lee", "user1@example.com"), allowAny); err != nil {
				t.Fatal(err)
			}
			before := allUsers(t, s)

			var seen any
			var locked bool
			err := tc.write(s, func(got any) error {
				seen = got
				if locked = !s.mu.TryRLock(); !locked {
					s.mu.RUnlock()
				}
				return refused
			})
			if !errors.Is(err, refused) {
				t.Errorf("the write returned %v, want the check's refusal", err)
			}
			if !locked {
				t.Error("the check ran while the store was not locked for writing")
			}
			if want := tc.want(before); !reflect.DeepEqual(seen, want) {
				t.Errorf("the check saw\n  %v\nwant\n  %v", seen, want)
			}
			if users := allUsers(t, s); !slices.Equal(users, before) {
				t.Error("the refused write changed the store")
			}
		})
	}
}

// Once the store is closed (the server has stopped, and another may lock the file), every write is
// refused with errClosed, and the file stays as it was; reads go on.
func TestStoreClosedRefusesWrites(t *testing.T) {
	path := dataPath(t)
	s, _ := openStoreAt(t, path)
	ann := mustCreate(t, s, "Ann", "ann@example.com")
	before := fileText(t, path)
	s.close()
	keep := func(user) error { return nil }
	if _, err := s.create(context.Background(), fieldsOf("Bob", "bob@example.com"), preconditions{}.onCollection); err != errClosed {
		t.Errorf("create after close: %v, want errClosed", err)
	}
	if _, err := s.update(context.Background(), ann.ID, fieldsOf("Ann Lee", "ann@example.com"), keep); err != errClosed {
		t.Errorf("update after close: %v, want errClosed", err)
	}
	if err := s.delete(context.Background(), ann.ID, keep); err != errClosed {
		t.Errorf("delete after close: %v, want errClosed", err)
	}
	if after := fileText(t, path); after != before {
		t.Errorf("the file changed after close:\n%s", after)
	}
	if users := allUsers(t, s); !slices.Equal(users, []user{ann}) {
		t.Errorf("the users are %v, want Ann", users)
	}
	s.close() // a second close does nothing
}

// list returns every user in id order, as a copy: a handler filters, sorts and encodes it without
// the store's lock (docs/api.md, "Listing"), and nothing it does to the copy reaches the store.
func TestStoreListIsACopyInIDOrder(t *testing.T) {
	s := newUserStore()
	for i := 1; i <= 20; i++ {
		mustCreate(t, s, "User", fmt.Sprintf("user%d@example.com", i))
	}
	if err := s.delete(context.Background(), 7, allowAny); err != nil {
		t.Fatal(err)
	}
	users := allUsers(t, s)
	if len(users) != 19 || !slices.IsSortedFunc(users, func(a, b user) int { return cmp.Compare(a.ID, b.ID) }) {
		t.Fatalf("list gave %v, want the 19 users in id order", users)
	}
	users[0].Name = "Changed"
	slices.Reverse(users)
	if again := allUsers(t, s); again[0].ID != 1 || again[0].Name != "User" {
		t.Errorf("a change to the copy reached the store: the first user is %v", again[0])
	}
}

// A write the disk refuses changes nothing in memory, the e-mail index included, and leaves the
// file as it was; once the disk works again, the same write goes through. Here the write fails
// because a folder stands where its temporary file must go.
func TestStoreFailedWriteChangesNothing(t *testing.T) {
	tests := []struct {
		name  string
		write func(s *userStore) error
	}{
		{"create", func(s *userStore) error {
			carol, err := s.create(context.Background(), fieldsOf("Carol", "carol@example.com"), preconditions{}.onCollection)
			if err == nil && carol.ID != 3 {
				return fmt.Errorf("Carol got the id %d, want 3: the failed create gave no id", carol.ID)
			}
			return err
		}},
		{"update", func(s *userStore) error {
			_, err := s.update(context.Background(), 1, fieldsOf("Ann", "ann@example.org"), allowAny)
			return err
		}},
		{"delete", func(s *userStore) error { return s.delete(context.Background(), 1, allowAny) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := dataPath(t)
			s, _ := openStoreAt(t, path)
			mustCreate(t, s, "Ann", "ann@example.com")
			mustCreate(t, s, "Bob", "bob@example.com")
			before, file := allUsers(t, s), fileText(t, path)
			if err := os.Mkdir(path+".tmp", 0o700); err != nil {
				t.Fatal(err)
			}

			if err := tc.write(s); err == nil {
				t.Fatal("the write succeeded on a disk that fails")
			}
			if users := allUsers(t, s); !slices.Equal(users, before) {
				t.Errorf("memory holds %v, want %v, as before the failed write", users, before)
			}
			if _, err := s.create(context.Background(), fieldsOf("Annie", "ANN@example.com"), preconditions{}.onCollection); !errors.Is(err, errEmailTaken) {
				t.Errorf("Ann's e-mail after the failed write: %v, want it still taken", err)
			}
			if got := fileText(t, path); got != file {
				t.Errorf("the file holds\n%s\nwant it as it was\n%s", got, file)
			}

			if err := os.Remove(path + ".tmp"); err != nil {
				t.Fatal(err)
			}
			if err := tc.write(s); err != nil {
				t.Fatalf("the write once the disk works again: %v", err)
			}
			if contents := parseFileAt(t, path); !slices.Equal(contents.users, allUsers(t, s)) {
				t.Errorf("the file holds %v, memory %v", contents.users, allUsers(t, s))
			}
		})
	}
}

// Writes take turns, and each rewrites the file from memory as it then is: however many clients
// write at once, the file holds every write that was acknowledged (docs/durability.md).
func TestConcurrentWritesAllReachTheFile(t *testing.T) {
	path := dataPath(t)
	s, _ := openStoreAt(t, path)
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.create(context.Background(), fieldsOf("User", fmt.Sprintf("user%d@example.com", i)), preconditions{}.onCollection); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if contents := parseFileAt(t, path); len(contents.users) != 8 || !slices.Equal(contents.users, allUsers(t, s)) {
		t.Errorf("the file holds %v, want the 8 users in memory: %v", contents.users, allUsers(t, s))
	}
}

// mustCreate adds a user to s, failing the test if it cannot (the data file's tests use it too).
func mustCreate(t testing.TB, s *userStore, name, email string) user {
	t.Helper()
	created, err := s.create(context.Background(), fieldsOf(name, email), preconditions{}.onCollection)
	if err != nil {
		t.Fatalf("creating %s: %v", email, err)
	}
	return created
}

// fieldsOf are the fields of a whole user, as a PUT sets them.
func fieldsOf(name, email string) userFields { return userFields{name: &name, email: &email} }

// allowAny is the check of a write with no precondition.
func allowAny(user) error { return nil }
