package services_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// Every transition of the checkout writes its audit entry: who, which
// coupon (or order), and the order in the detail. The entries are read in
// the order they were written and compared whole (actor, action, target,
// the detail's words that matter).
func TestCheckoutAuditEveryTransition(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl(models.StackingCombinable, 500, 0, 0)
	a, b, c, d := f.claim(tp, "u1"), f.claim(tp, "u2"), f.claim(tp, "u3"), f.claim(tp, "u4")
	var last int64
	if err := f.Backends.DB.Model(&models.AuditEntry{}).Select("COALESCE(MAX(id), 0)").Scan(&last).Error; err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// a: hold, confirm, a partial return, then the completing return (a refund).
	must(f.hold("oa", 10_000, 60, a))
	must(f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "oa", Cashier: "web"}))
	must(f.Checkout.ReturnPart(f.Ctx, "pos", "oa", "r1", 4_000))
	must(f.Checkout.ReturnPart(f.Ctx, "pos", "oa", "r2", 6_000))
	// b: hold, release. c: hold, expiry, late confirm. d: hold, revoke.
	must(f.hold("ob", 10_000, 60, b))
	must(f.Checkout.Release(f.Ctx, "shop", "ob"))
	must(f.hold("oc", 10_000, 5, c))
	must(f.hold("od", 10_000, 3600, d))
	f.Clock.Advance(6 * time.Second)
	must(f.Checkout.ExpireHolds(f.Ctx))
	must(f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "oc", Cashier: "web"}))
	must(f.Admin.Revoke(f.Ctx, "admin", d.Code, false, "fraud"))

	var got []models.AuditEntry
	if err := f.Backends.DB.Where("id > ?", last).Order("id").Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	target := func(c *models.Coupon) string { return fmt.Sprintf("coupon:%d", c.ID) }
	want := []struct {
		actor, action, target string
		detail                []string
	}{
		{"shop", "coupon.hold", target(a), []string{"order=oa", "discount_cents=500"}},
		{"web", "coupon.confirm", target(a), []string{"order=oa", "late=false"}},
		{"pos", "order.return", "order:oa", []string{"return_id=r1", "kept_amount_cents=6000", "full=false"}},
		{"pos", "order.return", "order:oa", []string{"return_id=r2", "kept_amount_cents=0", "full=true"}},
		{"pos", "coupon.refund", target(a), []string{"order=oa"}},
		{"shop", "coupon.hold", target(b), []string{"order=ob"}},
		{"shop", "coupon.release", target(b), []string{"order=ob"}},
		{"shop", "coupon.hold", target(c), []string{"order=oc"}},
		{"shop", "coupon.hold", target(d), []string{"order=od"}},
		{"sweeper", "coupon.hold_expire", target(c), []string{"order=oc"}},
		{"web", "coupon.confirm", target(c), []string{"order=oc", "late=true"}},
		{"admin", "coupon.revoke", target(d), []string{"released_hold_of_order=od", "status_was=held"}},
	}
	if len(got) != len(want) {
		for _, e := range got {
			t.Logf("%s %s %s %s", e.Actor, e.Action, e.Target, e.Detail)
		}
		t.Fatalf("%d audit entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		e := got[i]
		ok := e.Actor == w.actor && e.Action == w.action && e.Target == w.target
		for _, word := range w.detail {
			ok = ok && strings.Contains(e.Detail, word)
		}
		if !ok {
			t.Errorf("entry %d: %s %s %s %q, want %s %s %s with %v", i, e.Actor, e.Action, e.Target, e.Detail,
				w.actor, w.action, w.target, w.detail)
		}
	}
}
