package services_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// A coupon for full-price items only, held, confirmed and returned by
// line: the marked-down shirt takes nothing, the lines keep their
// compare-at prices, and a return gives back what the hold allocated
// (docs/pricing.md, worked example 12).
func TestFullPriceOnlyHeldConfirmedReturned(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 100_000, 20, 0)
	f.retemplate(tp, func(tp *models.Template) { tp.FullPriceOnly = true })
	c := f.claim(tp, "u1")
	shirt := line("shirt", 1, 3_000)
	shirt.CompareAtPriceCents = 4_000
	trousers := line("trousers", 1, 5_000)
	trousers.CompareAtPriceCents = 5_000
	cart := pricing.Cart{Lines: []pricing.Line{shirt, trousers, line("socks", 2, 500)}}
	pr := f.linedOrder("fp", cart, c)
	if got := []int64{pr.Lines[0].DiscountCents, pr.Lines[1].DiscountCents, pr.Lines[2].DiscountCents}; pr.DiscountCents != 1_200 ||
		got[0] != 0 || got[1] != 1_000 || got[2] != 200 {
		t.Fatalf("allocation %v (%d), want 0/1000/200", got, pr.DiscountCents)
	}
	var stored []int64
	if err := f.Backends.DB.Raw(`SELECT compare_at_price_cents FROM order_lines WHERE order_id = ? ORDER BY line_no`, "fp").Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 || stored[0] != 4_000 || stored[1] != 5_000 || stored[2] != 0 {
		t.Fatalf("stored compare-at prices %v, want [4000 5000 0]", stored)
	}
	res, err := f.returnLines("fp", "r1", rl("shirt", 1), rl("trousers", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.RefundCents != 3_000+4_000 || res.DiscountReturnedCents != 1_000 || res.DiscountKeptCents != 200 {
		t.Fatalf("return of the shirt and the trousers: %+v", res)
	}
	if st := f.linedState("fp"); st.Returned["shirt"] != 1 || st.Returned["trousers"] != 1 || st.Returned["socks"] != 0 || st.UseLog[c.ID] != 200 {
		t.Fatalf("state after the return: %+v", st)
	}
	f.checkInvariants()
}

// A compare-at price below 0 or above the money bound is refused 400
// naming the line's field, and nothing is held.
func TestCompareAtPriceBounds(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 1_000, 0, 0), "u1")
	for _, v := range []int64{-1, models.MaxMoneyCents + 1} {
		l := line("a", 1, 1_000)
		l.CompareAtPriceCents = v
		_, err := f.holdCart("bad", checkout.Cart{Lines: []pricing.Line{line("z", 1, 100), l}}, c)
		fields := models.FieldsOf(err)
		if len(fields) != 1 || fields[0].Field != "lines[1].compare_at_price_cents" {
			t.Fatalf("compare-at %d: %v, want invalid lines[1].compare_at_price_cents", v, err)
		}
	}
	var n int64
	if err := f.Backends.DB.Raw(`SELECT COUNT(*) FROM checkout_orders WHERE order_id = ?`, "bad").Scan(&n).Error; err != nil || n != 0 {
		t.Fatalf("orders %d (%v), want none", n, err)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued {
		t.Fatalf("coupon %s, want issued", got.Status)
	}
}
