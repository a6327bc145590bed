package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// The store over PostgreSQL keeps the rules of the in-memory store, and keeps them across the
// connections of one process as the check keeps them across processes. check.sh runs these
// tests against its own database, with -race; they need DATABASE_URL.

// openTestStore opens the store of DATABASE_URL with its table emptied and its ids starting at 1
// again; the test's end closes it.
func openTestStore(t *testing.T) *userStore {
	t.Helper()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		t.Skip("DATABASE_URL is not set: check.sh sets it to a database of its own")
	}
	s, err := openUserStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	if _, err := s.db.Exec(context.Background(), `TRUNCATE users RESTART IDENTITY`); err != nil {
		t.Fatal(err)
	}
	return s
}

// fieldsOf are the fields of a whole user, as a POST or a PUT sets them.
func fieldsOf(name, email string) userFields { return userFields{name: &name, email: &email} }

// allowAny is the check of a write with no precondition.
func allowAny(user) error { return nil }

// Ids start at 1, increase, and are never given again, not after a delete; a user that does not
// exist is errNotFound, and an e-mail another user has, in any case, errEmailTaken.
func TestStoreKeepsTheRulesOfTheMemoryStore(t *testing.T) {
	s := openTestStore(t)
	if !s.neverHadUsers() {
		t.Error("an empty table that never had a user: neverHadUsers is false")
	}
	ann, err := s.create(fieldsOf("Ann", "ann@example.com"))
	if err != nil || ann.ID != 1 {
		t.Fatalf("the first create: %v, %v; want id 1", ann, err)
	}
	if err := s.delete(ann.ID, allowAny); err != nil {
		t.Fatal(err)
	}
	if bob, err := s.create(fieldsOf("Bob", "bob@example.com")); err != nil || bob.ID != 2 {
		t.Errorf("a create after a delete: %v, %v; want id 2, never 1 again", bob, err)
	}
	if _, err := s.get(ann.ID); err != errNotFound {
		t.Errorf("get of a deleted user: %v, want errNotFound", err)
	}
	if _, err := s.update(99, fieldsOf("X", "x@example.com"), allowAny); err != errNotFound {
		t.Errorf("update of a user that never was: %v, want errNotFound", err)
	}
	if _, err := s.create(fieldsOf("Bobby", "BOB@example.com")); err != errEmailTaken {
		t.Errorf("a create with another's e-mail in capitals: %v, want errEmailTaken", err)
	}
	if users, err := s.list(); err != nil || len(users) != 1 || users[0].Email != "bob@example.com" || s.neverHadUsers() {
		t.Errorf("the users are %v (%v), want Bob alone", users, err)
	}
}

// Once the sequence has given id 2^63-1, a create is errNoIDLeft.
func TestStoreGivesTheLastIDOnce(t *testing.T) {
	s := openTestStore(t)
	if _, err := s.db.Exec(context.Background(), `ALTER TABLE users ALTER COLUMN id RESTART WITH 9223372036854775807`); err != nil {
		t.Fatal(err)
	}
	if last, err := s.create(fieldsOf("Last", "last@example.com")); err != nil || last.ID != 1<<63-1 {
		t.Fatalf("the create of the last id: %v, %v", last, err)
	}
	if _, err := s.create(fieldsOf("None", "none@example.com")); err != errNoIDLeft {
		t.Errorf("a create after the last id: %v, want errNoIDLeft", err)
	}
}

// A precondition and the write it guards are one transaction: of many writers that all judged the
// same user as it was, one goes ahead and every other's check sees the user it changed. Of many
// creates of one e-mail, one goes ahead.
func TestStoreJudgesAndWritesAtomically(t *testing.T) {
	s := openTestStore(t)
	ann, err := s.create(fieldsOf("Ann", "ann@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	errStale := errors.New("the user changed since it was read")
	var wg sync.WaitGroup
	results := make(chan error, 2*writers)
	for i := 0; i < writers; i++ {
		wg.Add(2)
		go func() { // as If-Match with the ETag of Ann as she was
			defer wg.Done()
			_, err := s.update(ann.ID, fieldsOf(fmt.Sprint("Ann ", i), "ann@example.com"), func(current user) error {
				if current != ann {
					return errStale
				}
				return nil
			})
			results <- err
		}()
		go func() {
			defer wg.Done()
			_, err := s.create(fieldsOf("Same", "same@example.com"))
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	counts := map[error]int{}
	for err := range results {
		counts[err]++
	}
	if counts[nil] != 2 || counts[errStale] != writers-1 || counts[errEmailTaken] != writers-1 {
		t.Errorf("results %v, want two successes (an update and a create), %d stale updates, %d e-mails taken", counts, writers-1, writers-1)
	}
}

// createIf judges the whole collection with every other write locked out: a check that fails
// writes nothing, and no create comes between a check and its create.
func TestStoreCreateIfJudgesTheWholeCollection(t *testing.T) {
	s := openTestStore(t)
	if _, err := s.create(fieldsOf("Ann", "ann@example.com")); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if _, err := s.createIf(fieldsOf("Bob", "bob@example.com"), func(users []user) error { return refused }); err != refused {
		t.Fatalf("createIf with a check that fails: %v, want the check's error", err)
	}
	var wg sync.WaitGroup
	var seen [][]user
	var mu sync.Mutex
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.createIf(fieldsOf("User", fmt.Sprintf("user%d@example.com", i)), func(users []user) error {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, users)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sizes := map[int]bool{}
	for _, users := range seen {
		sizes[len(users)] = true
	}
	if len(sizes) != 8 { // each check saw one more user than the one before: 1, 2, ..., 8
		t.Errorf("the checks saw collections of the sizes %v, want 8 different ones", sizes)
	}
}
