// Package claims owns the claim of a coupon: the Lua gate in Redis, the
// idempotency of requests, the batched coupon writer, the wallet, the
// sold-out fast path and the sweeper of pending reservations
// (docs/flows.md, docs/soldout.md).
package claims

import (
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"
)

// Config tunes the claim path. Zero values take the defaults of
// DefaultConfig.
type Config struct {
	// IdempotencyTTL is how long Redis remembers a claim's idempotency key; the
	// database's unique request_id remembers it for ever.
	IdempotencyTTL time.Duration
	// PendingTimeout is the age after which the sweeper resolves a reservation
	// that was neither confirmed nor given back. It must stay well above
	// core's DBTimeout.
	PendingTimeout time.Duration
	// CouponWriters is how many batches of coupon rows are written at once
	// (default 4; 1 on SQLite, which has one writer); CouponBatch bounds a
	// batch's rows (100). Fewer writers make bigger batches, so fewer
	// commits: on the benchmark machine 4 wrote 15% more claims a second
	// than 8.
	CouponWriters, CouponBatch int
}

// DefaultConfig returns the configuration used when nothing is set
// (CouponWriters then depends on the database: see withDefaults).
func DefaultConfig() Config {
	return Config{
		IdempotencyTTL: 24 * time.Hour,
		PendingTimeout: 30 * time.Second,
		CouponWriters:  4,
		CouponBatch:    100,
	}
}

func (c Config) withDefaults(dialect string) Config {
	d := DefaultConfig()
	core.PositiveOr(&c.IdempotencyTTL, d.IdempotencyTTL)
	core.PositiveOr(&c.PendingTimeout, d.PendingTimeout)
	if dialect == core.DialectSQLite {
		c.CouponWriters = 1
	} else if c.CouponWriters <= 0 {
		c.CouponWriters = d.CouponWriters
	}
	core.PositiveOr(&c.CouponBatch, d.CouponBatch)
	return c
}

// Claims issues coupons to users.
type Claims struct {
	*core.Core
	cfg    Config
	events *events.Events
	writer *couponWriter
}

// New returns the claims aggregate over c; its claims emit through ev.
// Close it after the last request.
func New(c *core.Core, ev *events.Events, cfg Config) *Claims {
	cfg = cfg.withDefaults(c.Dialect)
	s := &Claims{Core: c, cfg: cfg, events: ev}
	s.writer = newCouponWriter(c.DB, c.RereadIDs, cfg.CouponWriters, cfg.CouponBatch, c.Cfg.DBTimeout,
		c.Cfg.NewCode, func(n int) { s.Meter.CouponBatchRows.Observe(float64(n)) }, s.emitClaimEvents)
	s.writer.beforeWrite = func() {
		if f := c.Hooks.BeforeCouponWrite; f != nil {
			f()
		}
	}
	return s
}
