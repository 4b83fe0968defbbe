package services_test

import (
	"testing"

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/checkout"
	"couponsvc/services/pricing"
)

// The order's state read once, priced once (docs/checkout.md, "The order
// state and the plan"): coupons added after a return are priced on the
// units the order kept, every payable is after every coupon on the order,
// and returns never give back more than was paid.

func (f *holdFixture) redeemCart(c *models.Coupon, order string, cart pricing.Cart) (*checkout.RedeemResult, error) {
	return f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, Cashier: "till",
		Cart: checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}})
}

// rowsOf sums an order's stored line discounts of one coupon, by line_no.
func (f *holdFixture) rowsOf(order string, couponID int64) map[int]int64 {
	f.T.Helper()
	out := map[int]int64{}
	for _, r := range f.storedRows(order) {
		if r.CouponID == couponID {
			out[r.LineNo] += r.DiscountCents
		}
	}
	return out
}

func twoLines() pricing.Cart {
	return pricing.Cart{Lines: []pricing.Line{line("l1", 1, 1_000), line("l2", 1, 1_000)}}
}

// A coupon redeemed after a line came back is priced on the kept line
// only, and returning the rest gives back exactly what was paid.
func TestCouponAfterLineReturnIsPricedOnKeptUnits(t *testing.T) {
	t.Run("Redeem", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		if res, err := f.redeemCart(a, "k1", twoLines()); err != nil || res.DiscountCents != 100 {
			t.Fatalf("redeem A: %+v %v", res, err)
		}
		r1, err := f.returnLines("k1", "r1", rl("l1", 1))
		if err != nil || r1.RefundCents != 950 {
			t.Fatalf("return l1: %+v %v", r1, err)
		}
		res, err := f.redeemCart(b, "k1", twoLines())
		if err != nil || res.DiscountCents != 100 || res.PayableCents != 850 {
			t.Fatalf("redeem B after the return: %+v %v", res, err)
		}
		if got := f.rowsOf("k1", b.ID); len(got) != 1 || got[1] != 100 {
			t.Fatalf("B's stored lines %v, want all 100 on line 1 (the kept one)", got)
		}
		r2, err := f.returnLines("k1", "r2", rl("l2", 1))
		if err != nil || r2.RefundCents != 850 || !r2.FullRefund {
			t.Fatalf("return l2: %+v %v", r2, err)
		}
		// Paid 2000 − 100 − 100 = 1800: refunds 950 + 850.
		if got := r1.RefundCents + r2.RefundCents; got != 1_800 {
			t.Fatalf("refunded %d, want 1800", got)
		}
		f.checkInvariants()
	})
	t.Run("NinetyNinePercent", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100_000, 99, 0), "u1")
		if _, err := f.redeemCart(a, "k2", twoLines()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.returnLines("k2", "r1", rl("l1", 1)); err != nil {
			t.Fatal(err)
		}
		res, err := f.redeemCart(b, "k2", twoLines())
		// 99% of the 950 left of line 2: 940 (pricing rounds down).
		if err != nil || res.DiscountCents != 940 || res.PayableCents != 10 {
			t.Fatalf("redeem B: %+v %v", res, err)
		}
		if got := f.rowsOf("k2", b.ID); len(got) != 1 || got[1] != 940 {
			t.Fatalf("B's stored lines %v, want 940 on line 1", got)
		}
		r2, err := f.returnLines("k2", "r2", rl("l2", 1))
		if err != nil || r2.RefundCents != 10 {
			t.Fatalf("return l2: %+v %v", r2, err)
		}
	})
	t.Run("HoldConfirm", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		if _, err := f.redeemCart(a, "k3", twoLines()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.returnLines("k3", "r1", rl("l1", 1)); err != nil {
			t.Fatal(err)
		}
		cart := twoLines()
		h, err := f.holdCart("k3", checkout.Cart{Lines: cart.Lines}, b)
		if err != nil || h.DiscountCents != 100 || h.PayableCents != 850 || len(h.Lines) != 2 || h.Lines[0].DiscountCents != 0 || h.Lines[1].DiscountCents != 100 {
			t.Fatalf("hold B: %+v %v", h, err)
		}
		c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "k3"})
		if err != nil || c.DiscountCents != 100 || c.PayableCents != 850 {
			t.Fatalf("confirm B: %+v %v", c, err)
		}
		if got := f.rowsOf("k3", b.ID); len(got) != 1 || got[1] != 100 {
			t.Fatalf("B's stored lines %v, want 100 on line 1", got)
		}
		r2, err := f.returnLines("k3", "r2", rl("l2", 1))
		if err != nil || r2.RefundCents != 850 {
			t.Fatalf("return l2: %+v %v", r2, err)
		}
	})
}

// Validate with an order id prices on what the order's coupons left, and
// hold, confirm and GET answer what the order pays after every coupon.
func TestValidateAndPayableCountEveryCouponOnTheOrder(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 900, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 100_000, 50, 0), "u1")
	cart := pricing.Cart{Lines: []pricing.Line{line("x", 2, 1_000)}}
	if res, err := f.redeemCart(a, "p1", cart); err != nil || res.DiscountCents != 900 || res.PayableCents != 1_100 {
		t.Fatalf("redeem A: %+v %v", res, err)
	}
	req := checkout.CheckoutRequest{OrderID: "p1", Cart: checkout.Cart{Lines: cart.Lines}, CouponCodes: []string{b.Code}, TTLSeconds: 600, Actor: "shop"}
	v, err := f.Checkout.Validate(f.Ctx, req)
	if err != nil || v.Result != "ok" || v.DiscountCents != 550 || v.PayableCents != 550 || v.Coupons[0].DiscountCents != 550 {
		t.Fatalf("validate B: %+v %v", v, err)
	}
	h, err := f.Checkout.Hold(f.Ctx, req)
	if err != nil || h.DiscountCents != 550 || h.PayableCents != 550 {
		t.Fatalf("hold B: %+v %v", h, err)
	}
	g, err := f.Checkout.GetHold(f.Ctx, "p1")
	if err != nil || g.DiscountCents != 550 || g.PayableCents != 550 {
		t.Fatalf("GET while held: %+v %v", g, err)
	}
	c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "p1"})
	if err != nil || c.DiscountCents != 550 || c.PayableCents != 550 {
		t.Fatalf("confirm B: %+v %v", c, err)
	}
	g, err = f.Checkout.GetHold(f.Ctx, "p1")
	if err != nil || g.DiscountCents != 550 || g.PayableCents != 550 {
		t.Fatalf("GET after confirm: %+v %v", g, err)
	}
}

// A coupon refunded off an order was part of what the shopper paid: the
// order's later returns give back what was paid, never more.
func TestReturnsAfterACouponRefundNeverExceedWhatWasPaid(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 300, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 200, 0, 0), "u1")
	pr := f.linedOrder("q1", twoLines(), a, b)
	if pr.DiscountCents != 500 {
		t.Fatalf("priced %+v", pr)
	}
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: a.Code, OrderID: "q1", Cashier: "pos"}); err != nil {
		t.Fatal(err)
	}
	r1, err := f.returnLines("q1", "r1", rl("l1", 1))
	if err != nil || r1.RefundCents != 750 || r1.DiscountReturnedCents != 100 {
		t.Fatalf("return l1: %+v %v", r1, err)
	}
	r2, err := f.returnLines("q1", "r2", rl("l2", 1))
	if err != nil || r2.RefundCents != 750 || !r2.FullRefund {
		t.Fatalf("return l2: %+v %v", r2, err)
	}
	if got := r1.RefundCents + r2.RefundCents; got != 1_500 {
		t.Fatalf("refunded %d against 1500 paid", got)
	}
	if got := f.coupon(b.ID); got.Status != models.CouponIssued {
		t.Fatalf("B after the completing return: %s", got.Status)
	}
}
