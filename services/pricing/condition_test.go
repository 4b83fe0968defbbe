package pricing_test

import (
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// trousersAndJackets is a cart of n trousers at 4,000 and a jacket at
// 12,000, shipping 900.
func trousersAndJackets(n int64) pricing.Cart {
	return pricing.Cart{ShippingCents: 900, Lines: []pricing.Line{
		{ID: "trousers", SKU: "TR-1", CategoryIDs: []string{"trousers"}, Quantity: n, UnitPriceCents: 4_000},
		{ID: "jacket", SKU: "JK-1", CategoryIDs: []string{"jackets"}, Quantity: 1, UnitPriceCents: 12_000},
	}}
}

// "Buy 2 trousers, get 10% off jackets": the condition counts the
// trousers, the coupon discounts the jacket only (docs/pricing.md, worked
// example 16).
func TestConditionApartFromTarget(t *testing.T) {
	c := pricing.Coupon{Code: "JK10", Kind: pricing.KindPercent, PercentOff: 10, MaxDiscountCents: 100_000,
		AppliesTo: pricing.AppliesToItems, Match: pricing.Match{CategoryIDs: []string{"jackets"}},
		Condition: &pricing.Condition{Match: pricing.Match{CategoryIDs: []string{"trousers"}}, MinQuantity: 2}}
	cart := trousersAndJackets(2)
	r := pricing.Price(&cart, []pricing.Coupon{c})
	if got, want := lineDiscounts(r), []int64{0, 1_200}; !reflect.DeepEqual(got, want) || r.Coupons[0].Refusal != "" || r.PayableCents != 8_000+12_000+900-1_200 {
		t.Fatalf("2 trousers: lines %v refusal %q payable %d, want %v", got, r.Coupons[0].Refusal, r.PayableCents, want)
	}
	one := trousersAndJackets(1)
	r = pricing.Price(&one, []pricing.Coupon{c})
	if r.DiscountCents != 0 || r.Coupons[0].Refusal != pricing.RefusalCondition || len(r.Coupons[0].Lines) != 0 {
		t.Fatalf("1 trousers: discount %d refusal %q, want 0 %q", r.DiscountCents, r.Coupons[0].Refusal, pricing.RefusalCondition)
	}
	if units, cents := c.Condition.Measure(&one); units != 1 || cents != 4_000 {
		t.Fatalf("measure of 1 trousers: %d units %d cents", units, cents)
	}
	// Judged on the cart before any discount: a coupon that takes the
	// trousers' whole price first leaves the condition met.
	first := pricing.Coupon{Code: "TR100", Kind: pricing.KindPercent, PercentOff: 100, MaxDiscountCents: 100_000, Priority: 0,
		AppliesTo: pricing.AppliesToItems, Match: pricing.Match{CategoryIDs: []string{"trousers"}}}
	c.Priority = 100
	c.Condition.MinAmountCents = 8_000
	r = pricing.Price(&cart, []pricing.Coupon{first, c})
	if got, want := lineDiscounts(r), []int64{8_000, 1_200}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the trousers' coupon: %v, want %v", got, want)
	}
	c.Condition.MinAmountCents = 8_001
	if r = pricing.Price(&cart, []pricing.Coupon{c}); r.Coupons[0].Refusal != pricing.RefusalCondition {
		t.Fatalf("8,000 of trousers for a minimum of 8,001: refusal %q", r.Coupons[0].Refusal)
	}
}

// "Buy 2 of A, get 1 of B free": a condition on A, 100% off B, one unit
// (max_units_per_order 1, cheapest first); with repeat, one B per 2 A
// (docs/pricing.md, worked example 17).
func TestBuyXOfAGetYOfB(t *testing.T) {
	cart := func(a int64) pricing.Cart {
		return pricing.Cart{Lines: []pricing.Line{
			{ID: "a", SKU: "A", Quantity: a, UnitPriceCents: 1_500},
			{ID: "b", SKU: "B", Quantity: 3, UnitPriceCents: 800},
		}}
	}
	c := pricing.Coupon{Code: "AB", Kind: pricing.KindPercent, PercentOffBP: 10_000, MaxDiscountCents: 100_000,
		AppliesTo: pricing.AppliesToItems, Match: pricing.Match{SKUs: []string{"B"}}, MaxUnitsPerOrder: 1,
		Condition: &pricing.Condition{Match: pricing.Match{SKUs: []string{"A"}}, MinQuantity: 2}}
	for _, tc := range []struct {
		a, want int64
		repeat  bool
		refusal string
	}{
		{1, 0, false, pricing.RefusalCondition}, {2, 800, false, ""}, {5, 800, false, ""},
		{1, 0, true, pricing.RefusalCondition}, {2, 800, true, ""}, {4, 1_600, true, ""}, {5, 1_600, true, ""}, {9, 2_400, true, ""},
	} {
		c.Condition.Repeat = tc.repeat
		k := cart(tc.a)
		r := pricing.Price(&k, []pricing.Coupon{c})
		if r.DiscountCents != tc.want || r.Coupons[0].Refusal != tc.refusal || r.Lines[0].DiscountCents != 0 {
			t.Errorf("%d A, repeat %v: discount %d (A %d) refusal %q, want %d %q", tc.a, tc.repeat, r.DiscountCents, r.Lines[0].DiscountCents, r.Coupons[0].Refusal, tc.want, tc.refusal)
		}
		if tc.want > 0 {
			want := []pricing.UnitRun{{First: 0, Count: tc.want / 800, PerUnitCents: 800}}
			if got := r.Coupons[0].Lines[0].Units; !reflect.DeepEqual(got, want) {
				t.Errorf("%d A, repeat %v: B's units %v, want %v", tc.a, tc.repeat, got, want)
			}
		}
	}
}

// A tiered coupon on the shipping: the tier met on the discountable lines
// gives its amount or its percent of the shipping left, never more than it
// (docs/pricing.md, worked example 18).
func TestTiersOnShipping(t *testing.T) {
	amounts := pricing.Coupon{Code: "SHIPT", Kind: pricing.KindTiered, AppliesTo: pricing.AppliesToShipping, MaxDiscountCents: 10_000,
		Tiers: []pricing.Tier{{MinCents: 5_000, OffCents: 300}, {MinCents: 10_000, OffCents: 2_000}}}
	percents := pricing.Coupon{Code: "SHIPP", Kind: pricing.KindTiered, AppliesTo: pricing.AppliesToShipping, MaxDiscountCents: 10_000,
		Tiers: []pricing.Tier{{MinQuantity: 2, PercentOff: 50}, {MinQuantity: 4, PercentOffBP: 10_000}}}
	for _, tc := range []struct {
		c             pricing.Coupon
		qty, price    int64
		want          int64
		refusal       string
		notDiscounted bool
	}{
		{amounts, 1, 4_999, 0, pricing.RefusalBelowMinimum, false},
		{amounts, 1, 5_000, 300, "", false},
		{amounts, 2, 5_000, 900, "", false}, // 2,000 off, at most the 900 of shipping
		{amounts, 2, 5_000, 0, pricing.RefusalBelowMinimum, true},
		{percents, 1, 100, 0, pricing.RefusalBelowMinimum, false},
		{percents, 3, 100, 450, "", false},
		{percents, 4, 100, 900, "", false},
	} {
		cart := pricing.Cart{ShippingCents: 900, Lines: []pricing.Line{{ID: "x", Quantity: tc.qty, UnitPriceCents: tc.price, NotDiscountable: tc.notDiscounted}}}
		r := pricing.Price(&cart, []pricing.Coupon{tc.c})
		if r.ShippingDiscountCents != tc.want || r.Coupons[0].ShippingCents != tc.want || r.Coupons[0].Refusal != tc.refusal || r.Lines[0].DiscountCents != 0 {
			t.Errorf("%s on %d × %d: shipping %d refusal %q, want %d %q", tc.c.Code, tc.qty, tc.price, r.ShippingDiscountCents, r.Coupons[0].Refusal, tc.want, tc.refusal)
		}
	}
	// After a coupon that took 600 of the shipping, 50% is of the 300 left.
	cart := pricing.Cart{ShippingCents: 900, Lines: []pricing.Line{{ID: "x", Quantity: 3, UnitPriceCents: 100}}}
	var p pricing.Pricer
	var r pricing.Result
	p.PriceAfter(&cart, pricing.Taken{ShippingCents: 600}, []pricing.Coupon{percents}, &r)
	if r.ShippingDiscountCents != 150 || r.PayableCents != 300+900-600-150 {
		t.Fatalf("after 600 taken: shipping %d payable %d, want 150 and 450", r.ShippingDiscountCents, r.PayableCents)
	}
}
