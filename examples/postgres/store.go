package main

// This store.go replaces the repository's own, which keeps the users in a map: the same methods,
// which the handlers call, over PostgreSQL. It does not compile in this folder alone, since it
// uses the rest of the service: ./build.sh DIR assembles the program and builds it (README.md).
// What the in-memory store does under its lock, this one does in a transaction, and its list is
// the database's work (docs/beyond-one-process.md says it rule by rule).

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schema is the table and its indexes, as this version of the store needs them.
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

// openUserStore connects to the database at url and, under the start lock, brings its schema to
// this version's (applySchema).
func openUserStore(ctx context.Context, url string) (*userStore, error) {
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	// When a call's ctx ends (its client hung up), pgx asks the server to cancel the statement, so
	// that it stops there too. pgx's default only drops the connection, and the server would go on
	// waiting for a lock, or reading rows, until the statement ended. The deadline is in case the
	// server does not answer the cancel.
	config.ConnConfig.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: time.Second}
	}
	// No parallel workers for the store's statements: each is a process that PostgreSQL starts for
	// one statement, and starting two made the COUNT(*) of a list 2 to 5 times slower than counting
	// alone, at 300,000 and at 1,000,000 users (docs/beyond-one-process.md, "Costs").
	config.ConnConfig.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	db, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return nil, err
	}
	s := &userStore{db: db}
	if err := s.whileStarting(ctx, func() error { return s.applySchema(ctx) }); err != nil {
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

// applySchema brings the database to this version's schema, in one transaction:
//   - a database without the users table gets schema.sql;
//   - a table of the version before this one, which sorted and searched in Go and so has no
//     name_key, gets it (addNameKeys), then schema.sql adds the indexes;
//   - a table that has name_key is left alone.
//
// A table that is up to date gets no statement at all: ALTER TABLE and CREATE INDEX lock the
// table, even when they find nothing to do, and that lock waits for every write in progress while
// every other query waits behind it.
func (s *userStore) applySchema(ctx context.Context) error {
	var exists, hasNameKey bool
	err := s.db.QueryRow(ctx, `SELECT to_regclass('users') IS NOT NULL,
		EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass('users') AND attname = 'name_key')`).Scan(&exists, &hasNameKey)
	if err != nil || hasNameKey {
		return err
	}
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if exists {
			if err := addNameKeys(ctx, tx); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
}

// addNameKeys gives a table of the version before this one what schema.sql's table has beside its
// indexes: name_key, filled with each name as nameKey lowers it (the database's lower() would not
// do), and both keys compared byte by byte (COLLATE "C").
func addNameKeys(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `ALTER TABLE users ADD COLUMN name_key text COLLATE "C", ALTER COLUMN email_key TYPE text COLLATE "C"`)
	if err != nil {
		return err
	}
	users, err := readUsers(ctx, tx)
	if err != nil {
		return err
	}
	ids, keys := make([]int64, len(users)), make([]string, len(users))
	for i, u := range users {
		ids[i], keys[i] = u.ID, nameKey(u)
	}
	_, err = tx.Exec(ctx, `UPDATE users SET name_key = given.key
		FROM unnest($1::bigint[], $2::text[]) AS given(id, key) WHERE users.id = given.id`, ids, keys)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `ALTER TABLE users ALTER COLUMN name_key SET NOT NULL`)
	return err
}

// get returns the user with this id, or errNotFound.
func (s *userStore) get(ctx context.Context, id int64) (user, error) {
	var u user
	err := s.db.QueryRow(ctx, `SELECT id, name, email FROM users WHERE id = $1`, id).Scan(&u.ID, &u.Name, &u.Email)
	return u, storeError(err)
}

// list returns the users q selects, filtered, sorted and paged by the rules of list.go, and how
// many matched before paging. The database does the work, through the indexes of schema.sql, on
// the keys the service lower-cased: email= through email_key's unique index, q= through the
// trigram indexes, and the sort through the index of its key (listOrder). Its two statements, the
// count and the page, read one snapshot of the table (REPEATABLE READ), as the in-memory store
// selects from one copy of its users.
func (s *userStore) list(ctx context.Context, q listQuery) (page []user, total int, err error) {
	if strings.ContainsRune(q.search+q.email, 0) {
		return nil, 0, nil // PostgreSQL's text cannot hold NUL, so no name or e-mail has one
	}
	where, args := "true", pgx.NamedArgs{"limit": nil, "offset": 0} // LIMIT NULL is no limit
	if q.email != "" {
		where += " AND email_key = @email"
		args["email"] = user{Email: q.email}.uniqueKey() // as hasEmail (user.go) compares
	}
	if q.search != "" {
		where += " AND (name_key LIKE @pattern OR email_key LIKE @pattern)"
		args["pattern"] = "%" + likeEscaper.Replace(strings.ToLower(q.search)) + "%" // as contains (user.go)
	}
	snapshot := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err = pgx.BeginTxFunc(ctx, s.db, snapshot, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE `+where, args).Scan(&total); err != nil {
			return err
		}
		if q.page != nil {
			if q.page.number > q.page.totalPages(total) {
				return nil // past the end, however far: no offset to compute, nor to overflow
			}
			args["limit"], args["offset"] = q.page.size, (q.page.number-1)*q.page.size
		}
		rows, err := tx.Query(ctx, `SELECT id, name, email FROM users WHERE `+where+
			` ORDER BY `+listOrder(q)+` LIMIT @limit OFFSET @offset`, args)
		if err != nil {
			return err
		}
		page, err = pgx.CollectRows(rows, pgx.RowToStructByPos[user])
		return err
	})
	return page, total, err
}

// likeEscaper escapes what LIKE reads as a pattern, with its default escape character, so that a
// search for "100%" or "a_b" finds those very characters (PostgreSQL docs, "LIKE").
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// sortColumns are the columns of the sorts other than by id: the keys the service lower-cased.
var sortColumns = map[string]string{"name": "name_key", "email": "email_key"}

// listOrder is the ORDER BY of q's sort, as list.go's sortUsers sorts: by the key, which the
// column's COLLATE "C" compares byte by byte as Go's strings.Compare does, ties by ascending id in
// both directions.
func listOrder(q listQuery) string {
	column, byKey := sortColumns[q.sortBy]
	switch {
	case !byKey && q.descending:
		return "id DESC"
	case !byKey: // sortBy is "id", or "", which is id too
		return "id"
	case q.descending:
		return column + " DESC, id"
	}
	return column + ", id"
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
// read to the insert, so that what check judged is what the insert follows; a POST with no
// precondition takes no table lock, and waits for no other write. Then errEmailTaken when another
// user has the e-mail (the unique index says so), and errNoIDLeft once the sequence has given its
// last id.
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
		created = fields.applyTo(user{})
		err = tx.QueryRow(ctx, `INSERT INTO users (name, email, name_key, email_key) VALUES ($1, $2, $3, $4) RETURNING id`,
			created.Name, created.Email, nameKey(created), created.uniqueKey()).Scan(&created.ID)
		return storeError(err)
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
		_, err = tx.Exec(ctx, `UPDATE users SET name = $2, email = $3, name_key = $4, email_key = $5 WHERE id = $1`,
			id, after.Name, after.Email, nameKey(after), after.uniqueKey())
		return storeError(err)
	})
	return after, err
}

// delete removes user id: errNotFound for a user that does not exist, then whatever check says of
// the user as it is now, judged with its row locked.
func (s *userStore) delete(ctx context.Context, id int64, check func(current user) error) error {
	return s.inTransaction(ctx, func(tx pgx.Tx) error {
		var before user
		err := tx.QueryRow(ctx, `SELECT id, name, email FROM users WHERE id = $1 FOR UPDATE`, id).Scan(&before.ID, &before.Name, &before.Email)
		if err != nil {
			return storeError(err)
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

// readUsers returns every user, in id order.
func readUsers(ctx context.Context, tx pgx.Tx) ([]user, error) {
	rows, err := tx.Query(ctx, `SELECT id, name, email FROM users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[user])
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

// nameKey is u's name as the list sorts and searches it: lower-cased as list.go's sortUsers and
// user.go's contains lower it, by Go, whose mapping is the same on every machine, not by the
// database's lower(), whose mapping follows the database's locale.
func nameKey(u user) string { return strings.ToLower(u.Name) }

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
