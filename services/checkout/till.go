package checkout

import (
	"context"
	"couponsvc/services/core"
	"couponsvc/services/pricing"

	"couponsvc/models"
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
}

// CheckRedemption prices a coupon on an order as Redeem would, and changes
// nothing: the checkout's preview (see docs/pages.md). Whether the coupon may
// be used (its status, validity and minimum) is the caller's to say from the
// coupon it gets back; Redeem decides again under the coupon's lock.
// Errors: CodeInvalidRequest (field code), CodeNotFound, CodeUnavailable.
func (s *Checkout) CheckRedemption(ctx context.Context, code, orderID string, amountCents int64) (*RedemptionCheck, error) {
	d, err := s.GetCoupon(ctx, code)
	if err != nil {
		return nil, err
	}
	// Priced as Redeem prices it (services/pricing), and once more without
	// the cap, to say when the cap cut it. The minimum is the caller's to
	// judge from the template.
	pc := core.PricingCoupon(&d.Template, d.Coupon.Code)
	pc.MinOrderCents, pc.MinQuantity, pc.Currency = 0, 0, ""
	cart := pricing.OneLine("", max(amountCents, 0))
	discount := pricing.Price(&cart, []pricing.Coupon{pc}).DiscountCents
	uncapped := discount
	if pc.Kind == pricing.KindPercent {
		pc.MaxDiscountCents = 0
		uncapped = pricing.Price(&cart, []pricing.Coupon{pc}).DiscountCents
	}
	out := &RedemptionCheck{CouponDetail: *d, DiscountCents: discount, PayableCents: amountCents - discount,
		UncappedCents: uncapped}
	cp := d.Coupon
	if cp.Status == models.CouponUsed && cp.OrderID != nil && *cp.OrderID == orderID {
		lg, found, err := s.UseLog(ctx, cp.ID, orderID)
		if err != nil {
			return nil, err
		}
		if found && !lg.UndoFlag {
			out.Redeemed = &lg
		}
	}
	return out, nil
}
