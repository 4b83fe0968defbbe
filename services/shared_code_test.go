package services_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/reconcile"

	dto "github.com/prometheus/client_model/go"
)

// sharedFixture is a claim fixture with a shared template "SUMMER10".
type sharedFixture struct {
	*claimFixture
	campaign *models.Campaign
	tp       *models.Template
}

func newSharedFixture(t *testing.T, stock, limit int64, edit ...func(*models.Template)) *sharedFixture {
	f := &sharedFixture{claimFixture: newClaimFixture(t, services.Config{})}
	f.campaign = f.Campaign(0)
	f.tp = f.template(f.campaign.ID, stock, limit, 500, append([]func(*models.Template){func(tp *models.Template) {
		tp.CodeMode, tp.SharedCode = models.CodeModeShared, "summer10"
	}}, edit...)...)
	return f
}

func (f *sharedFixture) hold(order, user, code string, amount int64, ttl int) (*checkout.CheckoutResult, error) {
	return f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: order, OrderAmountCents: amount, CouponCodes: []string{code},
		UserID: user, TTLSeconds: ttl, Actor: "shop"})
}

// remaining is the template's stock left in Redis.
func (f *sharedFixture) remaining() int64 {
	f.T.Helper()
	n, err := f.Env.Backends.Redis.HGet(f.Ctx, f.TemplateKey(f.campaign.ID, f.tp.ID), "remaining").Int64()
	if err != nil {
		f.T.Fatal(err)
	}
	return n
}

// ordinals is the user's ordinals in Redis ("" for none).
func (f *sharedFixture) ordinals(user string) string {
	return f.Env.Backends.Redis.HGet(f.Ctx, f.TemplateKey(f.campaign.ID, f.tp.ID)+":users", user).Val()
}

// assertNoDrift runs a reconciliation and wants every template in line.
func (f *sharedFixture) assertNoDrift() {
	f.T.Helper()
	rep, err := f.Reconciler.Reconcile(f.Ctx, reconcile.ReconcileRequest{})
	if err != nil {
		f.T.Fatal(err)
	}
	if rep.Drifted() != 0 || rep.BudgetsDrifted() != 0 {
		f.T.Errorf("reconcile reports drift: %+v", rep)
	}
	f.assertAgree(f.campaign, f.tp)
}

func (f *sharedFixture) couponOf(code string) models.Coupon {
	f.T.Helper()
	var c models.Coupon
	if err := f.Backends.DB.Where("code = ?", code).First(&c).Error; err != nil {
		f.T.Fatalf("coupon %s: %v", code, err)
	}
	return c
}

func TestSharedCodeTemplate(t *testing.T) {
	f := newSharedFixture(t, 10, 1)
	if f.tp.SharedCode != "SUMMER10" || f.tp.CodeMode != models.CodeModeShared {
		t.Fatalf("template keeps %q %q, want shared SUMMER10", f.tp.CodeMode, f.tp.SharedCode)
	}
	create := func(mode, code string) (*models.Template, error) {
		return f.Admin.CreateTemplate(f.Ctx, "test", models.Template{CampaignID: f.campaign.ID, Name: "other", Kind: models.KindFixed,
			FaceValueCents: 100, TotalStock: 5, PerUserLimit: 1, ValidDays: 3, CodeMode: mode, SharedCode: code})
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, tc := range []struct{ mode, code, field string }{
			{"shared", "Summer10", "shared_code"},                           // taken, whatever the case
			{"shared", "", "shared_code"},                                   // required
			{"shared", "ab1", "shared_code"},                                // too short
			{"shared", "SUMMER_10", "shared_code"},                          // a character outside the set
			{"shared", "----", "shared_code"},                               // no letter or digit
			{"shared", "ABCD-EFGH-JKLM-N", "shared_code"},                   // reads as a coupon code
			{"shared", "A234567890123456789012345678901234", "shared_code"}, // too long
			{"unique", "WINTER", "shared_code"},                             // only for shared
			{"poster", "WINTER", "code_mode"},
		} {
			_, err := create(tc.mode, tc.code)
			assertClaimCode(t, err, models.CodeInvalidRequest, tc.field)
		}
	})
	t.Run("ConcurrentCreate", func(t *testing.T) {
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = create(models.CodeModeShared, "spring-26")
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			default:
				assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
			}
		}
		if ok != 1 {
			t.Fatalf("%d of %d creations of one code succeeded, want 1: %v", ok, n, errs)
		}
	})
	t.Run("ArchiveFreesCode", func(t *testing.T) {
		archived := models.TemplateArchived
		out, err := f.Admin.UpdateTemplate(f.Ctx, "admin", f.tp.ID, admin.TemplatePatch{Status: &archived})
		if err != nil || out.Status != models.TemplateArchived {
			t.Fatalf("archive: %+v %v", out, err)
		}
		var n int64
		f.Backends.DB.Model(&models.AuditEntry{}).Where("action = ? AND target = ?", "template.archive", fmt.Sprintf("template:%d", f.tp.ID)).Count(&n)
		if n != 1 {
			t.Errorf("%d template.archive audit entries, want 1", n)
		}
		active := models.TemplateActive
		_, err = f.Admin.UpdateTemplate(f.Ctx, "admin", f.tp.ID, admin.TemplatePatch{Status: &active})
		assertClaimCode(t, err, models.CodeInvalidRequest, "status")
		paused := models.TemplatePaused
		_, err = f.Admin.UpdateTemplate(f.Ctx, "admin", f.tp.ID, admin.TemplatePatch{Status: &paused})
		assertClaimCode(t, err, models.CodeInvalidRequest, "status")
		// An archived template takes no claim, by code or by claim.
		_, err = f.hold("o-archived", "ann", "summer10", 1000, 60)
		assertClaimCode(t, err, models.CodeNotFound)
		_, err = f.Claim(f.tp.ID, "ann", "k-archived")
		assertClaimCode(t, err, models.CodeNotClaimable)
		if e := err.(*models.Error); e.Message != "this coupon is archived" {
			t.Errorf("claim on an archived template: %q", e.Message)
		}
		// Its code is free for another template.
		other, err := create(models.CodeModeShared, "SUMMER10")
		if err != nil {
			t.Fatalf("reuse the code of an archived template: %v", err)
		}
		res, err := f.hold("o-new", "ann", "summer10", 1000, 60)
		if err != nil || res.Coupons[0].TemplateID != other.ID || res.Coupons[0].SharedCode != "SUMMER10" {
			t.Fatalf("hold with the reused code: %+v %v", res, err)
		}
	})
	t.Run("PatchCodeMode", func(t *testing.T) {
		tp := f.template(f.campaign.ID, 5, 1, 100)
		shared, code := models.CodeModeShared, "autumn"
		out, err := f.Admin.UpdateTemplate(f.Ctx, "admin", tp.ID, admin.TemplatePatch{CodeMode: &shared, SharedCode: &code})
		if err != nil || out.SharedCode != "AUTUMN" {
			t.Fatalf("patch to shared: %+v %v", out, err)
		}
		dup := "spring-26"
		_, err = f.Admin.UpdateTemplate(f.Ctx, "admin", tp.ID, admin.TemplatePatch{SharedCode: &dup})
		assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
		unique := models.CodeModeUnique
		out, err = f.Admin.UpdateTemplate(f.Ctx, "admin", tp.ID, admin.TemplatePatch{CodeMode: &unique})
		if err != nil || out.SharedCode != "" || out.CodeMode != models.CodeModeUnique {
			t.Fatalf("patch back to unique: %+v %v", out, err)
		}
	})
}

func TestSharedCodeHold(t *testing.T) {
	f := newSharedFixture(t, 3, 1, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
	t.Run("ErrNoSuchCode", func(t *testing.T) {
		// Without a user_id a shared code is an anonymous shopper's
		// (TestSharedCodeAnonymous); a code no template has is still none.
		_, err := f.hold("o1", "ann", "nosuchcode", 1000, 60)
		assertClaimCode(t, err, models.CodeNotFound)
		_, err = f.hold("o1", "", "nosuchcode", 1000, 60)
		assertClaimCode(t, err, models.CodeNotFound)
		if f.remaining() != 3 || f.couponCount() != 0 {
			t.Fatalf("a refused hold took stock: remaining %d, %d coupons", f.remaining(), f.couponCount())
		}
	})
	t.Run("ValidateTakesNothing", func(t *testing.T) {
		before := f.redisState()
		res, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, CouponCodes: []string{"Summer10"}, UserID: "ann"})
		if err != nil || res.Result != "ok" || res.DiscountCents != 500 || res.Coupons[0].SharedCode != "SUMMER10" {
			t.Fatalf("validate: %+v %v", res, err)
		}
		f.assertRedisUnchanged(before)
		if n := f.couponCount(); n != 0 {
			t.Fatalf("validate wrote %d coupons", n)
		}
	})
	var first *checkout.CheckoutResult
	t.Run("HoldClaims", func(t *testing.T) {
		res, err := f.hold("o1", "ann", "SUMMER10", 1000, 60)
		if err != nil || res.Result != "held" || res.DiscountCents != 500 || res.Duplicate {
			t.Fatalf("hold: %+v %v", res, err)
		}
		c := f.couponOf(res.Coupons[0].CouponCode)
		if c.UserID != "ann" || c.Status != models.CouponHeld || c.ClaimOrderID == nil || *c.ClaimOrderID != "o1" || c.Slot == nil {
			t.Fatalf("claimed coupon %+v", c)
		}
		if f.remaining() != 2 || f.ordinals("ann") != "1" {
			t.Fatalf("remaining %d, ann's ordinals %q; want 2 and 1", f.remaining(), f.ordinals("ann"))
		}
		first = res
		again, err := f.hold("o1", "ann", "summer10", 1000, 60)
		if err != nil || !again.Duplicate || again.Coupons[0].CouponCode != res.Coupons[0].CouponCode || !again.ExpiresAt.Equal(*res.ExpiresAt) {
			t.Fatalf("repeat: %+v %v, want duplicate of %+v", again, err, res)
		}
		if f.remaining() != 2 || f.couponCount() != 1 {
			t.Fatalf("a repeat took stock: remaining %d, %d coupons", f.remaining(), f.couponCount())
		}
		// Validate of the order answers its claim; another order of ann's is
		// over her limit, and a hold of it takes nothing.
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o1", OrderAmountCents: 1000, CouponCodes: []string{"summer10"}, UserID: "ann"})
		if err != nil || v.Result != "ok" || v.Coupons[0].CouponCode != res.Coupons[0].CouponCode {
			t.Fatalf("validate of the held order: %+v %v", v, err)
		}
		v, err = f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o2", OrderAmountCents: 1000, CouponCodes: []string{"summer10"}, UserID: "ann"})
		if err != nil || v.Result != "user_limit_reached" || v.DiscountCents != 0 {
			t.Fatalf("validate over the limit: %+v %v", v, err)
		}
		_, err = f.hold("o2", "ann", "summer10", 1000, 60)
		assertClaimCode(t, err, models.CodeUserLimitReached)
		if f.remaining() != 2 || f.couponCount() != 1 {
			t.Fatalf("a refused hold took stock: remaining %d, %d coupons", f.remaining(), f.couponCount())
		}
		f.assertNoDrift()
	})
	t.Run("ReleaseGivesBack", func(t *testing.T) {
		rel, err := f.Checkout.Release(f.Ctx, "shop", "o1")
		if err != nil || rel.Duplicate {
			t.Fatalf("release: %+v %v", rel, err)
		}
		c := f.couponOf(first.Coupons[0].CouponCode)
		if c.Status != models.CouponRevoked || c.Slot != nil || c.UserOrdinal != nil {
			t.Fatalf("released claim %+v, want revoked without slot and ordinal", c)
		}
		if f.remaining() != 3 || f.ordinals("ann") != "" {
			t.Fatalf("remaining %d, ann's ordinals %q; want 3 and none", f.remaining(), f.ordinals("ann"))
		}
		f.assertNoDrift()
		// The same order may claim again, and confirm.
		res, err := f.hold("o1", "ann", "summer10", 1000, 60)
		if err != nil || res.Duplicate || res.Coupons[0].CouponCode == first.Coupons[0].CouponCode {
			t.Fatalf("hold after release: %+v %v", res, err)
		}
		conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1", Cashier: "shop"})
		if err != nil || conf.Result != "redeemed" || conf.DiscountCents != 500 {
			t.Fatalf("confirm: %+v %v", conf, err)
		}
		again, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o1", Cashier: "shop"})
		if err != nil || !again.Duplicate {
			t.Fatalf("confirm again: %+v %v", again, err)
		}
		if c := f.couponOf(res.Coupons[0].CouponCode); c.Status != models.CouponUsed || c.UserID != "ann" {
			t.Fatalf("confirmed claim %+v", c)
		}
		if f.remaining() != 2 || f.ordinals("ann") != "1" {
			t.Fatalf("remaining %d, ann's ordinals %q; want 2 and 1", f.remaining(), f.ordinals("ann"))
		}
		f.assertNoDrift()
	})
	t.Run("ExpiryGivesBack", func(t *testing.T) {
		if _, err := f.hold("o3", "bob", "summer10", 1000, 5); err != nil {
			t.Fatal(err)
		}
		if f.remaining() != 1 {
			t.Fatalf("remaining %d, want 1", f.remaining())
		}
		f.Clock.Advance(6 * time.Second)
		if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
			t.Fatalf("expire: %d %v", n, err)
		}
		if f.remaining() != 2 || f.ordinals("bob") != "" {
			t.Fatalf("remaining %d, bob's ordinals %q; want 2 and none", f.remaining(), f.ordinals("bob"))
		}
		_, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o3"})
		assertClaimCode(t, err, models.CodeHoldExpired)
		if f.remaining() != 2 {
			t.Fatalf("a late confirm took stock: remaining %d", f.remaining())
		}
		f.assertNoDrift()
	})
	t.Run("FailedConfirmGivesBack", func(t *testing.T) {
		// A hold of the shared code beside a combinable coupon of another
		// template; the other coupon is revoked while held, the hold runs
		// out, and the confirm that fails gives the claim back at once.
		other := f.template(f.campaign.ID, 5, 1, 100, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		cp := f.MustClaim(other.ID, "cat", "k-cat").Coupon
		res, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "o4", OrderAmountCents: 1000,
			CouponCodes: []string{"summer10", cp.Code}, UserID: "cat", TTLSeconds: 5})
		if err != nil || res.DiscountCents != 600 {
			t.Fatalf("hold of two: %+v %v", res, err)
		}
		if f.remaining() != 1 {
			t.Fatalf("remaining %d, want 1", f.remaining())
		}
		if _, err := f.Admin.Revoke(f.Ctx, "admin", cp.Code, false, "test"); err != nil {
			t.Fatal(err)
		}
		f.Clock.Advance(6 * time.Second)
		_, err = f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o4"})
		assertClaimCode(t, err, models.CodeHoldExpired)
		if f.remaining() != 2 || f.ordinals("cat") != "" {
			t.Fatalf("after the failed confirm: remaining %d, cat's ordinals %q; want 2 and none", f.remaining(), f.ordinals("cat"))
		}
		h, err := f.Checkout.GetHold(f.Ctx, "o4")
		if err != nil || h.State != checkout.HoldExpired {
			t.Fatalf("hold after the failed confirm: %+v %v", h, err)
		}
		f.assertNoDrift()
	})
	t.Run("RedeemOneStep", func(t *testing.T) {
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r1", OrderAmountCents: 2000, UserID: "dan", Cashier: "till"})
		if err != nil || res.Duplicate || res.DiscountCents != 500 || res.PayableCents != 1500 || res.Coupon.UserID != "dan" || res.Coupon.Status != models.CouponUsed {
			t.Fatalf("redeem: %+v %v", res, err)
		}
		again, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "SUMMER10", OrderID: "r1", OrderAmountCents: 2000, UserID: "dan"})
		if err != nil || !again.Duplicate || again.Coupon.Code != res.Coupon.Code || again.DiscountCents != 500 {
			t.Fatalf("redeem again: %+v %v", again, err)
		}
		if f.remaining() != 1 || f.ordinals("dan") != "1" {
			t.Fatalf("remaining %d, dan's ordinals %q; want 1 and 1", f.remaining(), f.ordinals("dan"))
		}
		_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r2", OrderAmountCents: 2000, UserID: "dan"})
		assertClaimCode(t, err, models.CodeUserLimitReached)
		_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r3", OrderAmountCents: 2000, UserID: "eve"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r4", OrderAmountCents: 2000, UserID: "fay"})
		assertClaimCode(t, err, models.CodeSoldOut)
		if f.remaining() != 0 {
			t.Fatalf("remaining %d, want 0", f.remaining())
		}
		f.assertNoDrift()
	})
}

// TestSharedCodeLookupFollowsChanges: the instance reuses what it looked up
// about a typed code for a second, but a change of a template on it is seen
// at once: a code looked up as nobody's works as soon as a template takes
// it, and stops as soon as the template is archived or gives it up.
func TestSharedCodeLookupFollowsChanges(t *testing.T) {
	f := newSharedFixture(t, 5, 1)
	if _, err := f.hold("o1", "ann", "winter20", 1000, 60); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("hold with a code no template has: %v, want not_found", err)
	}
	winter := f.template(f.campaign.ID, 5, 1, 700, func(tp *models.Template) {
		tp.CodeMode, tp.SharedCode = models.CodeModeShared, "winter20"
	})
	res, err := f.hold("o1", "ann", "winter20", 1000, 60)
	if err != nil || res.Result != "held" || res.DiscountCents != 700 || res.Coupons[0].TemplateID != winter.ID {
		t.Fatalf("hold right after the template took the code: %+v %v", res, err)
	}
	code := "spring30"
	if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", winter.ID, admin.TemplatePatch{SharedCode: &code}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hold("o2", "bob", "winter20", 1000, 60); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("hold with the code given up: %v, want not_found", err)
	}
	res, err = f.hold("o2", "bob", "spring30", 1000, 60)
	if err != nil || res.Result != "held" || res.Coupons[0].TemplateID != winter.ID {
		t.Fatalf("hold with the new code: %+v %v", res, err)
	}
	archived := models.TemplateArchived
	if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", f.tp.ID, admin.TemplatePatch{Status: &archived}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hold("o3", "cat", "summer10", 1000, 60); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("hold with an archived template's code: %v, want not_found", err)
	}
}

// TestSharedCodeSoldOutMemory: once a shared template sold out, a hold with
// its code by an order that never claimed with it is answered sold_out from
// the instance's memory (no database read, no Redis call), as the script
// would; the order that holds the last coupon still gets its duplicate, and
// stock given back on the instance is seen at once.
func TestSharedCodeSoldOutMemory(t *testing.T) {
	f := newSharedFixture(t, 1, 1)
	fromMemory := func() int {
		var m dto.Metric
		if err := f.Core.Metrics().SoldOutFromMemory.Write(&m); err != nil {
			t.Fatal(err)
		}
		return int(m.GetCounter().GetValue())
	}
	first, err := f.hold("o1", "ann", "summer10", 1000, 60)
	if err != nil || first.Result != "held" {
		t.Fatalf("hold of the last coupon: %+v %v", first, err)
	}
	if _, err := f.hold("o2", "bob", "summer10", 1000, 60); !models.IsCode(err, models.CodeSoldOut) {
		t.Fatalf("hold after the sell-out: %v, want sold_out", err)
	}
	for i := 0; !f.Core.SoldOutLearnt(f.tp.ID); i++ {
		if i == 5000 {
			t.Fatal("the sell-out was never learnt")
		}
		time.Sleep(time.Millisecond)
	}
	if n := fromMemory(); n != 0 {
		t.Fatalf("%d answers from memory before the sell-out was learnt", n)
	}
	before := f.redisState()
	for _, h := range []struct{ order, user string }{{"o3", "cat"}, {"o2", "bob"}, {"o4", "ann"}} {
		if _, err := f.hold(h.order, h.user, "summer10", 1000, 60); !models.IsCode(err, models.CodeSoldOut) {
			t.Fatalf("hold %s by %s: %v, want sold_out", h.order, h.user, err)
		}
	}
	if n := fromMemory(); n != 3 {
		t.Fatalf("%d answers from memory, want 3", n)
	}
	f.assertRedisUnchanged(before)
	again, err := f.hold("o1", "ann", "summer10", 1000, 60)
	if err != nil || !again.Duplicate || again.Coupons[0].CouponCode != first.Coupons[0].CouponCode {
		t.Fatalf("replay of the holding order: %+v %v, want its duplicate", again, err)
	}
	if n := fromMemory(); n != 3 {
		t.Fatalf("the replay was answered from memory (%d)", n)
	}
	if _, err := f.Checkout.Release(f.Ctx, "shop", "o1"); err != nil {
		t.Fatal(err)
	}
	res, err := f.hold("o3", "cat", "summer10", 1000, 60)
	if err != nil || res.Result != "held" {
		t.Fatalf("hold after the coupon was given back: %+v %v", res, err)
	}
	if n := fromMemory(); n != 3 {
		t.Fatalf("%d answers from memory, want still 3", n)
	}
	f.assertNoDrift()
}

// TestSharedCodeNormalForm: a shared code is stored and looked up in one
// normal form, upper case with dashes and spaces dropped
// (docs/shared-codes.md): spellings that differ only by case, dashes or
// spaces are one code, for uniqueness (also when created at once) and at
// checkout.
func TestSharedCodeNormalForm(t *testing.T) {
	f := newSharedFixture(t, 10, 1)
	create := func(code string) (*models.Template, error) {
		return f.Admin.CreateTemplate(f.Ctx, "test", models.Template{CampaignID: f.campaign.ID, Name: "other", Kind: models.KindFixed,
			FaceValueCents: 100, TotalStock: 5, PerUserLimit: 1, ValidDays: 3, CodeMode: models.CodeModeShared, SharedCode: code})
	}
	tp, err := create("Summer-8931")
	if err != nil || tp.SharedCode != "SUMMER8931" {
		t.Fatalf("create Summer-8931: %+v %v, want the code stored as SUMMER8931", tp, err)
	}
	t.Run("ErrTakenInAnySpelling", func(t *testing.T) {
		for _, code := range []string{"SUMMER8931", "summer 8931", "SUM-MER-89-31", " SUMMER8931 ", "SUMMER10", "summer-10", "SUMMER 1 0"} {
			_, err := create(code)
			assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
		}
		other := f.template(f.campaign.ID, 5, 1, 100)
		shared, code := models.CodeModeShared, "summer-8931"
		_, err := f.Admin.UpdateTemplate(f.Ctx, "admin", other.ID, admin.TemplatePatch{CodeMode: &shared, SharedCode: &code})
		assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
		var n int64
		f.Backends.DB.Model(&models.Template{}).Where("code_mode = ?", models.CodeModeShared).Count(&n)
		if n != 2 {
			t.Fatalf("%d shared templates, want 2", n)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, code := range []string{"A-B-C", "ab 1", "ABCD EFGH JKLM N", "SUMMER_8932", "SUMMER\t8932"} {
			_, err := create(code)
			assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
		}
	})
	t.Run("CheckoutInAnySpelling", func(t *testing.T) {
		for _, typed := range []string{"SUMMER8931", "summer 8931", "Summer-8931", "S U M M E R - 8 9 3 1"} {
			res, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, CouponCodes: []string{typed}, UserID: "ann"})
			if err != nil || res.Result != "ok" || res.Coupons[0].TemplateID != tp.ID || res.Coupons[0].SharedCode != "SUMMER8931" {
				t.Fatalf("validate %q: %+v %v", typed, res, err)
			}
		}
		res, err := f.hold("o-spaced", "ann", "summer 8931", 1000, 60)
		if err != nil || res.Coupons[0].TemplateID != tp.ID {
			t.Fatalf("hold with spaces: %+v %v", res, err)
		}
		// The same order typing the code another way is the same claim.
		again, err := f.hold("o-spaced", "ann", "SUMMER-8931", 1000, 60)
		if err != nil || !again.Duplicate || again.Coupons[0].CouponCode != res.Coupons[0].CouponCode {
			t.Fatalf("hold again with dashes: %+v %v", again, err)
		}
		rr, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer 10", OrderID: "r-spaced", UserID: "bob", OrderAmountCents: 1000})
		if err != nil || rr.Duplicate || rr.DiscountCents != 500 || rr.Coupon.TemplateID != f.tp.ID || rr.Coupon.Status != models.CouponUsed {
			t.Fatalf("redeem with spaces: %+v %v", rr, err)
		}
	})
	t.Run("ConcurrentCreateSpellings", func(t *testing.T) {
		spellings := []string{"AUTUMN-27", "autumn27", "Autumn 27", "AUT-UMN-27", "autumn-2-7", "AUTUMN27", " autumn 27", "AuTuMn-27"}
		var wg sync.WaitGroup
		errs := make([]error, len(spellings))
		start := make(chan struct{})
		for i, code := range spellings {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = create(code)
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			assertClaimCode(t, err, models.CodeInvalidRequest, "shared_code")
		}
		var n int64
		f.Backends.DB.Model(&models.Template{}).Where("shared_code = ?", "AUTUMN27").Count(&n)
		if ok != 1 || n != 1 {
			t.Fatalf("%d of %d creations succeeded, %d rows have AUTUMN27; want 1 and 1: %v", ok, len(spellings), n, errs)
		}
	})
}
