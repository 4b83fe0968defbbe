package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/glebarez/sqlite"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialects of the database.
const (
	DialectMySQL  = "mysql"
	DialectSQLite = "sqlite"
)

// BackendConfig says where the database and Redis are. Empty MySQLDSN means the
// embedded SQLite file under DataDir; empty RedisAddr and RedisAddrs mean an
// in-process Redis-compatible server (miniredis) on a loopback port, with a
// password only this process knows.
type BackendConfig struct {
	MySQLDSN   string
	RedisAddr  string
	RedisAddrs []string // Redis Cluster seed nodes
	DataDir    string
	// MaxOpenConns bounds the MySQL pool (SQLite always uses one connection).
	MaxOpenConns int
	// RedisPoolSize bounds the connections per Redis node.
	RedisPoolSize int
	Logger        *slog.Logger
}

// Backends are the opened database and Redis.
type Backends struct {
	DB      *gorm.DB
	Dialect string
	Redis   redis.UniversalClient
	// Embedded is the in-process Redis when no Redis was configured.
	Embedded *miniredis.Miniredis
	// stopClock stops the embedded Redis's clock (see runEmbeddedClock).
	stopClock func()
}

// Close closes Redis, the database and the embedded server.
func (b *Backends) Close() error {
	var errs []error
	if b.Redis != nil {
		errs = append(errs, b.Redis.Close())
	}
	if b.DB != nil {
		if sqlDB, err := b.DB.DB(); err == nil {
			errs = append(errs, sqlDB.Close())
		}
	}
	if b.stopClock != nil {
		b.stopClock()
	}
	if b.Embedded != nil {
		b.Embedded.Close()
	}
	return errors.Join(errs...)
}

// OpenBackends opens the database and Redis described by cfg and applies the
// migrations. It does not wait for Redis: a service that starts while Redis is
// down answers 503 until it comes back.
func OpenBackends(ctx context.Context, cfg BackendConfig) (*Backends, error) {
	b := &Backends{}
	// A flash sale has hundreds of claims in flight, each a few Redis calls:
	// go-redis's default pool (10 per CPU) would make them queue for a
	// connection rather than for Redis.
	if cfg.RedisPoolSize <= 0 {
		cfg.RedisPoolSize = 256
	}
	var err error
	b.DB, b.Dialect, err = OpenDB(cfg)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, b.DB, b.Dialect); err != nil {
		b.Close()
		return nil, err
	}
	switch {
	case len(cfg.RedisAddrs) > 0:
		b.Redis = redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.RedisAddrs, PoolSize: cfg.RedisPoolSize})
	case cfg.RedisAddr != "":
		b.Redis = redis.NewClient(&redis.Options{Addr: cfg.RedisAddr, PoolSize: cfg.RedisPoolSize})
	default:
		// The loopback port is open to every local user, and whoever can
		// write to Redis can rewrite a session: only this process knows the
		// password, made anew at each start.
		var pw [32]byte
		if _, err := rand.Read(pw[:]); err != nil {
			b.Close()
			return nil, fmt.Errorf("make the embedded Redis's password: %w", err)
		}
		password := hex.EncodeToString(pw[:])
		b.Embedded = miniredis.NewMiniRedis()
		b.Embedded.RequireAuth(password)
		if err := b.Embedded.StartAddr("127.0.0.1:0"); err != nil {
			b.Close()
			return nil, fmt.Errorf("start the embedded Redis: %w", err)
		}
		b.stopClock = runEmbeddedClock(b.Embedded)
		b.Redis = redis.NewClient(&redis.Options{Addr: b.Embedded.Addr(), Password: password, PoolSize: cfg.RedisPoolSize})
	}
	return b, nil
}

// OpenDB opens MySQL when cfg.MySQLDSN is set, else SQLite in cfg.DataDir.
func OpenDB(cfg BackendConfig) (*gorm.DB, string, error) {
	gcfg := &gorm.Config{
		Logger:                 logger.Discard,
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		SkipDefaultTransaction: true, // services open the transactions they need
		PrepareStmt:            false,
	}
	if cfg.MySQLDSN != "" {
		dsn, err := normaliseMySQLDSN(cfg.MySQLDSN)
		if err != nil {
			return nil, "", err
		}
		db, err := gorm.Open(mysql.Open(dsn), gcfg)
		if err != nil {
			return nil, "", fmt.Errorf("open MySQL: %w", err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, "", err
		}
		maxOpen := cfg.MaxOpenConns
		if maxOpen <= 0 {
			maxOpen = 64
		}
		sqlDB.SetMaxOpenConns(maxOpen)
		sqlDB.SetMaxIdleConns(maxOpen)
		// Below MySQL's default wait_timeout (8h) and any proxy's idle cut.
		sqlDB.SetConnMaxLifetime(5 * time.Minute)
		return db, DialectMySQL, nil
	}
	dir := cfg.DataDir
	if dir == "" {
		dir = "data"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("create the data folder: %w", err)
	}
	path := filepath.Join(dir, "couponsvc.db")
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := gorm.Open(sqlite.Open(dsn), gcfg)
	if err != nil {
		return nil, "", fmt.Errorf("open SQLite at %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, "", err
	}
	// SQLite has one writer; one connection turns "database is locked" into a
	// short queue in the pool.
	sqlDB.SetMaxOpenConns(1)
	return db, DialectSQLite, nil
}

// normaliseMySQLDSN makes times come back as UTC time.Time values and
// RowsAffected count the rows matched.
func normaliseMySQLDSN(dsn string) (string, error) {
	c, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("COUPON_MYSQL_DSN: %w", err)
	}
	c.ParseTime = true
	c.Loc = time.UTC
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	if _, ok := c.Params["time_zone"]; !ok {
		c.Params["time_zone"] = "'+00:00'"
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Second
	}
	// Send each statement with its arguments in one round trip instead of
	// prepare, execute and close: the claim and redeem paths are round trips.
	c.InterpolateParams = true
	// RowsAffected counts the rows an UPDATE matched, as on SQLite, not only
	// those it changed: every guarded UPDATE reads it as "the guard held",
	// and one that changes nothing (a free line's return adding 0) must not
	// read as refused (docs/guarantees.md, "Rows affected means rows
	// matched"). Forced on: a DSN cannot turn it off.
	c.ClientFoundRows = true
	return c.FormatDSN(), nil
}

// SplitAddrs parses a comma list of host:port.
func SplitAddrs(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// runEmbeddedClock makes the embedded Redis's keys expire: miniredis counts
// time only when told, so without this, locks, idempotency keys and rate
// limits would never expire. It returns the function that stops it.
func runEmbeddedClock(m *miniredis.Miniredis) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// consecutiveIDs reports whether MySQL gives the rows of one multi-row INSERT
// consecutive ids, so that the ids GORM sets (the first id, plus one a row)
// are the rows' own: innodb_autoinc_lock_mode 0 or 1 (MariaDB's default) and
// an auto_increment_increment of 1. With mode 2 (MySQL 8's default) concurrent
// inserts interleave their ids. When it cannot tell, it says no: reading the
// ids back is always right, only slower.
func consecutiveIDs(db *gorm.DB, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var v struct {
		Mode      int64
		Increment int64
	}
	err := db.WithContext(ctx).Raw("SELECT @@innodb_autoinc_lock_mode AS mode, @@auto_increment_increment AS increment").
		Scan(&v).Error
	return err == nil && v.Mode < 2 && v.Increment == 1
}
