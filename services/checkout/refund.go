package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// RefundRequest asks to undo the use of a coupon by an order (the order was
// cancelled).
type RefundRequest struct {
	// CouponCode names the coupon of a whole refund; it is not needed for a
	// partial return.
	CouponCode string
	OrderID    string
	// ReturnID and ReturnedAmountCents, when either is given, make the
	// request a partial return of the order (see ReturnPart).
	ReturnID            string
	ReturnedAmountCents int64
	// Lines, when given, make the request a return by line of the order
	// (see ReturnLines), under ReturnID.
	Lines []ReturnLine
	// Cashier is who refunds (the caller's name), kept in the audit log.
	Cashier string
}

// RefundResult is the answer to a refund. Duplicate is set for a replay of a
// refund already done. StockReturned tells that the coupon went back to the
// pool (policy recycle): it is revoked, and its slot, budget and user ordinal
// can be claimed again.
type RefundResult struct {
	Duplicate     bool
	Coupon        models.CouponView
	StockReturned bool
	// Return is the answer of a partial return (Coupon is then empty).
	Return *ReturnResult
}

// Refund undoes the redemption of a coupon by an order (see docs/flows.md).
//
// Under the coupon's lock, one transaction flips the coupon with
// `UPDATE ... WHERE id=? AND status='used' AND order_id=? AND version=?`
// (decided on RowsAffected), deletes its order_line_discounts rows on the
// order and marks the use log row undone (undo_flag=1, undone_at), with an
// audit entry of who refunded.
//
//   - Policy restore: the coupon is issued again to its holder. With
//     extend_on_refund its valid_until moves forward by the time the order
//     held it (used_at to now), so that the holder gets back exactly the
//     validity they had left when they used it.
//   - Policy recycle: the coupon becomes revoked and its slot and user ordinal
//     are set to NULL in the same transaction; after the commit
//     coupon_return.lua gives the slot, the budget value and the ordinal back
//     to Redis. A crash between the commit and the script is repaired by
//     reconciliation: the database already shows the slot free, so Redis holds
//     one coupon less than it could meanwhile, never one more. When Redis lost
//     the campaign's counters, the script does nothing and the next load
//     rebuilds them from the database: stock is never created from nothing.
//
// A coupon whose validity ended while it was used is, under restore without
// extend_on_refund, issued again but expired: it shows as "expired" and cannot
// be redeemed (its validity is not renewed by a refund); with
// extend_on_refund it gets its remaining validity back from now.
//
// A refund again for the same order (its use log row is undone) answers
// duplicate.
//
// With ReturnID or ReturnedAmountCents the request is a partial return of
// the order instead, answered in Return (see ReturnPart and its errors:
// CodeReturnExceedsOrder among them); with Lines, a return by line (see
// ReturnLines).
//
// Errors: CodeInvalidRequest (field coupon_code, order_id, return_id or
// returned_amount_cents), CodeNotFound, CodeNotRedeemed (the order does not
// hold the coupon), CodeReturnExceedsOrder, CodeBusy, CodeUnavailable.
func (s *Checkout) Refund(ctx context.Context, req RefundRequest) (*RefundResult, error) {
	if req.Lines != nil {
		if req.ReturnedAmountCents != 0 {
			return nil, models.Invalid("returned_amount_cents", "a return names lines or an amount, not both")
		}
		r, err := s.ReturnLines(ctx, req.Cashier, req.OrderID, req.ReturnID, req.Lines)
		if err != nil {
			return nil, err
		}
		return &RefundResult{Duplicate: r.Duplicate, Return: r}, nil
	}
	if req.ReturnID != "" || req.ReturnedAmountCents != 0 {
		r, err := s.ReturnPart(ctx, req.Cashier, req.OrderID, req.ReturnID, req.ReturnedAmountCents)
		if err != nil {
			return nil, err
		}
		return &RefundResult{Duplicate: r.Duplicate, Return: r}, nil
	}
	code, err := models.ParseCouponCode("coupon_code", req.CouponCode)
	if err != nil {
		return nil, err
	}
	if err := core.ValidateOrderID(req.OrderID); err != nil {
		return nil, err
	}
	c, err := s.CouponByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	t, err := s.Template(ctx, c.TemplateID)
	if err != nil {
		return nil, err
	}
	var res *RefundResult
	err = s.ChangeCoupon(ctx, c, func(cur *models.Coupon) (returned *models.Coupon, err error) {
		res, returned, err = s.refundOnce(ctx, t, cur, req)
		return returned, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// refundOnce decides a refund on the coupon as just read and, when it is to be
// done, writes it. returned is the coupon as it was before the refund when its
// stock is to be given back to Redis after the commit.
func (s *Checkout) refundOnce(ctx context.Context, t *models.Template, c *models.Coupon, req RefundRequest) (res *RefundResult, returned *models.Coupon, err error) {
	now := s.Clock().Truncate(time.Microsecond)
	recycle := t.RefundPolicy == models.RefundRecycle
	if c.Status != models.CouponUsed || c.OrderID == nil || *c.OrderID != req.OrderID {
		lg, found, err := s.UseLog(ctx, c.ID, req.OrderID)
		switch {
		case err != nil:
			return nil, nil, err
		case found && lg.UndoFlag:
			return &RefundResult{Duplicate: true, Coupon: c.View(now, t.Currency), StockReturned: recycle}, nil, nil
		case found:
			// A live row for this order while the coupon does not show it: a
			// redemption committed between the two reads. Decide again.
			return nil, nil, core.ErrRetry
		}
		return nil, nil, notRedeemed(c, req.OrderID)
	}

	before := *c
	held := time.Duration(0)
	if c.UsedAt != nil && now.After(*c.UsedAt) {
		held = now.Sub(*c.UsedAt)
	}
	after := *c
	after.OrderID, after.UsedAt = nil, nil
	after.Version++
	after.UpdatedAt = now
	var set string
	var args []any
	switch {
	case recycle:
		after.Status, after.Slot, after.UserOrdinal = models.CouponRevoked, nil, nil
		set = "status = ?, slot = NULL, user_ordinal = NULL"
		args = []any{models.CouponRevoked}
	case t.ExtendOnRefund:
		after.Status = models.CouponIssued
		after.ValidUntil = c.ValidUntil.Add(held)
		set = "status = ?, valid_until = ?"
		args = []any{models.CouponIssued, after.ValidUntil}
	default:
		after.Status = models.CouponIssued
		set = "status = ?"
		args = []any{models.CouponIssued}
	}
	args = append(args, now, c.ID, models.CouponUsed, req.OrderID, c.Version)
	detail := fmt.Sprintf("order=%s policy=%s", req.OrderID, t.RefundPolicy)
	if !recycle && t.ExtendOnRefund {
		detail += fmt.Sprintf(" extended_by=%s valid_until=%s", held.Round(time.Second), core.FormatTime(after.ValidUntil))
	}
	start := time.Now()
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The coupon leaves the order: its room there is given back.
		if err := core.DropOrderCoupons(tx, req.OrderID, []int64{c.ID}, now); err != nil {
			return err
		}
		res := tx.Exec(`UPDATE user_coupons SET `+set+`, order_id = NULL, used_at = NULL, version = version + 1, updated_at = ?
			WHERE id = ? AND status = ? AND order_id = ? AND version = ?`, args...)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return core.ErrRaced
		}
		// Its line discounts stay: they were part of what the shopper paid
		// for the lines, which a later return reads; the same coupon
		// redeemed again on the order replaces them (writeAllocation;
		// docs/returns.md, "A refund").
		var lg models.UseLog
		if err := tx.Where("coupon_id = ? AND order_id = ?", c.ID, req.OrderID).Limit(1).Find(&lg).Error; err != nil {
			return err
		}
		if lg.ID != 0 {
			detail += fmt.Sprintf(" order_amount_cents=%d discount_cents=%d redeemed_by=%q", lg.OrderAmountCents, lg.DiscountCents, lg.Cashier)
		}
		res = tx.Exec(`UPDATE coupon_use_log SET undo_flag = ?, undone_at = ? WHERE coupon_id = ? AND order_id = ? AND undo_flag = ?`,
			true, now, c.ID, req.OrderID, false)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			// Every redemption writes its row in the transaction that marks
			// the coupon used; a missing row is a repair by hand. The refund
			// still frees the coupon: there is no live row to keep.
			s.Log.Warn("refund of a used coupon without a live use log row", "coupon", c.ID, "order", req.OrderID)
		}
		if err := s.Audit(tx, core.ActorName(req.Cashier), "coupon.refund", fmt.Sprintf("coupon:%d", c.ID), detail); err != nil {
			return err
		}
		ev := models.NewCouponEvent(&after, t.Currency)
		ev.OrderID, ev.StockReturned, ev.Actor = req.OrderID, recycle, core.ActorName(req.Cashier)
		ev.OrderAmountCents, ev.DiscountCents = lg.OrderAmountCents, lg.DiscountCents
		return s.events.EmitEvent(tx, models.EventCouponRefunded, ev)
	})
	core.Observe(ctx, s.Meter.DBSeconds.WithLabelValues("refund"), "refund", start)
	if err := core.TxOutcome("coupon", err); err != nil {
		return nil, nil, err
	}
	res = &RefundResult{Coupon: after.View(now, t.Currency), StockReturned: recycle}
	if recycle {
		returned = &before
	}
	return res, returned, nil
}

// notRedeemed says why an order cannot refund a coupon.
func notRedeemed(c *models.Coupon, orderID string) error {
	switch {
	case c.Status == models.CouponUsed && c.OrderID != nil:
		return models.Errorf(models.CodeNotRedeemed, "order %s does not hold this coupon: order %s does", orderID, *c.OrderID)
	case c.Status == models.CouponRevoked:
		return models.Errorf(models.CodeNotRedeemed, "order %s does not hold this coupon: it is revoked", orderID)
	}
	return models.Errorf(models.CodeNotRedeemed, "order %s does not hold this coupon: it is not redeemed", orderID)
}
