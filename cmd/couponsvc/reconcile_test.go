package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	reconcilesvc "github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestPrintReconcileBudget: `couponsvc reconcile` prints a line per campaign
// budget with its exact drift, counts it as unrepaired until --repair, and
// shows the repair.
func TestPrintReconcileBudget(t *testing.T) {
	fx := testenv.NewFixture(t, services.Config{})
	env, ctx := fx.Env, fx.Ctx
	c := fx.CreateCampaign(models.Campaign{Name: "c", BudgetCents: 2_000})
	tp := fx.Template(models.Template{CampaignID: c.ID, Name: "t", Kind: "fixed",
		FaceValueCents: 300, TotalStock: 5, PerUserLimit: 1, ValidDays: 3})
	if _, err := fx.Claim(tp.ID, "a", "k-a"); err != nil {
		t.Fatal(err)
	}
	if err := env.Backends.Redis.IncrBy(ctx, fx.Key(c.ID, "budget"), 90).Err(); err != nil {
		t.Fatal(err)
	}
	run := func(repair bool) (string, int) {
		t.Helper()
		rep, err := env.Service.Reconcile(ctx, reconcilesvc.ReconcileRequest{Repair: repair, Actor: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		n := printReconcile(&b, rep)
		return b.String(), n
	}
	// fields is the line of the budget table (after the blank line) that
	// starts with first, its fields joined by one space.
	fields := func(out string, first string) string {
		_, budgets, _ := strings.Cut(out, "\n\n")
		for _, line := range strings.Split(budgets, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == first {
				return strings.Join(f, " ")
			}
		}
		return ""
	}
	cid := fmt.Sprint(c.ID)
	out, n := run(false)
	// budget 2000, 300 held, Redis 1790 where 1700 is due: drift 90.
	if got := fields(out, cid); got != cid+" 2000 1790 300 0 1700 90 false" || n != 1 ||
		!strings.Contains(out, "1 campaign budgets, 1 drifted") ||
		fields(out, "campaign") != "campaign budget_cents redis_budget_remaining db_budget_used in_flight_cents expected_budget_remaining drift repaired" {
		t.Fatalf("unrepaired %d, output:\n%s", n, out)
	}
	if out, n = run(true); fields(out, cid) != cid+" 2000 1790 300 0 1700 90 true" || n != 0 {
		t.Fatalf("repair: unrepaired %d, output:\n%s", n, out)
	}
	if out, n = run(false); fields(out, cid) != cid+" 2000 1700 300 0 1700 0 false" || n != 0 ||
		!strings.Contains(out, "1 campaign budgets, 0 drifted") {
		t.Fatalf("after the repair: unrepaired %d, output:\n%s", n, out)
	}
}
