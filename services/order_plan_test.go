package services_test

import (
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
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

// An amount-only order keeps its one currency: a coupon of another one is
// refused currency_mismatch by validate, hold and redemption alike,
// whatever currency the request names or leaves out.
func TestAmountOnlyOrderRefusesAnotherCurrency(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	eur := f.tmpl(models.StackingCombinable, 100, 0, 0)
	f.retemplate(eur, func(tp *models.Template) { tp.Currency = "EUR" })
	usd := f.tmpl(models.StackingCombinable, 100, 0, 0)
	f.retemplate(usd, func(tp *models.Template) { tp.Currency = "USD" })
	a, b := f.claim(eur, "u1"), f.claim(usd, "u1")
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "e1", OrderAmountCents: 1_000,
		Cart: checkout.Cart{Currency: "EUR"}, Cashier: "till"})
	if err != nil || res.Currency != "EUR" || res.DiscountCents != 100 {
		t.Fatalf("redeem A: %+v %v", res, err)
	}
	for _, cur := range []string{"", "USD"} {
		_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: b.Code, OrderID: "e1", OrderAmountCents: 1_000,
			Cart: checkout.Cart{Currency: cur}, Cashier: "till"})
		if !models.IsCode(err, models.CodeCurrencyMismatch) {
			t.Fatalf("redeem B with currency %q: %v, want currency_mismatch", cur, err)
		}
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "e1", OrderAmountCents: 1_000, CouponCodes: []string{b.Code},
			Cart: checkout.Cart{Currency: cur}})
		if err != nil || v.Result != "currency_mismatch" || v.Coupons[0].Code != models.CodeCurrencyMismatch || v.DiscountCents != 0 {
			t.Fatalf("validate B with currency %q: %+v %v", cur, v, err)
		}
	}
	_, err = f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "e1", OrderAmountCents: 1_000, CouponCodes: []string{b.Code}, TTLSeconds: 600, Actor: "shop"})
	if !models.IsCode(err, models.CodeCurrencyMismatch) {
		t.Fatalf("hold B: %v, want currency_mismatch", err)
	}
	if got := f.coupon(b.ID); got.Status != models.CouponIssued {
		t.Fatalf("B after the refusals: %s", got.Status)
	}
	var logs int64
	if err := f.Backends.DB.Model(&models.UseLog{}).Where("order_id = ?", "e1").Count(&logs).Error; err != nil || logs != 1 {
		t.Fatalf("use log rows of e1: %d %v, want 1", logs, err)
	}
}

// A coupon the plan gives 0 is refused not_combinable on every path,
// saying why, and is neither held nor used.
func TestCouponWorthNothingIsRefusedEverywhere(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl(models.StackingCombinable, 1_000, 0, 0)
	f.retemplate(tp, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents, tp.BuyQuantity, tp.GetQuantity, tp.GetPercent, tp.MaxDiscountCents = models.KindBuyXGetY, 0, 2, 2, 100, 10_000
	})
	c := f.claim(tp, "u1")
	cart := pricing.Cart{Lines: []pricing.Line{line("x", 3, 1_000)}}
	req := checkout.CheckoutRequest{OrderID: "z1", Cart: checkout.Cart{Lines: cart.Lines}, CouponCodes: []string{c.Code}, TTLSeconds: 600, Actor: "shop"}
	v, err := f.Checkout.Validate(f.Ctx, req)
	if err != nil || v.Result != "not_combinable" || v.Coupons[0].Code != models.CodeNotCombinable || v.DiscountCents != 0 ||
		!strings.Contains(v.Coupons[0].Message, "would discount nothing") {
		t.Fatalf("validate: %+v %v", v, err)
	}
	u, err := f.Checkout.UsableForCart(f.Ctx, "u1", 0, checkout.Cart{Lines: cart.Lines})
	if err != nil || len(u.Coupons) != 0 {
		t.Fatalf("usable: %+v %v, want none", u, err)
	}
	if _, err := f.Checkout.Hold(f.Ctx, req); !models.IsCode(err, models.CodeNotCombinable) {
		t.Fatalf("hold: %v, want not_combinable", err)
	}
	_, err = f.redeemCart(c, "z1", cart)
	if e := wantCode(t, err, models.CodeNotCombinable); !strings.Contains(e.Message, "would discount nothing") {
		t.Fatalf("redeem: %v", err)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued {
		t.Fatalf("coupon after the refusals: %s", got.Status)
	}
	// A second coupon on an order its first discounts in full.
	a := f.claim(f.tmpl(models.StackingCombinable, 3_000, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
	if _, err := f.redeemCart(a, "z2", cart); err != nil {
		t.Fatal(err)
	}
	v, err = f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "z2", Cart: checkout.Cart{Lines: cart.Lines}, CouponCodes: []string{b.Code}})
	if err != nil || v.Result != "not_combinable" || v.Coupons[0].DiscountCents != 0 {
		t.Fatalf("validate B on a fully discounted order: %+v %v", v, err)
	}
	if _, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "z2", Cart: checkout.Cart{Lines: cart.Lines}, CouponCodes: []string{b.Code}, TTLSeconds: 600}); !models.IsCode(err, models.CodeNotCombinable) {
		t.Fatalf("hold B on a fully discounted order: %v", err)
	}
	if got := f.coupon(b.ID); got.Status != models.CouponIssued {
		t.Fatalf("B: %s", got.Status)
	}
}

// A second shipping coupon on a shipping the first discounts in full is
// refused for that, not as a cart without shipping.
func TestSecondShippingCouponSaysTheShippingIsTaken(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	ship := func() *models.Coupon {
		tp := f.tmpl(models.StackingCombinable, 100, 0, 0)
		f.retemplate(tp, func(tp *models.Template) {
			tp.Kind, tp.FaceValueCents, tp.MaxDiscountCents, tp.AppliesTo = models.KindFreeShipping, 0, 1_000, models.AppliesToShipping
		})
		return f.claim(tp, "u1")
	}
	a, b := ship(), ship()
	cart := checkout.Cart{Lines: []pricing.Line{line("x", 1, 2_000)}, ShippingCents: 1_000}
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: cart, CouponCodes: []string{a.Code, b.Code}})
	if err != nil || len(v.Coupons) != 2 {
		t.Fatalf("validate: %+v %v", v, err)
	}
	// Pricing orders equal coupons by code: one takes the shipping.
	first, second := v.Coupons[0], v.Coupons[1]
	if first.Code != models.CodeOK {
		first, second = second, first
	}
	if first.Result != "ok" || first.DiscountCents != 1_000 || second.Code != models.CodeNotCombinable || second.DiscountCents != 0 ||
		!strings.Contains(second.Message, "shipping is discounted in full") || v.Result != "not_combinable" {
		t.Fatalf("validate: %+v", v)
	}
}

// A hold past its time is expired for everyone, swept or not: a coupon
// redeemed one step at a time on its order is priced as if it were gone.
func TestRedeemIgnoresALapsedHoldOfItsOrder(t *testing.T) {
	for _, lined := range []bool{false, true} {
		t.Run(map[bool]string{false: "AmountOnly", true: "Lined"}[lined], func(t *testing.T) {
			f := newHoldFixture(t, services.Config{})
			h := f.claim(f.tmpl(models.StackingCombinable, 800, 0, 0), "u1")
			r := f.claim(f.tmpl(models.StackingCombinable, 900, 0, 0), "u1")
			cart := pricing.Cart{Lines: []pricing.Line{line("x", 1, 1_000)}}
			var err error
			if lined {
				_, err = f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "l6", Cart: checkout.Cart{Lines: cart.Lines}, CouponCodes: []string{h.Code}, TTLSeconds: 5})
			} else {
				_, err = f.hold("l6", 1_000, 5, h)
			}
			if err != nil {
				t.Fatal(err)
			}
			f.Clock.Advance(10 * time.Second)
			var res *checkout.RedeemResult
			if lined {
				res, err = f.redeemCart(r, "l6", cart)
			} else {
				res, err = f.redeem(r, "l6", 1_000)
			}
			if err != nil || res.DiscountCents != 900 || res.PayableCents != 100 {
				t.Fatalf("redeem R next to the lapsed hold: %+v %v", res, err)
			}
		})
	}
}

// The till's preview of a second coupon on an order says what its
// redemption then answers: both come from the plan on what the order
// leaves.
func TestTillPreviewIsWhatTheRedemptionAnswers(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 1_500, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 1_000, 0, 0), "u1")
	if _, err := f.redeem(a, "t10", 10_000); err != nil {
		t.Fatal(err)
	}
	chk, err := f.Checkout.CheckRedemption(f.Ctx, b.Code, "t10", 10_000)
	if err != nil || chk.DiscountCents != 1_000 || chk.PayableCents != 7_500 || chk.Refusal != nil {
		t.Fatalf("preview: %+v %v", chk, err)
	}
	res, err := f.redeem(b, "t10", 10_000)
	if err != nil || res.DiscountCents != chk.DiscountCents || res.PayableCents != chk.PayableCents {
		t.Fatalf("redeem %+v %v, previewed %d off, %d to pay", res, err, chk.DiscountCents, chk.PayableCents)
	}
	// A coupon the redemption would refuse is previewed with that refusal.
	c := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 20_000), "u1")
	chk, err = f.Checkout.CheckRedemption(f.Ctx, c.Code, "t10", 10_000)
	if err != nil || !models.IsCode(chk.Refusal, models.CodeBelowMinimum) {
		t.Fatalf("preview below the minimum: %+v %v", chk, err)
	}
	_, err = f.redeem(c, "t10", 10_000)
	if !models.IsCode(err, models.CodeBelowMinimum) {
		t.Fatalf("redeem below the minimum: %v", err)
	}
}

// A hold on an amount-only order that carries a coupon redeemed one step at
// a time answers what the order pays after both.
func TestAmountOnlyHoldPayableCountsEarlierCoupons(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 300, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 200, 0, 0), "u1")
	if _, err := f.redeem(a, "h1", 1_000); err != nil {
		t.Fatal(err)
	}
	h, err := f.hold("h1", 1_000, 600, b)
	if err != nil || h.DiscountCents != 200 || h.PayableCents != 500 {
		t.Fatalf("hold B: %+v %v", h, err)
	}
	g, err := f.Checkout.GetHold(f.Ctx, "h1")
	if err != nil || g.PayableCents != 500 {
		t.Fatalf("GET: %+v %v", g, err)
	}
	c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "h1"})
	if err != nil || c.PayableCents != 500 {
		t.Fatalf("confirm: %+v %v", c, err)
	}
}
