package services_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestAutomaticOfferRedeem: a one-step redemption of a typed combinable
// code on a cart a live combinable offer joins takes both, the offer's
// claim counted once; sent again it changes nothing; below the offer's
// minimum only the typed code is redeemed (docs/automatic-offers.md).
func TestAutomaticOfferRedeem(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newAutoFixture(t, 10*500, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		req := checkout.RedeemRequest{CouponCode: a.Code, OrderID: "r-1", OrderAmountCents: 6000, UserID: "bob", Cashier: "till"}
		for i, dup := range []bool{false, true} {
			res, err := f.Checkout.Redeem(f.Ctx, req)
			if err != nil || res.Duplicate != dup || res.Coupon.Code != a.Code || res.Coupon.Status != models.CouponUsed ||
				res.OrderAmountCents != 6000 || res.DiscountCents != 300 || res.PayableCents != 5200 || res.Lined {
				t.Fatalf("redemption %d: %+v, %v", i, res, err)
			}
			byTemplate := map[int64]models.Coupon{}
			for _, c := range f.Coupons() {
				byTemplate[c.TemplateID] = c
			}
			offer := byTemplate[f.tp.ID]
			if len(byTemplate) != 2 || f.couponCount() != 2 || byTemplate[typed.ID].Status != models.CouponUsed ||
				offer.Status != models.CouponUsed || offer.UserID != "bob" || offer.OrderID == nil || *offer.OrderID != "r-1" {
				t.Fatalf("after redemption %d: coupons %+v", i, f.Coupons())
			}
			if f.remaining() != 9 || f.ordinals("bob") != "1" || f.budgetLeft() != 10*500-300-500 {
				t.Fatalf("after redemption %d: offer's stock %d, bob's ordinals %q, budget %d", i, f.remaining(), f.ordinals("bob"), f.budgetLeft())
			}
		}
		f.assertAgree(f.campaign, f.tp, typed)
	})
	t.Run("Lined", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		cart := checkout.Cart{Lines: []checkout.Line{{ID: "a", SKU: "A", Quantity: 2, UnitPriceCents: 2000}, {ID: "b", SKU: "B", Quantity: 1, UnitPriceCents: 2000}}}
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "r-1", UserID: "bob", Cashier: "till", Cart: cart})
		if err != nil || !res.Lined || res.DiscountCents != 300 || res.PayableCents != 5200 || len(res.Lines) != 2 {
			t.Fatalf("redemption: %+v, %v", res, err)
		}
		// The typed coupon's own part of each line, as its replay answers it.
		for i, want := range []int64{200, 100} {
			l := res.Lines[i]
			if l.DiscountCents != want || len(l.Coupons) != 1 || l.Coupons[0].CouponCode != a.Code || l.Coupons[0].DiscountCents != want {
				t.Fatalf("line %d: %+v, want %d of %s", i, l, want, a.Code)
			}
		}
		if res.ShippingDiscountCents != 0 || f.remaining() != 9 || f.couponCount() != 2 {
			t.Fatalf("shipping %d; offer's stock %d; %d coupons", res.ShippingDiscountCents, f.remaining(), f.couponCount())
		}
	})
	t.Run("BelowOfferMinimum", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "r-1", OrderAmountCents: 4000, UserID: "bob"})
		if err != nil || res.DiscountCents != 300 || res.PayableCents != 3700 || f.couponCount() != 1 || f.remaining() != 10 {
			t.Fatalf("redemption: %+v, %v; %d coupons, offer's stock %d", res, err, f.couponCount(), f.remaining())
		}
	})
	t.Run("SharedCode", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) {
			tp.CodeMode, tp.SharedCode, tp.Stacking = models.CodeModeShared, "poster42", models.StackingCombinable
		})
		for i, dup := range []bool{false, true} {
			res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "POSTER42", OrderID: "r-1", OrderAmountCents: 6000, UserID: "bob"})
			if err != nil || res.Duplicate != dup || res.DiscountCents != 300 || res.PayableCents != 5200 || res.Coupon.Status != models.CouponUsed ||
				f.couponCount() != 2 || f.remaining() != 9 || f.ordinals("bob") != "1" {
				t.Fatalf("redemption %d: %+v, %v; %d coupons, offer's stock %d", i, res, err, f.couponCount(), f.remaining())
			}
		}
	})
	t.Run("OfferLimitReached", func(t *testing.T) {
		// Bob took the offer once, his limit: the code is redeemed alone.
		f := newAutoFixture(t, 0, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		if _, err := holdAuto(f.Svc, f, "o-0", "bob", 6000); err != nil {
			t.Fatal(err)
		}
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "r-1", OrderAmountCents: 6000, UserID: "bob"})
		if err != nil || res.DiscountCents != 300 || res.PayableCents != 5700 || f.couponCount() != 2 || f.remaining() != 9 {
			t.Fatalf("redemption: %+v, %v; %d coupons, offer's stock %d", res, err, f.couponCount(), f.remaining())
		}
	})
	t.Run("ErrBelowMinimum", func(t *testing.T) {
		// The offer would join, the code is refused: nothing is taken.
		f := newAutoFixture(t, 0, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) {
			tp.Stacking, tp.MinOrderCents = models.StackingCombinable, 7000
		})
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "r-1", OrderAmountCents: 6000, UserID: "bob"})
		assertClaimCode(t, err, models.CodeBelowMinimum)
		if c := f.couponOf(a.Code); c.Status != models.CouponIssued || f.couponCount() != 1 || f.remaining() != 10 || f.ordinals("bob") != "" {
			t.Fatalf("after the refusal: %s, %d coupons, offer's stock %d, ordinals %q", c.Status, f.couponCount(), f.remaining(), f.ordinals("bob"))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "nosuch", OrderID: "r-1", OrderAmountCents: 6000, UserID: "bob"})
		assertClaimCode(t, err, models.CodeNotFound)
		if f.couponCount() != 0 || f.remaining() != 10 {
			t.Fatalf("%d coupons, offer's stock %d", f.couponCount(), f.remaining())
		}
	})
}

// TestAutomaticOfferUsable: the usable coupons list the live offers a
// checkout of the best coupons would take, priced with them, and none
// the cart or the user's claims keep out (docs/automatic-offers.md).
func TestAutomaticOfferUsable(t *testing.T) {
	f := newAutoFixture(t, 0, 0, 10, 1)
	combinable := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
	exclusive := f.template(f.campaign.ID, 10, 1, 1000)
	a := f.MustClaim(combinable.ID, "bob", "k1").Coupon
	b := f.MustClaim(exclusive.ID, "cy", "k2").Coupon
	want := checkout.UsableOffer{TemplateID: f.tp.ID, CouponCode: fmt.Sprintf("AUTO-%d", f.tp.ID),
		Stacking: models.StackingCombinable, DiscountCents: 500, Automatic: true}
	for _, tc := range []struct {
		name   string
		user   string
		amount int64
		best   []string
		offers []checkout.UsableOffer
	}{
		{"OK", "bob", 6000, []string{a.Code}, []checkout.UsableOffer{want}},
		{"BelowOfferMinimum", "bob", 4000, []string{a.Code}, nil},
		{"NoCouponOfHisOwn", "dan", 6000, nil, []checkout.UsableOffer{want}},
		{"ExclusiveKeepsTheCart", "cy", 6000, []string{b.Code}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, usable := range []func(context.Context, string, int64, checkout.Cart) (*checkout.Usable, error){
				f.Checkout.UsableForCart, f.Checkout.UsableBestForCart} {
				u, err := usable(f.Ctx, tc.user, tc.amount, checkout.Cart{})
				if err != nil || !slices.Equal(u.Best, tc.best) || !slices.Equal(u.Automatic, tc.offers) || u.Automatic == nil {
					t.Fatalf("usable: %+v, %v; want best %v and offers %+v", u, err, tc.best, tc.offers)
				}
			}
		})
	}
	t.Run("ErrUserLimitReached", func(t *testing.T) {
		// Dan took the offer once, his limit: it is no longer listed for him.
		if _, err := holdAuto(f.Svc, f, "o-1", "dan", 6000); err != nil {
			t.Fatal(err)
		}
		u, err := f.Checkout.UsableForCart(f.Ctx, "dan", 6000, checkout.Cart{})
		if err != nil || len(u.Automatic) != 0 || f.couponCount() != 3 || f.remaining() != 9 {
			t.Fatalf("usable: %+v, %v; %d coupons, offer's stock %d", u, err, f.couponCount(), f.remaining())
		}
	})
}

// TestAutomaticOfferTillSale: the till's sale of one code goes by the one
// path of a redemption whether an offer is live or not: with the offer
// below its minimum the code is redeemed (audited coupon.redeem) and the
// offer left alone; with the offer joining, the sale answers the code and
// the offer together, the offer's claim counted once (docs/automatic-offers.md).
func TestAutomaticOfferTillSale(t *testing.T) {
	t.Run("OfferBelowMinimum", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		sale, err := f.Checkout.RedeemSale(f.Ctx, checkout.CheckoutRequest{OrderID: "t-1", OrderAmountCents: 4000, CouponCodes: []string{a.Code}}, "till-1")
		if err != nil || sale.Result != "redeemed" || sale.DiscountCents != 300 || sale.PayableCents != 3700 || len(sale.Coupons) != 1 {
			t.Fatalf("sale: %+v, %v", sale, err)
		}
		entries, err := f.Admin.ListAudit(f.Ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		var redeems int
		for _, e := range entries {
			if e.Action == "coupon.redeem" {
				redeems++
			}
		}
		if redeems != 1 || f.couponCount() != 1 || f.remaining() != 10 {
			t.Fatalf("%d coupon.redeem entries, %d coupons, offer's stock %d", redeems, f.couponCount(), f.remaining())
		}
	})
	t.Run("OfferJoins", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		a := f.MustClaim(typed.ID, "bob", "k1").Coupon
		req := checkout.CheckoutRequest{OrderID: "t-1", OrderAmountCents: 6000, CouponCodes: []string{a.Code}}
		sale, err := f.Checkout.RedeemSale(f.Ctx, req, "till-1")
		if err != nil || sale.Duplicate || sale.DiscountCents != 800 || sale.PayableCents != 5200 || len(sale.Coupons) != 2 ||
			sale.Coupons[0].CouponCode != a.Code || sale.Coupons[0].DiscountCents != 300 ||
			sale.Coupons[1].TemplateID != f.tp.ID || sale.Coupons[1].DiscountCents != 500 {
			t.Fatalf("sale: %+v, %v", sale, err)
		}
		if f.couponCount() != 2 || f.remaining() != 9 || f.couponOf(a.Code).Status != models.CouponUsed {
			t.Fatalf("%d coupons, offer's stock %d", f.couponCount(), f.remaining())
		}
		// Sent again: the first answer, the code and the offer, as a duplicate.
		again, err := f.Checkout.RedeemSale(f.Ctx, req, "till-1")
		first := *sale
		first.Duplicate, first.ExpiresAt = true, again.ExpiresAt
		if err != nil || fmt.Sprintf("%+v", *again) != fmt.Sprintf("%+v", first) || f.couponCount() != 2 || f.remaining() != 9 {
			t.Fatalf("sale sent again: %+v, %v; want %+v", again, err, first)
		}
	})
}
