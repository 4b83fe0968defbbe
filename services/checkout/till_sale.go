package checkout

import (
	"context"
	"slices"
	"strings"

	"github.com/couponsvc/couponsvc/models"
)

// saleHoldTTL is how long the hold of a till sale's codes lives between
// its hold and its confirm, which follow at once (docs/pages.md).
const saleHoldTTL = 60

// PreviewSale prices the codes of a till sale on its cart as Validate does
// (it writes nothing), and, when coupons were already redeemed on the same
// sale, on what they left of each line, as the redemption will price them
// (docs/pages.md, "The till sells a cart"): it is Validate, on the one
// order state and plan of docs/checkout.md. A coupon that does not apply
// is answered in the result, with its word, as Validate answers it.
// Errors: as Validate.
func (s *Checkout) PreviewSale(ctx context.Context, req CheckoutRequest) (*CheckoutResult, error) {
	req.Cart.Channel = ChannelTill
	return s.Validate(ctx, req)
}

// RedeemSale redeems the codes of a till sale on its cart, as PreviewSale
// priced them: one code is redeemed by the one path of a redemption
// (Redeem, audited as coupon.redeem), which on the sale's first checkout
// takes the live automatic offers that join its cart through a hold
// confirmed at once and then answers the whole sale, the code and the
// offers, as the preview showed them (docs/automatic-offers.md); several
// are held together and the hold confirmed at once (Hold, then Confirm),
// so that they are priced together as the preview priced them. A confirm
// refused releases the hold. The sale may take further codes afterwards,
// each redeemed on what the earlier ones left. Sent again, it answers the
// first answer (Duplicate).
// Errors: as Redeem, Hold and Confirm.
func (s *Checkout) RedeemSale(ctx context.Context, req CheckoutRequest, cashier string) (*CheckoutResult, error) {
	req.Cart.Channel = ChannelTill // a sale at the till is on its channel (docs/eligibility.md)
	if len(req.CouponCodes) != 1 {
		return s.holdConfirm(ctx, req, cashier)
	}
	r, held, err := s.redeem(ctx, RedeemRequest{CouponCode: req.CouponCodes[0], OrderID: req.OrderID,
		OrderAmountCents: req.OrderAmountCents, Cashier: cashier, Cart: req.Cart, Audited: true})
	if err != nil {
		return nil, err
	}
	if held != nil {
		return held, nil
	}
	if r.Duplicate {
		// A replay of a sale whose code the offers joined answers, as the
		// first time, the confirmed hold that took them together.
		if h, ok, err := s.confirmedHoldOf(ctx, req.OrderID, r.Coupon.Code); err != nil || ok {
			return h, err
		}
	}
	res := &CheckoutResult{Result: "redeemed", Duplicate: r.Duplicate, OrderID: req.OrderID,
		OrderAmountCents: r.OrderAmountCents, DiscountCents: r.DiscountCents, PayableCents: r.PayableCents,
		Currency: r.Currency, Coupons: []CheckoutCoupon{{CouponCode: r.Coupon.Code, Result: "redeemed",
			DiscountCents: r.DiscountCents, TemplateID: r.Coupon.TemplateID}}}
	if r.Lined {
		res.Lines, res.ShippingDiscountCents = r.Lines, ptrTo(r.ShippingDiscountCents)
	}
	return res, nil
}

// confirmedHoldOf is the order's confirmed hold, as its confirm answered
// it (a duplicate now), when it took the coupon code; ok is false when the
// order has none or the code was redeemed apart. Errors: CodeUnavailable.
func (s *Checkout) confirmedHoldOf(ctx context.Context, orderID, code string) (res *CheckoutResult, ok bool, err error) {
	h, err := s.GetHold(ctx, orderID)
	if models.IsCode(err, models.CodeNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if h.State != HoldConfirmed || !slices.ContainsFunc(h.Coupons, func(c CheckoutCoupon) bool { return c.CouponCode == code }) {
		return nil, false, nil
	}
	h.Duplicate = true
	return h, true, nil
}

// Refusal reasons of a coupon priced on a cart, as RefusalReason reads
// them (docs/pages.md: a refusal names its true reason).
const (
	ReasonNotForItems = "not_for_items"
	ReasonNoShipping  = "no_shipping"
	ReasonMinimum     = "below_minimum"
	ReasonCurrency    = "currency"
	ReasonOther       = ""
)

// RefusalReason says which of the pricing's refusals a coupon's answer is:
// no line of the cart is one the coupon applies to, the cart has no
// shipping for a shipping coupon, the minimum is not met, or the coupon is
// in another currency (the messages refusalError writes); ReasonOther for
// any other answer.
func RefusalReason(c CheckoutCoupon) string {
	switch {
	case c.Code == models.CodeCurrencyMismatch:
		return ReasonCurrency
	case c.Code != models.CodeBelowMinimum:
		return ReasonOther
	case strings.Contains(c.Message, "the cart has none"):
		return ReasonNoShipping
	case strings.Contains(c.Message, "no line of the cart"):
		return ReasonNotForItems
	}
	return ReasonMinimum
}
