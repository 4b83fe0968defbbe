package services_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// setValidUntil moves a coupon's valid_until (whole seconds, as both
// databases keep them).
func (f *holdFixture) setValidUntil(c *models.Coupon, until time.Time) time.Time {
	f.T.Helper()
	until = until.UTC().Truncate(time.Second)
	if err := f.Backends.DB.Exec(`UPDATE user_coupons SET valid_until = ? WHERE id = ?`, until, c.ID).Error; err != nil {
		f.T.Fatal(err)
	}
	return until
}

// holdState is the hold_state of an order's row.
func (f *holdFixture) holdState(order string) string {
	f.T.Helper()
	var states []string
	if err := f.Backends.DB.Table("checkout_orders").Where("order_id = ?", order).Pluck("hold_state", &states).Error; err != nil {
		f.T.Fatal(err)
	}
	if len(states) != 1 {
		f.T.Fatalf("order %s has %d rows", order, len(states))
	}
	return states[0]
}

// A hold never lasts past the earliest valid_until of its coupons, and a
// confirm after valid_until redeems nothing, whatever the hold says.
func TestHoldEndsAtValidUntil(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl(models.StackingCombinable, 300, 0, 0)
	tp2 := f.tmpl(models.StackingCombinable, 200, 0, 0)
	soon, later := f.claim(tp, "u1"), f.claim(tp2, "u1")
	until := f.setValidUntil(soon, f.Clock.Now().Add(60*time.Second))

	res, err := f.hold("short", 10_000, 900, soon, later)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExpiresAt == nil || !res.ExpiresAt.Equal(until) {
		t.Fatalf("hold expires at %v, want the coupon's valid_until %v", res.ExpiresAt, until)
	}
	for _, c := range []*models.Coupon{soon, later} {
		if got := f.coupon(c.ID); got.Status != models.CouponHeld || got.HoldExpiresAt == nil || !got.HoldExpiresAt.Equal(until) {
			t.Fatalf("held coupon %+v, want held until %v", got, until)
		}
	}
	if g, err := f.Checkout.GetHold(f.Ctx, "short"); err != nil || g.ExpiresAt == nil || !g.ExpiresAt.Equal(until) {
		t.Fatalf("GetHold %+v %v", g, err)
	}
	// A coupon valid long after the TTL keeps the TTL.
	other := f.claim(tp, "u2")
	res2, err := f.hold("long", 10_000, 900, other)
	if err != nil {
		t.Fatal(err)
	}
	if d := res2.ExpiresAt.Sub(f.Clock.Now()); d > 900*time.Second || d < 899*time.Second {
		t.Fatalf("hold of a long-valid coupon lasts %v", d)
	}

	// Past valid_until, before any sweep: nothing is redeemed.
	f.Clock.Advance(61 * time.Second)
	_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "short"})
	if e := wantCode(t, err, models.CodeHoldExpired); !containsStr(e.Message, soon.Code) {
		t.Fatalf("hold_expired does not name %s: %s", soon.Code, e.Message)
	}
	for _, c := range []*models.Coupon{soon, later} {
		if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil || f.useLogs(c.ID) != 0 {
			t.Fatalf("coupon after the refused confirm %+v, %d use log rows", got, f.useLogs(c.ID))
		}
	}
	if st := f.holdState("short"); st != checkout.HoldExpired {
		t.Fatalf("hold state %s, want expired", st)
	}
	if n := f.audits("coupon.confirm"); n != 0 {
		t.Fatalf("%d confirm audits", n)
	}
	f.checkInvariants()
}

// Confirm checks each coupon's validity again: a coupon whose valid_until
// passed while held (a hold made before holds ended at valid_until) is lost,
// and nothing of the order is confirmed.
func TestConfirmRechecksValidity(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl(models.StackingCombinable, 300, 0, 0)
	tp2 := f.tmpl(models.StackingCombinable, 200, 0, 0)
	c1, c2 := f.claim(tp, "u1"), f.claim(tp2, "u1")
	if _, err := f.hold("o1", 10_000, 900, c1, c2); err != nil {
		t.Fatal(err)
	}
	f.setValidUntil(c1, f.Clock.Now().Add(10*time.Second))
	f.Clock.Advance(11 * time.Second)

	_, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"})
	if e := wantCode(t, err, models.CodeHoldExpired); !containsStr(e.Message, c1.Code) || containsStr(e.Message, c2.Code) {
		t.Fatalf("hold_expired should name %s only: %s", c1.Code, e.Message)
	}
	for _, c := range []*models.Coupon{c1, c2} {
		if got := f.coupon(c.ID); got.Status != models.CouponHeld || f.useLogs(c.ID) != 0 {
			t.Fatalf("coupon after the refused confirm %+v, %d use log rows", got, f.useLogs(c.ID))
		}
	}
	if st := f.holdState("o1"); st != checkout.HoldHeld {
		t.Fatalf("hold state %s", st)
	}
	f.checkInvariants()
}

// A hold past its time is expired to everyone at once, whether or not the
// sweeper ran: another order may validate, hold or redeem its coupons, a
// release answers as after an expiry, and the same order may hold again.
func TestLapsedHoldExpiredBeforeSweep(t *testing.T) {
	lapsed := func(t *testing.T, order string) (*holdFixture, *models.Coupon) {
		f := newHoldFixture(t, services.Config{})
		c := f.claim(f.tmpl("", 500, 0, 0), "u1")
		if _, err := f.hold(order, 10_000, 5, c); err != nil {
			t.Fatal(err)
		}
		f.Clock.Advance(6 * time.Second)
		return f, c
	}
	// expiredOnce: the lapsed hold was ended once, as the sweeper ends it,
	// and the sweeper then finds nothing to do.
	expiredOnce := func(f *holdFixture, order string) {
		f.T.Helper()
		if st := f.holdState(order); st != checkout.HoldExpired {
			f.T.Fatalf("hold of %s is %s, want expired", order, st)
		}
		if n := f.audits("coupon.hold_expire"); n != 1 {
			f.T.Fatalf("%d expiry audits, want 1", n)
		}
		if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 0 {
			f.T.Fatalf("sweep after: %d %v", n, err)
		}
		f.checkInvariants()
	}

	t.Run("ValidateAndHoldByAnotherOrder", func(t *testing.T) {
		f, c := lapsed(t, "a")
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "b", OrderAmountCents: 10_000, CouponCodes: []string{c.Code}})
		if err != nil || v.Result != "ok" || v.DiscountCents != 500 {
			t.Fatalf("validate by another order %+v %v", v, err)
		}
		res, err := f.hold("b", 10_000, 60, c)
		if err != nil || res.Result != checkout.HoldHeld || res.Duplicate {
			t.Fatalf("hold by another order %+v %v", res, err)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponHeld || *got.OrderID != "b" {
			t.Fatalf("coupon %+v, want held by b", got)
		}
		expiredOnce(f, "a")
		_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "a"})
		wantCode(t, err, models.CodeHoldExpired)
	})

	t.Run("RedeemByAnotherOrder", func(t *testing.T) {
		f, c := lapsed(t, "a")
		r, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "b", OrderAmountCents: 10_000, Cashier: "till"})
		if err != nil || r.Duplicate || r.DiscountCents != 500 {
			t.Fatalf("redeem by another order %+v %v", r, err)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponUsed || *got.OrderID != "b" || f.useLogs(c.ID) != 1 {
			t.Fatalf("coupon %+v", got)
		}
		expiredOnce(f, "a")
	})

	t.Run("Release", func(t *testing.T) {
		f, c := lapsed(t, "a")
		rel, err := f.Checkout.Release(f.Ctx, "shop", "a")
		if err != nil || !rel.Duplicate || rel.Hold == nil || rel.Hold.State != checkout.HoldExpired {
			t.Fatalf("release of a lapsed hold %+v %v", rel, err)
		}
		if n := f.audits("coupon.release"); n != 0 {
			t.Fatalf("%d release audits", n)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil {
			t.Fatalf("coupon %+v", got)
		}
		expiredOnce(f, "a")
	})

	t.Run("UsableAndShownFree", func(t *testing.T) {
		f, c := lapsed(t, "a")
		u, err := f.Checkout.UsableCoupons(f.Ctx, "u1", 10_000)
		if err != nil || len(u.Coupons) != 1 || u.Coupons[0].Coupon.ID != c.ID ||
			u.Coupons[0].Coupon.Status != models.CouponIssued || u.Coupons[0].DiscountCents != 500 ||
			len(u.Best) != 1 || u.Best[0] != c.Code || u.BestDiscountCents != 500 {
			t.Fatalf("usable coupons of u1 %+v %v, want the coupon of the lapsed hold, issued, 500 off", u, err)
		}
		d, err := f.Core.GetCoupon(f.Ctx, c.Code)
		if err != nil || d.Coupon.Status != models.CouponIssued {
			t.Fatalf("coupon %+v %v, want shown issued", d, err)
		}
		// Shown free, not written: the sweeper still ends the hold once.
		if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v, want 1", n, err)
		}
		f.checkInvariants()
	})

	t.Run("SameOrderHoldsAgain", func(t *testing.T) {
		f, c := lapsed(t, "a")
		res, err := f.hold("a", 10_000, 60, c)
		if err != nil || res.Duplicate || res.ExpiresAt == nil || !res.ExpiresAt.After(f.Clock.Now()) {
			t.Fatalf("hold again by its order %+v %v", res, err)
		}
		if st := f.holdState("a"); st != checkout.HoldHeld {
			t.Fatalf("hold state %s", st)
		}
		if n := f.audits("coupon.hold_expire"); n != 1 {
			t.Fatalf("%d expiry audits, want 1", n)
		}
		if got := f.coupon(c.ID); got.Status != models.CouponHeld || !got.HoldExpiresAt.Equal(*res.ExpiresAt) {
			t.Fatalf("coupon %+v", got)
		}
		f.checkInvariants()
	})
}

// A release decides on the order's row read once, before its coupons'
// locks; a hold that the sweeper expired after that read makes the
// release's guarded UPDATE match nothing, and the release reads the row
// again and answers as after an expiry (docs/statements.md, "Release and
// expiry").
func TestReleaseRacedByExpiry(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl(models.StackingExclusive, 500, 0, 0), "u1")
	if _, err := f.hold("a", 10_000, 60, c); err != nil {
		t.Fatal(err)
	}
	releaser := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
	swept := 0
	releaser.SetBeforeRelease(func(order string) {
		if swept > 0 {
			return
		}
		f.Clock.Advance(61 * time.Second)
		n, err := f.Checkout.ExpireHolds(f.Ctx)
		if err != nil || n != 1 {
			t.Errorf("sweep before the release's transaction: %d %v", n, err)
		}
		swept++
	})
	rel, err := releaser.Release(f.Ctx, "shop", "a")
	if err != nil || !rel.Duplicate || rel.Hold == nil || rel.Hold.State != checkout.HoldExpired ||
		len(rel.Hold.Coupons) != 1 || rel.Hold.Coupons[0].CouponCode != c.Code {
		t.Fatalf("release raced by an expiry: %+v %v, want duplicate, expired, its coupon", rel, err)
	}
	if swept != 1 {
		t.Fatalf("the hook ran %d times, want 1", swept)
	}
	if n, m := f.audits("coupon.release"), f.audits("coupon.hold_expire"); n != 0 || m != 1 {
		t.Fatalf("%d release and %d expiry audits, want 0 and 1", n, m)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil {
		t.Fatalf("coupon %+v, want issued and on no order", got)
	}
	if s := f.holdState("a"); s != checkout.HoldExpired {
		t.Fatalf("hold state %s, want expired", s)
	}
	f.checkInvariants()
}
