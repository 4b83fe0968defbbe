package testenv

import (
	"context"
	"os"
	"testing"

	"github.com/couponsvc/couponsvc/services/core"

	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Fresh names new, empty backends for a test that opens its own connections
// to them: a couponsvc process it starts, or a service behind a TCP proxy.
// On the embedded default every field but Prefix is empty: the process runs
// its own SQLite and in-process Redis.
type Fresh struct {
	// MySQLDSN is a database of the test's own on COUPON_TEST_MYSQL_DSN's
	// server, dropped when the test ends.
	MySQLDSN string
	// RedisAddr or RedisAddrs (a cluster) is the test's Redis, shared with
	// the other tests: the test's keys start with Prefix, and are deleted
	// when it ends.
	RedisAddr  string
	RedisAddrs []string
	Prefix     string
}

// NewFresh creates the test's database (with real backends) and key prefix,
// and removes them when the test ends.
func NewFresh(t testing.TB) Fresh {
	t.Helper()
	f := Fresh{
		Prefix:     "t" + randomHex(6) + ":coupon:",
		RedisAddr:  os.Getenv("COUPON_TEST_REDIS_ADDR"),
		RedisAddrs: core.SplitAddrs(os.Getenv("COUPON_TEST_REDIS_ADDRS")),
	}
	if len(f.RedisAddrs) > 0 {
		f.RedisAddr = ""
	}
	if dsn := os.Getenv("COUPON_TEST_MYSQL_DSN"); dsn != "" {
		f.MySQLDSN = freshMySQLDSN(t, dsn)
	}
	if !f.Embedded() {
		t.Cleanup(func() {
			rdb := f.Redis()
			deleteKeys(rdb, f.Prefix)
			rdb.Close()
		})
	}
	return f
}

// Embedded reports whether the test runs on the embedded default.
func (f Fresh) Embedded() bool { return f.MySQLDSN == "" }

// Redis returns a new client of the test's Redis (nil on the embedded
// default); the caller closes it.
func (f Fresh) Redis() redis.UniversalClient {
	switch {
	case len(f.RedisAddrs) > 0:
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: f.RedisAddrs, PoolSize: 50})
	case f.RedisAddr != "":
		return redis.NewClient(&redis.Options{Addr: f.RedisAddr, PoolSize: 50})
	}
	return nil
}

// OpenDB opens the test's database and migrates it: the fresh MySQL
// database of f, or on the embedded default an SQLite file in dataDir (where
// a couponsvc process the test starts finds it too). The caller closes it.
func (f Fresh) OpenDB(t testing.TB, dataDir string) (*gorm.DB, string) {
	t.Helper()
	cfg := core.BackendConfig{DataDir: dataDir}
	if !f.Embedded() {
		// A small pool: test packages, and the processes they start, run
		// in parallel against one server.
		cfg = core.BackendConfig{MySQLDSN: f.MySQLDSN, MaxOpenConns: 16}
	}
	db, dialect, err := core.OpenDB(cfg)
	if err != nil {
		t.Fatalf("open the database: %v", err)
	}
	if err := core.Migrate(context.Background(), db, dialect); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db, dialect
}

// DeleteKeys deletes every key that starts with prefix, as a Redis restarted
// without persistence would have lost them, without touching other tests'
// keys (never FLUSHALL a shared Redis).
func DeleteKeys(rdb redis.UniversalClient, prefix string) { deleteKeys(rdb, prefix) }

// freshMySQLDSN creates an empty database on the server of dsn, dropped when
// the test ends, and returns its DSN.
func freshMySQLDSN(t testing.TB, dsn string) string {
	t.Helper()
	c, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("COUPON_TEST_MYSQL_DSN: %v", err)
	}
	admin, err := gorm.Open(mysql.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("connect to MySQL: %v", err)
	}
	name := "couponsvc_t_" + randomHex(6)
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	})
	c.DBName = name
	return c.FormatDSN()
}
