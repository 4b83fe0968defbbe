package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/claims"
)

// budgetFixture makes a campaign with budget cents and a fixed template of
// value cents, stock 100, one per user.
func budgetFixture(t *testing.T, e *testsupport.APIEnv, budget, value int64) (cid, tid int64) {
	t.Helper()
	ctx := context.Background()
	c, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "c", BudgetCents: budget})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "t", Kind: "fixed",
		FaceValueCents: value, TotalStock: 100, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, tp.ID
}

// budgetLeft reads the campaign's Redis budget counter; "" when not loaded.
func budgetLeft(t *testing.T, e *testsupport.APIEnv, cid int64) string {
	t.Helper()
	v, _ := e.Backends.Redis.Get(context.Background(), fmt.Sprintf("%s{c%d}:budget", e.Prefix, cid)).Result()
	return v
}

// TestCampaignBudgetChange: PATCH budget_cents raises, lowers, removes and
// sets a budget; the Redis counter follows (reconcile finds no drift), claims
// obey the new budget at once, one below what was taken is refused with
// budget_exhausted naming budget_cents and changes nothing, bad input is a 400,
// and each change is audited.
func TestCampaignBudgetChange(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	doc := testsupport.FetchOpenAPI(t, e)
	ctx := context.Background()
	cid, tid := budgetFixture(t, e, 1_000, 400)
	n := 0
	claim := func() error {
		n++
		_, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tid, UserID: fmt.Sprintf("u%d", n), IdempotencyKey: fmt.Sprintf("k%d", n)})
		return err
	}
	for range 2 {
		if err := claim(); err != nil {
			t.Fatal(err)
		}
	}
	path := fmt.Sprintf("/api/v1/campaigns/%d", cid)
	patch := func(want int, body string) map[string]any {
		t.Helper()
		out := e.MustCall(t, want, "PATCH", path, testsupport.AdminToken, body)
		doc.CheckAnswer(t, "PATCH", "/api/v1/campaigns/{id}", want, out)
		return out
	}
	drift := func(wantBudget, wantRedis float64) {
		t.Helper()
		out := e.MustCall(t, 200, "POST", "/api/v1/reconcile", testsupport.AdminToken, `{"repair":false}`)
		row := out["campaigns"].([]any)[0].(map[string]any)
		if row["budget_cents"] != wantBudget || row["redis_budget_remaining"] != wantRedis || row["drift"] != 0.0 {
			t.Fatalf("reconcile: %v, want budget %v, redis %v, no drift", row, wantBudget, wantRedis)
		}
	}

	out := patch(409, `{"budget_cents":700}`)
	if out["result"] != "budget_exhausted" || fmt.Sprint(out["error"]) != "budget_cents: cannot be 700: the campaign's coupons have already taken 800" {
		t.Fatalf("below what was taken: %v", out)
	}
	out = patch(400, `{"budget_cents":-1}`)
	if out["field"] != "budget_cents" {
		t.Fatalf("negative budget: %v", out)
	}
	if got := budgetLeft(t, e, cid); got != "200" {
		t.Fatalf("counter after refusals: %q, want 200", got)
	}

	out = patch(200, `{"budget_cents":2000}`)
	if out["campaign"].(map[string]any)["budget_cents"] != 2000.0 {
		t.Fatalf("raise: %v", out)
	}
	drift(2000, 1200)
	for range 3 {
		if err := claim(); err != nil {
			t.Fatal(err)
		}
	}
	if err := claim(); !models.IsCode(err, models.CodeBudgetExhausted) {
		t.Fatalf("claim past the raised budget: %v", err)
	}
	patch(200, `{"budget_cents":2000}`) // unchanged: no audit line
	patch(200, `{"budget_cents":0}`)
	if err := claim(); err != nil {
		t.Fatalf("claim without a budget: %v", err)
	}
	patch(200, `{"budget_cents":2600}`) // 6 coupons took 2400
	if err := claim(); !models.IsCode(err, models.CodeBudgetExhausted) {
		t.Fatalf("claim past the budget set again: %v", err)
	}
	drift(2600, 200)
	patch(200, `{"budget_cents":2400,"name":"renamed"}`)
	drift(2400, 0)

	audit, err := e.Service.ListAudit(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range audit {
		if a.Action == "campaign.budget" {
			got = append(got, a.Detail)
		}
	}
	want := []string{"budget_cents=2400 budget_was_cents=2600 used_cents=2400", "budget_cents=2600 budget_was_cents=0 used_cents=2400",
		"budget_cents=0 budget_was_cents=2000 used_cents=2000", "budget_cents=2000 budget_was_cents=1000 used_cents=800"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("audit:\n got %q\nwant %q", got, want)
	}
}

// TestCampaignBudgetLowerRace: a budget lowered to exactly what twenty
// claims released at the same moment take: every claim gets its coupon, the
// change is accepted whatever the order, and the counter ends at zero with no
// drift.
func TestCampaignBudgetLowerRace(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	ctx := context.Background()
	cid, tid := budgetFixture(t, e, 3_000, 100)
	// Load the counters first, so that the race is with the moving counter.
	if _, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tid, UserID: "first", IdempotencyKey: "first"}); err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tid, UserID: fmt.Sprintf("u%d", i), IdempotencyKey: fmt.Sprintf("k%d", i)})
		}()
	}
	var status int
	var out map[string]any
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		status, out = e.Call(t, "PATCH", fmt.Sprintf("/api/v1/campaigns/%d", cid), testsupport.AdminToken, nil, `{"budget_cents":2100}`)
	}()
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	if status != 200 {
		t.Fatalf("lowering: %d %v", status, out)
	}
	if got := budgetLeft(t, e, cid); got != "0" {
		t.Fatalf("counter: %q, want 0", got)
	}
	if _, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tid, UserID: "last", IdempotencyKey: "last"}); !models.IsCode(err, models.CodeBudgetExhausted) {
		t.Fatalf("claim past the lowered budget: %v", err)
	}
	row := e.MustCall(t, 200, "POST", "/api/v1/reconcile", testsupport.AdminToken, `{"repair":false}`)["campaigns"].([]any)[0].(map[string]any)
	if row["budget_cents"] != 2100.0 || row["drift"] != 0.0 || row["db_budget_used"] != 2100.0 {
		t.Fatalf("reconcile: %v", row)
	}
}
