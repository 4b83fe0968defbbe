package services_test

import (
	"context"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/migrations"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"gorm.io/gorm"
)

// openUnmigrated opens a new, empty database of the test's backend (SQLite
// in dir, or a fresh MariaDB database) without migrating it.
func openUnmigrated(t *testing.T, f testenv.Fresh, dir string) (*gorm.DB, string) {
	t.Helper()
	db, dialect, err := core.OpenDB(core.BackendConfig{MySQLDSN: f.MySQLDSN, DataDir: dir, MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db, dialect
}

func migrationStatus(t *testing.T, db *gorm.DB, dialect string) core.MigrationStatus {
	t.Helper()
	st, err := core.MigrationsStatus(context.Background(), db, dialect)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func countRows(t *testing.T, db *gorm.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COUNT(*) FROM " + table).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrateFreshDatabase(t *testing.T) {
	ctx := context.Background()
	db, dialect := openUnmigrated(t, testenv.NewFresh(t), t.TempDir())

	want := core.MigrationStatus{Latest: 24, Pending: []string{
		"0001_init.up.sql", "0002_settings.up.sql", "0003_binary_identities.up.sql", "0004_checkout.up.sql", "0005_checkout_backfill.up.sql", "0006_shared_codes.up.sql", "0007_jobs.up.sql", "0008_events.up.sql", "0009_campaign_status.up.sql", "0011_shared_code_normal_form.up.sql", "0012_carts_with_lines.up.sql", "0013_return_lines.up.sql", "0014_order_lines_no_sku_index.up.sql", "0015_percent_basis_points.up.sql", "0016_full_price_only.up.sql", "0017_unit_selection.up.sql", "0018_template_actions.up.sql", "0019_cart_conditions.up.sql", "0020_eligibility.up.sql", "0021_automatic_offers.up.sql", "0022_superseded_parts_and_payable.up.sql", "0023_hold_parked.up.sql", "0024_use_log_actions.up.sql"}}
	if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
		t.Fatalf("status before = %+v, want %+v", st, want)
	}
	if err := core.Migrate(ctx, db, dialect); err != nil {
		t.Fatal(err)
	}
	want = core.MigrationStatus{Version: 24, Latest: 24}
	if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
		t.Fatalf("status after = %+v, want %+v", st, want)
	}
	// A second start applies nothing (every file would fail on its CREATE TABLE).
	if err := core.Migrate(ctx, db, dialect); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if n := countRows(t, db, "schema_version"); n != 1 {
		t.Fatalf("schema_version has %d rows, want 1", n)
	}
	for _, table := range []string{"campaigns", "templates", "user_coupons", "settings", "users", "api_tokens"} {
		if n := countRows(t, db, table); n != 0 {
			t.Fatalf("%s has %d rows, want 0", table, n)
		}
	}
	if db.Migrator().HasTable("schema_migrations") {
		t.Fatal("a fresh database got the old runner's schema_migrations table")
	}
}

// applyLikeOldRunner does what the runner before golang-migrate did for the
// named files: each statement of the file, then a row in schema_migrations.
func applyLikeOldRunner(t *testing.T, db *gorm.DB, dialect string, versions ...string) {
	t.Helper()
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version VARCHAR(100) NOT NULL PRIMARY KEY,
		applied_at VARCHAR(40) NOT NULL)`).Error; err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		src, err := fs.ReadFile(migrations.FS, dialect+"/"+v+".up.sql")
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range oldSplitSQL(string(src)) {
			if err := db.Exec(stmt).Error; err != nil {
				t.Fatalf("%s: %v\n%s", v, err, stmt)
			}
		}
		if err := db.Exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
			v, "2026-11-30T10:00:00Z").Error; err != nil {
			t.Fatal(err)
		}
	}
}

// oldSplitSQL is the old runner's statement splitter: "--" lines dropped,
// statements end with ";" at the end of a line.
func oldSplitSQL(src string) []string {
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

func TestMigrateUpgradesDatabaseOfOldRunner(t *testing.T) {
	ctx := context.Background()
	t.Run("two of three applied: runs the third only", func(t *testing.T) {
		db, dialect := openUnmigrated(t, testenv.NewFresh(t), t.TempDir())
		applyLikeOldRunner(t, db, dialect, "0001_init", "0002_settings")
		if err := db.Exec("INSERT INTO users (username, password_hash, role, created_at) VALUES ('Casey', 'x', 'admin', '2026-11-30 10:00:00')").Error; err != nil {
			t.Fatal(err)
		}

		want := core.MigrationStatus{Version: 2, Legacy: true, Latest: 24,
			Pending: []string{"0003_binary_identities.up.sql", "0004_checkout.up.sql", "0005_checkout_backfill.up.sql", "0006_shared_codes.up.sql", "0007_jobs.up.sql", "0008_events.up.sql", "0009_campaign_status.up.sql", "0011_shared_code_normal_form.up.sql", "0012_carts_with_lines.up.sql", "0013_return_lines.up.sql", "0014_order_lines_no_sku_index.up.sql", "0015_percent_basis_points.up.sql", "0016_full_price_only.up.sql", "0017_unit_selection.up.sql", "0018_template_actions.up.sql", "0019_cart_conditions.up.sql", "0020_eligibility.up.sql", "0021_automatic_offers.up.sql", "0022_superseded_parts_and_payable.up.sql", "0023_hold_parked.up.sql", "0024_use_log_actions.up.sql"}}
		if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
			t.Fatalf("status before = %+v, want %+v", st, want)
		}
		if err := core.Migrate(ctx, db, dialect); err != nil {
			t.Fatal(err)
		}
		want = core.MigrationStatus{Version: 24, Latest: 24}
		if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
			t.Fatalf("status after = %+v, want %+v", st, want)
		}
		if n := countRows(t, db, "users"); n != 1 {
			t.Fatalf("users has %d rows, want the 1 from before", n)
		}
		// The old table stays as the old runner left it.
		if n := countRows(t, db, "schema_migrations"); n != 2 {
			t.Fatalf("schema_migrations has %d rows, want 2", n)
		}
		if dialect == core.DialectMySQL {
			// 0003 ran: usernames are bytes now.
			var typ string
			if err := db.Raw(`SELECT DATA_TYPE FROM information_schema.columns
				WHERE table_schema = DATABASE() AND table_name = 'users' AND column_name = 'username'`).Scan(&typ).Error; err != nil {
				t.Fatal(err)
			}
			if typ != "varbinary" {
				t.Fatalf("users.username is %s, want varbinary", typ)
			}
		}
	})
	t.Run("all the old runner knew applied: runs only what came after", func(t *testing.T) {
		db, dialect := openUnmigrated(t, testenv.NewFresh(t), t.TempDir())
		applyLikeOldRunner(t, db, dialect, "0001_init", "0002_settings", "0003_binary_identities")
		want := core.MigrationStatus{Version: 3, Legacy: true, Latest: 24, Pending: []string{"0004_checkout.up.sql", "0005_checkout_backfill.up.sql", "0006_shared_codes.up.sql", "0007_jobs.up.sql", "0008_events.up.sql", "0009_campaign_status.up.sql", "0011_shared_code_normal_form.up.sql", "0012_carts_with_lines.up.sql", "0013_return_lines.up.sql", "0014_order_lines_no_sku_index.up.sql", "0015_percent_basis_points.up.sql", "0016_full_price_only.up.sql", "0017_unit_selection.up.sql", "0018_template_actions.up.sql", "0019_cart_conditions.up.sql", "0020_eligibility.up.sql", "0021_automatic_offers.up.sql", "0022_superseded_parts_and_payable.up.sql", "0023_hold_parked.up.sql", "0024_use_log_actions.up.sql"}}
		if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
			t.Fatalf("status before = %+v, want %+v", st, want)
		}
		// 0001 run again would fail on its first CREATE TABLE.
		if err := core.Migrate(ctx, db, dialect); err != nil {
			t.Fatal(err)
		}
		want = core.MigrationStatus{Version: 24, Latest: 24}
		if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
			t.Fatalf("status after = %+v, want %+v", st, want)
		}
		var row struct {
			Version int64
			Dirty   bool
		}
		if err := db.Raw("SELECT version, dirty FROM schema_version").Scan(&row).Error; err != nil {
			t.Fatal(err)
		}
		if row.Version != 24 || row.Dirty {
			t.Fatalf("schema_version = %+v, want version 24, clean", row)
		}
	})
}

// Instances that start together each migrate; every file is applied once.
func TestMigrateConcurrentInstances(t *testing.T) {
	f := testenv.NewFresh(t)
	dir := t.TempDir()
	const instances = 4
	dbs := make([]*gorm.DB, instances)
	var dialect string
	for i := range dbs {
		dbs[i], dialect = openUnmigrated(t, f, dir)
	}
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i := range dbs {
		wg.Go(func() { errs[i] = core.Migrate(context.Background(), dbs[i], dialect) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
	want := core.MigrationStatus{Version: 24, Latest: 24}
	if st := migrationStatus(t, dbs[0], dialect); !reflect.DeepEqual(st, want) {
		t.Fatalf("status = %+v, want %+v", st, want)
	}
	if n := countRows(t, dbs[0], "schema_version"); n != 1 {
		t.Fatalf("schema_version has %d rows, want 1", n)
	}
}

func TestForceMigrationVersion(t *testing.T) {
	ctx := context.Background()
	db, dialect := openUnmigrated(t, testenv.NewFresh(t), t.TempDir())
	if err := core.Migrate(ctx, db, dialect); err != nil {
		t.Fatal(err)
	}
	// What a failed 0003 leaves on MySQL: the version marked dirty.
	if err := db.Exec("UPDATE schema_version SET dirty = ?", true).Error; err != nil {
		t.Fatal(err)
	}
	want := core.MigrationStatus{Version: 24, Dirty: true, Latest: 24}
	if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
		t.Fatalf("status = %+v, want %+v", st, want)
	}
	err := core.Migrate(ctx, db, dialect)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("Dirty database version %d", 24)) {
		t.Fatalf("migrate of a dirty database: %v, want the dirty error", err)
	}
	if err := core.ForceMigrationVersion(ctx, db, dialect, 24); err != nil {
		t.Fatal(err)
	}
	want = core.MigrationStatus{Version: 24, Latest: 24}
	if st := migrationStatus(t, db, dialect); !reflect.DeepEqual(st, want) {
		t.Fatalf("status after force = %+v, want %+v", st, want)
	}
	if err := core.Migrate(ctx, db, dialect); err != nil {
		t.Fatal(err)
	}
}
