package services_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// conditioned makes a percent template (bp basis points, capped at
// 100,000) on the items of target, gated by cond, with edit applied.
func (f *holdFixture) conditioned(bp int64, target models.TemplateTarget, cond models.TemplateCondition, edit func(*models.Template)) *models.Template {
	f.T.Helper()
	return f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
		tp.TotalStock, tp.PerUserLimit = 1000, 100
		tp.Kind, tp.PercentOffBP, tp.MaxDiscountCents, tp.FaceValueCents = models.KindPercent, bp, 100_000, 0
		tp.AppliesTo, tp.Target, tp.Condition = models.AppliesToItems, target, &cond
		if edit != nil {
			edit(tp)
		}
	})
}

// checkConditionNotMet checks a validation's refusal and a hold's of a
// cart that does not meet the coupon's condition: condition_not_met
// saying what is missing, nothing held.
func (f *holdFixture) checkConditionNotMet(cart checkout.Cart, c *models.Coupon, order, want string) {
	f.T.Helper()
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: cart, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "condition_not_met" || v.DiscountCents != 0 || len(v.Coupons) != 1 ||
		v.Coupons[0].Code != models.CodeConditionNotMet || v.Coupons[0].Message != want {
		f.T.Fatalf("validate: %+v %v, want condition_not_met %q", v, err, want)
	}
	_, err = f.holdCart(order, cart, c)
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeConditionNotMet || e.Field != "lines" || e.Message != want {
		f.T.Fatalf("hold: %v, want condition_not_met on lines %q", err, want)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued {
		f.T.Fatalf("coupon %s after the refused hold, want issued", got.Status)
	}
}

// "Buy 2 trousers, get 10% off jackets", validated, held, confirmed and
// returned by line: the trousers meet the condition and take nothing, the
// jacket takes 1,200; returning the trousers gives nothing back and the
// jacket keeps its discount, returning the jacket gives it back
// (docs/pricing.md, worked example 16).
func TestConditionTrousersJacketsHeldConfirmedReturned(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.conditioned(1_000, models.TemplateTarget{CategoryIDs: []string{"jackets"}},
		models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"trousers"}}, MinQuantity: 2}, nil)
	if got, err := f.Checkout.Template(f.Ctx, tp.ID); err != nil || got.Condition == nil || got.Condition.MinQuantity != 2 ||
		!reflect.DeepEqual(got.Condition.Target.CategoryIDs, []string{"trousers"}) {
		t.Fatalf("stored condition %+v (%v)", got, err)
	}
	c := f.claim(tp, "u1")
	one := checkout.Cart{ShippingCents: 900, Lines: []pricing.Line{ln("trousers", 1, 4_000, "trousers"), ln("jacket", 1, 12_000, "jackets")}}
	f.checkConditionNotMet(one, c, "tj-one", "coupon "+c.Code+" needs 2 items of category trousers, the cart has 1")

	cart := pricing.Cart{ShippingCents: 900, Lines: []pricing.Line{ln("trousers", 2, 4_000, "trousers"), ln("jacket", 1, 12_000, "jackets")}}
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: checkout.Cart{Lines: cart.Lines, ShippingCents: 900}, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 1_200 || !reflect.DeepEqual(lineCents(v.Lines), []int64{0, 1_200}) {
		t.Fatalf("validate of 2 trousers: %+v %v", v, err)
	}
	pr := f.linedOrder("tj", cart, c)
	if pr.DiscountCents != 1_200 || pr.Lines[0].DiscountCents != 0 || pr.Lines[1].DiscountCents != 1_200 || pr.PayableCents != 8_000+12_000+900-1_200 {
		t.Fatalf("allocation %+v", pr)
	}
	res, err := f.returnLines("tj", "r1", rl("trousers", 2))
	if err != nil || res.RefundCents != 8_000 || res.DiscountReturnedCents != 0 {
		t.Fatalf("return of the trousers: %+v %v", res, err)
	}
	if st := f.linedState("tj"); st.UseLog[c.ID] != 1_200 || st.Returned["trousers"] != 2 {
		t.Fatalf("after the trousers came back: %+v", st)
	}
	res, err = f.returnLines("tj", "r2", rl("jacket", 1))
	if err != nil || res.RefundCents != 10_800 || res.DiscountReturnedCents != 1_200 {
		t.Fatalf("return of the jacket: %+v %v", res, err)
	}
	f.checkInvariants()
}

// "Buy 2 of A, get 1 of B free, again for every 2 more": 4 A give 2 B
// free, the cheapest first; returning a free B gives back its 800, a paid
// one nothing (docs/pricing.md, worked example 17).
func TestBuyAGetBHeldConfirmedReturned(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.conditioned(10_000, models.TemplateTarget{SKUs: []string{"sku-b"}},
		models.TemplateCondition{Target: models.TemplateTarget{SKUs: []string{"sku-a"}}, MinQuantity: 2, Repeat: true},
		func(tp *models.Template) { tp.MaxUnitsPerOrder = 1 })
	c := f.claim(tp, "u1")
	f.checkConditionNotMet(checkout.Cart{Lines: []pricing.Line{line("a", 1, 1_500), line("b", 3, 800)}}, c, "ab-one",
		"coupon "+c.Code+" needs 2 items of SKU sku-a, the cart has 1")

	cart := pricing.Cart{Lines: []pricing.Line{line("a", 4, 1_500), line("b", 3, 800)}}
	pr := f.linedOrder("ab", cart, c)
	want := []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 800}}
	if pr.DiscountCents != 1_600 || pr.Lines[0].DiscountCents != 0 || !reflect.DeepEqual(pr.Coupons[0].Lines[0].Units, want) {
		t.Fatalf("allocation %+v", pr)
	}
	for _, u := range []struct {
		id             string
		refund, backed int64
	}{{"r1", 0, 800}, {"r2", 0, 800}, {"r3", 800, 0}} {
		res, err := f.returnLines("ab", u.id, rl("b", 1))
		if err != nil || res.RefundCents != u.refund || res.DiscountReturnedCents != u.backed {
			t.Fatalf("return %s of one B: %+v %v, want refund %d, %d back", u.id, res, err, u.refund, u.backed)
		}
	}
	if st := f.linedState("ab"); st.UseLog[c.ID] != 0 || st.Returned["b"] != 3 || st.Returned["a"] != 0 {
		t.Fatalf("after every B came back: %+v", st)
	}
	f.checkInvariants()
}

// A tiered coupon on the shipping, held and confirmed: 6,000 of lines
// meet the 300 tier; 12,000 the 2,000 one, at most the 900 of shipping (docs/pricing.md, worked
// example 18).
func TestTiersOnShippingHeldConfirmed(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
		tp.TotalStock, tp.PerUserLimit, tp.FaceValueCents = 1000, 100, 0
		tp.Kind, tp.AppliesTo, tp.MaxDiscountCents = models.KindTiered, models.AppliesToShipping, 1_000
		tp.Tiers = []models.Tier{{MinCents: 5_000, OffCents: 300}, {MinCents: 10_000, OffCents: 2_000}}
	})
	c := f.claim(tp, "u1")
	small := checkout.Cart{ShippingCents: 900, Lines: []pricing.Line{line("x", 1, 6_000)}}
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: small, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 300 || v.ShippingDiscountCents == nil || *v.ShippingDiscountCents != 300 {
		t.Fatalf("validate of 6,000: %+v %v", v, err)
	}
	pr := f.linedOrder("ship", pricing.Cart{ShippingCents: 900, Lines: []pricing.Line{line("x", 2, 6_000)}}, c)
	if pr.DiscountCents != 900 || pr.ShippingDiscountCents != 900 || pr.Lines[0].DiscountCents != 0 {
		t.Fatalf("allocation %+v", pr)
	}
	f.checkInvariants()
}
