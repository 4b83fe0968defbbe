package services_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/pricing"
)

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
