package checkout

import (
	"context"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// A hold past its time is expired to everyone at once, whether or not the
// sweeper has run (docs/checkout.md): reads judge its coupons free, and the
// first write that meets one ends the hold as the sweeper would.

// lapsedHold says whether c is held by a hold that is past its time at now.
func lapsedHold(c *models.Coupon, now time.Time) bool {
	return c.Status == models.CouponHeld && c.HoldExpiresAt != nil && !now.Before(*c.HoldExpiresAt)
}

// expireLapsed ends at once the hold that keeps c past its time, by the
// sweeper's guarded expiry of its order (expireOrder): a hold past its time
// is expired to everyone whether or not the sweeper ran (docs/checkout.md).
// It answers errRetry when c is to be read again (the hold ended now, or c
// changed meanwhile) and heldError when c is still held as read.
func (s *Checkout) expireLapsed(ctx context.Context, c *models.Coupon, now time.Time) error {
	if !lapsedHold(c, now) || c.OrderID == nil {
		return heldError(c)
	}
	// The order's row was not read: its hold parked nothing, as most
	// do, or else it did; whether it has lines is not known, so its line
	// discounts are dropped as if it had (holdEnd).
	done, err := s.expireOrder(ctx, *c.OrderID, holdEnd{lined: true}, now)
	if err == nil && !done {
		done, err = s.expireOrder(ctx, *c.OrderID, holdEnd{parked: true, lined: true}, now)
	}
	if err != nil {
		return core.TxOutcome("holds", err)
	}
	if done {
		return core.ErrRetry
	}
	cur, err := s.CouponByID(ctx, c.ID)
	if err != nil {
		return err
	}
	if cur.Version != c.Version {
		return core.ErrRetry
	}
	return heldError(c)
}

// endLapsedOrder ends the order's own hold when it is past its time at now,
// as the sweeper would (expireOrder), and answers core.ErrRetry for the
// request to be decided again on a fresh read: every path then sees the
// hold's coupons gone from the order at once (docs/checkout.md). Nil when
// the order has no such hold.
func (s *Checkout) endLapsedOrder(ctx context.Context, o *CheckoutOrder, now time.Time) error {
	if o.HoldState == nil || *o.HoldState != HoldHeld || o.HoldExpiresAt == nil || now.Before(*o.HoldExpiresAt) {
		return nil
	}
	if _, err := s.expireOrder(ctx, o.OrderID, endOf(o), now); err != nil {
		return core.TxOutcome("holds", err)
	}
	return core.ErrRetry
}

// RunSweeper settles stale reservations and releases expired holds every
// SweepInterval until ctx ends.
func (s *Checkout) RunSweeper(ctx context.Context) {
	s.RunEvery(ctx, s.cfg.SweepInterval, "sweep stale reservations", func(ctx context.Context) error {
		_, err := s.claims.Sweep(ctx)
		if _, herr := s.ExpireHolds(ctx); err == nil {
			err = herr
		}
		return err
	})
}
