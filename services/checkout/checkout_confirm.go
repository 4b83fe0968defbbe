package checkout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"gorm.io/gorm"
)

// ConfirmRequest confirms an order's hold when its payment succeeded.
type ConfirmRequest struct {
	OrderID string
	// OrderAmountCents, when not 0, must equal the held amount.
	OrderAmountCents int64
	// Cart, when it has lines, must be the held cart (its hash): a held
	// allocation is confirmed as held, never re-priced.
	Cart    Cart
	Cashier string
	// cart is Cart priced, when it has lines (Confirm checked its hash).
	cart *pricing.Cart
}

// Confirm turns every coupon held by the order into a redemption (each still
// within its validity: a coupon past valid_until is lost), in one
// transaction under the coupons' locks: each coupon goes held → used with
// `UPDATE ... WHERE id=? AND status='held' AND order_id=? AND version=?` and
// gets its coupon_use_log row (unique (coupon_id, order_id)), and the
// order's hold goes held → confirmed by a guarded UPDATE of its row. Again →
// duplicate with the first answer.
//
// After the hold expired (released by the sweeper, or a coupon taken away),
// the late rule applies: when every coupon is still issued and valid (or
// still held by this order) and the order still has room for them, confirm
// takes them again (Late); otherwise it answers hold_expired naming the
// coupons lost, and confirms nothing; a hold past its time is then expired
// at once, giving its shared-code claims back (docs/shared-codes.md). A
// released hold is never confirmed.
//
// Errors: CodeInvalidRequest (field order_id), CodeNotFound (no hold),
// CodeIdempotencyMismatch (field order_amount_cents), CodeHoldExpired,
// CodeNotCombinable, CodeBusy, CodeUnavailable.
func (s *Checkout) Confirm(ctx context.Context, req ConfirmRequest) (*CheckoutResult, error) {
	if err := core.ValidateOrderID(req.OrderID); err != nil {
		return nil, err
	}
	o, found, err := s.ReadOrder(ctx, req.OrderID)
	if err != nil {
		return nil, err
	}
	if !found || o.HoldState == nil || o.HoldCodes == nil {
		return nil, models.Errorf(models.CodeNotFound, "order %s has no hold", req.OrderID)
	}
	if req.Cart.Lined() {
		cart, err := s.parseCart(req.Cart, req.OrderAmountCents)
		if err != nil {
			return nil, err
		}
		if !o.sameCart(orderCartOf(req.Cart, &cart)) {
			return nil, cartMismatch(req.OrderID)
		}
		req.cart = &cart
	} else if req.OrderAmountCents != 0 && req.OrderAmountCents != o.AmountCents {
		return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "order_amount_cents",
			Message: fmt.Sprintf("the hold of order %s is for %d cents", req.OrderID, o.AmountCents)}
	}
	codes := strings.Split(*o.HoldCodes, ",")
	p, err := s.readCoupons(ctx, codes)
	if err != nil {
		return nil, err
	}
	release, err := s.lockCoupons(ctx, p.coupons)
	if err != nil {
		return nil, err
	}
	defer release()
	var res *CheckoutResult
	read := &o
	err = retryCheckout(ctx, func() error {
		if read == nil {
			if p, err = s.readCoupons(ctx, codes); err != nil {
				return err
			}
			o, _, err = s.ReadOrder(ctx, req.OrderID)
			if err != nil {
				return err
			}
		}
		stale := read != nil
		read = nil
		res, err = s.confirmOnce(ctx, p, o, req, stale)
		return err
	})
	return res, err
}

// confirmOnce decides and writes a confirm on the order and coupons as read
// (p, o). stale says they were read before the coupons' locks were taken:
// a confirm then goes ahead on them, since the guards of its UPDATEs
// (hold_state, the coupons' status, order and version) refuse any change
// made since and the confirm is decided anew (errRetry); a refusal, or a
// late confirm that takes coupons again, is only decided on a read made
// under the locks.
func (s *Checkout) confirmOnce(ctx context.Context, p *priced, o CheckoutOrder, req ConfirmRequest, stale bool) (*CheckoutResult, error) {
	now := s.Clock().Truncate(time.Microsecond)
	if o.HoldState == nil {
		return nil, models.Errorf(models.CodeNotFound, "order %s has no hold", req.OrderID)
	}
	state := *o.HoldState
	switch state {
	case HoldConfirmed:
		res, err := s.holdAnswer(ctx, &o)
		if err != nil {
			return nil, err
		}
		res.Duplicate = true
		res.Late = confirmedLate(&o, p)
		return res, nil
	case HoldReleased:
		if stale {
			return nil, core.ErrRetry
		}
		return nil, models.Errorf(models.CodeHoldExpired, "the hold of order %s was released: hold the coupons again", req.OrderID)
	}
	// Each coupon is held by this order and still valid (kept), or issued
	// and valid (taken again), or lost: a coupon past its valid_until is
	// never redeemed, whatever its hold says (docs/checkout.md).
	var lost []string
	var retake []*models.Coupon
	for _, c := range p.coupons {
		switch {
		case c.Status == models.CouponHeld && c.OrderID != nil && *c.OrderID == req.OrderID &&
			!now.Before(c.ValidFrom) && now.Before(c.ValidUntil):
		case c.Status == models.CouponIssued && couponFits(c, "", "", now) == nil:
			retake = append(retake, c)
		default:
			lost = append(lost, c.Code)
		}
	}
	if stale && (len(lost) > 0 || len(retake) > 0) {
		// The order may have been read before the coupons changed: the
		// late rule and the refusal are decided on a read made under the
		// locks.
		return nil, core.ErrRetry
	}
	if len(lost) > 0 {
		if state == HoldHeld && o.HoldExpiresAt != nil && !now.Before(*o.HoldExpiresAt) {
			// The failed confirm ends the hold now rather than at the next
			// sweep: its shared-code claims go back at once.
			if _, err := s.expireOrder(ctx, req.OrderID, endOf(&o), now); err != nil {
				s.Log.Warn("expire a hold after a failed confirm; the sweeper will", "order", req.OrderID, "err", err)
			}
		}
		return nil, models.Errorf(models.CodeHoldExpired, "the hold of order %s expired and these coupons are no longer free or valid: %s; nothing was confirmed",
			req.OrderID, strings.Join(lost, ", "))
	}
	late := state == HoldExpired || len(retake) > 0 || (o.HoldExpiresAt != nil && !now.Before(*o.HoldExpiresAt))
	// An order with lines confirms the allocation stored with its hold; a
	// hold that expired gave it up, and the late confirm prices the
	// order's cart again and stores that.
	var a *allocation
	var err error
	if o.Lined() && state == HoldHeld && len(retake) == 0 && req.cart != nil {
		// Every coupon is held by the order, its stored rows with it: one
		// read, the lines being the request's (its hash is the order's).
		a, err = heldAllocation(s.DB.WithContext(ctx), &o, p.coupons, req.cart)
	} else {
		a, err = s.orderAllocation(s.DB.WithContext(ctx), &o, p, now)
	}
	if err != nil {
		return nil, core.DBError("order", err)
	}
	store := o.Lined() && state == HoldExpired
	actor := core.ActorName(req.Cashier)
	// payable is what the order pays once confirmed, said by the state the
	// transaction decided on (no read after it).
	payable := o.AmountCents - a.total
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// fits decides, on the order's state read under its row lock before
		// the coupons' writes, whether a confirm next to coupons redeemed
		// meanwhile fits (planFits, docs/checkout.md).
		fits := func() error {
			d, err := lockedDiscounts(tx, req.OrderID, now, p.ids())
			if err != nil {
				return err
			}
			payable = d.payableWith(a.total)
			return planFits(req.OrderID, d, a.total)
		}
		if len(retake) > 0 {
			oc := orderCart{currency: o.Currency, shipping: o.ShippingCents}
			if o.CartHash != nil {
				oc.hash = *o.CartHash
			}
			if err := s.takeRoom(tx, req.OrderID, stackingOf(p.templates), len(retake), o.AmountCents, oc, now,
				` AND hold_state = '`+state+`'`, `, hold_state = ?, discount_cents = ?`, HoldConfirmed, a.total); err != nil {
				return err
			}
			if err := fits(); err != nil {
				return err
			}
			if err := addOrderCoupons(tx, req.OrderID, retake, now); err != nil {
				return err
			}
		} else {
			// The usual confirm: the order carries this hold's coupons
			// only, no return, and an amount that covers their discounts.
			// The UPDATE's guard says so under the row's lock, which then
			// keeps it true to the commit: the discounts cannot sum over
			// the amount, and the order's discounts need no read.
			r := tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ?
				AND coupons = ? AND returned_cents = 0 AND amount_cents >= ?`,
				HoldConfirmed, now, req.OrderID, state, len(p.coupons), a.total)
			if r.Error != nil {
				return r.Error
			}
			checkOrder := store // a late confirm's allocation priced again
			if r.RowsAffected == 0 {
				// Other coupons or returns on the order: confirmed
				// under the plain guard, then checked.
				checkOrder = true
				r = tx.Exec(`UPDATE checkout_orders SET hold_state = ?, updated_at = ? WHERE order_id = ? AND hold_state = ?`,
					HoldConfirmed, now, req.OrderID, state)
				if r.Error != nil {
					return r.Error
				}
				if r.RowsAffected == 0 {
					return core.ErrRaced
				}
			}
			if checkOrder {
				if err := fits(); err != nil {
					return err
				}
			}
		}
		if s.Hooks.AfterConfirmOrder != nil {
			s.Hooks.AfterConfirmOrder(req.OrderID)
		}
		for i, c := range p.coupons {
			var r *gorm.DB
			if c.Status == models.CouponHeld {
				r = tx.Exec(`UPDATE user_coupons SET status = ?, used_at = ?, hold_expires_at = NULL, version = version + 1, updated_at = ?
					WHERE id = ? AND status = ? AND order_id = ? AND version = ?`,
					models.CouponUsed, now, now, c.ID, models.CouponHeld, req.OrderID, c.Version)
			} else {
				r = tx.Exec(`UPDATE user_coupons SET status = ?, order_id = ?, used_at = ?, hold_expires_at = NULL, version = version + 1, updated_at = ?
					WHERE id = ? AND status = ? AND version = ?`,
					models.CouponUsed, req.OrderID, now, now, c.ID, models.CouponIssued, c.Version)
			}
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				return core.ErrRaced
			}
			if store {
				if err := writeAllocation(tx, req.OrderID, c, a.shares[i], now, true, a.carry[c.ID]); err != nil {
					return err
				}
			}
			lg := models.UseLog{CouponID: c.ID, OrderID: req.OrderID, UserID: c.UserID, TemplateID: c.TemplateID,
				OrderAmountCents: o.AmountCents, DiscountCents: a.perCoupon[i], Cashier: actor, UsedAt: now}
			if !a.lined && a.shares[i] != nil {
				lg.Actions = core.EncodeUseLogActions(a.shares[i]) // docs/pricing.md, "Several actions"
			}
			if err := writeUseLog(tx, &lg); err != nil {
				return err
			}
			if err := s.Audit(tx, actor, "coupon.confirm", fmt.Sprintf("coupon:%d", c.ID),
				fmt.Sprintf("order=%s order_amount_cents=%d discount_cents=%d late=%t", req.OrderID, o.AmountCents, a.perCoupon[i], late)); err != nil {
				return err
			}
			ev := models.NewCouponEvent(c, p.templates[i].Currency)
			ev.Status, ev.OrderID, ev.OrderAmountCents, ev.DiscountCents, ev.Actor = models.CouponUsed, req.OrderID, o.AmountCents, a.perCoupon[i], actor
			ev.Lines, ev.ShippingDiscountCents = a.eventOf(i, c)
			if err := s.events.EmitEvent(tx, models.EventCouponRedeemed, ev); err != nil {
				return err
			}
		}
		if parkedIn(a.rows) {
			// The confirmed rows supersede those its coupons parked
			// (docs/returns.md, "A refund").
			if err := dropParked(tx, req.OrderID, p.ids()); err != nil {
				return err
			}
		}
		return nil
	})
	if err := checkoutTx(err); err != nil {
		return nil, err
	}
	o.HoldState = ptrTo(HoldConfirmed)
	o.DiscountCents = a.total
	res := holdAnswerOf(&o, s.orderCurrency(&o), p, a)
	res.Late = late
	res.PayableCents = payable
	return res, nil
}

// confirmedLate says a confirmed hold was confirmed late, for a replay to
// answer as the first confirm did: a confirm is late exactly when it ran at
// or past the hold's time (a hold expires only then), and it marked its
// coupons used at that time.
func confirmedLate(o *CheckoutOrder, p *priced) bool {
	if o.HoldExpiresAt == nil {
		return false
	}
	for _, c := range p.coupons {
		if c.UsedAt != nil && !c.UsedAt.Before(*o.HoldExpiresAt) {
			return true
		}
	}
	return false
}
