package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/golang-migrate/migrate/v4/database"
)

// sqliteMigrations is golang-migrate's database driver for the embedded
// SQLite database, over the service's own *sql.DB. golang-migrate's sqlite
// driver cannot be linked in: it imports modernc.org/sqlite, which registers
// the database/sql driver name "sqlite" that glebarez/go-sqlite (under gorm)
// registers too, and the program would panic at start.
//
// The lock is a write transaction (BEGIN IMMEDIATE, from the DSN's _txlock),
// held from Lock to Unlock, in which everything runs: a second process waits
// for it (busy_timeout), and a failed file rolls back with the version write
// before it, so the database is left as it was instead of dirty.
type sqliteMigrations struct {
	ctx    context.Context
	db     *sql.DB
	tx     *sql.Tx
	failed bool
}

func newSQLiteMigrations(ctx context.Context, db *sql.DB) (*sqliteMigrations, error) {
	d := &sqliteMigrations{ctx: ctx, db: db}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+migrationsTable+` (
		version BIGINT NOT NULL PRIMARY KEY,
		dirty BOOLEAN NOT NULL)`); err != nil {
		return nil, fmt.Errorf("migrate: create %s: %w", migrationsTable, err)
	}
	return d, nil
}

// q is the lock's transaction while it is held, else the database.
func (d *sqliteMigrations) q() querier {
	if d.tx != nil {
		return d.tx
	}
	return d.db
}

func (d *sqliteMigrations) exec(query string, args ...any) error {
	var err error
	if d.tx != nil {
		_, err = d.tx.ExecContext(d.ctx, query, args...)
	} else {
		_, err = d.db.ExecContext(d.ctx, query, args...)
	}
	if err != nil {
		d.failed = true
	}
	return err
}

func (d *sqliteMigrations) Open(string) (database.Driver, error) {
	return nil, errors.New("migrate: the SQLite driver only wraps an open database")
}

// Close leaves the database open: it belongs to the service.
func (d *sqliteMigrations) Close() error {
	if d.tx != nil {
		err := d.tx.Rollback()
		d.tx = nil
		return err
	}
	return nil
}

func (d *sqliteMigrations) Lock() error {
	if d.tx != nil {
		return database.ErrLocked
	}
	tx, err := d.db.BeginTx(d.ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	d.tx, d.failed = tx, false
	return nil
}

func (d *sqliteMigrations) Unlock() error {
	if d.tx == nil {
		return database.ErrNotLocked
	}
	tx := d.tx
	d.tx = nil
	if d.failed {
		return tx.Rollback()
	}
	return tx.Commit()
}

func (d *sqliteMigrations) Run(migration io.Reader) error {
	body, err := io.ReadAll(migration)
	if err != nil {
		d.failed = true
		return err
	}
	if err := d.exec(string(body)); err != nil {
		return database.Error{OrigErr: err, Err: "migration failed", Query: body}
	}
	return nil
}

func (d *sqliteMigrations) SetVersion(version int, dirty bool) error {
	if err := d.exec("DELETE FROM " + migrationsTable); err != nil {
		return err
	}
	// As golang-migrate's own drivers: no row for "nothing applied" unless
	// it is dirty.
	if version >= 0 || (version == database.NilVersion && dirty) {
		return d.exec("INSERT INTO "+migrationsTable+" (version, dirty) VALUES (?, ?)", version, dirty)
	}
	return nil
}

func (d *sqliteMigrations) Version() (int, bool, error) {
	var version int
	var dirty bool
	err := d.q().QueryRowContext(d.ctx, "SELECT version, dirty FROM "+migrationsTable+" LIMIT 1").Scan(&version, &dirty)
	if errors.Is(err, sql.ErrNoRows) {
		return database.NilVersion, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return version, dirty, nil
}

func (d *sqliteMigrations) Drop() error {
	return errors.New("migrate: drop is not supported")
}
