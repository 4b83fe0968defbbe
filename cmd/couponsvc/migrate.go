package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
)

// migrateCommand applies the migrations (no argument), prints where the
// database stands (status), or marks a version as applied (force VERSION).
func migrateCommand(ctx context.Context, cfg config, logger *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return withService(ctx, cfg, logger, func(*services.App) error {
			fmt.Fprintln(stdout, "migrations applied")
			return nil
		})
	}
	switch {
	case args[0] == "status" && len(args) == 1:
		return withDB(cfg, func(b *core.Backends) error {
			st, err := core.MigrationsStatus(ctx, b.DB, b.Dialect)
			if err != nil {
				return err
			}
			printMigrationStatus(stdout, st)
			return nil
		})
	case args[0] == "force" && len(args) == 2:
		v, err := strconv.Atoi(args[1])
		if err != nil || v < 0 {
			return fmt.Errorf("migrate force: VERSION must be a migration number such as 3, not %q", args[1])
		}
		return withDB(cfg, func(b *core.Backends) error {
			if err := core.ForceMigrationVersion(ctx, b.DB, b.Dialect, v); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "version %d recorded as applied\n", v)
			return nil
		})
	}
	return errors.New("usage: couponsvc migrate [status | force VERSION]")
}

// withDB opens the database alone: status and force must not migrate it.
func withDB(cfg config, f func(*core.Backends) error) error {
	db, dialect, err := core.OpenDB(cfg.Backend)
	if err != nil {
		return err
	}
	b := &core.Backends{DB: db, Dialect: dialect}
	defer b.Close()
	return f(b)
}

func printMigrationStatus(w io.Writer, st core.MigrationStatus) {
	switch {
	case st.Version == 0 && !st.Dirty:
		fmt.Fprintln(w, "version: none")
	case st.Legacy:
		fmt.Fprintf(w, "version: %d (from schema_migrations, the table of the runner before; the next migrate records it)\n", st.Version)
	default:
		fmt.Fprintf(w, "version: %d\n", st.Version)
	}
	fmt.Fprintf(w, "dirty: %t\n", st.Dirty)
	fmt.Fprintf(w, "latest: %d\n", st.Latest)
	if len(st.Pending) == 0 {
		fmt.Fprintln(w, "pending: none")
	}
	for _, name := range st.Pending {
		fmt.Fprintf(w, "pending: %s\n", name)
	}
}
