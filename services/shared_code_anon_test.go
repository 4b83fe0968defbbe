package services_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// newAnonFixture is a shared template "SUMMER10" (value 500, limit 1) in a
// campaign with a budget.
func newAnonFixture(t *testing.T, budget, stock int64, edit ...func(*models.Template)) *sharedFixture {
	f := &sharedFixture{claimFixture: newClaimFixture(t, services.Config{ClaimsConfig: services.ClaimsConfig{PendingTimeout: 50 * time.Millisecond}})}
	f.campaign = f.Campaign(budget)
	f.tp = f.template(f.campaign.ID, stock, 1, 500, append([]func(*models.Template){func(tp *models.Template) {
		tp.CodeMode, tp.SharedCode = models.CodeModeShared, "summer10"
	}}, edit...)...)
	return f
}

// budgetLeft is the campaign's budget left in Redis.
func (f *sharedFixture) budgetLeft() int64 {
	f.T.Helper()
	n, err := f.Env.Backends.Redis.Get(f.Ctx, f.Key(f.campaign.ID, "budget")).Int64()
	if err != nil {
		f.T.Fatal(err)
	}
	return n
}

// assertCounters wants the template's stock and the campaign's budget left
// exactly, and no user's ordinal in Redis (an anonymous claim holds none).
func (f *sharedFixture) assertCounters(remaining, budget int64) {
	f.T.Helper()
	if r, b := f.remaining(), f.budgetLeft(); r != remaining || b != budget {
		f.T.Fatalf("remaining %d, budget %d; want %d and %d", r, b, remaining, budget)
	}
	if users := f.Env.Backends.Redis.HGetAll(f.Ctx, f.TemplateKey(f.campaign.ID, f.tp.ID)+":users").Val(); len(users) != 0 {
		f.T.Fatalf("users hash %v, want empty: an anonymous claim holds no ordinal", users)
	}
}

// assertAnonRow wants the coupon of code to be the anonymous claim of order
// in status, holding a slot and no ordinal.
func (f *sharedFixture) assertAnonRow(code, order, status string, slot bool) models.Coupon {
	f.T.Helper()
	c := f.couponOf(code)
	if c.UserID != "" || c.UserOrdinal != nil || c.Status != status || c.ClaimOrderID == nil || *c.ClaimOrderID != order ||
		(c.Slot != nil) != slot {
		f.T.Fatalf("coupon %+v; want user '', ordinal NULL, status %s, claim order %s, slot held %v", c, status, order, slot)
	}
	return c
}

// TestSharedCodeAnonymous: a shared code at checkout without a user_id is
// an anonymous shopper's claim (docs/shared-codes.md): it takes stock and
// budget and no ordinal, repeats find it, a release, an expiry and a refund
// give back exactly what it took, and reconciliation finds no drift.
func TestSharedCodeAnonymous(t *testing.T) {
	// Budget for 4 coupons of 500, stock 10: the budget binds first.
	f := newAnonFixture(t, 2000, 10, func(tp *models.Template) { tp.RefundPolicy = models.RefundRecycle })
	t.Run("ValidateTakesNothing", func(t *testing.T) {
		before := f.redisState()
		res, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, CouponCodes: []string{"summer10"}})
		if err != nil || res.Result != "ok" || res.DiscountCents != 500 || res.Coupons[0].SharedCode != "SUMMER10" {
			t.Fatalf("validate: %+v %v", res, err)
		}
		f.assertRedisUnchanged(before)
		if n := f.couponCount(); n != 0 {
			t.Fatalf("validate wrote %d coupons", n)
		}
	})
	var redeemed string
	t.Run("Redeem", func(t *testing.T) {
		res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "Summer-10", OrderID: "r1", OrderAmountCents: 2000, Cashier: "till"})
		if err != nil || res.Duplicate || res.DiscountCents != 500 || res.PayableCents != 1500 || res.Coupon.UserID != "" ||
			res.Coupon.Status != models.CouponUsed {
			t.Fatalf("redeem: %+v %v", res, err)
		}
		redeemed = res.Coupon.Code
		f.assertAnonRow(redeemed, "r1", models.CouponUsed, true)
		f.assertCounters(9, 1500)
		again, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "SUMMER10", OrderID: "r1", OrderAmountCents: 2000, Cashier: "till"})
		if err != nil || !again.Duplicate || again.Coupon.Code != redeemed || again.DiscountCents != 500 {
			t.Fatalf("redeem again: %+v %v, want the duplicate of %s", again, err, redeemed)
		}
		if f.couponCount() != 1 {
			t.Fatalf("%d coupons after a repeat, want 1", f.couponCount())
		}
		f.assertCounters(9, 1500)
		// One shared code once per order: the code again for a user on the
		// order is a second coupon of the template, refused, and takes nothing.
		_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r1", OrderAmountCents: 2000, UserID: "ann", Cashier: "till"})
		assertClaimCode(t, err, models.CodeNotCombinable)
		if f.couponCount() != 1 {
			t.Fatalf("%d coupons after a refused second claim, want 1", f.couponCount())
		}
		f.assertCounters(9, 1500)
		var logs []models.UseLog
		if err := f.Backends.DB.Where("order_id = ?", "r1").Find(&logs).Error; err != nil || len(logs) != 1 || logs[0].UserID != "" {
			t.Fatalf("use log of r1: %+v %v; want one row without a user", logs, err)
		}
		f.assertNoDrift()
	})
	var held string
	t.Run("HoldRelease", func(t *testing.T) {
		res, err := f.hold("o1", "", "summer10", 1000, 60)
		if err != nil || res.Result != "held" || res.Duplicate || res.DiscountCents != 500 {
			t.Fatalf("hold: %+v %v", res, err)
		}
		held = res.Coupons[0].CouponCode
		f.assertAnonRow(held, "o1", models.CouponHeld, true)
		f.assertCounters(8, 1000)
		again, err := f.hold("o1", "", "SUMMER10", 1000, 60)
		if err != nil || !again.Duplicate || again.Coupons[0].CouponCode != held {
			t.Fatalf("repeat: %+v %v, want the duplicate of %s", again, err, held)
		}
		f.assertCounters(8, 1000)
		// Validate of the order answers its claim.
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o1", OrderAmountCents: 1000, CouponCodes: []string{"summer10"}})
		if err != nil || v.Result != "ok" || v.Coupons[0].CouponCode != held {
			t.Fatalf("validate of the held order: %+v %v", v, err)
		}
		f.assertNoDrift()
		if rel, err := f.Checkout.Release(f.Ctx, "shop", "o1"); err != nil || rel.Duplicate {
			t.Fatalf("release: %+v %v", rel, err)
		}
		f.assertAnonRow(held, "o1", models.CouponRevoked, false)
		f.assertCounters(9, 1500)
		f.assertNoDrift()
	})
	t.Run("HoldExpires", func(t *testing.T) {
		res, err := f.hold("o2", "", "summer10", 1000, 5)
		if err != nil || res.Result != "held" {
			t.Fatalf("hold: %+v %v", res, err)
		}
		f.assertCounters(8, 1000)
		f.Clock.Advance(6 * time.Second)
		if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
			t.Fatalf("expire: %d %v", n, err)
		}
		f.assertAnonRow(res.Coupons[0].CouponCode, "o2", models.CouponRevoked, false)
		f.assertCounters(9, 1500)
		f.assertNoDrift()
	})
	t.Run("RefundRecycles", func(t *testing.T) {
		res, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: redeemed, OrderID: "r1", Cashier: "till"})
		if err != nil || res.Duplicate || !res.StockReturned {
			t.Fatalf("refund: %+v %v", res, err)
		}
		f.assertAnonRow(redeemed, "r1", models.CouponRevoked, false)
		f.assertCounters(10, 2000)
		f.assertNoDrift()
	})
	t.Run("NoPerUserLimitBudgetBinds", func(t *testing.T) {
		// Limit 1, yet four anonymous orders each claim: no ordinal is
		// counted. The fifth finds the budget used up, and takes nothing.
		for i := 1; i <= 4; i++ {
			if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: fmt.Sprintf("b%d", i),
				OrderAmountCents: 1000, Cashier: "till"}); err != nil {
				t.Fatalf("anonymous redemption %d: %v", i, err)
			}
		}
		f.assertCounters(6, 0)
		before := f.redisState()
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "b5", OrderAmountCents: 1000, Cashier: "till"})
		assertClaimCode(t, err, models.CodeBudgetExhausted)
		_, err = f.hold("b6", "", "summer10", 1000, 60)
		assertClaimCode(t, err, models.CodeBudgetExhausted)
		v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, CouponCodes: []string{"summer10"}})
		if err != nil || v.Result != "budget_exhausted" {
			t.Fatalf("validate: %+v %v", v, err)
		}
		f.assertRedisUnchanged(before)
		if n := f.couponCount(); n != 7 {
			t.Fatalf("%d coupons, want 7 (1 refunded, 2 given back, 4 used)", n)
		}
		f.assertNoDrift()
	})
	t.Run("NotClaimable", func(t *testing.T) {
		paused := models.TemplatePaused
		if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", f.tp.ID, admin.TemplatePatch{Status: &paused}); err != nil {
			t.Fatal(err)
		}
		_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "p1", OrderAmountCents: 1000, Cashier: "till"})
		assertClaimCode(t, err, models.CodeNotClaimable)
		f.assertCounters(6, 0)
	})
}

// TestSharedCodeAnonymousRestore: under the refund policy restore, an
// anonymous claim's refund gives the coupon back to its bearer (issued,
// no owner, its slot kept): the stock and budget stay taken.
func TestSharedCodeAnonymousRestore(t *testing.T) {
	f := newAnonFixture(t, 0, 3, func(tp *models.Template) { tp.RefundPolicy = models.RefundRestore })
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r1", OrderAmountCents: 1000, Cashier: "till"})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: res.Coupon.Code, OrderID: "r1", Cashier: "till"})
	if err != nil || ref.StockReturned {
		t.Fatalf("refund: %+v %v", ref, err)
	}
	f.assertAnonRow(res.Coupon.Code, "r1", models.CouponIssued, true)
	f.assertCounters(2, -1)
	f.assertNoDrift()
}

// TestSharedCodeAnonymousSweepAndReload: an anonymous reservation whose
// process died is in the pending set with no user and ordinal 0; a reload
// of the counters keeps its slot taken without inventing a user, and the
// sweeper gives it back exactly.
func TestSharedCodeAnonymousSweepAndReload(t *testing.T) {
	f := newAnonFixture(t, 1000, 3)
	if _, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1000, CouponCodes: []string{"summer10"}}); err != nil {
		t.Fatal(err) // loads the counters
	}
	cid, tid := f.campaign.ID, f.tp.ID
	keys := []string{f.Key(cid, "budget"), f.TemplateKey(cid, tid), f.TemplateKey(cid, tid) + ":free", f.TemplateKey(cid, tid) + ":users",
		f.Key(cid, "idem:anon-1"), f.Key(cid, "pending"), f.TemplateKey(cid, tid) + ":rule"}
	vals, err := lua.Deduct.Run(f.Ctx, f.Env.Backends.Redis, keys, tid, "", "anon-1", f.Clock.Now().UnixMilli(), 3600, "killed", "anon").Slice()
	if err != nil || vals[0].(int64) != lua.DeductReserved || vals[1].(int64) != 1 || vals[2].(int64) != 0 {
		t.Fatalf("coupon_deduct.lua anon = %v %v; want reserved slot 1 ordinal 0", vals, err)
	}
	m := services.FormatPendingMember(tid, "", 1, 0, 500, "anon-1")
	if err := f.Env.Backends.Redis.ZScore(f.Ctx, f.Key(cid, "pending"), m).Err(); err != nil {
		t.Fatalf("member %q not pending: %v", m, err)
	}
	f.assertCounters(2, 500)
	if err := f.Core.Resync(f.Ctx, cid); err != nil {
		t.Fatal(err)
	}
	f.assertCounters(2, 500)
	f.Clock.Advance(time.Second)
	st, err := f.Claims.Sweep(f.Ctx)
	if err != nil || st.Released != 1 || st.Confirmed != 0 {
		t.Fatalf("sweep = %+v, %v; want 1 released", st, err)
	}
	f.assertCounters(3, 1000)
	f.assertNoDrift()
}

// TestSharedCodeAnonymousRace: 40 anonymous redemptions on distinct orders
// of a shared code with stock 10, over two instances: exactly 10 are used,
// 30 are answered sold_out, and the counters agree with the database.
func TestSharedCodeAnonymousRace(t *testing.T) {
	const orders, stock = 40, 10
	f := newAnonFixture(t, 0, stock)
	svcs := f.instances(2)
	errs := make([]error, orders)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = svcs[i%2].Redeem(t.Context(), checkout.RedeemRequest{CouponCode: "summer10",
				OrderID: fmt.Sprintf("race-%02d", i), OrderAmountCents: 1000, Cashier: "till"})
		}()
	}
	close(start)
	wg.Wait()
	counts := map[string]int{}
	for i, err := range errs {
		switch {
		case err == nil:
			counts["used"]++
		case models.IsCode(err, models.CodeSoldOut):
			counts["sold_out"]++
		default:
			t.Errorf("order race-%02d: %v", i, err)
		}
	}
	if counts["used"] != stock || counts["sold_out"] != orders-stock {
		t.Errorf("results %v; want %d used and %d sold_out", counts, stock, orders-stock)
	}
	statuses := map[string]int{}
	for _, c := range f.Coupons() {
		statuses[c.Status]++
		if c.UserID != "" || c.UserOrdinal != nil || c.Slot == nil {
			t.Errorf("coupon %+v; want anonymous with a slot", c)
		}
	}
	if statuses[models.CouponUsed] != stock || len(statuses) != 1 {
		t.Errorf("coupons by status %v; want %d used and nothing else", statuses, stock)
	}
	f.assertCounters(0, -1)
	f.assertNoDrift()
}
