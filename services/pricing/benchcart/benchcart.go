// Package benchcart builds the cart the pricing benchmarks price, so that
// services/pricing's benchmark and cmd/couponbench measure the same work.
package benchcart

import (
	"fmt"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// New returns a cart of n lines of 1 to 3 units over a few SKUs, products
// and categories (every nineteenth line not discountable), with shipping,
// and five coupons of different kinds and targets: a fixed amount off the
// order, 20% off two categories but one SKU (capped), buy 2 get 1 free
// (capped), two amount tiers and free shipping (capped).
func New(n int) (pricing.Cart, []pricing.Coupon) {
	cart := pricing.Cart{ShippingCents: 799}
	for i := range n {
		cart.Lines = append(cart.Lines, pricing.Line{
			ID: fmt.Sprintf("line-%03d", i), SKU: fmt.Sprintf("sku-%d", i%17), ProductID: fmt.Sprintf("p-%d", i%23),
			CategoryIDs: []string{fmt.Sprintf("cat-%d", i%5)}, Quantity: int64(1 + i%3), UnitPriceCents: int64(199 + (i*7919)%20000),
			NotDiscountable: i%19 == 0,
		})
	}
	shoes := pricing.Match{CategoryIDs: []string{"cat-1", "cat-2"}, ExcludeSKUs: []string{"sku-3"}}
	shoes.Sort()
	coupons := []pricing.Coupon{
		{Code: "FIXED", Kind: pricing.KindFixed, FaceValueCents: 5000},
		{Code: "SHOES20", Kind: pricing.KindPercent, PercentOff: 20, MaxDiscountCents: 50000, AppliesTo: pricing.AppliesToItems, Match: shoes},
		{Code: "B2G1", Kind: pricing.KindBuyXGetY, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100, MaxDiscountCents: 20000},
		{Code: "TIER", Kind: pricing.KindTiered, MaxDiscountCents: 30000, Tiers: []pricing.Tier{{MinCents: 10000, OffCents: 1500}, {MinCents: 200000, OffCents: 4000}}},
		{Code: "SHIP", Kind: pricing.KindFreeShipping, MaxDiscountCents: 1000},
	}
	return cart, coupons
}
