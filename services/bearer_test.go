package services_test

import (
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/reconcile"
)

// TestBearerCoupon: a bearer coupon (made in advance, no owner) belongs to
// the first user who holds or redeems it with a user_id, by a guarded
// update; redeemed at the till without one it stays anonymous; a release
// keeps its owner.
func TestBearerCoupon(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 10, 1, 300)
	bs := f.Bearer(tp, 4)
	owner := func(code string) string {
		t.Helper()
		var cp models.Coupon
		if err := f.Backends.DB.Where("code = ?", code).First(&cp).Error; err != nil {
			t.Fatal(err)
		}
		return cp.UserID
	}
	hold := func(order, user, code string) (*checkout.CheckoutResult, error) {
		return f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: order, OrderAmountCents: 1000, CouponCodes: []string{code}, UserID: user, TTLSeconds: 60})
	}
	t.Run("HoldTakesOwner", func(t *testing.T) {
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, CouponCodes: []string{bs[0].Code}, UserID: "ann"})
		if err != nil || v.Result != "ok" || v.DiscountCents != 300 {
			t.Fatalf("validate: %+v %v", v, err)
		}
		if got := owner(bs[0].Code); got != "" {
			t.Fatalf("validate made %q the owner", got)
		}
		if _, err := hold("b1", "ann", bs[0].Code); err != nil {
			t.Fatal(err)
		}
		if got := owner(bs[0].Code); got != "ann" {
			t.Fatalf("owner after the hold %q, want ann", got)
		}
		if _, err := f.Checkout.Release(f.Ctx, "shop", "b1"); err != nil {
			t.Fatal(err)
		}
		if got := owner(bs[0].Code); got != "ann" {
			t.Fatalf("owner after the release %q, want ann (kept)", got)
		}
		_, err = hold("b2", "bob", bs[0].Code)
		assertClaimCode(t, err, models.CodeUnauthorized, "user_id")
	})
	t.Run("RedeemAtTill", func(t *testing.T) {
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: bs[1].Code, OrderID: "t1", OrderAmountCents: 1000, Cashier: "till"})
		if err != nil || res.Coupon.UserID != "" || res.DiscountCents != 300 {
			t.Fatalf("anonymous redemption: %+v %v", res, err)
		}
		res, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: bs[2].Code, OrderID: "t2", OrderAmountCents: 1000, UserID: "cat", Cashier: "till"})
		if err != nil || res.Coupon.UserID != "cat" || owner(bs[2].Code) != "cat" {
			t.Fatalf("redemption with a user: %+v %v", res, err)
		}
		var lg models.UseLog
		if err := f.Backends.DB.Where("coupon_id = ?", bs[2].ID).First(&lg).Error; err != nil || lg.UserID != "cat" {
			t.Fatalf("use log %+v %v, want user cat", lg, err)
		}
	})
	t.Run("RaceForOwner", func(t *testing.T) {
		users := []string{"u1", "u2", "u3", "u4", "u5", "u6"}
		errs := make([]error, len(users))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = hold("race-"+u, u, bs[3].Code)
			}()
		}
		close(start)
		wg.Wait()
		winner := ""
		for i, err := range errs {
			switch {
			case err == nil:
				if winner != "" {
					t.Fatalf("%s and %s both held bearer coupon %s", winner, users[i], bs[3].Code)
				}
				winner = users[i]
			case models.ErrorCode(err) == models.CodeUnauthorized, models.ErrorCode(err) == models.CodeHeld, models.ErrorCode(err) == models.CodeBusy:
			default:
				t.Errorf("%s: %v", users[i], err)
			}
		}
		if winner == "" || owner(bs[3].Code) != winner {
			t.Fatalf("winner %q, owner %q", winner, owner(bs[3].Code))
		}
	})
	// Bearer coupons hold slots but no ordinals: the counters agree.
	rep, err := f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{TemplateID: tp.ID})
	if err != nil || rep.Drifted() != 0 || rep.Templates[0].DBLive != 4 {
		t.Fatalf("reconcile: %+v %v", rep, err)
	}
}
