// Package testenv gives integration tests their own backends: by default an
// SQLite file in a temporary folder and an in-process miniredis; with
// COUPON_TEST_MYSQL_DSN a fresh database on that MySQL/MariaDB server; with
// COUPON_TEST_REDIS_ADDR (or COUPON_TEST_REDIS_ADDRS, a Redis Cluster) that
// Redis under a key prefix of the test's own. Everything is removed at the end.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"golang.org/x/crypto/bcrypt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// BackendName names the backends the tests of this process run on.
func BackendName() string {
	name := "embedded"
	if os.Getenv("COUPON_TEST_MYSQL_DSN") != "" {
		name = "mariadb"
	}
	switch {
	case os.Getenv("COUPON_TEST_REDIS_ADDRS") != "":
		name += "+redis-cluster"
	case os.Getenv("COUPON_TEST_REDIS_ADDR") != "":
		name += "+redis"
	}
	return name
}

// Main runs a package's tests after printing the line CI looks for to prove
// that the suite ran on the backends it asked for. Use it in TestMain.
func Main(m *testing.M) int {
	fmt.Printf("COUPON_BACKEND=%s\n", BackendName())
	return m.Run()
}

// Logger is the logger of the tests' services: silent, or on stderr when
// COUPON_TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("COUPON_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// IsCluster reports whether the tests run on Redis Cluster.
func IsCluster() bool { return os.Getenv("COUPON_TEST_REDIS_ADDRS") != "" }

// Env is one test's backends and service.
type Env struct {
	Backends *core.Backends
	Service  *services.App
	Config   services.Config
	// Mini is the in-process Redis when the test runs on the embedded default.
	Mini *miniredis.Miniredis
	// Prefix starts every Redis key of this test.
	Prefix string
	// cleanups close the extra services before the backends close.
	cleanups []func()
}

// New opens fresh backends and a Service over them. cfg's zero fields take
// the defaults; its KeyPrefix is replaced by the test's own.
func New(t testing.TB, cfg services.Config) *Env {
	t.Helper()
	env := &Env{Prefix: "t" + randomHex(6) + ":coupon:"}
	b := &core.Backends{}
	var fresh Fresh // the database only: the Redis clients are New's own
	if dsn := os.Getenv("COUPON_TEST_MYSQL_DSN"); dsn != "" {
		fresh.MySQLDSN = freshMySQLDSN(t, dsn)
	}
	b.DB, b.Dialect = fresh.OpenDB(t, t.TempDir())
	switch {
	case os.Getenv("COUPON_TEST_REDIS_ADDRS") != "":
		b.Redis = redis.NewClusterClient(&redis.ClusterOptions{Addrs: core.SplitAddrs(os.Getenv("COUPON_TEST_REDIS_ADDRS")), PoolSize: 200})
	case os.Getenv("COUPON_TEST_REDIS_ADDR") != "":
		b.Redis = redis.NewClient(&redis.Options{Addr: os.Getenv("COUPON_TEST_REDIS_ADDR"), PoolSize: 200})
	default:
		env.Mini = miniredis.NewMiniRedis()
		if err := env.Mini.StartAddr("127.0.0.1:0"); err != nil {
			t.Fatalf("start miniredis: %v", err)
		}
		b.Embedded = env.Mini
		b.Redis = redis.NewClient(&redis.Options{Addr: env.Mini.Addr(), PoolSize: 200})
	}
	t.Cleanup(func() {
		for _, f := range env.cleanups {
			f()
		}
		deleteKeys(b.Redis, env.Prefix)
		b.Close()
	})
	cfg.KeyPrefix = env.Prefix
	if cfg.Logger == nil {
		cfg.Logger = Logger()
	}
	cfg = quickPasswords(cfg)
	env.Backends = b
	env.Config = cfg
	env.Service = services.New(b, cfg)
	t.Cleanup(env.Service.Close) // runs before the backends close
	return env
}

// NewService returns another Service over the same backends, as a second
// instance of couponsvc would be.
func (e *Env) NewService(cfg services.Config) *services.App {
	cfg.KeyPrefix = e.Prefix
	if cfg.Logger == nil {
		cfg.Logger = e.Config.Logger
	}
	svc := services.New(e.Backends, quickPasswords(cfg))
	e.cleanups = append(e.cleanups, svc.Close)
	return svc
}

// quickPasswords gives cfg bcrypt's lowest cost unless the test chose one:
// under the race detector a hash at the default cost takes seconds, and the
// suites log in thousands of times. What a login checks is the same.
func quickPasswords(cfg services.Config) services.Config {
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = bcrypt.MinCost
	}
	return cfg
}

// FlushRedis deletes every Redis key of this test, as a restart without
// persistence or a FLUSHALL would.
func (e *Env) FlushRedis(t testing.TB) {
	t.Helper()
	deleteKeys(e.Backends.Redis, e.Prefix)
}

// Keys lists this test's Redis keys (for assertions that a script left them as
// they were).
func (e *Env) Keys(t testing.TB) []string {
	t.Helper()
	var out []string
	var mu sync.Mutex // ForEachMaster scans the masters at once
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, e.Prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	ctx := context.Background()
	var err error
	switch c := e.Backends.Redis.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	}
	if err != nil {
		t.Fatalf("scan keys: %v", err)
	}
	return out
}

func deleteKeys(rdb redis.UniversalClient, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		_ = c.ForEachMaster(ctx, del)
	case *redis.Client:
		_ = del(ctx, c)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}
