package services

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"couponsvc/migrations"

	"gorm.io/gorm"
)

// Migrate applies the embedded migrations of the dialect that have not run yet,
// in name order, and records each in schema_migrations. On MySQL a named lock
// keeps two instances that start together from applying the same file twice.
func Migrate(ctx context.Context, db *gorm.DB, dialect string) error {
	db = db.WithContext(ctx)
	if dialect == DialectMySQL {
		// GET_LOCK belongs to one connection: hold one for the whole run.
		return db.Connection(func(conn *gorm.DB) error {
			var got int
			if err := conn.Raw("SELECT GET_LOCK('couponsvc_migrate', 60)").Scan(&got).Error; err != nil {
				return fmt.Errorf("migrate: lock: %w", err)
			}
			if got != 1 {
				return fmt.Errorf("migrate: another instance holds the migration lock")
			}
			defer conn.Exec("SELECT RELEASE_LOCK('couponsvc_migrate')")
			return migrate(conn, dialect)
		})
	}
	return migrate(db, dialect)
}

func migrate(db *gorm.DB, dialect string) error {
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version VARCHAR(100) NOT NULL PRIMARY KEY,
		applied_at VARCHAR(40) NOT NULL)`).Error; err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var done []string
	if err := db.Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	applied := map[string]bool{}
	for _, v := range done {
		applied[v] = true
	}
	files, err := fs.Glob(migrations.FS, dialect+"/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		version := strings.TrimSuffix(f[len(dialect)+1:], ".sql")
		if applied[version] {
			continue
		}
		src, err := fs.ReadFile(migrations.FS, f)
		if err != nil {
			return err
		}
		for _, stmt := range splitSQL(string(src)) {
			if err := db.Exec(stmt).Error; err != nil {
				return fmt.Errorf("migrate %s: %w\n%s", f, err, stmt)
			}
		}
		if err := db.Exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
			version, time.Now().UTC().Format(time.RFC3339)).Error; err != nil {
			return fmt.Errorf("migrate: record %s: %w", version, err)
		}
	}
	return nil
}

// splitSQL cuts a migration file into statements: "--" comment lines are
// dropped and statements end with ";" at the end of a line.
func splitSQL(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
