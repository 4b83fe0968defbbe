package services_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestListTemplateAudit pages through one template's history, newest first,
// without the entries of another template.
func TestListTemplateAudit(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	camp, err := env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Audit", BudgetCents: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	newTemplate := func(name string) *models.Template {
		tp, err := env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: name,
			Kind: models.KindFixed, FaceValueCents: 500, TotalStock: 20, PerUserLimit: 5, ValidDays: 2,
			RefundPolicy: models.RefundRecycle})
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	mine, other := newTemplate("Mine"), newTemplate("Other")
	// Mine: created, then 4 stock additions; other: created, then 2, between them.
	for i := 1; i <= 4; i++ {
		if _, err := env.Service.AddStock(ctx, "test", mine.ID, int64(i), fmt.Sprintf("mine %d", i)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := env.Service.AddStock(ctx, "test", other.ID, 1, "other"); err != nil {
				t.Fatal(err)
			}
		}
	}

	var seen []string
	before := int64(0)
	for pages := 0; ; pages++ {
		page, err := env.Service.ListTemplateAudit(ctx, mine.ID, 2, before)
		if err != nil {
			t.Fatal(err)
		}
		if pages < 2 && (len(page.Entries) != 2 || page.Older != page.Entries[1].ID) {
			t.Fatalf("page %d: %d entries, older %d; want 2 and the last one's id", pages, len(page.Entries), page.Older)
		}
		for _, e := range page.Entries {
			if e.Target != fmt.Sprintf("template:%d", mine.ID) {
				t.Errorf("an entry of %s in the history of template %d", e.Target, mine.ID)
			}
			if before > 0 && e.ID >= before {
				t.Errorf("entry %d on the page before %d", e.ID, before)
			}
			seen = append(seen, e.Action+" "+e.Detail)
		}
		if page.Older == 0 {
			if pages != 2 || len(page.Entries) != 1 {
				t.Fatalf("the last page is page %d with %d entries, want page 2 with 1", pages, len(page.Entries))
			}
			break
		}
		before = page.Older
	}
	if len(seen) != 5 || !strings.HasPrefix(seen[4], "template.create") {
		t.Fatalf("history %q, want 4 stock additions, newest first, then the creation", seen)
	}
	for i, s := range seen[:4] {
		if want := fmt.Sprintf("mine %d", 4-i); !strings.Contains(s, want) {
			t.Errorf("entry %d is %q, want the addition %q", i, s, want)
		}
	}

	if page, err := env.Service.ListTemplateAudit(ctx, mine.ID, 0, 0); err != nil || len(page.Entries) != 5 || page.Older != 0 {
		t.Fatalf("the default page: %d entries, older %d, %v; want all 5 and no older page", len(page.Entries), page.Older, err)
	}
	if page, err := env.Service.ListTemplateAudit(ctx, other.ID+1000, 10, 0); err != nil || len(page.Entries) != 0 || page.Older != 0 {
		t.Fatalf("an unknown template: %d entries, older %d, %v; want none", len(page.Entries), page.Older, err)
	}
}
