package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"couponsvc/models"

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
// Again (or after the hold expired) → duplicate; after confirm →
// already_used (refund instead).
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound (no hold),
// CodeAlreadyUsed, CodeBusy, CodeUnavailable.
func (s *Service) Release(ctx context.Context, actor, orderID string) (*ReleaseResult, error) {
	if err := validateOrderID(orderID); err != nil {
		return nil, err
	}
	o, found, err := s.readOrder(ctx, orderID)
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
		o, _, err := s.readOrder(ctx, orderID)
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
		now := s.now().Truncate(time.Microsecond)
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ?`,
				HoldReleased, now, orderID, HoldHeld)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return errRaced
			}
			return s.freeHeld(tx, actorName(actor), "coupon.release", orderID, "", now)
		})
		if err := txOutcome("order", err); err != nil {
			return err
		}
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

// freeHeld gives back every coupon the order holds (held → issued), with
// an audit entry each, and drops them from the order's room, inside tx.
// extra narrows the guard (the expiry pass adds the time).
func (s *Service) freeHeld(tx *gorm.DB, actor, action, orderID, extra string, now time.Time, extraArgs ...any) error {
	var ids []int64
	q := tx.Model(&models.Coupon{}).Where("status = ? AND order_id = ?", models.CouponHeld, orderID)
	if extra != "" {
		q = q.Where(extra, extraArgs...)
	}
	if err := q.Order("id").Pluck("id", &ids).Error; err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	// order_coupons before user_coupons: the lock order of docs/checkout.md.
	if err := dropOrderCoupons(tx, orderID, ids, now); err != nil {
		return err
	}
	r := tx.Exec(`UPDATE user_coupons SET status = ?, order_id = NULL, hold_expires_at = NULL, version = version + 1, updated_at = ?
		WHERE id IN ? AND status = ? AND order_id = ?`, models.CouponIssued, now, ids, models.CouponHeld, orderID)
	if r.Error != nil {
		return r.Error
	}
	if r.RowsAffected != int64(len(ids)) {
		return errRaced
	}
	for _, id := range ids {
		if err := s.audit(tx, actor, action, fmt.Sprintf("coupon:%d", id), "order="+orderID); err != nil {
			return err
		}
	}
	return nil
}

// ExpireHolds releases the holds past their time (the sweeper runs it every
// SweepInterval): per order one transaction, guarded by the hold's state
// and time (`UPDATE checkout_orders ... WHERE hold_state='held' AND
// hold_expires_at <= now`) and each coupon's status and order, so that a
// confirm that committed first wins and one that comes after finds the hold
// expired (the late rule). Safe on several instances at once. Returns the
// holds this pass released. Errors: CodeUnavailable.
func (s *Service) ExpireHolds(ctx context.Context) (int, error) {
	now := s.now().Truncate(time.Microsecond)
	var orders []string
	if err := s.db.WithContext(ctx).Model(&checkoutOrder{}).Where("hold_state = ? AND hold_expires_at <= ?", HoldHeld, now).
		Order("hold_expires_at").Limit(holdExpiryBatch).Pluck("order_id", &orders).Error; err != nil {
		return 0, dbError("holds", err)
	}
	n := 0
	for _, orderID := range orders {
		done := false
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ? AND hold_expires_at <= ?`,
				HoldExpired, now, orderID, HoldHeld, now)
			if r.Error != nil || r.RowsAffected == 0 {
				return r.Error
			}
			done = true
			if s.hooks.afterExpireOrder != nil {
				s.hooks.afterExpireOrder(orderID)
			}
			return s.freeHeld(tx, "sweeper", "coupon.hold_expire", orderID, "hold_expires_at <= ?", now, now)
		})
		if err != nil {
			if isDeadlock(err) || errors.Is(err, errRaced) {
				continue // the next pass tries again
			}
			return n, dbError("holds", err)
		}
		if done {
			n++
		}
	}
	if n > 0 {
		s.log.Info("released expired holds", "holds", n)
	}
	return n, nil
}
