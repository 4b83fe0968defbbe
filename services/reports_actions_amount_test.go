package services_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/reports"
)

// actionsTmpl is a combinable template whose first action is set by first
// and whose further actions are more.
func (f *holdFixture) actionsTmpl(first func(*models.Template), more ...models.TemplateAction) *models.Template {
	return f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
		tp.Stacking, tp.TotalStock, tp.PerUserLimit = models.StackingCombinable, 100, 100
		first(tp)
		tp.Actions = more
	})
}

// fixedThenPercent is 500 off, then 5% of what is left.
func (f *holdFixture) fixedThenPercent() *models.Template {
	return f.actionsTmpl(func(tp *models.Template) { tp.FaceValueCents = 500 },
		models.TemplateAction{Kind: models.KindPercent, AppliesTo: models.AppliesToOrder, PercentOff: 5, MaxDiscountCents: 100_000})
}

// percentThenShipping is 10% off (up to 3,000), then free shipping (up to
// 1,000): an amount-only order has no shipping, so its second action
// takes nothing.
func (f *holdFixture) percentThenShipping() *models.Template {
	return f.actionsTmpl(func(tp *models.Template) {
		tp.Kind, tp.PercentOff, tp.MaxDiscountCents, tp.FaceValueCents = models.KindPercent, 10, 3_000, 0
	}, models.TemplateAction{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1_000})
}

func (f *holdFixture) redeemAmount(c *models.Coupon, order string, amount int64) int64 {
	f.T.Helper()
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: amount, Cashier: "till"})
	if err != nil || res.Duplicate {
		f.T.Fatalf("redeem %s on %s for %d: %+v %v", c.Code, order, amount, res, err)
	}
	return res.DiscountCents
}

func (f *holdFixture) returnAmount(order, id string, cents int64) *checkout.ReturnResult {
	f.T.Helper()
	res, err := f.Checkout.ReturnPart(f.Ctx, "pos", order, id, cents)
	if err != nil || res.Duplicate {
		f.T.Fatalf("return %s of %d off %s: %+v %v", id, cents, order, res, err)
	}
	return res
}

func (f *holdFixture) actionReport() []reports.DiscountAction {
	f.T.Helper()
	rep, err := f.Reports.Discounts(f.Ctx, reports.DiscountRequest{})
	if err != nil {
		f.T.Fatal(err)
	}
	return rep.Actions
}

// TestDiscountActionsOfAnAmountOnlyOrder: 500 off + 5% on an amount-only
// order of 10,000 takes 500 + 475; returning 4,000 prices it again on
// 6,000 (500 + 275), so the percent gives 200 back and the fixed nothing
// (docs/pricing.md, "Returns"). 10% + free shipping on 20,000 takes 2,000
// and 0. The report splits both by action (docs/reports.md).
func TestDiscountActionsOfAnAmountOnlyOrder(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fp, ps := f.fixedThenPercent(), f.percentThenShipping()
	if d := f.redeemAmount(f.claim(fp, "u1"), "o1", 10_000); d != 975 {
		t.Fatalf("discount %d, want 975", d)
	}
	if d := f.redeemAmount(f.claim(ps, "u2"), "o2", 20_000); d != 2_000 {
		t.Fatalf("discount %d, want 2000", d)
	}
	if res := f.returnAmount("o1", "r1", 4_000); res.DiscountKeptCents != 775 || res.ClawbackCents != 200 {
		t.Fatalf("return %+v, want 775 kept, 200 back", res)
	}
	want := []reports.DiscountAction{
		{TemplateID: fp.ID, Action: 0, Kind: models.KindFixed, DiscountCents: 500, NetDiscountCents: 500},
		{TemplateID: fp.ID, Action: 1, Kind: models.KindPercent, DiscountCents: 475, ReturnedDiscountCents: 200, NetDiscountCents: 275},
		{TemplateID: ps.ID, Action: 0, Kind: models.KindPercent, DiscountCents: 2_000, NetDiscountCents: 2_000},
		{TemplateID: ps.ID, Action: 1, Kind: models.KindFreeShipping},
	}
	if got := f.actionReport(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("by action\n got %+v\nwant %+v", got, want)
	}
	// The full return refunds the coupons: their use is undone and the
	// report no longer counts them, as for an order with lines.
	f.returnAmount("o1", "r2", 6_000)
	if got := f.actionReport(); fmt.Sprint(got) != fmt.Sprint(want[2:]) {
		t.Fatalf("by action after the full return\n got %+v\nwant %+v", got, want[2:])
	}
}

// useLogActions is the live use log row of a coupon on an order with its
// actions' parts.
func (f *holdFixture) useLogActions(c *models.Coupon, order string) (models.UseLog, []core.UseLogAction) {
	f.T.Helper()
	var lg models.UseLog
	if err := f.Backends.DB.Where("coupon_id = ? AND order_id = ?", c.ID, order).First(&lg).Error; err != nil {
		f.T.Fatal(err)
	}
	parts, err := core.DecodeUseLogActions(lg.Actions)
	if err != nil {
		f.T.Fatal(err)
	}
	return lg, parts
}

// TestMoneyAmountOnlyActionsSumToTheUseLog runs random sequences on
// amount-only orders (redeem two coupons of two actions, partial returns
// by amount, a refund and a redemption again, the full return): after
// every step each use log row's actions' parts add up to what the coupon
// was redeemed with and to its discount_cents now, and the report's split
// by action sums exactly to the live rows' discounts and returned parts.
func TestMoneyAmountOnlyActionsSumToTheUseLog(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			f := newHoldFixture(t, services.Config{})
			fp, ps := f.fixedThenPercent(), f.percentThenShipping()
			order, amount := "o1", 5_000+rng.Int64N(45_000)
			cs := []*models.Coupon{f.claim(fp, "u1"), f.claim(ps, "u1")}
			given := map[int64]int64{}
			for _, c := range cs {
				given[c.ID] = f.redeemAmount(c, order, amount)
			}
			left, n := amount, 0
			check := func(step string) {
				t.Helper()
				var off, back int64
				for _, c := range cs {
					lg, parts := f.useLogActions(c, order)
					if len(parts) != 2 {
						t.Fatalf("%s: coupon %d parts %+v", step, c.ID, parts)
					}
					var took, kept int64
					for _, p := range parts {
						took, kept = took+p.DiscountCents, kept+p.KeptCents
					}
					if took != given[c.ID] || kept != lg.DiscountCents {
						t.Fatalf("%s: coupon %d parts %+v take %d keep %d; redeemed with %d, row says %d", step, c.ID, parts, took, kept, given[c.ID], lg.DiscountCents)
					}
					if !lg.UndoFlag {
						off, back = off+took, back+took-kept
					}
				}
				var repOff, repBack int64
				for _, a := range f.actionReport() {
					repOff, repBack = repOff+a.DiscountCents, repBack+a.ReturnedDiscountCents
					if a.NetDiscountCents != a.DiscountCents-a.ReturnedDiscountCents {
						t.Fatalf("%s: action %+v: net is not discount less returned", step, a)
					}
				}
				if repOff != off || repBack != back {
					t.Fatalf("%s: report %d off, %d back; the live rows %d off, %d back", step, repOff, repBack, off, back)
				}
			}
			check("redeemed")
			refunded := false
			for left > 1 && n < 4 {
				n++
				if !refunded && (n == 2 && seed%2 == 0 || rng.IntN(3) == 0) {
					c := cs[rng.IntN(2)]
					f.refundCoupon(c, order)
					check(fmt.Sprintf("refund of %d", c.ID))
					given[c.ID] = f.redeemAmount(c, order, amount)
					check(fmt.Sprintf("redeemed %d again", c.ID))
					refunded = true
					continue
				}
				r := 1 + rng.Int64N(left-1)
				left -= r
				f.returnAmount(order, fmt.Sprintf("r%d", n), r)
				check(fmt.Sprintf("return of %d, %d kept", r, left))
			}
			f.returnAmount(order, "last", left)
			check("full return")
			if got := f.actionReport(); len(got) != 0 {
				t.Fatalf("after the full return the report splits %+v", got)
			}
		})
	}
}

// TestDiscountActionsOfAConfirmedHold: a hold of an amount-only order
// confirmed keeps each action's part of its plan as a one-step redemption
// does (500 off + 5% on 10,000: 500 + 475).
func TestDiscountActionsOfAConfirmedHold(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fp := f.fixedThenPercent()
	c := f.claim(fp, "u1")
	if _, err := f.hold("o1", 10_000, 60, c); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1", OrderAmountCents: 10_000, Cashier: "web"}); err != nil {
		t.Fatal(err)
	}
	lg, parts := f.useLogActions(c, "o1")
	if want := "[{500 500} {475 475}]"; lg.DiscountCents != 975 || fmt.Sprint(parts) != want {
		t.Fatalf("row %d off, parts %v; want 975, %s", lg.DiscountCents, parts, want)
	}
	f.returnAmount("o1", "r1", 4_000)
	want := []reports.DiscountAction{
		{TemplateID: fp.ID, Action: 0, Kind: models.KindFixed, DiscountCents: 500, NetDiscountCents: 500},
		{TemplateID: fp.ID, Action: 1, Kind: models.KindPercent, DiscountCents: 475, ReturnedDiscountCents: 200, NetDiscountCents: 275},
	}
	if got := f.actionReport(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("by action\n got %+v\nwant %+v", got, want)
	}
}
