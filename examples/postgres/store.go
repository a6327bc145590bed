package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// This store.go replaces the repository's own, which keeps the users in a map: the same methods,
// which the handlers call, over PostgreSQL. What the in-memory store does under its lock, this
// one does in a transaction (docs/beyond-one-process.md says it rule by rule).

// The store's own errors, as the in-memory store names them; errorFor (respond.go) gives each its
// HTTP status, as it does errEmailTaken (user.go).
var (
	errNotFound = errors.New("no user has this id")
	errNoIDLeft = errors.New("no id is left to give: every id up to 9223372036854775807 has been used once")
)

// schema creates the table at start, if it is absent.
//
//go:embed schema.sql
var schema string

// queryTimeout bounds each of the store's calls to the database: the handlers pass no context.
const queryTimeout = 5 * time.Second

// userStore keeps the users in the users table of a PostgreSQL database, which several processes
// may share. Every rule that needs two statements to agree (a precondition and the write it
// guards) is kept in one transaction, which locks what it judged.
type userStore struct {
	db *pgxpool.Pool
}

// openUserStore connects to the database at url and creates the table if it is absent.
func openUserStore(ctx context.Context, url string) (*userStore, error) {
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("applying schema.sql: %w", err)
	}
	return &userStore{db: db}, nil
}

// get returns the user with this id, or errNotFound.
func (s *userStore) get(id int64) (user, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	var u user
	err := s.db.QueryRow(ctx, `SELECT id, name, email FROM users WHERE id = $1`, id).Scan(&u.ID, &u.Name, &u.Email)
	return u, storeError(err)
}

// list returns every user, in id order. The handler filters, sorts and pages them as the
// in-memory store's are, so that names sort as Go lower-cases them, not as the database's
// collation would: a list costs a read of the whole table (docs/beyond-one-process.md, "Costs").
func (s *userStore) list() ([]user, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	return readUsers(ctx, s.db)
}

// neverHadUsers reports whether no user was ever created: -sample-data fills only such a store.
func (s *userStore) neverHadUsers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	var never bool
	err := s.db.QueryRow(ctx, `SELECT pg_sequence_last_value(pg_get_serial_sequence('users', 'id')) IS NULL`).Scan(&never)
	return err == nil && never
}

// create adds a user with the next id of the sequence: errEmailTaken when another user has its
// e-mail (the unique index says so), and errNoIDLeft once the sequence has given its last id.
func (s *userStore) create(fields userFields) (user, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	return insert(ctx, s.db, fields.applyTo(user{}))
}

// createIf adds a user as create does, but only once check, given every user in id order, says
// nil: a POST's preconditions on the whole collection. The table is locked against every other
// write (SHARE ROW EXCLUSIVE: reads go on) from the read of the collection to the insert, so that
// what check judged is what the insert follows.
func (s *userStore) createIf(fields userFields, check func(users []user) error) (user, error) {
	var created user
	err := s.inTransaction(func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		users, err := readUsers(ctx, tx)
		if err != nil {
			return err
		}
		if err := check(users); err != nil {
			return err
		}
		created, err = insert(ctx, tx, fields.applyTo(user{}))
		return err
	})
	return created, err
}

// update sets the fields of user id: errNotFound for a user that does not exist, then whatever
// check says of the user as it is now (the caller's preconditions), then errEmailTaken. The row is
// locked (FOR UPDATE) from its read to the write, so no other write comes between.
func (s *userStore) update(id int64, fields userFields, check func(current user) error) (user, error) {
	var after user
	err := s.inTransaction(func(ctx context.Context, tx pgx.Tx) error {
		before, err := lockUser(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := check(before); err != nil {
			return err
		}
		after = fields.applyTo(before)
		_, err = tx.Exec(ctx, `UPDATE users SET name = $2, email = $3, email_key = $4 WHERE id = $1`,
			id, after.Name, after.Email, after.uniqueKey())
		return storeError(err)
	})
	return after, err
}

// delete removes user id: errNotFound for a user that does not exist, then whatever check says of
// the user as it is now, judged with its row locked.
func (s *userStore) delete(id int64, check func(current user) error) error {
	return s.inTransaction(func(ctx context.Context, tx pgx.Tx) error {
		before, err := lockUser(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := check(before); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
		return err
	})
}

// close lets go of the database's connections, once the server has stopped.
func (s *userStore) close() { s.db.Close() }

// inTransaction runs do in a transaction, committed if do returns nil and rolled back otherwise.
func (s *userStore) inTransaction(do func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error { return do(ctx, tx) })
}

// A querier is the pool or a transaction: what reads and writes users.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readUsers returns every user, in id order.
func readUsers(ctx context.Context, q querier) ([]user, error) {
	rows, err := q.Query(ctx, `SELECT id, name, email FROM users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (user, error) {
		var u user
		err := row.Scan(&u.ID, &u.Name, &u.Email)
		return u, err
	})
}

// lockUser reads user id and locks its row until the transaction ends: errNotFound if none.
func lockUser(ctx context.Context, tx pgx.Tx, id int64) (user, error) {
	var u user
	err := tx.QueryRow(ctx, `SELECT id, name, email FROM users WHERE id = $1 FOR UPDATE`, id).Scan(&u.ID, &u.Name, &u.Email)
	return u, storeError(err)
}

// insert adds u with the next id, and returns it with that id.
func insert(ctx context.Context, q querier, u user) (user, error) {
	err := q.QueryRow(ctx, `INSERT INTO users (name, email, email_key) VALUES ($1, $2, $3) RETURNING id`,
		u.Name, u.Email, u.uniqueKey()).Scan(&u.ID)
	return u, storeError(err)
}

// storeError turns the database's answers into the store's errors: no row, a unique key taken, a
// sequence at its end. Any other error is the server's own, a 500.
func storeError(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return errNotFound
	case errors.As(err, &pgErr) && pgErr.Code == "23505": // unique_violation: the e-mail key
		return errEmailTaken
	case errors.As(err, &pgErr) && pgErr.Code == "2200H": // sequence_generator_limit_exceeded
		return errNoIDLeft
	}
	return err
}
