package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/claims"
)

// TestReconcileBudgetAPI: POST /api/v1/reconcile answers a line per campaign
// budget, with the exact drift of a corrupted counter, as the document says;
// repair:true rebuilds it.
func TestReconcileBudgetAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	doc := testsupport.FetchOpenAPI(t, e)
	ctx := context.Background()
	c, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "c", BudgetCents: 5_000})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "t", Kind: "fixed",
		FaceValueCents: 400, TotalStock: 10, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"a", "b"} {
		if _, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: u, IdempotencyKey: "k-" + u}); err != nil {
			t.Fatal(err)
		}
	}
	key := fmt.Sprintf("%s{c%d}:budget", e.Prefix, c.ID)
	if err := e.Backends.Redis.IncrBy(ctx, key, -1_000).Err(); err != nil {
		t.Fatal(err)
	}
	line := func(repair bool) map[string]any {
		t.Helper()
		out := e.MustCall(t, 200, "POST", "/api/v1/reconcile", testsupport.AdminToken, fmt.Sprintf(`{"repair":%t}`, repair))
		doc.CheckAnswer(t, "POST", "/api/v1/reconcile", 200, out)
		rows, _ := out["campaigns"].([]any)
		if len(rows) != 1 {
			t.Fatalf("want one campaign line: %v", out)
		}
		return rows[0].(map[string]any)
	}
	want := func(got map[string]any, redis, drift float64, repaired bool) {
		t.Helper()
		w := map[string]any{"campaign_id": float64(c.ID), "budget_cents": 5000.0, "currency": "USD", "redis_budget_remaining": redis,
			"db_budget_used": 800.0, "in_flight_cents": 0.0, "expected_budget_remaining": 4200.0, "drift": drift, "repaired": repaired}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("got  %v\nwant %v", got, w)
		}
	}
	want(line(false), 3200, -1000, false)
	want(line(true), 3200, -1000, true)
	want(line(false), 4200, 0, false)
	audit, err := e.Service.ListAudit(ctx, 10)
	if err != nil || len(audit) == 0 || audit[0].Action != "reconcile.repair" || audit[0].Target != fmt.Sprintf("campaign:%d", c.ID) ||
		!strings.Contains(audit[0].Detail, "budget drift=-1000") {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}

// TestReconcileBudgetPage: the reconcile page shows a campaign budget's line
// with its drift, and the repair says what it did and leaves no drift.
func TestReconcileBudgetPage(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	camp, _, _ := figuresMix(t, e.Service) // $500 budget, $26.00 held
	key := fmt.Sprintf("%s{c%d}:budget", e.Prefix, camp.ID)
	if err := e.Backends.Redis.IncrBy(ctx, key, 1_250).Err(); err != nil {
		t.Fatal(err)
	}
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Get("/admin/reconcile?run=1")
	text := p.Text()
	for _, s := range []string{"Campaign budgets 1 budget drifted",
		"Sums $500.00 $26.00 $0.00 $486.50 $474.00 $12.50 Drift"} {
		if !strings.Contains(text, s) {
			t.Errorf("the report lacks %q:\n%s", s, text)
		}
	}
	p = admin.Form("/admin/reconcile", "/admin/reconcile", url.Values{})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("repair: %v", p)
	}
	text = admin.Get(p.Location()).Text()
	for _, s := range []string{"Repaired the budget of “Sums”: the fast counter had $486.50 left where the coupons on record leave $474.00.",
		"Sums $500.00 $26.00 $0.00 $474.00 $474.00 $0.00 OK"} {
		if !strings.Contains(text, s) {
			t.Errorf("after the repair the page lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "budget drifted") {
		t.Errorf("a budget still drifted after the repair:\n%s", text)
	}
}
