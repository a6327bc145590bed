package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	s, err := openUserStore(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	if _, err := s.db.Exec(t.Context(), `TRUNCATE users RESTART IDENTITY`); err != nil {
		t.Fatal(err)
	}
	return s
}

// fieldsOf are the fields of a whole user, as a POST or a PUT sets them.
func fieldsOf(name, email string) userFields { return userFields{name: &name, email: &email} }

// allowAny is the check of a write with no precondition.
func allowAny(user) error { return nil }

// create adds a user with no precondition, as a plain POST does.
func create(ctx context.Context, s *userStore, fields userFields) (user, error) {
	return s.create(ctx, fields, preconditions{}.onCollection)
}

// Ids start at 1, increase, and are never given again, not after a delete; a user that does not
// exist is errNotFound, and an e-mail another user has, in any case, errEmailTaken.
func TestStoreKeepsTheRulesOfTheMemoryStore(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	if never, err := s.neverHadUsers(ctx); err != nil || !never {
		t.Errorf("an empty table that never had a user: neverHadUsers is %v, %v", never, err)
	}
	ann, err := create(ctx, s, fieldsOf("Ann", "ann@example.com"))
	if err != nil || ann.ID != 1 {
		t.Fatalf("the first create: %v, %v; want id 1", ann, err)
	}
	if err := s.delete(ctx, ann.ID, allowAny); err != nil {
		t.Fatal(err)
	}
	if bob, err := create(ctx, s, fieldsOf("Bob", "bob@example.com")); err != nil || bob.ID != 2 {
		t.Errorf("a create after a delete: %v, %v; want id 2, never 1 again", bob, err)
	}
	if _, err := s.get(ctx, ann.ID); err != errNotFound {
		t.Errorf("get of a deleted user: %v, want errNotFound", err)
	}
	if _, err := s.update(ctx, 99, fieldsOf("X", "x@example.com"), allowAny); err != errNotFound {
		t.Errorf("update of a user that never was: %v, want errNotFound", err)
	}
	if _, err := create(ctx, s, fieldsOf("Bobby", "BOB@example.com")); err != errEmailTaken {
		t.Errorf("a create with another's e-mail in capitals: %v, want errEmailTaken", err)
	}
	users, total, err := s.list(ctx, listQuery{})
	if err != nil || total != 1 || len(users) != 1 || users[0].Email != "bob@example.com" {
		t.Errorf("the users are %v, %d (%v), want Bob alone", users, total, err)
	}
	if never, err := s.neverHadUsers(ctx); err != nil || never {
		t.Errorf("a table that had users: neverHadUsers is %v, %v", never, err)
	}
}

// Once the sequence has given id 2^63-1, a create is errNoIDLeft.
func TestStoreGivesTheLastIDOnce(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	if _, err := s.db.Exec(ctx, `ALTER TABLE users ALTER COLUMN id RESTART WITH 9223372036854775807`); err != nil {
		t.Fatal(err)
	}
	if last, err := create(ctx, s, fieldsOf("Last", "last@example.com")); err != nil || last.ID != 1<<63-1 {
		t.Fatalf("the create of the last id: %v, %v", last, err)
	}
	if _, err := create(ctx, s, fieldsOf("None", "none@example.com")); err != errNoIDLeft {
		t.Errorf("a create after the last id: %v, want errNoIDLeft", err)
	}
}

// A precondition and the write it guards are one transaction: of many writers that all judged the
// same user as it was, one goes ahead and every other's check sees the user it changed. Of many
// creates of one e-mail, one goes ahead.
func TestStoreJudgesAndWritesAtomically(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	ann, err := create(ctx, s, fieldsOf("Ann", "ann@example.com"))
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
			_, err := s.update(ctx, ann.ID, fieldsOf(fmt.Sprint("Ann ", i), "ann@example.com"), func(current user) error {
				if current != ann {
					return errStale
				}
				return nil
			})
			results <- err
		}()
		go func() {
			defer wg.Done()
			_, err := create(ctx, s, fieldsOf("Same", "same@example.com"))
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

// A create whose check reads the collection judges it with every other write locked out: a check
// that fails writes nothing, and no create comes between a check and its create.
func TestStoreCreateJudgesTheWholeCollection(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	if _, err := create(ctx, s, fieldsOf("Ann", "ann@example.com")); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	refuse := func(collection func() ([]user, error)) error { return refused }
	if _, err := s.create(ctx, fieldsOf("Bob", "bob@example.com"), refuse); err != refused {
		t.Fatalf("a create whose check fails: %v, want the check's error", err)
	}
	var wg sync.WaitGroup
	var seen [][]user
	var mu sync.Mutex
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.create(ctx, fieldsOf("User", fmt.Sprintf("user%d@example.com", i)), func(collection func() ([]user, error)) error {
				users, err := collection()
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, users)
				return err
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

// startTogether runs openStore in 8 goroutines at once, as 8 processes that start together would,
// each with a pool of its own, and returns what each returned; it closes the stores.
func startTogether(t *testing.T, cfg *config) (errs []error) {
	gate := make(chan struct{})
	results := make(chan error)
	for range 8 {
		go func() {
			<-gate
			store, _, err := openStore(t.Context(), cfg, slog.New(slog.DiscardHandler))
			if err == nil {
				store.close()
			}
			results <- err
		}()
	}
	close(gate) // all at once
	for range 8 {
		if err := <-results; err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Processes that start together on a new database all start: one creates the table, under the
// start lock, and the others find it.
func TestProcessesThatStartTogetherOnANewDatabaseAllStart(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	if _, err := s.db.Exec(ctx, `DROP TABLE users`); err != nil {
		t.Fatal(err)
	}
	if errs := startTogether(t, &config{}); errs != nil {
		t.Errorf("of 8 processes started together on a new database, %d did not start: %v", len(errs), errs)
	}
}

// Processes that start together with -sample-data all start, and the sample users go in once: each
// adds them under the start lock, so all but the first find that the database has had users. The
// race is tried 5 times, on a table emptied and its ids started again at 1 each time.
func TestProcessesThatStartTogetherAddTheSamplesOnce(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	for round := 1; round <= 5; round++ {
		if _, err := s.db.Exec(ctx, `TRUNCATE users RESTART IDENTITY`); err != nil {
			t.Fatal(err)
		}
		if errs := startTogether(t, &config{sampleData: true}); errs != nil {
			t.Fatalf("round %d: of 8 processes started together with -sample-data, %d did not start: %v", round, len(errs), errs)
		}
		if _, total, err := s.list(ctx, listQuery{}); err != nil || total != 12 {
			t.Fatalf("round %d: %d users (%v), want the 12 samples once", round, total, err)
		}
	}
}

// Two updates that swap two users' e-mails, at once, are each refused with errEmailTaken, as one
// at a time they would be, and never end in a deadlock that PostgreSQL breaks with an error of its
// own (SQLSTATE 40P01): each locks the two users' rows in id order before it writes.
func TestStoreSwapsOfEMailsAtOnceAreRefusedAsOneAtATime(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	ann, err := create(ctx, s, fieldsOf("Ann", "ann@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	bob, err := create(ctx, s, fieldsOf("Bob", "bob@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 500; round++ {
		var wg sync.WaitGroup
		var annGets, bobGets error
		wg.Add(2)
		go func() { defer wg.Done(); _, annGets = s.update(ctx, ann.ID, fieldsOf("Ann", bob.Email), allowAny) }()
		go func() { defer wg.Done(); _, bobGets = s.update(ctx, bob.ID, fieldsOf("Bob", ann.Email), allowAny) }()
		wg.Wait()
		if annGets != errEmailTaken || bobGets != errEmailTaken {
			t.Fatalf("round %d: Ann asking for Bob's e-mail: %v; Bob asking for Ann's: %v; want errEmailTaken for both", round, annGets, bobGets)
		}
	}
}

// A call whose ctx ends, as a request's does when its client hangs up, fails, and its statement
// ends in the database too: an update waiting for a row that another transaction holds stops
// waiting there.
func TestStoreStopsWithItsContext(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	ann, err := create(ctx, s, fieldsOf("Ann", "ann@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	holder, err := s.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT FROM users WHERE id = $1 FOR UPDATE`, ann.ID); err != nil {
		t.Fatal(err)
	}
	request, hangUp := context.WithCancel(ctx)
	result := make(chan error)
	go func() {
		_, err := s.update(request, ann.ID, fieldsOf("Ann Again", "ann@example.com"), allowAny)
		result <- err
	}()
	for waitingForLock(t, s) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	hangUp()
	if err := <-result; err == nil {
		t.Error("the update of a request whose client hung up returned nil, want the cancel's error")
	}
	if n := waitingForLock(t, s); n != 0 {
		t.Errorf("once the update returned, %d statements still wait for a lock in the database, want 0", n)
	}
}

// A table of the version before this one, which sorted and searched in Go, is brought up to date
// at start: it becomes the table schema.sql makes, each name gets its key as the service lowers
// it, and the list sorts by it. A create as the version before makes it, without name_key, is
// refused from then on.
func TestStoreUpgradesATableOfTheVersionBefore(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	if _, err := s.db.Exec(ctx, `DROP TABLE users`); err != nil {
		t.Fatal(err)
	}
	made, err := openUserStore(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	want := tableShape(t, made)
	made.close()
	_, err = s.db.Exec(ctx, `DROP TABLE users; CREATE TABLE users (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		name text NOT NULL,
		email text NOT NULL,
		email_key text NOT NULL UNIQUE
	)`) // the version before's schema.sql
	if err != nil {
		t.Fatal(err)
	}
	var users []user
	for _, name := range []string{"Zoë", "zoe", "İlker", "ǅemal", "\u212aate", "Ann", "ann", "Émile"} {
		u := user{Name: name, Email: fmt.Sprintf("user%d@example.com", len(users)+1)}
		err := s.db.QueryRow(ctx, `INSERT INTO users (name, email, email_key) VALUES ($1, $2, $3) RETURNING id`,
			u.Name, u.Email, u.uniqueKey()).Scan(&u.ID)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}

	upgraded, err := openUserStore(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer upgraded.close()
	if got := tableShape(t, upgraded); got != want {
		t.Errorf("the upgraded table:\n%s\nwant the table schema.sql makes:\n%s", got, want)
	}
	rows, err := upgraded.db.Query(ctx, `SELECT name, name_key FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Name, Key string }])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Key != strings.ToLower(k.Name) {
			t.Errorf("the name %q has the key %q, want %q, as Go lowers it", k.Name, k.Key, strings.ToLower(k.Name))
		}
	}
	_, err = upgraded.db.Exec(ctx, `INSERT INTO users (name, email, email_key) VALUES ('Old', 'old@example.com', 'old@example.com')`)
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "23502" {
		t.Errorf("a create as the version before makes it, with no name_key: %v, want not_null_violation (23502)", err)
	}
	byName := listQuery{sortBy: "name"}
	wantPage, _ := byName.selectUsers(users)
	if page, total, err := upgraded.list(ctx, byName); err != nil || total != len(users) || !slices.Equal(page, wantPage) {
		t.Errorf("the upgraded users by name: %v, %d (%v); want %v", page, total, err, wantPage)
	}
}

// tableShape describes the users table: each column with its type, collation and whether it may
// be NULL, then each index, in the order of their names.
func tableShape(t *testing.T, s *userStore) string {
	t.Helper()
	var shape string
	err := s.db.QueryRow(t.Context(), `SELECT
		(SELECT string_agg(concat_ws(' ', column_name, data_type, collation_name, is_nullable), E'\n' ORDER BY column_name)
			FROM information_schema.columns WHERE table_name = 'users')
		|| E'\n' ||
		(SELECT string_agg(indexdef, E'\n' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'users')`).Scan(&shape)
	if err != nil {
		t.Fatal(err)
	}
	return shape
}

// A create with no precondition takes no lock on the table: it goes ahead while another
// transaction is in the middle of a write, where a conditional create would wait for it.
func TestStorePlainCreateTakesNoTableLock(t *testing.T) {
	s, ctx := openTestStore(t), t.Context()
	writer, err := s.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Rollback(ctx)
	_, err = writer.Exec(ctx, `INSERT INTO users (name, email, name_key, email_key) VALUES ('W', 'w@example.com', 'w', 'w@example.com')`)
	if err != nil {
		t.Fatal(err)
	}
	result := make(chan error)
	go func() {
		_, err := create(ctx, s, fieldsOf("Ann", "ann@example.com"))
		result <- err
	}()
	for {
		select {
		case err := <-result:
			if err != nil {
				t.Error(err)
			}
			return
		default:
		}
		if waitingForLock(t, s) != 0 {
			t.Fatal("a create with no precondition waits for a lock that another transaction's write holds")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitingForLock counts the statements on the test's database that wait for a lock.
func waitingForLock(t *testing.T, s *userStore) (n int) {
	t.Helper()
	err := s.db.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
