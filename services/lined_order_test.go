package services_test

import (
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// linedOrder holds the cart with the coupons and confirms it, and returns
// how the pricing package prices them (checked against what was stored:
// each coupon's use log discount is its share).
func (f *holdFixture) linedOrder(order string, cart pricing.Cart, cs ...*models.Coupon) pricing.Result {
	f.T.Helper()
	ps := make([]pricing.Coupon, len(cs))
	for i, c := range cs {
		tp, err := f.Checkout.Template(f.Ctx, c.TemplateID)
		if err != nil {
			f.T.Fatal(err)
		}
		ps[i] = core.PricingCoupon(tp, c.Code)
	}
	if _, err := f.holdCart(order, checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}, cs...); err != nil {
		f.T.Fatal(err)
	}
	if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: order}); err != nil {
		f.T.Fatal(err)
	}
	pr := pricing.Price(&cart, ps)
	for i, c := range cs {
		var lg models.UseLog
		if err := f.Backends.DB.Where("coupon_id = ? AND order_id = ?", c.ID, order).First(&lg).Error; err != nil {
			f.T.Fatal(err)
		}
		if lg.DiscountCents != pr.Coupons[i].DiscountCents {
			f.T.Fatalf("coupon %s stored %d off order %s, priced %d", c.Code, lg.DiscountCents, order, pr.Coupons[i].DiscountCents)
		}
	}
	return pr
}
