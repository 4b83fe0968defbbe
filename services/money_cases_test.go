package services_test

import (
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// Worked examples of the invariants TestCheckoutMoneyModel holds
// (docs/guarantees.md, "Money over any sequence"): an order with lines is
// refunded, over all its returns, exactly what it paid.

// moneyTwoLines is the cart of two lines of one 1,000 unit each.
func moneyTwoLines() checkout.Cart {
	return checkout.Cart{Lines: []pricing.Line{line("l1", 1, 1_000), line("l2", 1, 1_000)}}
}

// moneyRedeem redeems c on order with the cart, in one step.
func (f *holdFixture) moneyRedeem(c *models.Coupon, order string, cart checkout.Cart) *checkout.RedeemResult {
	f.T.Helper()
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, Cart: cart, Cashier: "till"})
	if err != nil || res.Duplicate {
		f.T.Fatalf("redeem %s on %s: %+v %v", c.Code, order, res, err)
	}
	return res
}

// moneyReturn returns the units and answers what the shopper gets back.
func (f *holdFixture) moneyReturn(order, id string, lines ...checkout.ReturnLine) int64 {
	f.T.Helper()
	res, err := f.returnLines(order, id, lines...)
	if err != nil || res.Duplicate {
		f.T.Fatalf("return %s of %s: %+v %v", id, order, res, err)
	}
	return res.RefundCents
}

// moneyRowSum is what a coupon's stored rows on an order add up to, and its
// part of the line at lineNo.
func (f *holdFixture) moneyRowSum(order string, couponID int64, lineNo int) (sum, onLine int64) {
	f.T.Helper()
	for _, r := range f.storedRows(order) {
		if r.CouponID != couponID {
			continue
		}
		sum += r.DiscountCents
		if r.LineNo == lineNo {
			onLine += r.DiscountCents
		}
	}
	return sum, onLine
}

// A coupon redeemed or held on an order after one of its lines came back
// is priced on the units kept: nothing of it on the returned line, and the
// order refunds what it paid, no more.
func TestMoneyCaseCouponAfterLineReturn(t *testing.T) {
	t.Run("RedeemFixed", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		f.moneyRedeem(a, "o1", moneyTwoLines())
		refunded := f.moneyReturn("o1", "r1", rl("l1", 1))
		if refunded != 950 {
			t.Fatalf("return of line 1 refunds %d, want 950", refunded)
		}
		if res := f.moneyRedeem(b, "o1", moneyTwoLines()); res.DiscountCents != 100 {
			t.Fatalf("B takes %d off, want 100", res.DiscountCents)
		}
		if sum, onReturned := f.moneyRowSum("o1", b.ID, 0); sum != 100 || onReturned != 0 {
			t.Fatalf("B stored %d, %d of it on the returned line; want 100, none", sum, onReturned)
		}
		refunded += f.moneyReturn("o1", "r2", rl("l2", 1))
		if refunded != 1_800 {
			t.Fatalf("refunded %d in all, paid 1800", refunded)
		}
	})
	t.Run("RedeemPercentAnswersWhatItStores", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 10_000, 99, 0), "u1")
		f.moneyRedeem(a, "o1", moneyTwoLines())
		refunded := f.moneyReturn("o1", "r1", rl("l1", 1))
		res := f.moneyRedeem(b, "o1", moneyTwoLines())
		if sum, onReturned := f.moneyRowSum("o1", b.ID, 0); sum != res.DiscountCents || onReturned != 0 || sum > 950 {
			t.Fatalf("B answered %d off, stored %d (%d on the returned line); want the answer stored, at most the 950 kept",
				res.DiscountCents, sum, onReturned)
		}
		refunded += f.moneyReturn("o1", "r2", rl("l2", 1))
		if paid := 2_000 - 100 - res.DiscountCents; refunded != paid {
			t.Fatalf("refunded %d in all, paid %d", refunded, paid)
		}
	})
	t.Run("HoldAndConfirm", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		f.moneyRedeem(a, "o1", moneyTwoLines())
		refunded := f.moneyReturn("o1", "r1", rl("l1", 1))
		if _, err := f.holdCart("o1", moneyTwoLines(), b); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"}); err != nil {
			t.Fatal(err)
		}
		if sum, onReturned := f.moneyRowSum("o1", b.ID, 0); sum != 100 || onReturned != 0 {
			t.Fatalf("B stored %d, %d of it on the returned line; want 100, none", sum, onReturned)
		}
		refunded += f.moneyReturn("o1", "r2", rl("l2", 1))
		if refunded != 1_800 {
			t.Fatalf("refunded %d in all, paid 1800", refunded)
		}
	})
	t.Run("ReturnWhileHeld", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 200, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 300, 0, 0), "u1")
		f.moneyRedeem(a, "o1", moneyTwoLines())
		if _, err := f.holdCart("o1", moneyTwoLines(), b); err != nil {
			t.Fatal(err)
		}
		// A return while B is only held is refused (409 held): B's
		// allocation covers the units it would take back, and it is not
		// paid yet. Nothing changed.
		_, err := f.Checkout.ReturnLines(f.Ctx, "pos", "o1", "r1", []checkout.ReturnLine{rl("l1", 1)})
		if e := wantCode(t, err, models.CodeHeld); !strings.Contains(e.Message, "confirm or release it before a return") {
			t.Fatalf("return while held: %q", e.Message)
		}
		if sum, _ := f.moneyRowSum("o1", b.ID, 0); sum != 300 {
			t.Fatalf("B stores %d after the refused return, want its 300", sum)
		}
		c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"})
		if err != nil || c.DiscountCents != 300 {
			t.Fatalf("confirm: %+v %v; want B's 300 as held", c, err)
		}
		refunded := f.moneyReturn("o1", "r1", rl("l1", 1))
		refunded += f.moneyReturn("o1", "r2", rl("l2", 1))
		if paid := 2_000 - 200 - c.DiscountCents; refunded != paid || paid != 1_500 {
			t.Fatalf("refunded %d in all, paid %d (B confirmed at %d off)", refunded, paid, c.DiscountCents)
		}
	})
}

// Validate with an order id prices on what the coupons already on the
// order left, as the hold does; the payable of hold, confirm and GET is
// what the order pays after every coupon on it.
func TestMoneyCaseValidateSeesEarlierCoupons(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 900, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 10_000, 50, 0), "u1")
	cart := checkout.Cart{Lines: []pricing.Line{line("l1", 2, 1_000)}}
	f.moneyRedeem(a, "o1", cart)
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o1", Cart: cart, CouponCodes: []string{b.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 550 || v.PayableCents != 550 {
		t.Fatalf("validate B: %+v %v; want ok, 550 off, 550 to pay", v, err)
	}
	h, err := f.holdCart("o1", cart, b)
	if err != nil || h.DiscountCents != 550 || h.PayableCents != 550 {
		t.Fatalf("hold B: %+v %v; want 550 off, 550 to pay", h, err)
	}
	c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"})
	if err != nil || c.DiscountCents != 550 || c.PayableCents != 550 {
		t.Fatalf("confirm: %+v %v; want 550 off, 550 to pay", c, err)
	}
	g, err := f.Checkout.GetHold(f.Ctx, "o1")
	if err != nil || g.PayableCents != 550 {
		t.Fatalf("GET hold: %+v %v; want 550 to pay", g, err)
	}
}

// A coupon refunded whole leaves what the order paid as it was: returning
// every line then refunds exactly that.
func TestMoneyCaseRefundThenReturnAll(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 300, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 200, 0, 0), "u1")
	f.moneyRedeem(a, "o1", moneyTwoLines())
	if res := f.moneyRedeem(b, "o1", moneyTwoLines()); res.PayableCents != 1_500 {
		t.Fatalf("payable after both coupons %d, want 1500", res.PayableCents)
	}
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: a.Code, OrderID: "o1", Cashier: "till"}); err != nil {
		t.Fatal(err)
	}
	refunded := f.moneyReturn("o1", "r1", rl("l1", 1), rl("l2", 1))
	if refunded != 1_500 {
		t.Fatalf("returning every line refunds %d, paid 1500", refunded)
	}
}
