package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// openStore opens the store kept in the PostgreSQL database that DATABASE_URL names, and says
// which for the start-up log. It replaces the function of that name in main.go (README.md here).
// The URL comes from the environment, never from a flag: it may hold a password, and a process's
// arguments show in ps. With -sample-data it adds the sample users to a database that never had a
// user, once, however many processes start together.
func openStore(ctx context.Context, cfg *config, logger *slog.Logger) (store *userStore, storage string, err error) {
	url := os.Getenv("DATABASE_URL")
	switch {
	case url == "":
		return nil, "", withAdvice(fmt.Errorf("%w: DATABASE_URL is not set", errUsage),
			"set it to the database that keeps the users, such as DATABASE_URL=postgres://localhost/users")
	case cfg.dataFile != "":
		return nil, "", withAdvice(fmt.Errorf("%w: -data is not taken", errUsage), "leave -data out: the users are kept in the database DATABASE_URL names")
	}
	if store, err = openUserStore(ctx, url); err != nil {
		return nil, "", err
	}
	if cfg.sampleData {
		// Under the start lock: of processes that start together, the first adds the samples and
		// the others find that the database has had users.
		err := store.whileStarting(ctx, func() error { return addSampleUsers(ctx, store) })
		if err != nil {
			store.close()
			return nil, "", err
		}
	}
	config := store.db.Config().ConnConfig // the database and its host, never its password
	return store, "database " + config.Database + " on " + config.Host, nil
}
