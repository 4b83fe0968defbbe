package pricing_test

import (
	"fmt"
	"testing"

	"couponsvc/services/pricing"
)

// BenchCart is a cart of n lines of 1 to 3 units over a few SKUs and
// categories, with shipping, and five coupons of different kinds and
// targets: the cart cmd/couponbench prices too.
func benchCart(n int) (pricing.Cart, []pricing.Coupon) {
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

func BenchmarkPrice100Lines5Coupons(b *testing.B) {
	cart, coupons := benchCart(100)
	var p pricing.Pricer
	var out pricing.Result
	b.ReportAllocs()
	for b.Loop() {
		p.Price(&cart, coupons, &out)
	}
	if out.DiscountCents == 0 {
		b.Fatal("nothing discounted")
	}
}

// A Pricer and a Result kept for a loop allocate nothing once their buffers
// have grown: pricing in a checkout costs no garbage.
func TestPricerAllocatesNothingOnceWarm(t *testing.T) {
	cart, coupons := benchCart(100)
	var p pricing.Pricer
	var out pricing.Result
	p.Price(&cart, coupons, &out)
	if allocs := testing.AllocsPerRun(100, func() { p.Price(&cart, coupons, &out) }); allocs != 0 {
		t.Fatalf("%v allocations per cart, want 0", allocs)
	}
	taken := pricing.Taken{Lines: make([][]pricing.UnitRun, len(cart.Lines)), ShippingCents: out.ShippingDiscountCents}
	for _, cr := range out.Coupons {
		for _, ls := range cr.Lines {
			taken.Lines[ls.Line] = append(taken.Lines[ls.Line], ls.Units...)
		}
	}
	p.PriceAfter(&cart, taken, coupons, &out)
	if allocs := testing.AllocsPerRun(100, func() { p.PriceAfter(&cart, taken, coupons, &out) }); allocs != 0 {
		t.Fatalf("%v allocations per cart after coupons, want 0", allocs)
	}
}
