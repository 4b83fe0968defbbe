package services_test

import (
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
	t.Run("ErrNotFound", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "nosuch", OrderID: "r-1", OrderAmountCents: 6000, UserID: "bob"})
		assertClaimCode(t, err, models.CodeNotFound)
		if f.couponCount() != 0 || f.remaining() != 10 {
			t.Fatalf("%d coupons, offer's stock %d", f.couponCount(), f.remaining())
		}
	})
}
