// Package checkout owns what happens to coupons at the till: validation,
// holds and their confirmation, release and expiry, the one-step
// redemption (also of typed shared codes), refunds, returns, the cashier's
// checks and the offers a user can use (docs/checkout.md,
// docs/shared-codes.md).
package checkout

import (
	"time"

	"github.com/couponsvc/couponsvc/models/eligibility"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"
)

// Config tunes checkout. Zero values take the defaults of DefaultConfig.
type Config struct {
	// MaxCouponsPerOrder caps the coupons one order carries (held or used;
	// DefaultMaxCouponsPerOrder by default).
	MaxCouponsPerOrder int
	// SweepInterval is how often the sweeper runs (RunSweeper: pending
	// reservations and lapsed holds).
	SweepInterval time.Duration
}

// DefaultConfig returns the configuration used when nothing is set.
func DefaultConfig() Config {
	return Config{MaxCouponsPerOrder: DefaultMaxCouponsPerOrder, SweepInterval: 5 * time.Second}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	core.PositiveOr(&c.MaxCouponsPerOrder, d.MaxCouponsPerOrder)
	core.PositiveOr(&c.SweepInterval, d.SweepInterval)
	return c
}

// Checkout validates, holds, confirms, redeems, refunds and returns
// coupons of orders.
type Checkout struct {
	*core.Core
	cfg    Config
	claims *claims.Claims
	events *events.Events
	// rules caches the compiled eligibility rule of each template.
	rules eligibility.Cache
}

// New returns the checkout aggregate over c; typed shared codes are claimed
// through cl, and its changes emit through ev.
func New(c *core.Core, cl *claims.Claims, ev *events.Events, cfg Config) *Checkout {
	return &Checkout{Core: c, cfg: cfg.withDefaults(), claims: cl, events: ev}
}
