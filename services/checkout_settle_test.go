package services_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// pausedAt is a hook that stops its caller until release is closed and
// tells entered when it got there.
type pausedAt struct {
	entered, release chan struct{}
}

func newPausedAt() *pausedAt {
	return &pausedAt{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (p *pausedAt) hook(string) {
	select {
	case p.entered <- struct{}{}:
	default:
	}
	<-p.release
}

// wait waits for the paused call to get there.
func (p *pausedAt) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the paused call never got to its hook")
	}
}

// useLogs counts the live use log rows of a coupon.
func (f *holdFixture) useLogs(id int64) int64 {
	f.T.Helper()
	var n int64
	if err := f.Backends.DB.Model(&models.UseLog{}).Where("coupon_id = ? AND undo_flag = ?", id, false).Count(&n).Error; err != nil {
		f.T.Fatal(err)
	}
	return n
}

// Confirm and the expiry pass meet on one order past its time, in both
// orders, made deterministic by holding the first inside its transaction
// (right after its guarded UPDATE of the order's row) while the second
// starts: the second waits for the order's row and decides on what the
// first committed.
//
//   - ConfirmFirst: the expiry then matches nothing (0 released); the coupon
//     is used with one use log row and no expiry audit.
//   - ExpiryFirst: the confirm finds the hold expired and its coupon free,
//     and takes it again by the late rule (late: true); one expiry audit.
//
// (Confirm and release both take the coupons' locks, so they queue there
// first; TestConfirmRaces races them.)
func TestConfirmRaceExpiryBothOrders(t *testing.T) {
	setup := func(t *testing.T) (*holdFixture, *services.App, *models.Coupon) {
		f := newHoldFixture(t, services.Config{})
		c := f.claim(f.tmpl("", 500, 0, 0), "u1")
		if _, err := f.hold("o1", 10_000, 5, c); err != nil {
			t.Fatal(err)
		}
		f.Clock.Advance(6 * time.Second)
		return f, f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}}), c
	}
	type confirmed struct {
		res *checkout.CheckoutResult
		err error
	}

	t.Run("ConfirmFirst", func(t *testing.T) {
		f, paused, c := setup(t)
		p := newPausedAt()
		paused.SetCheckoutHooks(p.hook, nil)
		conf := make(chan confirmed, 1)
		go func() {
			res, err := paused.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"})
			conf <- confirmed{res, err}
		}()
		p.wait(t)
		expired := make(chan error, 1)
		var n int
		go func() {
			var err error
			n, err = f.Checkout.ExpireHolds(f.Ctx)
			expired <- err
		}()
		time.Sleep(200 * time.Millisecond) // the expiry is waiting for the order's row
		close(p.release)
		got := <-conf
		if err := <-expired; err != nil || n != 0 {
			t.Fatalf("expiry after the confirm: %d released, %v; want 0", n, err)
		}
		if got.err != nil || got.res.Result != "redeemed" || got.res.Duplicate {
			t.Fatalf("confirm: %+v %v", got.res, got.err)
		}
		if cp := f.coupon(c.ID); cp.Status != models.CouponUsed || f.useLogs(c.ID) != 1 {
			t.Fatalf("coupon %s with %d use log rows, want used with 1", cp.Status, f.useLogs(c.ID))
		}
		if f.audits("coupon.hold_expire") != 0 || f.audits("coupon.confirm") != 1 {
			t.Fatalf("audits: expire %d confirm %d", f.audits("coupon.hold_expire"), f.audits("coupon.confirm"))
		}
		if g, err := f.Checkout.GetHold(f.Ctx, "o1"); err != nil || g.State != checkout.HoldConfirmed {
			t.Fatalf("hold %+v %v", g, err)
		}
		f.checkInvariants()
	})

	t.Run("ExpiryFirst", func(t *testing.T) {
		f, paused, c := setup(t)
		p := newPausedAt()
		paused.SetCheckoutHooks(nil, p.hook)
		expired := make(chan error, 1)
		var n int
		go func() {
			var err error
			n, err = paused.ExpireHolds(f.Ctx)
			expired <- err
		}()
		p.wait(t)
		conf := make(chan confirmed, 1)
		go func() {
			res, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"})
			conf <- confirmed{res, err}
		}()
		time.Sleep(200 * time.Millisecond) // the confirm is waiting for the order's row
		close(p.release)
		if err := <-expired; err != nil || n != 1 {
			t.Fatalf("expiry: %d released, %v; want 1", n, err)
		}
		got := <-conf
		if got.err != nil || got.res.Result != "redeemed" || !got.res.Late {
			t.Fatalf("confirm after the expiry: %+v %v, want a late redemption", got.res, got.err)
		}
		if cp := f.coupon(c.ID); cp.Status != models.CouponUsed || f.useLogs(c.ID) != 1 {
			t.Fatalf("coupon %s with %d use log rows, want used with 1", cp.Status, f.useLogs(c.ID))
		}
		if f.audits("coupon.hold_expire") != 1 || f.audits("coupon.confirm") != 1 {
			t.Fatalf("audits: expire %d confirm %d", f.audits("coupon.hold_expire"), f.audits("coupon.confirm"))
		}
		f.checkInvariants()
	})

}
