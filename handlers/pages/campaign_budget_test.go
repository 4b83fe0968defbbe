package pages_test

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

// TestPagesCampaignBudget: the campaign's form shows its budget, raises it,
// refuses one below what the coupons took (beside the field, nothing
// changed), leaves it alone when a post has no budget field, and removes it
// when emptied.
func TestPagesCampaignBudget(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	camp, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Spring", BudgetCents: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "t", Kind: "fixed",
		FaceValueCents: 400, TotalStock: 10, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"a", "b"} {
		if _, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: u, IdempotencyKey: u}); err != nil {
			t.Fatal(err)
		}
	}
	admin := e.Client(t)
	admin.Login("admin")
	path := fmt.Sprintf("/admin/campaigns/%d", camp.ID)
	if p := admin.Get(path); !strings.Contains(p.Body, `name="budget" type="text" inputmode="decimal" value="10.00"`) {
		t.Fatalf("form without the budget: %v", p)
	}
	budget := func(want int64) {
		t.Helper()
		got, err := e.Service.GetCampaign(ctx, camp.ID)
		if err != nil || got.BudgetCents != want || got.Name != "Spring" {
			t.Fatalf("campaign: %+v %v, want budget %d", got, err, want)
		}
	}

	p := admin.Form(path, path, url.Values{"name": {"Spring"}, "budget": {"7.00"}})
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "Below what this campaign&#39;s coupons have already taken") ||
		!strings.Contains(p.Body, `value="7.00"`) {
		t.Fatalf("below what was taken: %v", p)
	}
	budget(1_000)
	if p := admin.Form(path, path, url.Values{"name": {"Spring"}, "budget": {"12.5x"}}); p.Status != http.StatusBadRequest {
		t.Fatalf("not an amount: %v", p)
	}
	budget(1_000)
	if p := admin.Form(path, path, url.Values{"name": {"Spring"}, "budget": {"25.00"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("raise: %v", p)
	}
	budget(2_500)
	if p := admin.Form(path, path, url.Values{"name": {"Spring"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("rename only: %v", p)
	}
	budget(2_500)
	if p := admin.Form(path, path, url.Values{"name": {"Spring"}, "budget": {""}}); p.Status != http.StatusSeeOther {
		t.Fatalf("no budget: %v", p)
	}
	budget(0)
}
