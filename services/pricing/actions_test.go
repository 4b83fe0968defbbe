package pricing_test

import (
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// twentyOffAndFreeShipping is the coupon of worked example 15 of
// docs/pricing.md: 20% off the order (at most 5,000) and free shipping (at
// most 1,000), with a minimum of minOrder on the order's lines.
func twentyOffAndFreeShipping(minOrder int64) pricing.Coupon {
	return pricing.Coupon{Code: "BOTH", Kind: pricing.KindPercent, PercentOff: 20, MaxDiscountCents: 5000, MinOrderCents: minOrder,
		Actions: []pricing.Coupon{{Kind: pricing.KindFreeShipping, MaxDiscountCents: 1000}}}
}

// Worked example 15 of docs/pricing.md: 20% off + free shipping on one
// code. 2 shirts at 2,000 and trousers at 5,000, shipping 800: the percent
// takes 1,800 (400 per shirt, 1,000 off the trousers), the free shipping
// its 800; returning a shirt gives back 400 of the percent and nothing of
// the shipping.
func TestSeveralActionsTwentyOffAndFreeShipping(t *testing.T) {
	cart := pricing.Cart{ShippingCents: 800, Lines: []pricing.Line{
		{ID: "shirt", Quantity: 2, UnitPriceCents: 2000}, {ID: "trousers", Quantity: 1, UnitPriceCents: 5000}}}
	r := pricing.Price(&cart, []pricing.Coupon{twentyOffAndFreeShipping(0)})
	cr := r.Coupons[0]
	if cr.Refusal != "" || cr.DiscountCents != 2600 || cr.ShippingCents != 800 || r.PayableCents != 7200 {
		t.Fatalf("coupon %+v payable %d, want 2,600 off (800 of the shipping), 7,200 to pay", cr, r.PayableCents)
	}
	if got, want := lineDiscounts(r), []int64{800, 1000}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	if len(cr.Actions) != 2 || cr.Actions[0].DiscountCents != 1800 || cr.Actions[0].ShippingCents != 0 ||
		cr.Actions[1].DiscountCents != 800 || cr.Actions[1].ShippingCents != 800 || len(cr.Actions[1].Lines) != 0 {
		t.Fatalf("actions %+v, want 1,800 on the lines then 800 of the shipping", cr.Actions)
	}
	if got, want := cr.Lines[0].Units, []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 400}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("shirt units %v, want %v", got, want)
	}
	if refund, d := pricing.Return(2000, cr.Lines[0].Units, 0, 1); refund != 1600 || d != 400 {
		t.Fatalf("returning a shirt: refund %d, discount %d, want 1,600 and 400", refund, d)
	}
	if d := pricing.UnitsDiscountCents(cr.Actions[0].Lines[0].Units, 0, 1); d != 400 {
		t.Fatalf("the percent's part of a shirt %d, want 400", d)
	}

	t.Run("BelowTheTemplatesMinimum", func(t *testing.T) {
		// 9,000 of lines is below 10,000: neither action applies.
		cr := pricing.Price(&cart, []pricing.Coupon{twentyOffAndFreeShipping(10_000)}).Coupons[0]
		if cr.Refusal != pricing.RefusalBelowMinimum || cr.DiscountCents != 0 || len(cr.Actions) != 0 {
			t.Fatalf("coupon %+v, want below_minimum and nothing", cr)
		}
	})
	t.Run("OneActionTakesNothing", func(t *testing.T) {
		// No shipping: the free shipping takes nothing, the percent still applies.
		noShip := cart
		noShip.ShippingCents = 0
		cr := pricing.Price(&noShip, []pricing.Coupon{twentyOffAndFreeShipping(0)}).Coupons[0]
		if cr.Refusal != "" || cr.DiscountCents != 1800 || cr.Actions[1].Refusal != pricing.RefusalNoLines {
			t.Fatalf("coupon %+v, want 1,800 and the shipping action no_lines", cr)
		}
	})
	t.Run("EveryActionTakesNothing", func(t *testing.T) {
		c := twentyOffAndFreeShipping(0)
		c.AppliesTo, c.Match = pricing.AppliesToItems, pricing.Match{SKUs: []string{"hat"}}
		noShip := cart
		noShip.ShippingCents = 0
		cr := pricing.Price(&noShip, []pricing.Coupon{c}).Coupons[0]
		if cr.Refusal != pricing.RefusalNoLines || cr.DiscountCents != 0 {
			t.Fatalf("coupon %+v, want no_lines", cr)
		}
	})
}

// Each action is priced on what the earlier ones left: 10% off after 1,000
// off a 5,000 line is 400, not 500; the line's units carry both.
func TestSeveralActionsEachOnWhatTheEarlierLeft(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{{ID: "a", Quantity: 2, UnitPriceCents: 2500}}}
	c := pricing.Coupon{Code: "X", Kind: pricing.KindFixed, FaceValueCents: 1000,
		Actions: []pricing.Coupon{{Kind: pricing.KindPercent, PercentOff: 10, MaxDiscountCents: 10_000}}}
	cr := pricing.Price(&cart, []pricing.Coupon{c}).Coupons[0]
	if cr.DiscountCents != 1400 || cr.Actions[0].DiscountCents != 1000 || cr.Actions[1].DiscountCents != 400 {
		t.Fatalf("coupon %+v, want 1,000 then 400", cr)
	}
	if got, want := cr.Lines[0].Units, []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 700}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("units %v, want %v", got, want)
	}
}

func TestAddUnitRuns(t *testing.T) {
	a := []pricing.UnitRun{{First: 0, Count: 3, PerUnitCents: 5}}
	b := []pricing.UnitRun{{First: 1, Count: 1, PerUnitCents: 2}, {First: 4, Count: 2, PerUnitCents: 5}}
	want := []pricing.UnitRun{{First: 0, Count: 1, PerUnitCents: 5}, {First: 1, Count: 1, PerUnitCents: 7}, {First: 2, Count: 1, PerUnitCents: 5}, {First: 4, Count: 2, PerUnitCents: 5}}
	if got := pricing.AddUnitRuns(a, b); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
