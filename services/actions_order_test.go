package services_test

import (
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/reports"
)

// "20% off + free shipping" on one code, validated, held, confirmed and
// returned by line (docs/pricing.md, worked example 15): 2 shirts at 2,000
// and trousers at 5,000, shipping 800. The percent takes 1,800 (400 per
// shirt, 1,000 off the trousers), the free shipping 800; each action's part
// is stored beside the coupon's; returning a shirt refunds 1,600 and gives
// back the percent's 400, and the discount report splits it by action.
func TestTwentyOffAndFreeShippingHeldConfirmedReturned(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 5_000, 20, 0)
	f.retemplate(tp, func(tp *models.Template) {
		tp.Actions = []models.TemplateAction{{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1_000}}
	})
	c := f.claim(tp, "u1")
	cart := pricing.Cart{ShippingCents: 800, Lines: []pricing.Line{line("shirt", 2, 2_000), line("trousers", 1, 5_000)}}

	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: checkout.Cart{Lines: cart.Lines, ShippingCents: 800}, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 2_600 || v.PayableCents != 7_200 || *v.ShippingDiscountCents != 800 ||
		!reflect.DeepEqual(lineCents(v.Lines), []int64{800, 1_000}) {
		t.Fatalf("validate %+v %v, want 2,600 off (800/1,000 and 800 of the shipping), 7,200 to pay", v, err)
	}
	pr := f.linedOrder("both", cart, c)
	if pr.DiscountCents != 2_600 || pr.ShippingDiscountCents != 800 {
		t.Fatalf("priced %+v", pr)
	}
	// Each row keeps its actions' parts: the shirt's 800 is all the
	// percent's, the shipping's 800 all the free shipping's.
	want := map[int]string{
		0:                       `[{"discount_cents":800,"units":[{"first":0,"count":2,"per_unit_cents":400}]},{"discount_cents":0}]`,
		1:                       `[{"discount_cents":1000,"units":[{"first":0,"count":1,"per_unit_cents":1000}]},{"discount_cents":0}]`,
		checkout.ShippingLineNo: `[{"discount_cents":0},{"discount_cents":800}]`,
	}
	var stored []struct {
		LineNo        int
		DiscountCents int64
		Actions       *string
	}
	if err := f.Backends.DB.Raw(`SELECT line_no, discount_cents, actions FROM order_line_discounts WHERE order_id = ? ORDER BY line_no`, "both").
		Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 {
		t.Fatalf("stored rows %+v, want 3", stored)
	}
	for _, r := range stored {
		if r.Actions == nil || *r.Actions != want[r.LineNo] {
			t.Fatalf("line %d: actions %v, want %s", r.LineNo, r.Actions, want[r.LineNo])
		}
	}

	res, err := f.returnLines("both", "r1", rl("shirt", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.RefundCents != 1_600 || res.DiscountReturnedCents != 400 || res.DiscountKeptCents != 2_200 {
		t.Fatalf("return of a shirt: %+v, want 1,600 refunded, 400 back, 2,200 kept", res)
	}
	if st := f.linedState("both"); st.Returned["shirt"] != 1 || st.UseLog[c.ID] != 2_200 {
		t.Fatalf("state after the return: %+v", st)
	}
	r, err := f.Reports.Discounts(f.Ctx, reports.DiscountRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantActions := []reports.DiscountAction{
		{TemplateID: tp.ID, Action: 0, Kind: models.KindPercent, DiscountCents: 1_800, ReturnedDiscountCents: 400, NetDiscountCents: 1_400},
		{TemplateID: tp.ID, Action: 1, Kind: models.KindFreeShipping, DiscountCents: 800, NetDiscountCents: 800},
	}
	if !reflect.DeepEqual(r.Actions, wantActions) {
		t.Fatalf("report actions %+v, want %+v", r.Actions, wantActions)
	}
	f.checkInvariants()
}

// A template of several actions is priced as one coupon by every path:
// its budget value adds up its actions' caps.
func TestTemplateOfSeveralActionsBudgetValue(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 5_000, 20, 0)
	f.retemplate(tp, func(tp *models.Template) {
		tp.Actions = []models.TemplateAction{{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1_000}}
	})
	got, err := f.Checkout.Template(f.Ctx, tp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ValueCents() != 6_000 || len(core.PricingCoupon(got, "X").Actions) != 1 {
		t.Fatalf("template %+v: value %d", got, got.ValueCents())
	}
}

// "20% off + free shipping" in one step, then a fixed coupon redeemed on
// the same order: the second is priced on what both actions left (the
// lines less 20%, no shipping left), and each coupon's rows are stored.
func TestSeveralActionsRedeemedThenAnotherCoupon(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	both := f.tmpl(models.StackingCombinable, 5_000, 20, 0)
	f.retemplate(both, func(tp *models.Template) {
		tp.Actions = []models.TemplateAction{{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1_000}}
	})
	fixed := f.tmpl(models.StackingCombinable, 1_000, 0, 0)
	c1, c2 := f.claim(both, "u1"), f.claim(fixed, "u1")
	cart := checkout.Cart{ShippingCents: 800, Lines: []pricing.Line{line("shirt", 2, 2_000), line("trousers", 1, 5_000)}}
	r1, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c1.Code, OrderID: "two", Cart: cart})
	if err != nil || r1.DiscountCents != 2_600 || r1.PayableCents != 7_200 || !reflect.DeepEqual(lineCents(r1.Lines), []int64{800, 1_000}) {
		t.Fatalf("first %+v %v", r1, err)
	}
	// 1,000 over what is left, 3,200 and 4,000: 444.4 and 555.6.
	r2, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c2.Code, OrderID: "two", Cart: cart})
	if err != nil || r2.DiscountCents != 1_000 || r2.PayableCents != 6_200 || !reflect.DeepEqual(lineCents(r2.Lines), []int64{444, 556}) {
		t.Fatalf("second %+v %v", r2, err)
	}
	rows := f.storedRows("two")
	var sum int64
	for _, r := range rows {
		sum += r.DiscountCents
	}
	if len(rows) != 5 || sum != 3_600 {
		t.Fatalf("rows %+v (sum %d), want 5 rows and 3,600", rows, sum)
	}
	f.checkInvariants()
}
