package main

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"couponsvc/services"
)

// config is everything couponsvc reads from its environment, parsed once.
type config struct {
	Listen         string
	DataDir        string
	Demo           bool
	Backend        services.BackendConfig
	BootstrapToken string
	IdempotencyTTL time.Duration
	ShutdownGrace  time.Duration
	// PprofListen, when set, serves net/http/pprof there; loopback only.
	PprofListen string
}

// loadConfig reads the COUPON_* variables (SPEC §7).
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
	if v := getenv("COUPON_DEMO"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("COUPON_DEMO must be 0 or 1, not %q", v)
		}
		c.Demo = b
	}
	if v := getenv("COUPON_IDEMPOTENCY_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return c, fmt.Errorf("COUPON_IDEMPOTENCY_TTL must be a duration of at least 1m, such as 24h, not %q", v)
		}
		c.IdempotencyTTL = d
	}
	if t := c.BootstrapToken; t != "" && len(t) < 16 {
		return c, fmt.Errorf("COUPON_BOOTSTRAP_TOKEN must be at least 16 characters")
	}
	c.Backend = services.BackendConfig{
		MySQLDSN:   getenv("COUPON_MYSQL_DSN"),
		RedisAddr:  getenv("COUPON_REDIS_ADDR"),
		RedisAddrs: services.SplitAddrs(getenv("COUPON_REDIS_ADDRS")),
		DataDir:    c.DataDir,
	}
	if c.Backend.RedisAddr != "" && len(c.Backend.RedisAddrs) > 0 {
		return c, fmt.Errorf("set COUPON_REDIS_ADDR or COUPON_REDIS_ADDRS, not both")
	}
	// The embedded default is one process on one machine; a shared Redis with
	// the embedded SQLite (or the reverse) would not be.
	if (c.Backend.MySQLDSN == "") != (c.Backend.RedisAddr == "" && len(c.Backend.RedisAddrs) == 0) {
		return c, fmt.Errorf("set both COUPON_MYSQL_DSN and COUPON_REDIS_ADDR(S), or neither for the embedded default")
	}
	return c, nil
}

// embedded reports whether the config runs on the embedded default.
func (c config) embedded() bool { return c.Backend.MySQLDSN == "" }
