package checkout

import (
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// The plan of an amount-only order: its returns next to coupons refunded
// off it, and its hold's split (docs/checkout.md, "The order state and
// the plan").

// An amount of 23 with coupons of 3 and 4, the 3 refunded (settled): a
// return of 22 keeps 1, which the settled 3 takes; the 4 keeps nothing.
// Clawed back: the 4 and 2 of the settled 3, so the shopper gets 16 of
// the 22, and the last cent gives back the last settled cent: 16 + 0 in
// all, what was paid (23 − 7).
func TestPlanAmountReturnSettlesRefunded(t *testing.T) {
	pr, back := planAmountReturn(23, 1, 3, []pricing.Coupon{fixed("B", 4)})
	if pr.DiscountCents != 0 || back != 2 {
		t.Fatalf("return of 22: the used coupon keeps %d, settled back %d; want 0 and 2", pr.DiscountCents, back)
	}
	if clawback := 4 - pr.DiscountCents + back; 22-clawback != 16 {
		t.Fatalf("return of 22 refunds %d, want 16", 22-clawback)
	}
	pr, back = planAmountReturn(1, 0, 3, []pricing.Coupon{fixed("B", 4)})
	if pr.DiscountCents != 0 || back != 1 {
		t.Fatalf("last cent: the used coupon keeps %d, settled back %d; want 0 and 1", pr.DiscountCents, back)
	}
	// Nothing settled: the used coupons are priced on the kept amount, as
	// a return always priced them.
	pr, back = planAmountReturn(1000, 400, 0, []pricing.Coupon{percent("P", 10, 0)})
	if pr.DiscountCents != 40 || back != 0 {
		t.Fatalf("no refund: %d kept, %d back; want 40 and 0", pr.DiscountCents, back)
	}
	// A settled 300 on 1,000 kept 600: 300 stays taken, the percent
	// coupon is priced on the 300 it leaves.
	pr, back = planAmountReturn(1000, 600, 300, []pricing.Coupon{percent("P", 10, 0)})
	if pr.DiscountCents != 30 || back != 0 {
		t.Fatalf("settled 300 of 600 kept: %d kept, %d back; want 30 and 0", pr.DiscountCents, back)
	}
}

// A hold priced on the 300 an order of 1,000 left (5 off, then 10% of the
// 295 left: 34) is split again from its stored 34 alone: 29 and 5, as
// held.
func TestPlanHeldAmountSplitsAsHeld(t *testing.T) {
	cart := pricing.OneLine("USD", 1000)
	coupons := []pricing.Coupon{percent("P", 10, 0), fixed("F", 5)}
	var held pricing.Result
	var p pricing.Pricer
	p.PriceAfter(&cart, leftTaken(&cart, 300), coupons, &held)
	if held.DiscountCents != 34 {
		t.Fatalf("held %d, want 34", held.DiscountCents)
	}
	var r pricing.Result
	planHeldAmount(&cart, 34, coupons, &r)
	if r.DiscountCents != 34 || r.Coupons[0].DiscountCents != 29 || r.Coupons[1].DiscountCents != 5 {
		t.Fatalf("split %d: %d and %d; want 34: 29 and 5", r.DiscountCents, r.Coupons[0].DiscountCents, r.Coupons[1].DiscountCents)
	}
	// The whole amount held (nothing else on the order): priced on all of it.
	planHeldAmount(&cart, 104, coupons, &r)
	if r.Coupons[0].DiscountCents != 99 || r.Coupons[1].DiscountCents != 5 {
		t.Fatalf("whole: %d and %d; want 99 and 5", r.Coupons[0].DiscountCents, r.Coupons[1].DiscountCents)
	}
}

// A coupon refunded off an order with lines keeps its rows, settled: a
// new coupon is priced on what it left, and the payable after the coupons
// on the order does not count it.
func TestPlanCountsSettledCoupons(t *testing.T) {
	cart := pricing.Cart{Currency: "USD", Lines: []pricing.Line{{ID: "l1", Quantity: 1, UnitPriceCents: 1000}, {ID: "l2", Quantity: 1, UnitPriceCents: 1000}}}
	st := &orderState{cart: &cart, returned: []int64{0, 0}}
	var first pricing.Result
	if err := planCoupons(st, &cart, []pricing.Coupon{fixed("A", 300)}, &first); err != nil {
		t.Fatal(err)
	}
	st.store(1, &first.Coupons[0])
	st.settled, st.live = st.live, nil // A refunded off the order
	var r pricing.Result
	if err := planCoupons(st, &cart, []pricing.Coupon{fixed("B", 5000)}, &r); err != nil {
		t.Fatal(err)
	}
	if r.DiscountCents != 1700 || r.PayableCents != 300 {
		t.Fatalf("B after A's refund: %d off, payable %d; want 1700 off, 300 to pay", r.DiscountCents, r.PayableCents)
	}
	// A redeemed again supersedes its own part: left out, it is priced on
	// the whole cart.
	st.without(1)
	if err := planCoupons(st, &cart, []pricing.Coupon{fixed("A", 300)}, &r); err != nil {
		t.Fatal(err)
	}
	if r.DiscountCents != 300 || r.PayableCents != 1700 {
		t.Fatalf("A again: %d off, payable %d; want 300 off, 1700 to pay", r.DiscountCents, r.PayableCents)
	}
}
