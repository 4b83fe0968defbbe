package services_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// Worked examples of the order state and the plan on the wired App
// (docs/checkout.md, "The order state and the plan"): every path prices
// the same state.

// A coupon refunded off an order stays taken there (its discount was
// paid): validate and the redemption of another coupon price on what it
// left, and returning every line refunds what was paid.
func TestMoneyPlanCouponAfterRefund(t *testing.T) {
	t.Run("Lines", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 300, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 5_000, 0, 0), "u1")
		f.moneyRedeem(a, "o1", moneyTwoLines())
		if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: a.Code, OrderID: "o1", Cashier: "till"}); err != nil {
			t.Fatal(err)
		}
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o1", Cart: moneyTwoLines(), CouponCodes: []string{b.Code}})
		if err != nil || v.Result != "ok" || v.DiscountCents != 1_700 || v.PayableCents != 300 {
			t.Fatalf("validate B: %+v %v; want 1700 off, 300 to pay", v, err)
		}
		res := f.moneyRedeem(b, "o1", moneyTwoLines())
		if res.DiscountCents != 1_700 || res.PayableCents != 300 {
			t.Fatalf("B: %d off, payable %d; want 1700 and 300", res.DiscountCents, res.PayableCents)
		}
		if refunded := f.moneyReturn("o1", "r1", rl("l1", 1), rl("l2", 1)); refunded != 0 {
			t.Fatalf("every line back refunds %d; paid 0 (2000 less 300 and 1700)", refunded)
		}
	})
	t.Run("Amount", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
		if _, err := f.redeem(a, "o2", 600); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: a.Code, OrderID: "o2", Cashier: "till"}); err != nil {
			t.Fatal(err)
		}
		h, err := f.hold("o2", 600, 60, b)
		if err != nil || h.DiscountCents != 100 || h.PayableCents != 500 {
			t.Fatalf("hold B: %+v %v; want 100 off, 500 to pay (A's 500 is no coupon's on the order now)", h, err)
		}
	})
}

// A return by amount after a coupon's refund refunds what was paid: an
// amount of 23 with coupons of 3 and 4, the 3 refunded, returned 22 and
// then 1: 16 and 0 back, the 16 paid.
func TestMoneyPlanAmountReturnAfterRefund(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 3, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 4, 0, 0), "u1")
	for _, c := range []*models.Coupon{a, b} {
		if _, err := f.redeem(c, "o1", 23); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: a.Code, OrderID: "o1", Cashier: "till"}); err != nil {
		t.Fatal(err)
	}
	p, err := f.Checkout.PreviewReturnPart(f.Ctx, "o1", 22)
	if err != nil || p.ClawbackCents != 6 {
		t.Fatalf("preview: %+v %v; want 6 clawed back", p, err)
	}
	r, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o1", "r1", 22)
	if err != nil || r.ClawbackCents != 6 || 22-r.ClawbackCents != 16 {
		t.Fatalf("return of 22: %+v %v; want 6 clawed back, 16 refunded", r, err)
	}
	r, err = f.Checkout.ReturnPart(f.Ctx, "pos", "o1", "r2", 1)
	if err != nil || r.ClawbackCents != 1 || !r.FullRefund {
		t.Fatalf("return of the last cent: %+v %v; want 1 clawed back (0 refunded), the order complete", r, err)
	}
}

// A replayed redemption answers the first answer's payable, though the
// hold it was priced next to lapsed since.
func TestMoneyPlanReplayKeepsPayable(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 200, 0, 0), "u1")
	c := f.claim(f.tmpl(models.StackingCombinable, 50, 0, 0), "u1")
	if _, err := f.redeem(a, "o1", 1_000); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hold("o1", 1_000, 60, b); err != nil {
		t.Fatal(err)
	}
	first, err := f.redeem(c, "o1", 1_000)
	if err != nil || first.DiscountCents != 50 || first.PayableCents != 650 {
		t.Fatalf("C: %+v %v; want 50 off, 650 to pay", first, err)
	}
	f.Clock.Advance(61 * time.Second)
	again, err := f.redeem(c, "o1", 1_000)
	if err != nil || !again.Duplicate || again.DiscountCents != 50 || again.PayableCents != 650 {
		t.Fatalf("replay: %+v %v; want the duplicate, 50 off, 650 to pay", again, err)
	}
}

// A hold past its time and not yet swept is gone for every path: another
// coupon of its template is ok in validate and redeemed, and the held one
// is its holder's again.
func TestMoneyPlanNewCouponAfterLapsedHold(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl(models.StackingCombinable, 100, 0, 0)
	a, b := f.claim(tp, "u1"), f.claim(tp, "u1")
	if _, err := f.hold("o1", 1_000, 5, a); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(6 * time.Second)
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o1", OrderAmountCents: 1_000, CouponCodes: []string{b.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 100 {
		t.Fatalf("validate: %+v %v; want ok, 100 off", v, err)
	}
	res, err := f.redeem(b, "o1", 1_000)
	if err != nil || res.DiscountCents != 100 || res.PayableCents != 900 {
		t.Fatalf("redeem: %+v %v; want 100 off, 900 to pay", res, err)
	}
	if got := f.coupon(a.ID); got.Status != models.CouponIssued {
		t.Fatalf("the lapsed hold's coupon is %s, want issued", got.Status)
	}
}
