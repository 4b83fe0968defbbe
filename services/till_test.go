package services_test

import (
	"maps"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
)

func TestCheckRedemption(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{Kind: models.KindPercent, PercentOff: 15,
		MaxDiscountCents: 2000, TotalStock: 5, PerUserLimit: 2, ValidDays: 10})
	c := f.claim("u1")

	t.Run("Capped", func(t *testing.T) {
		chk, err := f.Checkout.CheckRedemption(f.Ctx, c.Code, "o-1", 20_000)
		if err != nil || chk.DiscountCents != 2000 || chk.UncappedCents != 3000 || chk.PayableCents != 18_000 || chk.Redeemed != nil {
			t.Fatalf("check %+v, %v", chk, err)
		}
	})
	t.Run("UnderTheCap", func(t *testing.T) {
		chk, err := f.Checkout.CheckRedemption(f.Ctx, c.Code, "o-1", 10_000)
		if err != nil || chk.DiscountCents != 1500 || chk.UncappedCents != 1500 || chk.PayableCents != 8500 {
			t.Fatalf("check %+v, %v", chk, err)
		}
	})
	t.Run("RedeemedOnThisOrder", func(t *testing.T) {
		f.mustRedeem(c, "o-1", 10_000)
		chk, err := f.Checkout.CheckRedemption(f.Ctx, c.Code, "o-1", 50_000)
		if err != nil || chk.Redeemed == nil || chk.Redeemed.OrderAmountCents != 10_000 || chk.Redeemed.DiscountCents != 1500 {
			t.Fatalf("check on the same order %+v, %v", chk, err)
		}
		chk, err = f.Checkout.CheckRedemption(f.Ctx, c.Code, "o-2", 50_000)
		if err != nil || chk.Redeemed != nil || chk.Coupon.Status != models.CouponUsed {
			t.Fatalf("check on another order %+v, %v", chk, err)
		}
	})
	t.Run("RefundedOnThisOrder", func(t *testing.T) {
		f.mustRefund(c, "o-1")
		chk, err := f.Checkout.CheckRedemption(f.Ctx, c.Code, "o-1", 10_000)
		if err != nil || chk.Redeemed != nil || chk.Coupon.Status != models.CouponIssued {
			t.Fatalf("check after the refund %+v, %v", chk, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := f.Checkout.CheckRedemption(f.Ctx, models.NewCouponCode(), "o-1", 10_000); !models.IsCode(err, models.CodeNotFound) {
			t.Fatalf("unknown code: %v", err)
		}
	})
}

// TestPublicRevokeReasons: a shopper is told the public reason the admin
// chose for the latest revoke, never the admin's note; a revoke that chose
// none says "it can no longer be used"; coupons never revoked are left out.
func TestPublicRevokeReasons(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 5, PerUserLimit: 4})
	a, b, c, kept := f.claim("u1"), f.claim("u1"), f.claim("u1"), f.claim("u1")
	if _, err := f.Admin.RevokeWith(f.Ctx, "admin", a.Code, false, "issued_in_error", `note: public_reason=replaced, shared as "free money"`); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Admin.RevokeWith(f.Ctx, "admin", b.Code, false, "fraud_suspected", "duplicate issue"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Admin.Revoke(f.Ctx, "admin", c.Code, false, "no public reason chosen"); err != nil {
		t.Fatal(err)
	}
	got, err := f.Claims.PublicRevokeReasons(f.Ctx, []int64{a.ID, b.ID, c.ID, kept.ID})
	want := map[int64]string{a.ID: "issued in error", b.ID: "withdrawn after suspected misuse", c.ID: "it can no longer be used"}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("public reasons %v, %v; want %v", got, err, want)
	}
	if got, err := f.Claims.PublicRevokeReasons(f.Ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("no ids: %v, %v", got, err)
	}
	if _, err := f.Admin.RevokeWith(f.Ctx, "admin", kept.Code, false, "free_money", "x"); !models.IsCode(err, models.CodeInvalidRequest) {
		t.Fatalf("an unknown public reason: %v, want invalid_request", err)
	}
}
