package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// This store.go replaces the repository's own, which keeps the users in a map: the same methods,
// which the handlers call, over PostgreSQL. What the in-memory store does under its lock, this
// one does in a transaction (docs/beyond-one-process.md says it rule by rule).

// schema creates the table at start, if it is absent.
//
//go:embed schema.sql
var schema string

// userStore keeps the users in the users table of a PostgreSQL database, which several processes
// may share. Every rule that needs two statements to agree (a precondition and the write it
// guards) is kept in one transaction, which locks what it judged.
type userStore struct {
	db *pgxpool.Pool
}

// startLock is the key of the advisory lock (PostgreSQL docs, "Advisory Locks") under which a
// process applies the schema, and adds the sample users: processes that start together take
// turns, so that one creates the table and the others find it. Any number serves that no other
// program on the database takes as a lock.
const startLock = 0x75736572 // "user" in ASCII

// openUserStore connects to the database at url and, under the start lock, applies schema.sql.
func openUserStore(ctx context.Context, url string) (*userStore, error) {
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	s := &userStore{db: db}
	err = s.whileStarting(ctx, func() error {
		_, err := db.Exec(ctx, schema)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("applying schema.sql: %w", err)
	}
	return s, nil
}

// whileStarting runs do holding the start lock, once any other process that holds it lets it go.
// The lock belongs to a connection of its own, outside the pool, and ends when that connection
// closes, whatever do returned.
func (s *userStore) whileStarting(ctx context.Context, do func() error) error {
	conn, err := pgx.ConnectConfig(ctx, s.db.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, startLock); err != nil {
		return err
	}
	return do()
}

// get returns the user with this id, or errNotFound.
func (s *userStore) get(ctx context.Context, id int64) (user, error) {
	var u user
	err := s.db.QueryRow(ctx, `SELECT id, name, email FROM users WHERE id = $1`, id).Scan(&u.ID, &u.Name, &u.Email)
	return u, storeError(err)
}

// list returns the users q selects, filtered, sorted and paged (list.go), and how many matched
// before paging.
func (s *userStore) list(ctx context.Context, q listQuery) (page []user, total int, err error) {
	users, err := readUsers(ctx, s.db)
	if err != nil {
		return nil, 0, err
	}
	page, total = q.selectUsers(users)
	return page, total, nil
}

// neverHadUsers reports whether no user was ever created: -sample-data fills only such a store.
func (s *userStore) neverHadUsers(ctx context.Context) (bool, error) {
	var never bool
	err := s.db.QueryRow(ctx, `SELECT pg_sequence_last_value(pg_get_serial_sequence('users', 'id')) IS NULL`).Scan(&never)
	return never, err
}

// create adds a user with the next id of the sequence, once check says nil of the collection: a
// POST's preconditions. check reads the collection, every user in id order, only if it needs it:
// then the table is locked against every other write (SHARE ROW EXCLUSIVE: reads go on) from that
// read to the insert, so that what check judged is what the insert follows, and a POST with no
// precondition locks nothing. Then errEmailTaken when another user has the e-mail (the unique
// index says so), and errNoIDLeft once the sequence has given its last id.
func (s *userStore) create(ctx context.Context, fields userFields, check func(collection func() ([]user, error)) error) (user, error) {
	var created user
	err := s.inTransaction(ctx, func(tx pgx.Tx) error {
		err := check(func() ([]user, error) {
			if _, err := tx.Exec(ctx, `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				return nil, err
			}
			return readUsers(ctx, tx)
		})
		if err != nil {
			return err
		}
		created, err = insert(ctx, tx, fields.applyTo(user{}))
		return err
	})
	return created, err
}

// update sets the fields of user id: errNotFound for a user that does not exist, then whatever
// check says of the user as it is now (the caller's preconditions), then errEmailTaken. The user's
// row, and the row of the user who has the e-mail the write asks for, are locked from their read
// to the write (lockForUpdate), so no other write comes between.
func (s *userStore) update(ctx context.Context, id int64, fields userFields, check func(current user) error) (user, error) {
	var after user
	err := s.inTransaction(ctx, func(tx pgx.Tx) error {
		before, err := lockForUpdate(ctx, tx, id, fields)
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
func (s *userStore) delete(ctx context.Context, id int64, check func(current user) error) error {
	return s.inTransaction(ctx, func(tx pgx.Tx) error {
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
func (s *userStore) inTransaction(ctx context.Context, do func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.db, do)
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

// lockForUpdate reads user id and locks its row until the transaction ends, with the row of the
// user who has the e-mail that fields set, if any: errNotFound if user id does not exist. It locks
// both in one statement, in id order. So two updates that swap two users' e-mails lock the same
// rows in the same order: the second waits for the first, then finds the e-mail taken, as one at
// a time. Were each to lock its own user's row alone, each would then wait on the other's entry in
// the unique index, a deadlock, which PostgreSQL breaks by failing one of them (SQLSTATE 40P01).
func lockForUpdate(ctx context.Context, tx pgx.Tx, id int64, fields userFields) (user, error) {
	var wanted *string // NULL, which matches no row, when the write keeps the user's e-mail
	if fields.email != nil {
		key := user{Email: *fields.email}.uniqueKey()
		wanted = &key
	}
	rows, err := tx.Query(ctx, `SELECT id, name, email FROM users WHERE id = $1 OR email_key = $2 ORDER BY id FOR UPDATE`, id, wanted)
	if err != nil {
		return user{}, err
	}
	locked, err := pgx.CollectRows(rows, pgx.RowToStructByPos[user])
	if err != nil {
		return user{}, err
	}
	for _, u := range locked {
		if u.ID == id {
			return u, nil
		}
	}
	return user{}, errNotFound
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
