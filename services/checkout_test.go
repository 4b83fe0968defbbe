package services_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// holdFixture is a fixture with a campaign and templates made to measure.
type holdFixture struct {
	*testenv.Fixture
	campaign *models.Campaign
	n        int
}

func newHoldFixture(t *testing.T, cfg services.Config) *holdFixture {
	f := &holdFixture{Fixture: testenv.NewFixture(t, cfg)}
	f.campaign = f.Campaign(0)
	return f
}

// tmpl makes a template: a fixed coupon of face cents (or percent off when
// percent > 0, capped at face), with that stacking.
func (f *holdFixture) tmpl(stacking string, face, percent, minOrder int64) *models.Template {
	return f.Template(models.Template{CampaignID: f.campaign.ID}, func(tp *models.Template) {
		tp.Stacking, tp.TotalStock, tp.PerUserLimit, tp.MinOrderCents = stacking, 1000, 100, minOrder
		if percent > 0 {
			tp.Kind, tp.PercentOff, tp.MaxDiscountCents, tp.FaceValueCents = models.KindPercent, percent, face, 0
		} else {
			tp.FaceValueCents = face
		}
	})
}

func (f *holdFixture) claim(t *models.Template, user string) *models.Coupon {
	f.T.Helper()
	f.n++
	return f.MustClaim(t.ID, user, fmt.Sprintf("hold-%d", f.n)).Coupon
}

func (f *holdFixture) hold(order string, amount int64, ttl int, cs ...*models.Coupon) (*checkout.CheckoutResult, error) {
	codes := make([]string, len(cs))
	for i, c := range cs {
		codes[i] = c.Code
	}
	return f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: order, OrderAmountCents: amount, CouponCodes: codes, TTLSeconds: ttl, Actor: "shop"})
}

func (f *holdFixture) coupon(id int64) models.Coupon {
	f.T.Helper()
	var c models.Coupon
	if err := f.Backends.DB.First(&c, id).Error; err != nil {
		f.T.Fatal(err)
	}
	return c
}

// checkInvariants: a used coupon has exactly one live use log row and every
// live row belongs to a used coupon of its order; a held coupon is listed on
// its order; each order's counter equals its listed coupons.
func (f *holdFixture) checkInvariants() {
	f.T.Helper()
	db := f.Backends.DB
	for _, c := range f.Coupons() {
		var live []models.UseLog
		if err := db.Where("coupon_id = ? AND undo_flag = ?", c.ID, false).Find(&live).Error; err != nil {
			f.T.Fatal(err)
		}
		switch c.Status {
		case models.CouponUsed:
			if len(live) != 1 || c.OrderID == nil || live[0].OrderID != *c.OrderID {
				f.T.Errorf("used coupon %d (order %v) has live use log rows %+v", c.ID, c.OrderID, live)
			}
		default:
			if len(live) != 0 {
				f.T.Errorf("coupon %d is %s with live use log rows %+v", c.ID, c.Status, live)
			}
		}
		var listed int64
		if err := db.Table("order_coupons").Where("coupon_id = ?", c.ID).Count(&listed).Error; err != nil {
			f.T.Fatal(err)
		}
		wantListed := int64(0)
		if c.Status == models.CouponHeld || (c.Status == models.CouponUsed && c.OrderID != nil) {
			wantListed = 1
		}
		if listed != wantListed {
			f.T.Errorf("coupon %d is %s and listed on %d orders", c.ID, c.Status, listed)
		}
		if c.Status == models.CouponIssued && (c.OrderID != nil || c.HoldExpiresAt != nil) {
			f.T.Errorf("issued coupon %d keeps order %v until %v", c.ID, c.OrderID, c.HoldExpiresAt)
		}
	}
	var rows []struct {
		OrderID string
		Coupons int64
		Listed  int64
	}
	if err := db.Raw(`SELECT o.order_id, o.coupons, (SELECT COUNT(*) FROM order_coupons oc WHERE oc.order_id = o.order_id) AS listed
		FROM checkout_orders o`).Scan(&rows).Error; err != nil {
		f.T.Fatal(err)
	}
	for _, r := range rows {
		if r.Coupons != r.Listed {
			f.T.Errorf("order %s counts %d coupons and lists %d", r.OrderID, r.Coupons, r.Listed)
		}
	}
}

func (f *holdFixture) audits(action string) int64 {
	f.T.Helper()
	var n int64
	if err := f.Backends.DB.Model(&models.AuditEntry{}).Where("action = ?", action).Count(&n).Error; err != nil {
		f.T.Fatal(err)
	}
	return n
}

func TestHoldConfirmRelease(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	c := f.claim(tp, "u1")

	res, err := f.hold("o1", 10_000, 0, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "held" || res.Duplicate || res.DiscountCents != 500 || res.PayableCents != 9_500 ||
		res.ExpiresAt == nil || res.ExpiresAt.Sub(f.Clock.Now()) > 900*time.Second || res.ExpiresAt.Sub(f.Clock.Now()) < 899*time.Second {
		t.Fatalf("hold %+v", res)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponHeld || *got.OrderID != "o1" || !got.HoldExpiresAt.Equal(*res.ExpiresAt) {
		t.Fatalf("coupon %+v", got)
	}
	again, err := f.hold("o1", 10_000, 0, c)
	if err != nil || !again.Duplicate || !again.ExpiresAt.Equal(*res.ExpiresAt) || again.DiscountCents != 500 {
		t.Fatalf("hold again: %+v %v", again, err)
	}
	_, err = f.hold("o1", 9_000, 0, c)
	wantCode(t, err, models.CodeIdempotencyMismatch)
	_, err = f.hold("o2", 10_000, 0, c)
	wantCode(t, err, models.CodeHeld)
	_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o2", OrderAmountCents: 10_000})
	wantCode(t, err, models.CodeHeld)

	g, err := f.Checkout.GetHold(f.Ctx, "o1")
	if err != nil || g.State != checkout.HoldHeld || len(g.Coupons) != 1 || g.Coupons[0].DiscountCents != 500 {
		t.Fatalf("get hold %+v %v", g, err)
	}
	_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1", OrderAmountCents: 9_999})
	wantCode(t, err, models.CodeIdempotencyMismatch)
	conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1", OrderAmountCents: 10_000, Cashier: "web"})
	if err != nil || conf.Result != "redeemed" || conf.Duplicate || conf.Late || conf.DiscountCents != 500 || conf.PayableCents != 9_500 {
		t.Fatalf("confirm %+v %v", conf, err)
	}
	dup, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1"})
	if err != nil || !dup.Duplicate || dup.DiscountCents != 500 {
		t.Fatalf("confirm again %+v %v", dup, err)
	}
	_, err = f.Checkout.Release(f.Ctx, "shop", "o1")
	wantCode(t, err, models.CodeAlreadyUsed)
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || *got.OrderID != "o1" || got.HoldExpiresAt != nil {
		t.Fatalf("coupon after confirm %+v", got)
	}

	c2 := f.claim(tp, "u2")
	if _, err := f.hold("o3", 10_000, 60, c2); err != nil {
		t.Fatal(err)
	}
	rel, err := f.Checkout.Release(f.Ctx, "shop", "o3")
	if err != nil || rel.Duplicate || rel.Hold.State != checkout.HoldReleased {
		t.Fatalf("release %+v %v", rel, err)
	}
	rel, err = f.Checkout.Release(f.Ctx, "shop", "o3")
	if err != nil || !rel.Duplicate {
		t.Fatalf("release again %+v %v", rel, err)
	}
	_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o3"})
	wantCode(t, err, models.CodeHoldExpired)
	if got := f.coupon(c2.ID); got.Status != models.CouponIssued || got.OrderID != nil {
		t.Fatalf("released coupon %+v", got)
	}
	// Released, it may be held by another order.
	if _, err := f.hold("o4", 10_000, 60, c2); err != nil {
		t.Fatal(err)
	}
	if n := f.audits("coupon.hold"); n != 3 {
		t.Errorf("hold audits %d", n)
	}
	if f.audits("coupon.confirm") != 1 || f.audits("coupon.release") != 1 {
		t.Errorf("confirm/release audits %d %d", f.audits("coupon.confirm"), f.audits("coupon.release"))
	}
	f.checkInvariants()
}

func TestHoldBadInput(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	for _, tc := range []struct {
		req   checkout.CheckoutRequest
		field string
	}{
		{checkout.CheckoutRequest{OrderAmountCents: 100, CouponCodes: []string{c.Code}}, "order_id"},
		{checkout.CheckoutRequest{OrderID: "o", CouponCodes: []string{c.Code}}, "order_amount_cents"},
		{checkout.CheckoutRequest{OrderID: "o", OrderAmountCents: 100}, "coupon_codes"},
		{checkout.CheckoutRequest{OrderID: "o", OrderAmountCents: 100, CouponCodes: []string{c.Code, c.Code}}, "coupon_codes"},
		{checkout.CheckoutRequest{OrderID: "o", OrderAmountCents: 100, CouponCodes: []string{"a", "b", "c", "d", "e", "f"}}, "coupon_codes"},
		{checkout.CheckoutRequest{OrderID: "o", OrderAmountCents: 100, CouponCodes: []string{c.Code}, TTLSeconds: 4}, "ttl_seconds"},
		{checkout.CheckoutRequest{OrderID: "o", OrderAmountCents: 100, CouponCodes: []string{c.Code}, TTLSeconds: 86401}, "ttl_seconds"},
	} {
		_, err := f.Checkout.Hold(f.Ctx, tc.req)
		if e := wantCode(t, err, models.CodeInvalidRequest); e.Field != tc.field {
			t.Errorf("%+v: field %q, want %q", tc.req, e.Field, tc.field)
		}
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.Version != c.Version {
		t.Fatalf("bad input changed the coupon: %+v", got)
	}
}

func TestHoldAllOrNone(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a, b := f.tmpl(models.StackingCombinable, 500, 0, 0), f.tmpl(models.StackingCombinable, 300, 0, 0)
	ex := f.tmpl(models.StackingExclusive, 900, 0, 0)
	ca, cb, cx := f.claim(a, "u1"), f.claim(b, "u1"), f.claim(ex, "u1")
	if _, err := f.Admin.Revoke(f.Ctx, "admin", cb.Code, false, "abuse"); err != nil {
		t.Fatal(err)
	}
	_, err := f.hold("o1", 10_000, 0, ca, cb)
	wantCode(t, err, models.CodeRevoked)
	_, err = f.hold("o1", 10_000, 0, ca, cx)
	wantCode(t, err, models.CodeNotCombinable)
	if got := f.coupon(ca.ID); got.Status != models.CouponIssued {
		t.Fatalf("all or none: %+v", got)
	}
	// The exclusive coupon alone holds; then a redemption of the combinable
	// one on that order is refused by the order's row.
	if _, err := f.hold("o1", 10_000, 0, cx); err != nil {
		t.Fatal(err)
	}
	_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: ca.Code, OrderID: "o1", OrderAmountCents: 10_000})
	wantCode(t, err, models.CodeNotCombinable)
	f.checkInvariants()
}

func TestValidateAndUsable(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fixed := f.tmpl(models.StackingCombinable, 2_000, 0, 0)
	pct := f.tmpl(models.StackingCombinable, 5_000, 10, 5_000)
	ex := f.tmpl(models.StackingExclusive, 2_500, 0, 0)
	cf, cp, cx := f.claim(fixed, "u1"), f.claim(pct, "u1"), f.claim(ex, "u1")
	res, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 10_000, CouponCodes: []string{cp.Code, cf.Code}, UserID: "u1"})
	if err != nil || res.Result != "ok" || res.DiscountCents != 2_800 || res.PayableCents != 7_200 ||
		res.Coupons[0].DiscountCents != 800 || res.Coupons[1].DiscountCents != 2_000 {
		t.Fatalf("validate %+v %v", res, err)
	}
	res, err = f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 4_000, CouponCodes: []string{cp.Code, cf.Code}})
	if err != nil || res.Result != "below_minimum" || res.Coupons[0].Result != "below_minimum" || res.Coupons[1].Result != "ok" {
		t.Fatalf("validate below minimum %+v %v", res, err)
	}
	res, err = f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 10_000, CouponCodes: []string{cx.Code, cf.Code}})
	if err != nil || res.Result != "not_combinable" {
		t.Fatalf("validate exclusive %+v %v", res, err)
	}
	// A dry run: no audit entry, no order row, every coupon as it was.
	var audits, orders int64
	f.Backends.DB.Model(&models.AuditEntry{}).Where("action LIKE ?", "coupon.%").Count(&audits)
	f.Backends.DB.Table("checkout_orders").Count(&orders)
	if audits != 0 || orders != 0 {
		t.Fatalf("validate wrote %d coupon audits and %d order rows", audits, orders)
	}
	for _, c := range []*models.Coupon{cf, cp, cx} {
		if got := f.coupon(c.ID); got.Version != c.Version || got.Status != models.CouponIssued || got.OrderID != nil {
			t.Fatalf("validate changed coupon %d: %+v", c.ID, got)
		}
	}
	u, err := f.Checkout.UsableCoupons(f.Ctx, "u1", 10_000)
	if err != nil || len(u.Coupons) != 3 || u.Coupons[0].Coupon.Code != cx.Code || u.BestDiscountCents != 2_800 || len(u.Best) != 2 {
		t.Fatalf("usable %+v %v", u, err)
	}
	u, err = f.Checkout.UsableCoupons(f.Ctx, "u1", 4_000)
	if err != nil || len(u.Coupons) != 2 || u.BestDiscountCents != 2_500 || u.Best[0] != cx.Code {
		t.Fatalf("usable below the percent's minimum %+v %v", u, err)
	}
}

func TestHoldExpiryAndLateConfirm(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	c1, c2 := f.claim(tp, "u1"), f.claim(tp, "u2")
	if _, err := f.hold("late", 10_000, 5, c1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hold("lost", 10_000, 5, c2); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 0 {
		t.Fatalf("expire before time: %d %v", n, err)
	}
	f.Clock.Advance(6 * time.Second)
	if g, _ := f.Checkout.GetHold(f.Ctx, "late"); g.State != checkout.HoldExpired {
		t.Fatalf("hold past its time shows %+v", g)
	}
	if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 2 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if n, _ := f.Checkout.ExpireHolds(f.Ctx); n != 0 {
		t.Fatalf("expire again: %d", n)
	}
	if f.audits("coupon.hold_expire") != 2 {
		t.Fatalf("expiry audits %d", f.audits("coupon.hold_expire"))
	}
	for _, c := range []*models.Coupon{c1, c2} {
		if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil {
			t.Fatalf("expired coupon %+v", got)
		}
	}
	// Still free: a late confirm takes it again.
	conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "late"})
	if err != nil || !conf.Late || conf.DiscountCents != 500 {
		t.Fatalf("late confirm %+v %v", conf, err)
	}
	// Taken by another order meanwhile: hold_expired naming it, nothing confirmed.
	if _, err := f.hold("other", 10_000, 60, c2); err != nil {
		t.Fatal(err)
	}
	_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "lost"})
	if e := wantCode(t, err, models.CodeHoldExpired); e != nil && !containsStr(e.Message, c2.Code) {
		t.Fatalf("hold_expired does not name %s: %s", c2.Code, e.Message)
	}
	if got := f.coupon(c2.ID); got.Status != models.CouponHeld || *got.OrderID != "other" {
		t.Fatalf("coupon of the lost hold %+v", got)
	}
	// Release after expiry is a duplicate.
	if rel, err := f.Checkout.Release(f.Ctx, "shop", "lost"); err != nil || !rel.Duplicate {
		t.Fatalf("release after expiry %+v %v", rel, err)
	}
	// Revoking a held coupon releases it from its order.
	if _, err := f.Admin.Revoke(f.Ctx, "admin", c2.Code, false, "fraud"); err != nil {
		t.Fatal(err)
	}
	_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "other"})
	wantCode(t, err, models.CodeHoldExpired)
	f.checkInvariants()
}

func containsStr(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// Two orders hold one coupon at once, 50 times: exactly one holds it.
func TestHoldRaceTwoOrders(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	svc2 := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
	for round := range 50 {
		c := f.claim(tp, fmt.Sprintf("u%d", round))
		var mu sync.Mutex
		held, refused := 0, 0
		race(2, func(i int) {
			svc := []*services.App{f.Svc, svc2}[i]
			_, err := svc.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: fmt.Sprintf("r%d-o%d", round, i), OrderAmountCents: 10_000,
				CouponCodes: []string{c.Code}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				held++
			case models.IsCode(err, models.CodeHeld), models.IsCode(err, models.CodeBusy):
				refused++
			default:
				t.Errorf("round %d: %v", round, err)
			}
		})
		if held != 1 || refused != 1 {
			t.Fatalf("round %d: held %d refused %d", round, held, refused)
		}
	}
	f.checkInvariants()
}

// Confirm races the expiry pass, and confirm races release: a coupon is never
// both released and used, and no live use log row lacks a used coupon.
func TestConfirmRaces(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	outcomes := map[string]int{}
	for round := range 20 {
		c := f.claim(tp, fmt.Sprintf("u%d", round))
		order := fmt.Sprintf("exp-%d", round)
		if _, err := f.hold(order, 10_000, 5, c); err != nil {
			t.Fatal(err)
		}
		f.Clock.Advance(6 * time.Second)
		var confErr error
		race(2, func(i int) {
			if i == 0 {
				_, confErr = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: order})
			} else if _, err := f.Checkout.ExpireHolds(f.Ctx); err != nil {
				t.Error(err)
			}
		})
		got := f.coupon(c.ID)
		switch {
		case confErr == nil && got.Status == models.CouponUsed:
			outcomes["expiry: confirmed"]++
		case models.IsCode(confErr, models.CodeBusy) && got.Status == models.CouponIssued:
			outcomes["expiry: busy, released"]++
		default:
			t.Fatalf("round %d: confirm %v, coupon %s", round, confErr, got.Status)
		}

		c2 := f.claim(tp, fmt.Sprintf("v%d", round))
		order2 := fmt.Sprintf("rel-%d", round)
		if _, err := f.hold(order2, 10_000, 60, c2); err != nil {
			t.Fatal(err)
		}
		var relErr error
		race(2, func(i int) {
			if i == 0 {
				_, confErr = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: order2})
			} else {
				_, relErr = f.Checkout.Release(f.Ctx, "shop", order2)
			}
		})
		got = f.coupon(c2.ID)
		switch {
		case confErr == nil && models.IsCode(relErr, models.CodeAlreadyUsed) && got.Status == models.CouponUsed:
			outcomes["release: confirmed"]++
		case relErr == nil && models.IsCode(confErr, models.CodeHoldExpired) && got.Status == models.CouponIssued:
			outcomes["release: released"]++
		case (models.IsCode(relErr, models.CodeBusy) || models.IsCode(confErr, models.CodeBusy)) &&
			(got.Status == models.CouponUsed) == (confErr == nil):
			outcomes["release: busy"]++
		default:
			t.Fatalf("round %d: confirm %v release %v, coupon %s", round, confErr, relErr, got.Status)
		}
	}
	t.Logf("%s: %v", testenv.BackendName(), outcomes)
	f.checkInvariants()
}

// 50 concurrent holds or redemptions of different exclusive coupons on one
// order: exactly one succeeds.
func TestStackingRaceExclusive(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	var cs []*models.Coupon
	for i := range 5 {
		tp := f.tmpl(models.StackingExclusive, 100*int64(i+1), 0, 0)
		for j := range 10 {
			cs = append(cs, f.claim(tp, fmt.Sprintf("u%d-%d", i, j)))
		}
	}
	var mu sync.Mutex
	counts := map[string]int{}
	race(len(cs), func(i int) {
		var err error
		if i%2 == 0 {
			_, err = f.hold("order-x", 10_000, 60, cs[i])
		} else {
			_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: cs[i].Code, OrderID: "order-x", OrderAmountCents: 10_000})
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			counts["ok"]++
		case models.IsCode(err, models.CodeNotCombinable), models.IsCode(err, models.CodeIdempotencyMismatch), models.IsCode(err, models.CodeBusy):
			counts[models.ErrorCode(err).Word()]++
		default:
			t.Errorf("%d: %v", i, err)
		}
	})
	t.Logf("%s: %v", testenv.BackendName(), counts)
	if counts["ok"] != 1 {
		t.Fatalf("results %v, want exactly one ok", counts)
	}
	var onOrder int64
	f.Backends.DB.Model(&models.Coupon{}).Where("order_id = ?", "order-x").Count(&onOrder)
	if onOrder != 1 {
		t.Fatalf("%d coupons on the order", onOrder)
	}
	f.checkInvariants()
}

// Combinable coupons of eight templates raced onto one order: the cap (5)
// and never beyond.
func TestStackingRaceCombinableCap(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	var cs []*models.Coupon
	for range 8 {
		tp := f.tmpl(models.StackingCombinable, 100, 0, 0)
		cs = append(cs, f.claim(tp, "u1"), f.claim(tp, "u2"))
	}
	var mu sync.Mutex
	counts := map[string]int{}
	race(len(cs), func(i int) {
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: cs[i].Code, OrderID: "cart", OrderAmountCents: 10_000})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			counts["ok"]++
		case models.IsCode(err, models.CodeNotCombinable), models.IsCode(err, models.CodeBusy):
			counts[models.ErrorCode(err).Word()]++
		default:
			t.Errorf("%d: %v", i, err)
		}
	})
	t.Logf("%s: %v", testenv.BackendName(), counts)
	var onOrder int64
	f.Backends.DB.Model(&models.Coupon{}).Where("order_id = ?", "cart").Count(&onOrder)
	if onOrder > 5 || int(onOrder) != counts["ok"] {
		t.Fatalf("%d coupons on the order, %v", onOrder, counts)
	}
	var templates int64
	f.Backends.DB.Model(&models.Coupon{}).Where("order_id = ?", "cart").Distinct("template_id").Count(&templates)
	if templates != onOrder {
		t.Fatalf("%d coupons of %d templates on the order: two of one template", onOrder, templates)
	}
	if counts["busy"] == 0 && onOrder != 5 {
		t.Fatalf("%d coupons on the order without a busy answer, want 5", onOrder)
	}
	f.checkInvariants()
}

// Reconciliation counts held coupons as holding their slots (no drift) and
// reports holds past their time; a repair releases them.
func TestReconcileStaleHolds(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	c := f.claim(tp, "u1")
	if _, err := f.hold("stale", 10_000, 5, c); err != nil {
		t.Fatal(err)
	}
	figs, err := f.Reports.ListTemplateFigures(f.Ctx)
	if err != nil || figs[tp.ID].Held != 1 || figs[tp.ID].Issued != 0 || figs[tp.ID].HoldingSlot != 1 {
		t.Fatalf("figures while held: %+v %v", figs[tp.ID], err)
	}
	checkSums(t, figs[tp.ID])
	rep, err := f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{})
	if err != nil || rep.Drifted() != 0 || len(rep.StaleHolds) != 0 {
		t.Fatalf("reconcile while held: %+v %v", rep, err)
	}
	f.Clock.Advance(6 * time.Second)
	rep, err = f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{})
	if err != nil || rep.Drifted() != 0 || len(rep.StaleHolds) != 1 || rep.StaleHolds[0].OrderID != "stale" || rep.StaleHolds[0].Released {
		t.Fatalf("reconcile past the hold's time: %+v %v", rep, err)
	}
	rep, err = f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{Repair: true, Actor: "admin"})
	if err != nil || len(rep.StaleHolds) != 1 || !rep.StaleHolds[0].Released {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued {
		t.Fatalf("coupon after repair %+v", got)
	}
	f.checkInvariants()
}

// A hold lives in the database: a service started afresh (a restart, or
// another instance) confirms it, and answers the repeats as duplicates.
func TestHoldSurvivesRestart(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	c1, c2 := f.claim(tp, "u1"), f.claim(tp, "u2")
	if _, err := f.hold("keep", 10_000, 60, c1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hold("drop", 10_000, 60, c2); err != nil {
		t.Fatal(err)
	}
	restarted := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
	if g, err := restarted.GetHold(f.Ctx, "keep"); err != nil || g.State != checkout.HoldHeld {
		t.Fatalf("hold after restart %+v %v", g, err)
	}
	if _, err := restarted.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "keep"}); err != nil {
		t.Fatal(err)
	}
	if r, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "keep"}); err != nil || !r.Duplicate {
		t.Fatalf("confirm again on the other instance %+v %v", r, err)
	}
	if _, err := restarted.Release(f.Ctx, "shop", "drop"); err != nil {
		t.Fatal(err)
	}
	if r, err := f.Checkout.Release(f.Ctx, "shop", "drop"); err != nil || !r.Duplicate {
		t.Fatalf("release again on the other instance %+v %v", r, err)
	}
	f.checkInvariants()
}
