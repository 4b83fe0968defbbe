package pricing_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// BenchmarkPrice100Lines5Coupons prices the cart of benchcart (100 lines, 5
// coupons) with one Pricer and Result kept for the loop, as a checkout does.
func BenchmarkPrice100Lines5Coupons(b *testing.B) {
	cart, coupons := benchcart.New(100)
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
	cart, coupons := benchcart.New(100)
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
