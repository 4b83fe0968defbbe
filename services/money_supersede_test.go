package services_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// A coupon refunded off an order and taken again by it supersedes its
// earlier part there (docs/returns.md, "A refund"), on the units the order
// still keeps: its earlier part on the units returned before stays, paid
// and settled by those returns.

// refundCoupon refunds the coupon off the order.
func (f *holdFixture) refundCoupon(c *models.Coupon, order string) {
	f.T.Helper()
	if res, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: c.Code, OrderID: order, Cashier: "till"}); err != nil || res.Duplicate {
		f.T.Fatalf("refund of %s off %s: %+v %v", c.Code, order, res, err)
	}
}

// liveUseLog is the discount of the coupon's live use log row on the order.
func (f *holdFixture) liveUseLog(c *models.Coupon, order string) int64 {
	f.T.Helper()
	var lg models.UseLog
	if err := f.Backends.DB.Where("coupon_id = ? AND order_id = ? AND undo_flag = ?", c.ID, order, false).First(&lg).Error; err != nil {
		f.T.Fatal(err)
	}
	return lg.DiscountCents
}

// Two units of 1,000, A 7% off: 140 (70 each); one unit back (930 refunded); A
// refunded, then redeemed again: 70 on the kept unit. Its row keeps the 70
// of the returned unit beside the new 70, and the last return refunds 930:
// 1,860 in all, what was paid.
func TestMoneySupersedeReredeemAfterReturn(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 10_000, 7, 0), "u1")
	cart := checkout.Cart{Lines: []pricing.Line{line("l1", 2, 1_000)}}
	if res := f.moneyRedeem(a, "o1", cart); res.DiscountCents != 140 {
		t.Fatalf("A takes %d off, want 140", res.DiscountCents)
	}
	refunded := f.moneyReturn("o1", "r1", rl("l1", 1))
	if refunded != 930 {
		t.Fatalf("the first unit refunds %d, want 930", refunded)
	}
	f.refundCoupon(a, "o1")
	again := f.moneyRedeem(a, "o1", cart)
	if again.DiscountCents != 70 || again.PayableCents != 930 || len(again.Lines) != 1 || again.Lines[0].DiscountCents != 70 {
		t.Fatalf("A again: %+v; want 70 off on the kept unit, 930 to pay", again)
	}
	rows := f.storedRows("o1")
	if len(rows) != 1 || rows[0].DiscountCents != 140 || rows[0].ReturnedDiscountCents != 70 || rows[0].CarriedCents != 70 {
		t.Fatalf("A's rows: %+v; want one row of 140, 70 of it carried and returned", rows)
	}
	if want := []pricing.UnitRun{{First: 0, Count: 1, PerUnitCents: 70}, {First: 1, Count: 1, PerUnitCents: 70}}; !sameRuns(units(t, rows[0]), want) {
		t.Fatalf("A's units: %+v, want %+v", units(t, rows[0]), want)
	}
	if d := f.liveUseLog(a, "o1"); d != 70 {
		t.Fatalf("A's use log says %d off, want 70", d)
	}
	replay, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "o1", Cart: cart, Cashier: "till"})
	if err != nil || !replay.Duplicate || replay.DiscountCents != 70 || len(replay.Lines) != 1 || replay.Lines[0].DiscountCents != 70 {
		t.Fatalf("replay: %+v %v; want the duplicate, 70 off on the line", replay, err)
	}
	refunded += f.moneyReturn("o1", "r2", rl("l1", 1))
	if refunded != 1_860 {
		t.Fatalf("refunded %d in all, paid 1860", refunded)
	}
}

func sameRuns(a, b []pricing.UnitRun) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A coupon refunded off an order with lines and held on it again parks its
// earlier rows while the hold is pending: released, they are the order's
// again (paid: a later return counts them); confirmed, the confirmed rows
// supersede them and carry their part on the units returned before.
func TestMoneySupersedeHeldAgain(t *testing.T) {
	cart := checkout.Cart{Lines: []pricing.Line{line("l1", 2, 1_000)}}
	setup := func(t *testing.T, returnFirst bool) (*holdFixture, *models.Coupon, int64) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 10_000, 7, 0), "u1")
		f.moneyRedeem(a, "o1", cart)
		var refunded int64
		if returnFirst {
			refunded = f.moneyReturn("o1", "r1", rl("l1", 1))
		}
		f.refundCoupon(a, "o1")
		h, err := f.holdCart("o1", cart, a)
		if want := map[bool]int64{false: 140, true: 70}[returnFirst]; err != nil || h.DiscountCents != want {
			t.Fatalf("hold of A again: %+v %v; want %d off", h, err, want)
		}
		return f, a, refunded
	}
	t.Run("Released", func(t *testing.T) {
		f, a, _ := setup(t, false)
		if _, err := f.Checkout.Release(f.Ctx, "shop", "o1"); err != nil {
			t.Fatal(err)
		}
		if sum, _ := f.moneyRowSum("o1", a.ID, 0); sum != 140 || len(f.storedRows("o1")) != 1 {
			t.Fatalf("A's rows after the release: %+v; want its earlier 140 back", f.storedRows("o1"))
		}
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		f.moneyRedeem(b, "o1", cart)
		if refunded := f.moneyReturn("o1", "r1", rl("l1", 2)); refunded != 1_760 {
			t.Fatalf("the whole order back refunds %d, paid 1760 (A's 140 and B's 100 off)", refunded)
		}
	})
	t.Run("ReleasedAfterReturn", func(t *testing.T) {
		f, a, refunded := setup(t, true)
		if _, err := f.Checkout.Release(f.Ctx, "shop", "o1"); err != nil {
			t.Fatal(err)
		}
		if sum, _ := f.moneyRowSum("o1", a.ID, 0); sum != 140 || len(f.storedRows("o1")) != 1 {
			t.Fatalf("A's rows after the release: %+v; want its earlier 140 back", f.storedRows("o1"))
		}
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		f.moneyRedeem(b, "o1", cart)
		if refunded += f.moneyReturn("o1", "r2", rl("l1", 1)); refunded != 1_760 {
			t.Fatalf("refunded %d in all, paid 1760 (A's 140 and B's 100 off)", refunded)
		}
	})
	t.Run("ConfirmedAfterReturn", func(t *testing.T) {
		f, a, refunded := setup(t, true)
		c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1", Cart: cart})
		if err != nil || c.DiscountCents != 70 {
			t.Fatalf("confirm: %+v %v; want 70 off", c, err)
		}
		rows := f.storedRows("o1")
		if len(rows) != 1 || rows[0].CouponID != a.ID || rows[0].DiscountCents != 140 || rows[0].CarriedCents != 70 {
			t.Fatalf("A's rows after the confirm: %+v; want one row of 140, 70 of it carried", rows)
		}
		if d := f.liveUseLog(a, "o1"); d != 70 {
			t.Fatalf("A's use log says %d off, want 70", d)
		}
		if refunded += f.moneyReturn("o1", "r2", rl("l1", 1)); refunded != 1_860 {
			t.Fatalf("refunded %d in all, paid 1860", refunded)
		}
	})
}
