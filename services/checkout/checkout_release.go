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
	codes := *o.HoldCodes
	p, err := s.readCoupons(ctx, strings.Split(codes, ","))
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockCoupons(ctx, p.coupons)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The order is read once: what the release decides on it, the guarded
	// UPDATE of its row holds to under the row lock (its state, what the
	// hold parked, whether it has lines), and a row that changed meanwhile
	// matches nothing and is read afresh (docs/statements.md, "Release and
	// expiry"). The hold's coupons read above answer for the same codes.
	answer := func(o *CheckoutOrder) (*CheckoutResult, error) {
		if o.HoldCodes != nil && *o.HoldCodes == codes {
			return s.holdAnswerOn(ctx, o, p)
		}
		return s.holdAnswer(ctx, o)
	}
	fresh := true
	var res *ReleaseResult
	err = retryCheckout(ctx, func() error {
		if !fresh {
			if o, _, err = s.ReadOrder(ctx, orderID); err != nil {
				return err
			}
		}
		fresh = false
		switch *o.HoldState {
		case HoldConfirmed:
			return models.Errorf(models.CodeAlreadyUsed, "the hold of order %s was confirmed: refund the order instead", orderID)
		case HoldReleased, HoldExpired:
			h, err := answer(&o)
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
			if _, err := s.expireOrder(ctx, orderID, endOf(&o), now); err != nil {
				return core.TxOutcome("holds", err)
			}
			return core.ErrRetry
		}
		end := endOf(&o)
		if s.Hooks.BeforeReleaseOrder != nil {
			s.Hooks.BeforeReleaseOrder(orderID)
		}
		var claims []models.Coupon
		err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			// Guarded by the order as read: a hold that ended meanwhile
			// (or was replaced by one that parked otherwise, or a cart
			// given to a row without one) matches nothing and is decided
			// again on a fresh read.
			guard, args := end.guard()
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ?`+guard,
				append([]any{HoldReleased, now, orderID, HoldHeld}, args...)...)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return core.ErrRaced
			}
			claims, err = s.freeHeld(tx, core.ActorName(actor), "coupon.release", models.EventCouponReleased, orderID, end, "", now)
			return err
		})
		if err := core.TxOutcome("order", err); err != nil {
			return err
		}
		s.returnClaims(ctx, claims)
		o.HoldState = ptrTo(HoldReleased)
		h, err := answer(&o)
		if err != nil {
			return err
		}
		res = &ReleaseResult{Hold: h}
		return nil
	})
	return res, err
}

// holdEnd is what ending a hold needs to know of its order, read with it
// and held to by the guarded UPDATE of its row (guard) that starts the
// transaction: whether the hold parked earlier rows of its coupons
// (checkout_orders.hold_parked: then they are put back, and only then),
// and whether the order may have lines (an amount-only order has no line
// discounts to drop). docs/statements.md, "Release and expiry".
type holdEnd struct {
	parked bool
	// lined is true also when the order's row was not read (an expiry
	// met from a coupon): the DELETE of line discounts is then sent and
	// the guard says nothing of the cart.
	lined bool
}

// endOf is the holdEnd of an order read.
func endOf(o *CheckoutOrder) holdEnd {
	return holdEnd{parked: o.HoldParked, lined: o.Lined()}
}

// guard is the condition the UPDATE of the order's row that ends the hold
// adds, with its arguments: the row still says what e says. An order read
// without lines must still have none (cart_hash is set on a row with no
// amount yet, takeRoom).
func (e holdEnd) guard() (string, []any) {
	if e.lined {
		return ` AND hold_parked = ?`, []any{e.parked}
	}
	return ` AND hold_parked = ? AND (cart_hash IS NULL OR cart_hash = '')`, []any{e.parked}
}

// freeHeld gives back every coupon the order holds, with an audit entry
// and an event of type evType each (docs/events.md), and drops them from
// the order's room, inside tx, after the guarded UPDATE of the order's
// row took its lock: a coupon claimed with a shared code in this order
// gives its claim back (revoked, slot and ordinal set to NULL: the caller
// returns them to Redis after the commit, see returnClaims); any other
// goes back to its holder (held → issued). end says what the guard held
// the order to: rows parked are put back and line discounts dropped only
// when it may have some. extra narrows the guard (the expiry pass adds
// the time).
func (s *Checkout) freeHeld(tx *gorm.DB, actor, action, evType, orderID string, end holdEnd, extra string, now time.Time, extraArgs ...any) (claims []models.Coupon, err error) {
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
	// The caller's guarded UPDATE holds the order's row lock already.
	if err := core.DropLockedOrderCoupons(tx, orderID, ids, now); err != nil {
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
	// new hold prices the order's cart again. An amount-only order has
	// none (the guard held it so).
	if end.lined {
		if err := dropAllocation(tx, orderID, ids); err != nil {
			return nil, err
		}
	}
	if end.parked {
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
	var orders []CheckoutOrder
	if err := s.DB.WithContext(ctx).Model(&CheckoutOrder{}).Select("order_id, hold_parked, cart_hash").Where("hold_state = ? AND hold_expires_at <= ?", HoldHeld, now).
		Order("hold_expires_at").Limit(HoldExpiryBatch).Scan(&orders).Error; err != nil {
		return 0, core.DBError("holds", err)
	}
	n := 0
	for _, o := range orders {
		done, err := s.expireOrder(ctx, o.OrderID, endOf(&o), now)
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
// time at now, and as the caller read it (end: what it parked, whether it
// has lines), by the guarded update ExpireHolds describes, and gives its
// shared-code claims back to Redis after the commit. done says this call
// released it; a hold read otherwise is left to a fresh read.
func (s *Checkout) expireOrder(ctx context.Context, orderID string, end holdEnd, now time.Time) (done bool, err error) {
	var claims []models.Coupon
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		guard, args := end.guard()
		r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ? AND hold_expires_at <= ?`+guard,
			append([]any{HoldExpired, now, orderID, HoldHeld, now}, args...)...)
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		done = true
		if s.Hooks.AfterExpireOrder != nil {
			s.Hooks.AfterExpireOrder(orderID)
		}
		claims, err = s.freeHeld(tx, "sweeper", "coupon.hold_expire", models.EventCouponHoldExpired, orderID, end, "hold_expires_at <= ?", now, now)
		return err
	})
	if err != nil {
		return false, err
	}
	s.returnClaims(ctx, claims)
	return done, nil
}
