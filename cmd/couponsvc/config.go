package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
)

// config is everything couponsvc reads from its environment, parsed once.
type config struct {
	Listen         string
	DataDir        string
	Demo           bool
	Backend        core.BackendConfig
	BootstrapToken string
	IdempotencyTTL time.Duration
	// JobLease is how long a dead instance's job waits before another
	// instance resumes it (COUPON_JOB_LEASE, 1s..10m, default 30s).
	JobLease time.Duration
	// MaxCouponsPerOrder caps the coupons one order carries
	// (COUPON_MAX_COUPONS_PER_ORDER, 1..100, default 5).
	MaxCouponsPerOrder int
	ShutdownGrace      time.Duration
	// PprofListen, when set, serves net/http/pprof there; loopback only.
	PprofListen string
	// Limits are the abuse and resource limits of the HTTP server
	// (COUPON_RATE_USER_PER_MIN, COUPON_RATE_ADDR_PER_MIN,
	// COUPON_RATE_BAD_TOKEN_PER_MIN, COUPON_MAX_INFLIGHT_CLAIMS,
	// COUPON_REQUEST_TIMEOUT).
	Limits handlers.Limits
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the
	// client (COUPON_TRUSTED_PROXIES, a comma list of addresses or CIDRs).
	TrustedProxies []string
	// RedisPrefix starts every Redis key (COUPON_REDIS_PREFIX), so that
	// several deployments, or tests, can share one Redis.
	RedisPrefix string
	// SessionKey signs and encrypts the page cookies (COUPON_SESSION_KEY);
	// empty means the key kept in the data folder (embedded default) or in
	// the database (MySQL), see loadSessionKey.
	SessionKey []byte
	// Currency is the deployment's currency (COUPON_CURRENCY, an ISO 4217
	// code, USD by default): of campaigns and templates created without one,
	// of the rows older than currencies, and of the amounts the pages show.
	Currency string
	// WebhookAllowPrivate lets webhook endpoints be on loopback, private and
	// link-local addresses (COUPON_WEBHOOK_ALLOW_PRIVATE=1).
	WebhookAllowPrivate bool
	// WebhookLease is how long an instance holds a delivery it sends
	// (COUPON_WEBHOOK_LEASE, at least 15s, default 60s).
	WebhookLease time.Duration
	// Retention is how long events, deliveries and finished jobs are kept
	// (COUPON_RETENTION, such as 30d or 720h; at least 1h; default 30d).
	Retention time.Duration
	// Location is the deployment's time zone (COUPON_TIMEZONE, an IANA name,
	// UTC by default): forms, pages, reports and "valid N days" count days
	// and read and show times in it (docs/time.md).
	Location *time.Location
}

// loadConfig reads the COUPON_* variables (see README.md, Configuration).
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		Listen:         "127.0.0.1:8080",
		DataDir:        "data",
		Demo:           true,
		BootstrapToken: getenv("COUPON_BOOTSTRAP_TOKEN"),
		IdempotencyTTL: 24 * time.Hour,
		ShutdownGrace:  20 * time.Second,
	}
	if v := getenv("COUPON_LISTEN"); v != "" {
		c.Listen = v
	}
	if v := getenv("COUPON_PPROF_LISTEN"); v != "" {
		host, _, err := net.SplitHostPort(v)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return c, fmt.Errorf("COUPON_PPROF_LISTEN must be a loopback address such as 127.0.0.1:6060, not %q", v)
		}
		c.PprofListen = v
	}
	if v := getenv("COUPON_DATA_DIR"); v != "" {
		c.DataDir = v
	}
	demoSet := getenv("COUPON_DEMO") != ""
	if v := getenv("COUPON_DEMO"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("COUPON_DEMO must be 0 or 1, not %q", v)
		}
		c.Demo = b
	}
	if v := getenv("COUPON_SESSION_KEY"); v != "" {
		if len(v) < 32 {
			return c, fmt.Errorf("COUPON_SESSION_KEY must be at least 32 characters of randomness (e.g. `openssl rand -hex 32`)")
		}
		c.SessionKey = []byte(v)
	}
	c.Currency = core.DefaultConfig().Currency
	if v := getenv("COUPON_CURRENCY"); v != "" {
		if !core.ValidCurrency(v) {
			return c, fmt.Errorf("COUPON_CURRENCY must be an ISO 4217 code in upper case such as USD, EUR or JPY, not %q", v)
		}
		c.Currency = v
	}
	loc, err := loadLocation(getenv("COUPON_TIMEZONE"))
	if err != nil {
		return c, err
	}
	c.Location = loc
	if v := getenv("COUPON_IDEMPOTENCY_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return c, fmt.Errorf("COUPON_IDEMPOTENCY_TTL must be a duration of at least 1m, such as 24h, not %q", v)
		}
		c.IdempotencyTTL = d
	}
	if v := getenv("COUPON_JOB_LEASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 10*time.Minute {
			return c, fmt.Errorf("COUPON_JOB_LEASE must be a duration from 1s to 10m, such as 30s, not %q", v)
		}
		c.JobLease = d
	}
	if v := getenv("COUPON_MAX_COUPONS_PER_ORDER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return c, fmt.Errorf("COUPON_MAX_COUPONS_PER_ORDER must be a number from 1 to 100, not %q", v)
		}
		c.MaxCouponsPerOrder = n
	}
	if v := getenv("COUPON_REDIS_PREFIX"); v != "" {
		if len(v) > 64 || strings.ContainsAny(v, "{} \t\r\n") {
			return c, fmt.Errorf("COUPON_REDIS_PREFIX must be at most 64 characters without braces or spaces, not %q", v)
		}
		c.RedisPrefix = v
	}
	if err := loadEventConfig(getenv, &c); err != nil {
		return c, err
	}
	if t := c.BootstrapToken; t != "" && len(t) < 16 {
		return c, fmt.Errorf("COUPON_BOOTSTRAP_TOKEN must be at least 16 characters")
	}
	if err := loadLimits(getenv, &c); err != nil {
		return c, err
	}
	c.Backend = core.BackendConfig{
		MySQLDSN:   getenv("COUPON_MYSQL_DSN"),
		RedisAddr:  getenv("COUPON_REDIS_ADDR"),
		RedisAddrs: core.SplitAddrs(getenv("COUPON_REDIS_ADDRS")),
		DataDir:    c.DataDir,
	}
	if v := getenv("COUPON_DB_MAX_OPEN"); v != "" {
		// The MySQL pool's bound (idle connections kept alike); 64 when
		// unset (core.OpenDB). BENCHMARKS.md, "Performance round 3, second
		// pass", measured other sizes on a two-core machine.
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("COUPON_DB_MAX_OPEN must be a number from 1 to 1000, not %q", v)
		}
		c.Backend.MaxOpenConns = n
	}
	if c.Backend.RedisAddr != "" && len(c.Backend.RedisAddrs) > 0 {
		return c, fmt.Errorf("set COUPON_REDIS_ADDR or COUPON_REDIS_ADDRS, not both")
	}
	// The embedded default is one process on one machine; a shared Redis with
	// the embedded SQLite (or the reverse) would not be.
	if (c.Backend.MySQLDSN == "") != (c.Backend.RedisAddr == "" && len(c.Backend.RedisAddrs) == 0) {
		return c, fmt.Errorf("set both COUPON_MYSQL_DSN and COUPON_REDIS_ADDR(S), or neither for the embedded default")
	}
	// Demo users with printed passwords are for trying the embedded default;
	// a MySQL deployment gets them only when it asks.
	if !demoSet && !c.embedded() {
		c.Demo = false
	}
	return c, nil
}

// loadLocation reads COUPON_TIMEZONE: an IANA time zone name such as
// Europe/Paris; empty is UTC. The zone database is embedded (time/tzdata in
// main.go), so a name works on a machine without one.
func loadLocation(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	// "Local" would be the machine's zone, which differs between instances.
	if name == "Local" || strings.TrimSpace(name) != name {
		return nil, fmt.Errorf("COUPON_TIMEZONE must be an IANA time zone name such as Europe/Paris or America/New_York, not %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("COUPON_TIMEZONE must be an IANA time zone name such as Europe/Paris or America/New_York, not %q", name)
	}
	return loc, nil
}

// sessionKeyFile is where the embedded default keeps its session key.
const sessionKeyFile = "session.key"

// loadSessionKey returns COUPON_SESSION_KEY; else, on the embedded default,
// the key kept in the data folder, made at the first start (32 random bytes
// in hex, readable by the owner only); else, with MySQL, the key kept in the
// database, which every instance shares. Logins survive restarts either way.
func loadSessionKey(ctx context.Context, c config, svc *services.App) ([]byte, error) {
	if len(c.SessionKey) > 0 {
		return c.SessionKey, nil
	}
	if !c.embedded() {
		return svc.PageSecret(ctx)
	}
	path := filepath.Join(c.DataDir, sessionKeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		key, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(key) < 32 {
			return nil, fmt.Errorf("%s is damaged: delete it to make a new one (everyone is then logged out)", path)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the session key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create the data folder: %w", err)
	}
	// O_EXCL: two processes starting at once keep one key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return loadSessionKey(ctx, c, svc)
	}
	if err != nil {
		return nil, fmt.Errorf("write the session key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the session key: %w", err)
	}
	return key, f.Close()
}

// embedded reports whether the config runs on the embedded default.
func (c config) embedded() bool { return c.Backend.MySQLDSN == "" }

// Defaults of the limits: generous enough that a real shopper never meets
// them, tight enough that one bot cannot drain a flash sale alone.
const (
	defaultClaimsPerUser     = 20  // a minute
	defaultClaimsPerAddr     = 120 // a minute; an office or a mobile carrier's NAT shares one address
	defaultMaxInflightClaims = 512
	defaultBadTokensPerAddr  = 30 // a minute
	// Validation counts codes: a shop backend validates the carts of all its
	// shoppers with one token; one shopper re-validates a cart of up to 5
	// codes as it changes.
	defaultValidatesPerCaller = 1200 // codes a minute
	defaultValidatesPerUser   = 120  // codes a minute
)

// loadLimits reads the limits; 0 turns a rate limit or the in-flight bound off.
func loadLimits(getenv func(string) string, c *config) error {
	c.Limits = handlers.Limits{
		ClaimsPerUser:     defaultClaimsPerUser,
		ClaimsPerAddr:     defaultClaimsPerAddr,
		MaxInflightClaims: defaultMaxInflightClaims,
		BadTokensPerAddr:  defaultBadTokensPerAddr,
		RequestTimeout:    handlers.DefaultRequestTimeout,

		ValidatesPerCaller: defaultValidatesPerCaller,
		ValidatesPerUser:   defaultValidatesPerUser,
	}
	for name, dst := range map[string]*int{
		"COUPON_RATE_USER_PER_MIN":      &c.Limits.ClaimsPerUser,
		"COUPON_RATE_ADDR_PER_MIN":      &c.Limits.ClaimsPerAddr,
		"COUPON_MAX_INFLIGHT_CLAIMS":    &c.Limits.MaxInflightClaims,
		"COUPON_RATE_BAD_TOKEN_PER_MIN": &c.Limits.BadTokensPerAddr,

		"COUPON_RATE_VALIDATE_PER_MIN":      &c.Limits.ValidatesPerCaller,
		"COUPON_RATE_VALIDATE_USER_PER_MIN": &c.Limits.ValidatesPerUser,
	} {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 1_000_000 {
				return fmt.Errorf("%s must be a whole number from 0 (off) to 1000000, not %q", name, v)
			}
			*dst = n
		}
	}
	if v := getenv("COUPON_REQUEST_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 10*time.Minute {
			return fmt.Errorf("COUPON_REQUEST_TIMEOUT must be a duration from 1s to 10m, such as 10s, not %q", v)
		}
		c.Limits.RequestTimeout = d
	}
	if v := getenv("COUPON_TRUSTED_PROXIES"); v != "" {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			if _, err := netip.ParsePrefix(p); err != nil {
				if _, err := netip.ParseAddr(p); err != nil {
					return fmt.Errorf("COUPON_TRUSTED_PROXIES must be a comma list of IP addresses or CIDRs, not %q", p)
				}
			}
			c.TrustedProxies = append(c.TrustedProxies, p)
		}
	}
	return nil
}
