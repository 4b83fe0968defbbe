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

// "The cheapest item free, once", held, confirmed and returned by line:
// only the cheapest unit takes the discount, the return of a paid unit
// gives nothing back, and the return of the free one gives back its whole
// discount (docs/pricing.md, worked example 13).
func TestCheapestItemOnceHeldConfirmedReturned(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 100_000, 100, 0)
	f.retemplate(tp, func(tp *models.Template) { tp.MaxUnitsPerOrder, tp.UnitOrder = 1, models.UnitsCheapest })
	c := f.claim(tp, "u1")
	cart := pricing.Cart{Lines: []pricing.Line{line("jacket", 1, 3_000), line("shirts", 2, 1_000), line("socks", 2, 500)}}
	pr := f.linedOrder("cheap", cart, c)
	if got := []int64{pr.Lines[0].DiscountCents, pr.Lines[1].DiscountCents, pr.Lines[2].DiscountCents}; pr.DiscountCents != 500 ||
		got[0] != 0 || got[1] != 0 || got[2] != 500 {
		t.Fatalf("allocation %v (%d), want 0/0/500", got, pr.DiscountCents)
	}
	// The socks' first unit is the free one: returning one of the socks
	// gives back its discount (refund 0), the second pays back in full.
	res, err := f.returnLines("cheap", "r1", rl("jacket", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.RefundCents != 3_000 || res.DiscountReturnedCents != 0 {
		t.Fatalf("return of the jacket: %+v", res)
	}
	res, err = f.returnLines("cheap", "r2", rl("socks", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.RefundCents != 0 || res.DiscountReturnedCents != 500 {
		t.Fatalf("return of the free socks: %+v", res)
	}
	res, err = f.returnLines("cheap", "r3", rl("socks", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.RefundCents != 500 || res.DiscountReturnedCents != 0 {
		t.Fatalf("return of the paid socks: %+v", res)
	}
	if st := f.linedState("cheap"); st.Returned["socks"] != 2 || st.Returned["jacket"] != 1 || st.UseLog[c.ID] != 0 {
		t.Fatalf("state after the returns: %+v", st)
	}
	f.checkInvariants()
}

// A quantity-tiered coupon held and confirmed: 3 targeted units meet the
// 5% tier (from 2), not the 10% one (from 4): 150 off 3,000 (worked
// example 14).
func TestQuantityTiersHeldConfirmed(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 1_000, 0, 0)
	f.retemplate(tp, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents, tp.MaxDiscountCents = models.KindTiered, 0, 100_000
		tp.Tiers = []models.Tier{{MinQuantity: 2, PercentOff: 5, PercentOffBP: 500}, {MinQuantity: 4, PercentOff: 10, PercentOffBP: 1000}}
	})
	c := f.claim(tp, "u1")
	pr := f.linedOrder("qty", pricing.Cart{Lines: []pricing.Line{line("a", 3, 1_000)}}, c)
	if pr.DiscountCents != 150 || pr.Lines[0].DiscountCents != 150 {
		t.Fatalf("3 units: %+v, want 150 off", pr)
	}
	f.checkInvariants()
}
