package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// orderReturn is one partial return of an order (table order_returns).
type orderReturn struct {
	ID                  int64 `gorm:"primaryKey"`
	OrderID             string
	ReturnID            string
	ReturnedAmountCents int64
	KeptAmountCents     int64
	DiscountKeptCents   int64
	ClawbackCents       int64
	FullRefund          bool
	// ReturnLines is the answer of a return by line (returnAnswer, JSON);
	// nil for a return of an amount.
	ReturnLines *string
	CreatedAt   time.Time
}

func (orderReturn) TableName() string { return "order_returns" }

// result is the answer the return gave, from its row.
func (r *orderReturn) result() *ReturnResult {
	return &ReturnResult{KeptAmountCents: r.KeptAmountCents, DiscountKeptCents: r.DiscountKeptCents,
		ClawbackCents: r.ClawbackCents, FullRefund: r.FullRefund}
}

// ReturnResult is the answer to a partial return.
type ReturnResult struct {
	Duplicate bool
	// Currency is the order's, of every amount.
	Currency string
	// KeptAmountCents is the order amount less every return so far;
	// DiscountKeptCents the discount its coupons give on it (planAmountReturn);
	// ClawbackCents the discount given before this return less that.
	KeptAmountCents, DiscountKeptCents, ClawbackCents int64
	// FullRefund tells that this return completed the order: its coupons
	// were refunded by their templates' policy (Refunds).
	FullRefund bool
	Refunds    []*RefundResult
	// Lined marks a return by line (ReturnLines): Lines are the units
	// returned, in the request's order, RefundCents their sum of what the
	// shopper gets back, DiscountReturnedCents the discount given back to
	// the campaigns (the lines' and, when the return completes the order,
	// ShippingDiscountReturnedCents, the coupons' discount of the shipping).
	// ClawbackCents is DiscountReturnedCents, DiscountKeptCents the
	// discount the order's coupons still give.
	Lined                         bool
	Lines                         []models.ReturnedLine
	RefundCents                   int64
	DiscountReturnedCents         int64
	ShippingDiscountReturnedCents int64
}

// ReturnPart records a partial return of an order: returned cents of its
// amount, under the caller's return id. In one transaction the order's row
// adds the return to its returned total by a guarded UPDATE
// (`... WHERE returned_cents + ? <= amount_cents`, and a CHECK backs it), so
// that concurrent returns never sum over the order; the order's used coupons
// are re-priced (services/pricing) on the kept amount (a coupon whose minimum
// the kept amount no longer meets keeps no discount) and their use log rows
// take the new discounts; the return is kept once (unique (order_id,
// return_id)). The return that brings the kept amount to 0 is a full refund:
// after its commit each coupon is refunded as Refund does (restore or
// recycle by its template). The same return_id again → duplicate with the
// first answer (and a full refund cut short by a crash is finished then);
// with another amount → idempotency_mismatch. Each return writes an
// order.returned event in its transaction (docs/events.md).
//
// Errors: CodeInvalidRequest (field order_id, return_id or
// returned_amount_cents), CodeNotRedeemed (the order has no used coupons),
// CodeReturnExceedsOrder, CodeIdempotencyMismatch (field
// returned_amount_cents), CodeBusy, CodeUnavailable.
func (s *Checkout) ReturnPart(ctx context.Context, actor, orderID, returnID string, returned int64) (*ReturnResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	if err := models.ValidateOrderID("return_id", returnID); err != nil {
		return nil, err
	}
	if returned < 1 || returned > models.MaxMoneyCents {
		return nil, models.Invalid("returned_amount_cents", "must be between 1 and %d", int64(models.MaxMoneyCents))
	}
	return s.runReturn(ctx, actor, orderID, func() (*ReturnResult, error) {
		return s.returnOnce(ctx, core.ActorName(actor), orderID, returnID, returned)
	})
}

// runReturn runs one return (by amount or by line) until it is decided,
// then, when it completed the order, refunds the order's coupons by their
// templates' policy.
func (s *Checkout) runReturn(ctx context.Context, actor, orderID string, once func() (*ReturnResult, error)) (*ReturnResult, error) {
	var res *ReturnResult
	err := retryCheckout(ctx, func() error {
		var err error
		res, err = once()
		return err
	})
	if err != nil {
		return nil, err
	}
	if res.Currency == "" { // a replay, answered from the return's row
		o, _, err := s.ReadOrder(ctx, orderID)
		if err != nil {
			return nil, err
		}
		res.Currency = s.orderCurrency(&o)
	}
	if res.FullRefund {
		if h := s.Hooks.AfterReturnCommit; h != nil && h(orderID) {
			return nil, errCutShort
		}
		if err := s.refundOrder(ctx, actor, orderID, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (s *Checkout) returnOnce(ctx context.Context, actor, orderID, returnID string, returned int64) (*ReturnResult, error) {
	var prev orderReturn
	if err := s.DB.WithContext(ctx).Where("order_id = ? AND return_id = ?", orderID, returnID).Limit(1).Find(&prev).Error; err != nil {
		return nil, core.DBError("return", err)
	}
	if prev.ID != 0 {
		if prev.ReturnLines != nil {
			return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "returned_amount_cents",
				Message: fmt.Sprintf("return %s of order %s was recorded by line: a return_id names one return", returnID, orderID)}
		}
		if prev.ReturnedAmountCents != returned {
			return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "returned_amount_cents",
				Message: fmt.Sprintf("return %s of order %s was recorded for %d cents: a return_id names one return", returnID, orderID, prev.ReturnedAmountCents)}
		}
		res := prev.result()
		res.Duplicate = true
		return res, nil
	}
	o, found, err := s.ReadOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	now := s.Clock().Truncate(time.Microsecond)
	if err := s.holdBeforeReturn(ctx, &o, now); err != nil {
		return nil, err
	}
	cs, ts, err := s.returnedCoupons(ctx, orderID, found)
	if err != nil {
		return nil, err
	}
	res := &ReturnResult{}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r := tx.Exec(`UPDATE checkout_orders SET returned_cents = returned_cents + ?, updated_at = ?
			WHERE order_id = ? AND returned_cents + ? <= amount_cents AND NOT (COALESCE(hold_state, '') = ? AND hold_expires_at > ?)`,
			returned, now, orderID, returned, HoldHeld, now)
		if r.Error != nil {
			return r.Error
		}
		if r.RowsAffected == 0 {
			if err := returnRecorded(tx, orderID, returnID); err != nil {
				return err
			}
			var cur CheckoutOrder
			if err := tx.Where("order_id = ?", orderID).Limit(1).Find(&cur).Error; err != nil {
				return err
			}
			if err := holdPending(&cur, now); err != nil {
				return err // a hold taken since the read
			}
			return models.Errorf(models.CodeReturnExceedsOrder, "returns of order %s would exceed its amount of %d cents", orderID, o.AmountCents)
		}
		var cur CheckoutOrder
		if err := tx.Where("order_id = ?", orderID).First(&cur).Error; err != nil {
			return err
		}
		// Every use log row of the order: the live ones are re-priced, the
		// undone ones (coupons refunded off it) are settled (planAmountReturn).
		var logs []models.UseLog
		if err := tx.Where("order_id = ?", orderID).Find(&logs).Error; err != nil {
			return err
		}
		byCoupon := map[int64]models.UseLog{}
		var given, settled int64
		for _, lg := range logs {
			if lg.UndoFlag {
				settled += lg.DiscountCents
				continue
			}
			byCoupon[lg.CouponID] = lg
			given += lg.DiscountCents
		}
		res.KeptAmountCents = cur.AmountCents - cur.ReturnedCents
		res.Currency = s.orderCurrency(&cur)
		pr, settledBack := planAmountReturn(res.KeptAmountCents+returned, res.KeptAmountCents, settled, keptCoupons(cs, ts))
		res.DiscountKeptCents = pr.DiscountCents
		res.ClawbackCents = given - pr.DiscountCents + settledBack
		res.FullRefund = res.KeptAmountCents == 0
		for i, c := range cs {
			lg, ok := byCoupon[c.ID]
			if !ok {
				return core.ErrRaced // refunded meanwhile: decide again
			}
			// Each action keeps its part of the plan (docs/pricing.md, "Returns").
			actions, err := core.KeepUseLogActions(lg.Actions, &pr.Coupons[i])
			if err != nil {
				return err
			}
			if lg.DiscountCents == pr.Coupons[i].DiscountCents && sameText(lg.Actions, actions) {
				continue // kept as it was: its row, read under the order's lock, stays right
			}
			if err := tx.Exec(`UPDATE coupon_use_log SET discount_cents = ?, actions = ? WHERE coupon_id = ? AND order_id = ? AND undo_flag = ?`,
				pr.Coupons[i].DiscountCents, actions, c.ID, orderID, false).Error; err != nil {
				return err
			}
		}
		if err := tx.Create(&orderReturn{OrderID: orderID, ReturnID: returnID, ReturnedAmountCents: returned,
			KeptAmountCents: res.KeptAmountCents, DiscountKeptCents: res.DiscountKeptCents, ClawbackCents: res.ClawbackCents,
			FullRefund: res.FullRefund, CreatedAt: now}).Error; err != nil {
			if index, dup := core.UniqueViolation(err); dup && (index == core.UniqueReturn || index == "") {
				return core.ErrRaced // the same return committed first: answered as a duplicate
			}
			return err
		}
		if err := s.Audit(tx, actor, "order.return", "order:"+orderID,
			fmt.Sprintf("return_id=%s returned_amount_cents=%d kept_amount_cents=%d discount_kept_cents=%d clawback_cents=%d full=%t",
				returnID, returned, res.KeptAmountCents, res.DiscountKeptCents, res.ClawbackCents, res.FullRefund)); err != nil {
			return err
		}
		return s.events.EmitEvent(tx, models.EventOrderReturned, models.OrderReturnEvent{OrderID: orderID, ReturnID: returnID,
			ReturnedAmountCents: returned, OrderAmountCents: cur.AmountCents, ReturnedTotalCents: cur.ReturnedCents,
			KeptAmountCents: res.KeptAmountCents, DiscountKeptCents: res.DiscountKeptCents, ClawbackCents: res.ClawbackCents,
			FullRefund: res.FullRefund, Actor: actor, Currency: res.Currency})
	})
	if err := core.TxOutcome("order", err); err != nil {
		return nil, err
	}
	return res, nil
}

// returnRecorded answers core.ErrRaced when the return returnID of the
// order was committed since the caller looked (a locking read, which sees
// the latest commit): the retry then answers it as a replay, a duplicate or
// idempotency_mismatch, whatever the amounts (docs/returns.md).
func returnRecorded(tx *gorm.DB, orderID, returnID string) error {
	var ids []int64
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Model(&orderReturn{}).
		Where("order_id = ? AND return_id = ?", orderID, returnID).Limit(1).Pluck("id", &ids).Error; err != nil {
		return err
	}
	if len(ids) > 0 {
		return core.ErrRaced
	}
	return nil
}

// keptCoupons is an order's used coupons (cs, with their templates ts) as
// a return by amount prices them again, in the order's currency (checked
// when they were redeemed).
func keptCoupons(cs []models.Coupon, ts []*models.Template) []pricing.Coupon {
	pcs := make([]pricing.Coupon, len(cs))
	for i := range cs {
		pcs[i] = core.PricingCoupon(ts[i], cs[i].Code)
		pcs[i].Currency = ""
	}
	return pcs
}

// refundOrder refunds every coupon the order still uses, as Refund does
// (each a duplicate when done already).
func (s *Checkout) refundOrder(ctx context.Context, actor, orderID string, res *ReturnResult) error {
	var cs []models.Coupon
	if err := s.DB.WithContext(ctx).Where("order_id = ? AND status = ?", orderID, models.CouponUsed).Order("id").Find(&cs).Error; err != nil {
		return core.DBError("coupons", err)
	}
	for _, c := range cs {
		r, err := s.Refund(ctx, RefundRequest{CouponCode: c.Code, OrderID: orderID, Cashier: actor})
		if err != nil && !errors.Is(err, core.ErrRetry) {
			return err
		}
		res.Refunds = append(res.Refunds, r)
	}
	return nil
}

// returnedCoupons reads what a return of an amount (or its preview) prices
// again: the used coupons of the order (found: it has a row) and their
// templates. An order with lines is returned by its lines instead (400
// naming returned_amount_cents); none used → CodeNotRedeemed.
func (s *Checkout) returnedCoupons(ctx context.Context, orderID string, found bool) ([]models.Coupon, []*models.Template, error) {
	var cs []models.Coupon
	if found {
		var lined int64
		if err := s.DB.WithContext(ctx).Raw(`SELECT COUNT(*) FROM order_lines WHERE order_id = ?`, orderID).Scan(&lined).Error; err != nil {
			return nil, nil, core.DBError("order lines", err)
		}
		if lined > 0 {
			return nil, nil, models.Invalid("returned_amount_cents", "order %s was redeemed for a cart of lines: return its units by lines", orderID)
		}
		if err := s.DB.WithContext(ctx).Where("status = ? AND order_id = ?", models.CouponUsed, orderID).Order("id").Find(&cs).Error; err != nil {
			return nil, nil, core.DBError("coupons", err)
		}
	}
	if len(cs) == 0 {
		return nil, nil, models.Errorf(models.CodeNotRedeemed, "order %s has no redeemed coupons to return", orderID)
	}
	ts := make([]*models.Template, len(cs))
	for i := range cs {
		var err error
		if ts[i], err = s.Template(ctx, cs[i].TemplateID); err != nil {
			return nil, nil, err
		}
	}
	return cs, ts, nil
}

// sameText reports whether two nullable columns hold the same text.
func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
