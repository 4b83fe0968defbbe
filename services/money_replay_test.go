package services_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// A replayed redemption answers the payable of its first answer, kept with
// it (docs/checkout.md, "Replays"), whatever came to the order since:
// another coupon, a return.
func TestMoneyReplayAnswersFirstPayable(t *testing.T) {
	t.Run("Amount", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 50, 0, 0), "u1")
		first, err := f.redeem(a, "o1", 1_000)
		if err != nil || first.PayableCents != 900 {
			t.Fatalf("A: %+v %v; want 900 to pay", first, err)
		}
		if r, err := f.redeem(b, "o1", 1_000); err != nil || r.PayableCents != 850 {
			t.Fatalf("B: %+v %v; want 850 to pay", r, err)
		}
		if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o1", "r1", 300); err != nil {
			t.Fatal(err)
		}
		again, err := f.redeem(a, "o1", 1_000)
		if err != nil || !again.Duplicate || again.PayableCents != 900 {
			t.Fatalf("replay of A: %+v %v; want the duplicate, 900 to pay", again, err)
		}
	})
	t.Run("Lines", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 50, 0, 0), "u1")
		cart := checkout.Cart{Lines: []pricing.Line{line("l1", 1, 1_000), line("l2", 1, 500)}}
		first := f.moneyRedeem(a, "o1", cart)
		if first.PayableCents != 1_400 {
			t.Fatalf("A: %+v; want 1400 to pay", first)
		}
		if r := f.moneyRedeem(b, "o1", cart); r.PayableCents != 1_350 {
			t.Fatalf("B: %+v; want 1350 to pay", r)
		}
		f.moneyReturn("o1", "r1", rl("l2", 1))
		again, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "o1", Cart: cart, Cashier: "till"})
		if err != nil || !again.Duplicate || again.PayableCents != 1_400 {
			t.Fatalf("replay of A: %+v %v; want the duplicate, 1400 to pay", again, err)
		}
	})
}
