package checkout

import (
	"context"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"

	"github.com/couponsvc/couponsvc/models"
)

// RedemptionCheck is a coupon looked at for an order before the cashier
// redeems it: the coupon and its template, and what it would take off the
// order's amount.
type RedemptionCheck struct {
	core.CouponDetail
	DiscountCents, PayableCents int64
	// UncappedCents is the discount before a percent coupon's cap: above
	// DiscountCents when the cap applies.
	UncappedCents int64
	// Redeemed is this order's live redemption of the coupon when the coupon
	// was already redeemed on the same order; its amounts are those of that
	// redemption, which a redeem would answer again as a duplicate.
	Redeemed *models.UseLog
	// Refusal is why Redeem would refuse the coupon now (the plan's one
	// decision: couponFits, couponRefusal), nil when it would pass; a page
	// shows it and decides nothing again.
	Refusal error
}

// CheckRedemption prices a coupon on an order as Redeem would, and changes
// nothing: the checkout's preview (see docs/pages.md). On an order that
// carries coupons or returns it is planned on what the order leaves, as the
// redemption's priceOnOrder does, so the preview's payable is the one the
// redemption answers (docs/checkout.md, "The order state and the plan").
// Refusal is what the redemption would refuse the coupon for now (its
// status, validity, minimum, currency, or nothing to discount), nil when it
// would pass; Redeem decides again under the coupon's lock.
// Errors: CodeInvalidRequest (field code), CodeNotFound, CodeUnavailable.
func (s *Checkout) CheckRedemption(ctx context.Context, code, orderID string, amountCents int64) (*RedemptionCheck, error) {
	d, err := s.GetCoupon(ctx, code)
	if err != nil {
		return nil, err
	}
	now := s.Clock()
	left, cur := max(amountCents, 0), s.currency()
	if orderID != "" {
		o, found, err := s.ReadOrder(ctx, orderID)
		if err != nil {
			return nil, err
		}
		if found && o.AmountCents != 0 && !o.Lined() {
			l, _, c, err := discountLeft(s.DB.WithContext(ctx), orderID, now, []int64{d.Coupon.ID})
			if err != nil {
				return nil, core.DBError("order", err)
			}
			left = l
			if c != "" {
				cur = c
			}
		}
	}
	// Priced as Redeem prices it (services/pricing) on what the order
	// leaves, and once more without the cap, to say when the cap cut it.
	// The minimum is on the order's whole amount, as Redeem checks it.
	pc := core.PricingCoupon(&d.Template, d.Coupon.Code)
	full := pricing.OneLine(cur, max(amountCents, 0))
	var refusal error
	whole := pricing.Price(&full, []pricing.Coupon{pc})
	pc.MinOrderCents, pc.MinQuantity = 0, 0
	cart := pricing.OneLine(cur, left)
	r := pricing.Price(&cart, []pricing.Coupon{pc})
	discount := r.DiscountCents
	uncapped := discount
	if pc.Kind == pricing.KindPercent {
		pc.MaxDiscountCents = 0
		uncapped = pricing.Price(&cart, []pricing.Coupon{pc}).DiscountCents
	}
	cp := d.Coupon
	if err := couponFits(&cp.Coupon, "", "", now); err != nil {
		refusal = err
	} else if err := refusalError(whole.Coupons[0].Refusal, cp.Code, &d.Template, &full, false); err != nil {
		refusal = err
	} else if err := couponRefusal(&r.Coupons[0], &d.Template, &cart, false, s.tillFacts(&full, now)); err != nil {
		refusal = err
	}
	out := &RedemptionCheck{CouponDetail: *d, DiscountCents: discount, PayableCents: left - discount,
		UncappedCents: uncapped, Refusal: refusal}
	if cp.Status == models.CouponUsed && cp.OrderID != nil && *cp.OrderID == orderID {
		lg, found, err := s.UseLog(ctx, cp.ID, orderID)
		if err != nil {
			return nil, err
		}
		if found && !lg.UndoFlag {
			out.Redeemed, out.Refusal = &lg, nil
		}
	}
	return out, nil
}

// SharedCheck is a shared code looked at for an anonymous shopper's order
// at the till before the cashier redeems it (docs/shared-codes.md,
// docs/pages.md): what its claim would be, priced on the order.
type SharedCheck struct {
	// Code is the shared code in its normal form; CouponCode the coupon
	// the order already claimed with it ("" before the claim).
	Code, CouponCode string
	Template         models.Template
	// Refusal is why a redemption would be refused now (sold out, budget,
	// not claimable, below the minimum, ...), nil when it would pass.
	Refusal                     error
	DiscountCents, PayableCents int64
	// Redeemed is the order's live redemption of its claim, as in
	// RedemptionCheck.
	Redeemed *models.UseLog
}

// CheckShared looks at a typed code as the till's preview does when it is
// the shared code of a live template: a validation for an anonymous
// shopper on the order (the claim rule, the budget and the stock read from
// the counters, priced as the coupon the claim would make), which takes
// nothing. It answers nil, nil when raw is not a live shared code (the
// caller reads it as a coupon code). Errors: CodeInvalidRequest (field
// order_id or order_amount_cents), CodeUnavailable.
func (s *Checkout) CheckShared(ctx context.Context, raw, orderID string, amountCents int64) (*SharedCheck, error) {
	t, err := s.LiveSharedCode(ctx, raw)
	if t == nil || err != nil {
		return nil, err
	}
	code := t.SharedCode
	res, err := s.Validate(ctx, CheckoutRequest{OrderID: orderID, OrderAmountCents: amountCents, CouponCodes: []string{code}})
	if err != nil {
		return nil, err
	}
	out := &SharedCheck{Code: code, Template: *t, DiscountCents: res.DiscountCents, PayableCents: res.PayableCents}
	if len(res.Coupons) == 1 {
		c := res.Coupons[0]
		out.CouponCode = c.CouponCode
		if c.Result != "ok" {
			out.Refusal = &models.Error{Code: c.Code, Message: c.Message}
		}
	}
	if _, live, err := s.sharedKey(ctx, t, "", orderID); err != nil {
		return nil, err
	} else if live != nil && live.Status == models.CouponUsed && live.OrderID != nil && *live.OrderID == orderID {
		lg, found, err := s.UseLog(ctx, live.ID, orderID)
		if err != nil {
			return nil, err
		}
		if found && !lg.UndoFlag {
			out.Redeemed, out.Refusal = &lg, nil
			out.DiscountCents, out.PayableCents = lg.DiscountCents, lg.OrderAmountCents-lg.DiscountCents
		}
	}
	return out, nil
}

// LiveSharedCode is the live template whose shared code raw is, as a
// checkout reads a typed code (readsAsShared); nil when raw is to be read
// as a coupon code. Errors: CodeUnavailable.
func (s *Checkout) LiveSharedCode(ctx context.Context, raw string) (*models.Template, error) {
	_, perr := models.ParseCouponCode("code", raw)
	shared, err := s.readsAsShared(ctx, raw, perr)
	if err != nil || !shared {
		return nil, err
	}
	code, err := models.ParseSharedCode("code", raw)
	if err != nil {
		return nil, nil
	}
	t, err := s.sharedTemplate(ctx, code)
	if models.IsCode(err, models.CodeNotFound) {
		return nil, nil
	}
	return t, err
}
