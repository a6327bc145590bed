package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// The store's own rules, tested on a store in memory (newUserStore) through its methods. Its
// errors become statuses in one place, errorFor (respond.go): errNotFound is 404, errEmailTaken
// and errNoIDLeft are 409. What the store does with a data file is in datafile_test.go.
//
// A write takes the caller's check of its preconditions; preconditions{}.onCollection and
// preconditions{}.onUser are the checks of a request that sent none: they let every write go.

// Ids start at 1 and grow by one, and an id is never given again: not after its user is deleted,
// nor by a create that was refused (docs/api.md, "Routes").
func TestStoreGivesEachIDOnce(t *testing.T) {
	ctx, s := context.Background(), newUserStore()
	create := func(name, email string) (user, error) {
		return s.create(ctx, userFields{name: &name, email: &email}, preconditions{}.onCollection)
	}
	for want, email := range []string{"ann@example.com", "bob@example.com", "cy@example.com"} {
		if u, err := create("User", email); err != nil || u.ID != int64(want+1) {
			t.Fatalf("creating %s: id %d (%v), want %d", email, u.ID, err, want+1)
		}
	}
	if err := s.delete(ctx, 3, preconditions{}.onUser); err != nil {
		t.Fatal(err)
	}
	if _, err := create("Annie", "ANN@example.com"); !errors.Is(err, errEmailTaken) {
		t.Fatalf("a create with Ann's e-mail: %v, want %v", err, errEmailTaken)
	}
	if dee, err := create("Dee", "dee@example.com"); err != nil || dee.ID != 4 {
		t.Errorf("after user 3 was deleted and a create refused, the next user got the id %d (%v), want 4", dee.ID, err)
	}
}

// A user that does not exist is errNotFound, before the caller's check is asked: preconditions are
// judged only against a target that exists (RFC 9110 §13.2.1).
func TestStoreMissingUserIsNotFound(t *testing.T) {
	ctx, s := context.Background(), newUserStore()
	name, email := "Ann", "ann@example.com"
	ann, err := s.create(ctx, userFields{name: &name, email: &email}, preconditions{}.onCollection)
	if err != nil {
		t.Fatal(err)
	}
	notAsked := func(user) error {
		t.Error("the check was asked about a user that does not exist")
		return nil
	}
	if _, err := s.get(ctx, 2); !errors.Is(err, errNotFound) {
		t.Errorf("get: %v, want %v", err, errNotFound)
	}
	if _, err := s.update(ctx, 2, userFields{name: &name}, notAsked); !errors.Is(err, errNotFound) {
		t.Errorf("update: %v, want %v", err, errNotFound)
	}
	if err := s.delete(ctx, 2, notAsked); !errors.Is(err, errNotFound) {
		t.Errorf("delete: %v, want %v", err, errNotFound)
	}
	if users := allUsers(t, s); !slices.Equal(users, []user{ann}) {
		t.Errorf("the store holds %v, want Ann alone, as before", users)
	}
}

// No two users have the same e-mail, whatever its case (docs/api.md, "Request bodies"), and an
// e-mail is free again once its user changed it or was deleted. A refused write changes nothing.
func TestStoreEmailIsUniqueInAnyCase(t *testing.T) {
	ctx := context.Background()
	fields := func(name, email string) userFields { return userFields{name: &name, email: &email} }
	tests := []struct {
		name  string
		write func(s *userStore) error
		want  error
	}{
		{"a create with another user's e-mail", func(s *userStore) error {
			_, err := s.create(ctx, fields("Bobby", "BOB@example.com"), preconditions{}.onCollection)
			return err
		}, errEmailTaken},
		{"an update to another user's e-mail", func(s *userStore) error {
			_, err := s.update(ctx, 1, fields("Ann", "Bob@Example.COM"), preconditions{}.onUser)
			return err
		}, errEmailTaken},
		{"a user keeps its own e-mail in another case", func(s *userStore) error {
			_, err := s.update(ctx, 2, fields("Bob", "BOB@EXAMPLE.COM"), preconditions{}.onUser)
			return err
		}, nil},
		{"an e-mail its user changed is free", func(s *userStore) error {
			if _, err := s.update(ctx, 2, fields("Bob", "robert@example.com"), preconditions{}.onUser); err != nil {
				return err
			}
			_, err := s.create(ctx, fields("Bobby", "bob@example.com"), preconditions{}.onCollection)
			return err
		}, nil},
		{"an e-mail its user took away is free", func(s *userStore) error {
			if err := s.delete(ctx, 2, preconditions{}.onUser); err != nil {
				return err
			}
			_, err := s.create(ctx, fields("Bobby", "bob@example.com"), preconditions{}.onCollection)
			return err
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newUserStore()
			for _, u := range []userFields{fields("Ann", "ann@example.com"), fields("Bob", "bob@example.com")} {
				if _, err := s.create(ctx, u, preconditions{}.onCollection); err != nil {
					t.Fatal(err)
				}
			}
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

// A write asks the caller's check (a request's preconditions, conditional.go) about the users as
// they are when the write is made: create about the whole collection in id order, update and
// delete about the user as it is now. A refusal changes nothing and comes before errEmailTaken:
// 412 before 409 (docs/api.md, "The order of the checks").
func TestStoreAsksTheCheckAboutTheUsersAsTheyAre(t *testing.T) {
	ctx := context.Background()
	refused := errors.New("refused by the check")
	name, taken := "Bobby", "USER2@example.com" // each write would also take user 2's e-mail
	fields := userFields{name: &name, email: &taken}
	tests := []struct {
		name  string
		write func(s *userStore, check func(seen any) error) error
		want  func(users []user) any // what the check must see, from the users as they are
	}{
		{"create sees every user in id order", func(s *userStore, check func(any) error) error {
			_, err := s.create(ctx, fields, func(collection func() ([]user, error)) error {
				users, _ := collection()
				return check(users)
			})
			return err
		}, func(users []user) any { return users }},
		{"update sees the user as it is now", func(s *userStore, check func(any) error) error {
			_, err := s.update(ctx, 1, fields, func(current user) error { return check(current) })
			return err
		}, func(users []user) any { return users[0] }},
		{"delete sees the user as it is now", func(s *userStore, check func(any) error) error {
			return s.delete(ctx, 1, func(current user) error { return check(current) })
		}, func(users []user) any { return users[0] }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newUserStore()
			for i := 1; i <= 20; i++ {
				name, email := "User", fmt.Sprintf("user%d@example.com", i)
				if _, err := s.create(ctx, userFields{name: &name, email: &email}, preconditions{}.onCollection); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range []int64{4, 9, 13} { // the collection has gaps: it is not rebuilt from ids
				if err := s.delete(ctx, id, preconditions{}.onUser); err != nil {
					t.Fatal(err)
				}
			}
			renamed := "Ann Lee"
			if _, err := s.update(ctx, 1, userFields{name: &renamed}, preconditions{}.onUser); err != nil {
				t.Fatal(err)
			}
			before := allUsers(t, s)

			var seen any
			err := tc.write(s, func(got any) error { seen = got; return refused })
			if !errors.Is(err, refused) {
				t.Errorf("the write returned %v, want the check's refusal", err)
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

// The check and the write it guards are one step, under the store's lock: no other write comes
// between them. Of many writes at once that each go ahead only if the user is still as they read
// it, exactly one goes ahead, however they interleave: what keeps If-Match from losing an update
// (RFC 9110 §13.1.1; conditional_test.go shows it through the API, with ETags).
func TestStoreJudgesAndMakesAWriteInOneStep(t *testing.T) {
	ctx, s := context.Background(), newUserStore()
	name, email := "Ann", "ann@example.com"
	read, err := s.create(ctx, userFields{name: &name, email: &email}, preconditions{}.onCollection)
	if err != nil {
		t.Fatal(err)
	}
	changed := errors.New("Ann changed since she was read")
	const writers = 16
	results := make(chan error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("Ann %d", i)
			<-start // all at once
			_, err := s.update(ctx, 1, userFields{name: &name}, func(current user) error {
				runtime.Gosched() // the other writers run meanwhile, as far as the store lets them
				if current != read {
					return changed
				}
				return nil
			})
			results <- err
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	counts := map[error]int{}
	for err := range results {
		counts[err]++
	}
	if counts[nil] != 1 || counts[changed] != writers-1 {
		t.Errorf("%d writes went ahead and %d were refused, want 1 and %d", counts[nil], counts[changed], writers-1)
	}
}

// Once the store is closed (the server has stopped, and another may lock its data file), every
// write is refused with errClosed and changes nothing; reads go on. A second close does nothing.
func TestStoreClosedRefusesWrites(t *testing.T) {
	ctx, s := context.Background(), newUserStore()
	name, email := "Ann", "ann@example.com"
	ann, err := s.create(ctx, userFields{name: &name, email: &email}, preconditions{}.onCollection)
	if err != nil {
		t.Fatal(err)
	}
	s.close()
	other := "bob@example.com"
	if _, err := s.create(ctx, userFields{name: &name, email: &other}, preconditions{}.onCollection); err != errClosed {
		t.Errorf("create after close: %v, want errClosed", err)
	}
	if _, err := s.update(ctx, ann.ID, userFields{email: &other}, preconditions{}.onUser); err != errClosed {
		t.Errorf("update after close: %v, want errClosed", err)
	}
	if err := s.delete(ctx, ann.ID, preconditions{}.onUser); err != errClosed {
		t.Errorf("delete after close: %v, want errClosed", err)
	}
	if got, err := s.get(ctx, ann.ID); err != nil || got != ann {
		t.Errorf("get after close: %v (%v), want Ann", got, err)
	}
	s.close()
	if users := allUsers(t, s); !slices.Equal(users, []user{ann}) {
		t.Errorf("the users are %v, want Ann", users)
	}
}

// list returns every user in id order, as a copy: a handler filters, sorts and encodes it without
// the store's lock (docs/api.md, "Listing"), and nothing it does to the copy reaches the store.
func TestStoreListIsACopyInIDOrder(t *testing.T) {
	ctx, s := context.Background(), newUserStore()
	for i := 1; i <= 20; i++ {
		name, email := "User", fmt.Sprintf("user%d@example.com", i)
		if _, err := s.create(ctx, userFields{name: &name, email: &email}, preconditions{}.onCollection); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.delete(ctx, 7, preconditions{}.onUser); err != nil {
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
