package services_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func budgetShow(d reconcile.CampaignBudgetDrift) string {
	r := "nil"
	if d.RedisBudgetRemaining != nil {
		r = fmt.Sprint(*d.RedisBudgetRemaining)
	}
	return fmt.Sprintf("campaign=%d budget=%d redis=%s used=%d in_flight=%d expected=%d drift=%d repaired=%t",
		d.CampaignID, d.BudgetCents, r, d.DBBudgetUsed, d.InFlightCents, d.ExpectedRemaining, d.Drift, d.Repaired)
}

// TestReconcileBudget: a campaign's budget counter has its own line in the
// reconciliation, exact with claims, a return of stock and a reservation in
// flight; a corrupted counter shows its exact drift, and a repair rebuilds
// it (with an audit entry) to no drift.
func TestReconcileBudget(t *testing.T) {
	fx := testenv.NewFixture(t, services.Config{})
	env, ctx, svc := fx.Env, fx.Ctx, fx.Svc
	camp := fx.CreateCampaign(models.Campaign{Name: "Budget", BudgetCents: 10_000})
	free := fx.CreateCampaign(models.Campaign{Name: "No budget"})
	var tpl *models.Template
	for _, c := range []*models.Campaign{camp, free} {
		tp := fx.Template(models.Template{CampaignID: c.ID, Name: "b", Kind: models.KindFixed,
			FaceValueCents: 500, TotalStock: 20, PerUserLimit: 2, ValidDays: 3})
		if c == camp {
			tpl = tp
		}
	}
	var coupons []*models.Coupon
	for _, u := range []string{"a", "b", "c", "d"} {
		res, err := fx.Claim(tpl.ID, u, "bk-"+u)
		if err != nil {
			t.Fatal(err)
		}
		coupons = append(coupons, res.Coupon)
	}
	// d gives its stock (and budget) back; c is revoked keeping it.
	if _, err := svc.Revoke(ctx, "admin", coupons[3].Code, true, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Revoke(ctx, "admin", coupons[2].Code, false, "test"); err != nil {
		t.Fatal(err)
	}
	// A reservation whose coupon is not written (yet).
	prefix := fx.Key(camp.ID, "")
	tkey := fmt.Sprintf("%st:%d", prefix, tpl.ID)
	vals, err := lua.Deduct.Run(ctx, env.Backends.Redis, []string{prefix + "budget", tkey, tkey + ":free", tkey + ":users",
		prefix + "idem:flying", prefix + "pending", tkey + ":rule"}, tpl.ID, "w", "flying", svc.Now().UnixMilli(), 3600, "att1").Slice()
	if err != nil || vals[0].(int64) != lua.DeductReserved {
		t.Fatalf("reserve: %v %v", vals, err)
	}

	run := func(repair bool) (*reconcile.ReconcileReport, reconcile.CampaignBudgetDrift) {
		t.Helper()
		rep, err := svc.Reconcile(ctx, reconcile.ReconcileRequest{Repair: repair, Actor: "tester"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Campaigns) != 1 || len(rep.Templates) != 2 {
			t.Fatalf("want one budget line (the campaign without a budget has none) and two templates: %+v", rep)
		}
		for _, d := range rep.Templates {
			if d.Drifted() {
				t.Fatalf("a template drifted: %s", rcShow(d))
			}
		}
		return rep, rep.Campaigns[0]
	}
	// 3 coupons hold 1500, the reservation 500: 8000 left.
	want := reconcile.CampaignBudgetDrift{CampaignID: camp.ID, BudgetCents: 10_000, Currency: "USD", DBBudgetUsed: 1500,
		InFlightCents: 500, ExpectedRemaining: 8000}
	check := func(d reconcile.CampaignBudgetDrift, redis, drift int64, repaired bool) {
		t.Helper()
		w := want
		w.Drift, w.Repaired = drift, repaired
		got := d
		got.RedisBudgetRemaining = nil
		if got != w || d.RedisBudgetRemaining == nil || *d.RedisBudgetRemaining != redis {
			t.Fatalf("got  %s\nwant redis=%d drift=%d repaired=%t of %+v", budgetShow(d), redis, drift, repaired, w)
		}
	}
	rep, d := run(false)
	check(d, 8000, 0, false)
	if rep.BudgetsDrifted() != 0 {
		t.Fatalf("%d budgets drifted, want 0", rep.BudgetsDrifted())
	}

	// Redis hands out 700 cents the budget does not have.
	if err := env.Backends.Redis.IncrBy(ctx, prefix+"budget", 700).Err(); err != nil {
		t.Fatal(err)
	}
	rep, d = run(false)
	check(d, 8700, 700, false)
	if rep.BudgetsDrifted() != 1 || rep.Drifted() != 0 {
		t.Fatalf("budgets drifted %d, templates %d; want 1 and 0", rep.BudgetsDrifted(), rep.Drifted())
	}
	var audits []models.AuditEntry
	loadAudits := func() {
		t.Helper()
		audits = nil
		if err := env.Backends.DB.Where("action = ?", "reconcile.repair").Order("id").Find(&audits).Error; err != nil {
			t.Fatal(err)
		}
	}
	if loadAudits(); len(audits) != 0 {
		t.Fatalf("a check wrote repair entries: %+v", audits)
	}
	_, d = run(true)
	check(d, 8700, 700, true)
	loadAudits()
	if len(audits) != 1 || audits[0].Actor != "tester" || audits[0].Target != fmt.Sprintf("campaign:%d", camp.ID) ||
		!strings.Contains(audits[0].Detail, "budget drift=700 redis_budget_remaining=8700 expected_budget_remaining=8000") {
		t.Fatalf("audit entries: %+v", audits)
	}
	_, d = run(false)
	check(d, 8000, 0, false)
	rcReport(t, "budget repaired: %s", audits[0].Detail)

	// Stuck budget (below what the database allows), then garbage.
	if err := env.Backends.Redis.Set(ctx, prefix+"budget", 7500, 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, d = run(true)
	check(d, 7500, -500, true)
	if err := env.Backends.Redis.Set(ctx, prefix+"budget", "lots", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, d = run(true)
	check(d, -1, -8001, true)
	_, d = run(false)
	check(d, 8000, 0, false)

	// The budget counter lost: not loaded is no drift.
	if err := env.Backends.Redis.Del(ctx, prefix+"budget").Err(); err != nil {
		t.Fatal(err)
	}
	if _, d = run(false); d.RedisBudgetRemaining != nil || d.Drift != 0 || d.Drifted() {
		t.Fatalf("not loaded: %s", budgetShow(d))
	}
}
