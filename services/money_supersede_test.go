package services_test

import (
	"slices"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/reports"
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

// holdParked is the hold_parked flag of an order's row.
func (f *holdFixture) holdParked(order string) bool {
	f.T.Helper()
	var o checkout.CheckoutOrder
	if err := f.Backends.DB.Where("order_id = ?", order).First(&o).Error; err != nil {
		f.T.Fatal(err)
	}
	return o.HoldParked
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
	if want := []pricing.UnitRun{{First: 0, Count: 1, PerUnitCents: 70}, {First: 1, Count: 1, PerUnitCents: 70}}; !slices.Equal(units(t, rows[0]), want) {
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
		if !f.holdParked("o1") {
			t.Fatal("the hold that parked A's earlier rows says it parked none")
		}
		return f, a, refunded
	}
	// backAfterEnd: A's earlier rows are the order's again once the hold
	// ended, and a last return (after B, redeemed) counts them.
	backAfterEnd := func(t *testing.T, f *holdFixture, a *models.Coupon, refunded int64, last checkout.ReturnLine) {
		t.Helper()
		if sum, _ := f.moneyRowSum("o1", a.ID, 0); sum != 140 || len(f.storedRows("o1")) != 1 {
			t.Fatalf("A's rows after the hold ended: %+v; want its earlier 140 back", f.storedRows("o1"))
		}
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		f.moneyRedeem(b, "o1", cart)
		if refunded += f.moneyReturn("o1", "r2", last); refunded != 1_760 {
			t.Fatalf("refunded %d in all, paid 1760 (A's 140 and B's 100 off)", refunded)
		}
	}
	t.Run("Expired", func(t *testing.T) {
		f, a, refunded := setup(t, false)
		f.Clock.Advance(601 * time.Second)
		if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v; want the hold expired", n, err)
		}
		backAfterEnd(t, f, a, refunded, rl("l1", 2))
	})
	t.Run("LapsedAndTakenByAnotherOrder", func(t *testing.T) {
		// The hold past its time ends when another order holds A; that
		// path has not read o1's row, and still puts A's rows back.
		f, a, refunded := setup(t, true)
		f.Clock.Advance(601 * time.Second)
		if h, err := f.hold("o2", 10_000, 60, a); err != nil || h.DiscountCents != 700 {
			t.Fatalf("hold of A by o2: %+v %v; want 700 off", h, err)
		}
		if st := f.holdState("o1"); st != checkout.HoldExpired {
			t.Fatalf("o1's hold is %s, want expired", st)
		}
		backAfterEnd(t, f, a, refunded, rl("l1", 1))
	})
	for _, tc := range []struct {
		name        string
		returnFirst bool
		last        checkout.ReturnLine // what comes back after the release
	}{
		{"Released", false, rl("l1", 2)},
		{"ReleasedAfterReturn", true, rl("l1", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, a, refunded := setup(t, tc.returnFirst)
			if _, err := f.Checkout.Release(f.Ctx, "shop", "o1"); err != nil {
				t.Fatal(err)
			}
			if sum, _ := f.moneyRowSum("o1", a.ID, 0); sum != 140 || len(f.storedRows("o1")) != 1 {
				t.Fatalf("A's rows after the release: %+v; want its earlier 140 back", f.storedRows("o1"))
			}
			b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
			f.moneyRedeem(b, "o1", cart)
			if refunded += f.moneyReturn("o1", "r2", tc.last); refunded != 1_760 {
				t.Fatalf("refunded %d in all, paid 1760 (A's 140 and B's 100 off)", refunded)
			}
		})
	}
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

// The preview of a return by line is the return's own plan without the
// write: a coupon refunded off the order lowers both refunds alike, and a
// hold pending refuses both (409 held).
func TestMoneyReturnPreviewIsTheReturnsPlan(t *testing.T) {
	t.Run("AfterRefund", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		cart := checkout.Cart{Lines: []pricing.Line{line("l1", 2, 1_000)}}
		f.moneyRedeem(a, "o1", cart)
		f.moneyRedeem(b, "o1", cart)
		f.refundCoupon(a, "o1")
		p, err := f.Checkout.PreviewReturnLines(f.Ctx, "o1", []checkout.ReturnLine{rl("l1", 1)})
		if err != nil || p.RefundCents != 900 || p.DiscountReturnedCents != 50 || len(p.Lines) != 1 || p.Lines[0].DiscountCents != 100 {
			t.Fatalf("preview: %+v %v; want 900 refunded, 100 of discount on the unit, 50 of it B's back", p, err)
		}
		r, err := f.returnLines("o1", "r1", rl("l1", 1))
		if err != nil || r.RefundCents != p.RefundCents || r.DiscountReturnedCents != p.DiscountReturnedCents || !slices.Equal(r.Lines, p.Lines) {
			t.Fatalf("return: %+v %v; want the preview's %+v", r, err, p)
		}
	})
	t.Run("WhileHeld", func(t *testing.T) {
		f := newHoldFixture(t, services.Config{})
		a := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		b := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		cart := checkout.Cart{Lines: []pricing.Line{line("l1", 2, 1_000)}}
		f.moneyRedeem(a, "o1", cart)
		if _, err := f.holdCart("o1", cart, b); err != nil {
			t.Fatal(err)
		}
		_, err := f.Checkout.PreviewReturnLines(f.Ctx, "o1", []checkout.ReturnLine{rl("l1", 1)})
		if models.ErrorCode(err) != models.CodeHeld {
			t.Fatalf("preview while a hold is pending: %v, want held", err)
		}
		c := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		d := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
		if _, err := f.redeem(c, "o2", 1_000); err != nil {
			t.Fatal(err)
		}
		if _, err := f.hold("o2", 1_000, 60, d); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Checkout.PreviewReturnPart(f.Ctx, "o2", 100); models.ErrorCode(err) != models.CodeHeld {
			t.Fatalf("preview by amount while a hold is pending: %v, want held", err)
		}
	})
}

// A coupon of two actions (10% off the lines, then 500 off the order)
// refunded off an order and redeemed again after a return: every row's
// split by action adds up to the row's discount, its carried part
// included (the first action's), and the discount report's split by
// action adds up to the discount of the rows and to what came back, line
// by line and in total, after a last return by line (docs/pricing.md,
// "Several actions"; docs/returns.md, "A refund").
func TestMoneySupersedeActionsSumToTheRow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second []checkout.ReturnLine
	}{
		{"FirstLineThenSecond", []checkout.ReturnLine{rl("l1", 1)}, []checkout.ReturnLine{rl("l2", 1)}},
		{"FirstLineTwice", []checkout.ReturnLine{rl("l1", 1)}, []checkout.ReturnLine{rl("l1", 1)}},
		{"BothLinesThenTheRest", []checkout.ReturnLine{rl("l1", 1), rl("l2", 1)}, []checkout.ReturnLine{rl("l1", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHoldFixture(t, services.Config{})
			tp := f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
				tp.Stacking, tp.TotalStock, tp.PerUserLimit = models.StackingCombinable, 10, 10
				tp.Kind, tp.PercentOff, tp.MaxDiscountCents, tp.FaceValueCents = models.KindPercent, 10, 10_000, 0
				tp.Actions = []models.TemplateAction{{Kind: models.KindFixed, AppliesTo: models.AppliesToOrder, FaceValueCents: 500}}
			})
			a := f.claim(tp, "u1")
			cart := checkout.Cart{Lines: []pricing.Line{line("l1", 3, 1_000), line("l2", 1, 3_000)}}
			f.moneyRedeem(a, "o1", cart)
			f.moneyReturn("o1", "r1", tc.first...)
			f.refundCoupon(a, "o1")
			f.moneyRedeem(a, "o1", cart)
			f.moneyReturn("o1", "r2", tc.second...)
			var carried, discount, returned int64
			for _, r := range f.storedRows("o1") {
				var actions *string
				if err := f.Backends.DB.Raw("SELECT actions FROM order_line_discounts WHERE order_id = ? AND coupon_id = ? AND line_no = ?",
					r.OrderID, r.CouponID, r.LineNo).Row().Scan(&actions); err != nil {
					t.Fatal(err)
				}
				parts, err := core.DecodeActionParts(actions)
				if err != nil || len(parts) != 2 {
					t.Fatalf("line %d: parts %+v, %v", r.LineNo, parts, err)
				}
				if sum := parts[0].DiscountCents + parts[1].DiscountCents; sum != r.DiscountCents {
					t.Fatalf("line %d: the actions split %d, the row says %d (%d carried)", r.LineNo, sum, r.DiscountCents, r.CarriedCents)
				}
				carried, discount, returned = carried+r.CarriedCents, discount+r.DiscountCents, returned+r.ReturnedDiscountCents
			}
			if carried == 0 {
				t.Fatal("no row carries an earlier part: the case does not test the carried split")
			}
			rep, err := f.Reports.Discounts(f.Ctx, reports.DiscountRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var byAction, backByAction int64
			for _, a := range rep.Actions {
				byAction, backByAction = byAction+a.DiscountCents, backByAction+a.ReturnedDiscountCents
				if a.NetDiscountCents != a.DiscountCents-a.ReturnedDiscountCents {
					t.Fatalf("action %+v: net is not discount less returned", a)
				}
			}
			if byAction != discount || backByAction != returned {
				t.Fatalf("by action %d off, %d back; the rows %d off, %d back", byAction, backByAction, discount, returned)
			}
			if tl := rep.TotalsByLine; tl.DiscountCents != discount || tl.ReturnedDiscountCents != returned {
				t.Fatalf("report by line %+v; the rows %d off, %d back", tl, discount, returned)
			}
		})
	}
}
