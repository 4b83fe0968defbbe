package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/migrations"

	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	migratemysql "github.com/golang-migrate/migrate/v4/database/mysql"
	"github.com/golang-migrate/migrate/v4/source"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

// migrationsTable holds golang-migrate's version and dirty flag. It is not
// golang-migrate's default name: schema_migrations is the table of the runner
// couponsvc had before, one row per applied file, which the first run adopts
// (see adoptingDriver).
const migrationsTable = "schema_version"

// legacyTable is where the runner before golang-migrate recorded each
// applied file by name ("0002_settings"). It is read, never written.
const legacyTable = "schema_migrations"

// Migrate applies the embedded migrations of the dialect that have not run
// yet, in version order. On MySQL golang-migrate holds a named lock
// (GET_LOCK) for the whole run, so that two instances that start together
// apply each file once; on SQLite the run is one write transaction.
func Migrate(ctx context.Context, db *gorm.DB, dialect string) error {
	if err := checkSharedCodesFold(ctx, db, dialect); err != nil {
		return err
	}
	m, err := openMigrator(ctx, db, dialect)
	if err != nil {
		return err
	}
	defer m.close()
	if err := m.m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// MigrationStatus is where a database stands against the embedded migrations.
type MigrationStatus struct {
	// Version is the last migration applied, 0 when none.
	Version uint
	// Dirty means migration Version started and did not finish: it must be
	// checked by hand and marked with ForceMigrationVersion.
	Dirty bool
	// Legacy means Version comes from the table of the runner before
	// golang-migrate; the next migrate records it in schema_version.
	Legacy bool
	// Latest is the highest embedded version.
	Latest uint
	// Pending are the embedded files not applied yet, in the order they will be.
	Pending []string
}

// MigrationsStatus reports the version of the database and the pending
// migrations without applying any.
func MigrationsStatus(ctx context.Context, db *gorm.DB, dialect string) (MigrationStatus, error) {
	m, err := openMigrator(ctx, db, dialect)
	if err != nil {
		return MigrationStatus{}, err
	}
	defer m.close()
	var st MigrationStatus
	v, dirty, err := m.drv.Driver.Version()
	if err != nil {
		return st, fmt.Errorf("migrate: read the version: %w", err)
	}
	if v == database.NilVersion {
		if v, err = m.drv.legacyVersion(); err != nil {
			return st, err
		}
		st.Legacy = v != database.NilVersion
	}
	if v != database.NilVersion {
		st.Version, st.Dirty = uint(v), dirty
	}
	files, err := migrationFiles(dialect)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		st.Latest = f.Version
		if f.Version > st.Version || v == database.NilVersion {
			st.Pending = append(st.Pending, f.Raw)
		}
	}
	return st, nil
}

// ForceMigrationVersion records version as applied and clean without running
// anything: after a migration failed half way on MySQL (its DDL does not roll
// back) and the schema was put right by hand.
func ForceMigrationVersion(ctx context.Context, db *gorm.DB, dialect string, version int) error {
	m, err := openMigrator(ctx, db, dialect)
	if err != nil {
		return err
	}
	defer m.close()
	if err := m.m.Force(version); err != nil {
		return fmt.Errorf("migrate: force %d: %w", version, err)
	}
	return nil
}

type migrator struct {
	m   *migrate.Migrate
	drv *adoptingDriver
}

func (m *migrator) close() {
	_, _ = m.m.Close()
}

func openMigrator(ctx context.Context, db *gorm.DB, dialect string) (*migrator, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	src, err := iofs.New(migrations.FS, dialect)
	if err != nil {
		return nil, fmt.Errorf("migrate: read the embedded files: %w", err)
	}
	var drv *adoptingDriver
	switch dialect {
	case DialectMySQL:
		d, ok := db.Dialector.(*mysql.Dialector)
		if !ok {
			return nil, fmt.Errorf("migrate: the database is not MySQL")
		}
		// golang-migrate sends each file as one Exec, which needs
		// multiStatements. It is left off in the service's own pool, where
		// it would only widen what an injected string could do.
		c, err := mysqldriver.ParseDSN(d.DSN)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		c.MultiStatements = true
		connector, err := mysqldriver.NewConnector(c)
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		own := sql.OpenDB(connector) // closed by the driver's Close
		// The driver does everything on one connection, the one that holds
		// the lock.
		own.SetMaxOpenConns(1)
		inner, err := migratemysql.WithInstance(own, &migratemysql.Config{MigrationsTable: migrationsTable})
		if err != nil {
			own.Close()
			return nil, fmt.Errorf("migrate: open MySQL: %w", err)
		}
		drv = &adoptingDriver{Driver: inner, ctx: ctx, dialect: dialect,
			q: func() querier { return sqlDB }}
	case DialectSQLite:
		inner, err := newSQLiteMigrations(ctx, sqlDB)
		if err != nil {
			return nil, err
		}
		drv = &adoptingDriver{Driver: inner, ctx: ctx, dialect: dialect, q: inner.q}
	default:
		return nil, fmt.Errorf("migrate: unknown dialect %q", dialect)
	}
	m, err := migrate.NewWithInstance("iofs", src, dialect, drv)
	if err != nil {
		drv.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return &migrator{m: m, drv: drv}, nil
}

// migrationFiles lists the embedded up migrations of the dialect in order.
func migrationFiles(dialect string) ([]*source.Migration, error) {
	names, err := fs.Glob(migrations.FS, dialect+"/*.up.sql")
	if err != nil {
		return nil, err
	}
	var out []*source.Migration
	for _, name := range names {
		m, err := source.DefaultParse(path.Base(name))
		if err != nil {
			return nil, fmt.Errorf("migrate: %s: %w", name, err)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// adoptingDriver is a golang-migrate database driver that, when its own table
// has no version yet, takes the highest file the runner before it recorded in
// schema_migrations and records that version as applied, so that a database
// made by that runner is not migrated a second time. golang-migrate asks for
// the version with its lock held, so two instances adopt one version.
type adoptingDriver struct {
	database.Driver
	ctx     context.Context
	dialect string
	// q reads the old table: under the lock on SQLite, whose one connection
	// the lock's transaction holds.
	q func() querier
}

func (d *adoptingDriver) Version() (int, bool, error) {
	v, dirty, err := d.Driver.Version()
	if err != nil || v != database.NilVersion {
		return v, dirty, err
	}
	old, err := d.legacyVersion()
	if err != nil || old == database.NilVersion {
		return v, dirty, err
	}
	if err := d.Driver.SetVersion(old, false); err != nil {
		return v, dirty, fmt.Errorf("record the version of %s: %w", legacyTable, err)
	}
	return old, false, nil
}

// legacyVersion is the highest version in schema_migrations, NilVersion when
// the table does not exist or is empty.
func (d *adoptingDriver) legacyVersion() (int, error) {
	q := d.q()
	exists := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	if d.dialect == DialectMySQL {
		exists = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	}
	var n int
	if err := q.QueryRowContext(d.ctx, exists, legacyTable).Scan(&n); err != nil {
		return 0, fmt.Errorf("migrate: look for %s: %w", legacyTable, err)
	}
	if n == 0 {
		return database.NilVersion, nil
	}
	rows, err := q.QueryContext(d.ctx, "SELECT version FROM "+legacyTable)
	if err != nil {
		return 0, fmt.Errorf("migrate: read %s: %w", legacyTable, err)
	}
	defer rows.Close()
	highest := database.NilVersion
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return 0, fmt.Errorf("migrate: read %s: %w", legacyTable, err)
		}
		digits, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(digits)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("migrate: %s has %q, which does not start with a version number", legacyTable, name)
		}
		highest = max(highest, v)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("migrate: read %s: %w", legacyTable, err)
	}
	return highest, nil
}
