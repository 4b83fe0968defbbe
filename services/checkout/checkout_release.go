package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// ReleaseResult is the answer of Release.
type ReleaseResult struct {
	Duplicate bool
	Hold      *CheckoutResult
}

// Release gives the coupons held by the order back to their holders
// (held → issued) and ends the hold, in one transaction under the coupons'
// locks, guarded by the hold's state and each coupon's status and order.
// Again (or after the hold expired, whether or not the sweeper ran: a hold
// past its time is expired here first) → duplicate; after confirm →
// already_used (refund instead).
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound (no hold),
// CodeAlreadyUsed, CodeBusy, CodeUnavailable.
func (s *Checkout) Release(ctx context.Context, actor, orderID string) (*ReleaseResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	o, found, err := s.ReadOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if !found || o.HoldState == nil || o.HoldCodes == nil {
		return nil, models.Errorf(models.CodeNotFound, "order %s has no hold", orderID)
	}
	codes := strings.Split(*o.HoldCodes, ",")
	p, err := s.readCoupons(ctx, codes)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockCoupons(ctx, p.coupons)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var res *ReleaseResult
	err = retryCheckout(ctx, func() error {
		o, _, err := s.ReadOrder(ctx, orderID)
		if err != nil {
			return err
		}
		switch *o.HoldState {
		case HoldConfirmed:
			return models.Errorf(models.CodeAlreadyUsed, "the hold of order %s was confirmed: refund the order instead", orderID)
		case HoldReleased, HoldExpired:
			h, err := s.holdAnswer(ctx, &o)
			if err != nil {
				return err
			}
			res = &ReleaseResult{Duplicate: true, Hold: h}
			return nil
		}
		now := s.Clock().Truncate(time.Microsecond)
		if o.HoldExpiresAt != nil && !now.Before(*o.HoldExpiresAt) {
			// Past its time the hold is expired, swept or not
			// (docs/checkout.md): it ends now as the sweeper would end it,
			// and the release answers as after an expiry.
			if _, err := s.expireOrder(ctx, orderID, o.HoldParked, now); err != nil {
				return core.TxOutcome("holds", err)
			}
			return core.ErrRetry
		}
		var claims []models.Coupon
		err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// Guarded by what the hold parked as read: a hold that
			// replaced it meanwhile is released on a fresh read.
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ? AND hold_parked = ?`,
				HoldReleased, now, orderID, HoldHeld, o.HoldParked)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return core.ErrRaced
			}
			claims, err = s.freeHeld(tx, core.ActorName(actor), "coupon.release", models.EventCouponReleased, orderID, o.HoldParked, "", now)
			return err
		})
		if err := core.TxOutcome("order", err); err != nil {
			return err
		}
		s.returnClaims(ctx, claims)
		o.HoldState = ptrTo(HoldReleased)
		h, err := s.holdAnswer(ctx, &o)
		if err != nil {
			return err
		}
		res = &ReleaseResult{Hold: h}
		return nil
	})
	return res, err
}

// freeHeld gives back every coupon the order holds, with an audit entry
// and an event of type evType each (docs/events.md), and drops them from the order's room, inside tx: a coupon claimed
// with a shared code in this order gives its claim back (revoked, slot and
// ordinal set to NULL: the caller returns them to Redis after the commit,
// see returnClaims); any other goes back to its holder (held → issued).
// parked says the hold parked earlier rows of its coupons
// (checkout_orders.hold_parked): they are put back, and only then. extra
// narrows the guard (the expiry pass adds the time).
func (s *Checkout) freeHeld(tx *gorm.DB, actor, action, evType, orderID string, parked bool, extra string, now time.Time, extraArgs ...any) (claims []models.Coupon, err error) {
	var cs []models.Coupon
	q := tx.Where("status = ? AND order_id = ?", models.CouponHeld, orderID)
	if extra != "" {
		q = q.Where(extra, extraArgs...)
	}
	if err := q.Order("id").Find(&cs).Error; err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, nil
	}
	var ids, kept, given []int64
	for _, c := range cs {
		ids = append(ids, c.ID)
		if c.ClaimOrderID != nil && *c.ClaimOrderID == orderID {
			given = append(given, c.ID)
			claims = append(claims, c)
		} else {
			kept = append(kept, c.ID)
		}
	}
	// order_coupons before user_coupons: the lock order of docs/checkout.md.
	if err := core.DropOrderCoupons(tx, orderID, ids, now); err != nil {
		return nil, err
	}
	for _, step := range []struct {
		ids    []int64
		status string
		set    string
	}{
		{kept, models.CouponIssued, ""},
		{given, models.CouponRevoked, ", slot = NULL, user_ordinal = NULL"},
	} {
		if len(step.ids) == 0 {
			continue
		}
		r := tx.Exec(`UPDATE user_coupons SET status = ?`+step.set+`, order_id = NULL, hold_expires_at = NULL, version = version + 1, updated_at = ?
			WHERE id IN ? AND status = ? AND order_id = ?`, step.status, now, step.ids, models.CouponHeld, orderID)
		if r.Error != nil {
			return nil, r.Error
		}
		if r.RowsAffected != int64(len(step.ids)) {
			return nil, core.ErrRaced
		}
	}
	// A hold that ends gives up its allocation (an order with lines): a
	// new hold prices the order's cart again.
	if err := dropAllocation(tx, orderID, ids); err != nil {
		return nil, err
	}
	if parked {
		if err := restoreAllocation(tx, orderID, ids); err != nil {
			return nil, err
		}
	}
	currencies, err := core.TemplateCurrenciesIn(tx, cs)
	if err != nil {
		return nil, err
	}
	evs := make([]events.NewEvent, len(cs))
	for i, c := range cs {
		detail := "order=" + orderID
		ev := models.NewCouponEvent(&cs[i], currencies[c.TemplateID])
		ev.Status, ev.OrderID, ev.HoldExpiresAt, ev.Actor = models.CouponIssued, orderID, c.HoldExpiresAt, actor
		if c.ClaimOrderID != nil && *c.ClaimOrderID == orderID {
			detail += fmt.Sprintf(" user=%s claim_returned=true", c.UserID)
			ev.Status = models.CouponRevoked
		}
		if err := s.Audit(tx, actor, action, fmt.Sprintf("coupon:%d", c.ID), detail); err != nil {
			return nil, err
		}
		evs[i] = events.NewEvent{Typ: evType, Data: ev}
	}
	if err := s.events.EmitEvents(tx, evs); err != nil {
		return nil, err
	}
	return claims, nil
}

// returnClaims gives the slots, budget values and user ordinals of claims
// given back by a committed transaction to Redis (see returnStock).
func (s *Checkout) returnClaims(ctx context.Context, claims []models.Coupon) {
	for i := range claims {
		s.ReturnStock(ctx, &claims[i])
	}
}

// ExpireHolds releases the holds past their time (the sweeper runs it every
// SweepInterval): per order one transaction, guarded by the hold's state
// and time (`UPDATE checkout_orders ... WHERE hold_state='held' AND
// hold_expires_at <= now`) and each coupon's status and order, so that a
// confirm that committed first wins and one that comes after finds the hold
// expired (the late rule). Safe on several instances at once. Returns the
// holds this pass released. Errors: CodeUnavailable.
func (s *Checkout) ExpireHolds(ctx context.Context) (int, error) {
	now := s.Clock().Truncate(time.Microsecond)
	var orders []struct {
		OrderID    string
		HoldParked bool
	}
	if err := s.DB.WithContext(ctx).Model(&CheckoutOrder{}).Select("order_id, hold_parked").Where("hold_state = ? AND hold_expires_at <= ?", HoldHeld, now).
		Order("hold_expires_at").Limit(HoldExpiryBatch).Scan(&orders).Error; err != nil {
		return 0, core.DBError("holds", err)
	}
	n := 0
	for _, o := range orders {
		done, err := s.expireOrder(ctx, o.OrderID, o.HoldParked, now)
		if err != nil {
			if core.IsDeadlock(err) || errors.Is(err, core.ErrRaced) {
				continue // the next pass tries again
			}
			return n, core.DBError("holds", err)
		}
		if done {
			n++
		}
	}
	if n > 0 {
		s.Log.Info("released expired holds", "holds", n)
	}
	return n, nil
}

// expireOrder releases the order's hold when it is still held and past its
// time at now, and parked (checkout_orders.hold_parked) as the caller read
// it, by the guarded update ExpireHolds describes, and gives its
// shared-code claims back to Redis after the commit. done says this call
// released it; a hold read otherwise is left to a fresh read.
func (s *Checkout) expireOrder(ctx context.Context, orderID string, parked bool, now time.Time) (done bool, err error) {
	var claims []models.Coupon
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ? AND hold_expires_at <= ?
			AND hold_parked = ?`, HoldExpired, now, orderID, HoldHeld, now, parked)
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		done = true
		if s.Hooks.AfterExpireOrder != nil {
			s.Hooks.AfterExpireOrder(orderID)
		}
		claims, err = s.freeHeld(tx, "sweeper", "coupon.hold_expire", models.EventCouponHoldExpired, orderID, parked, "hold_expires_at <= ?", now, now)
		return err
	})
	if err != nil {
		return false, err
	}
	s.returnClaims(ctx, claims)
	return done, nil
}
