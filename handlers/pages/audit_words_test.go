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
	"github.com/couponsvc/couponsvc/services/admin"
)

// TestPagesAuditWords: the audit page tells a template's pause, resume and
// archive and a campaign's budget change each with its own verb, the budget's
// amounts as money.
func TestPagesAuditWords(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	camp, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Audit", BudgetCents: 1_000})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: camp.ID, Name: "t", Kind: "fixed",
		FaceValueCents: 500, TotalStock: 10, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{models.TemplatePaused, models.TemplateActive, models.TemplateArchived} {
		if _, err := e.Service.UpdateTemplate(ctx, "ann", tp.ID, admin.TemplatePatch{Status: &st}); err != nil {
			t.Fatal(err)
		}
	}
	budget := int64(2_500)
	if _, err := e.Service.UpdateCampaign(ctx, "bob", camp.ID, admin.CampaignPatch{BudgetCents: &budget}); err != nil {
		t.Fatal(err)
	}
	client := e.Client(t)
	client.Login("admin")
	p := client.Get("/admin/audit")
	for _, want := range []string{
		fmt.Sprintf(`<strong>ann</strong> paused <a href="/admin/templates/%d">template #%d</a>`, tp.ID, tp.ID),
		fmt.Sprintf(`<strong>ann</strong> resumed <a href="/admin/templates/%d">template #%d</a>`, tp.ID, tp.ID),
		fmt.Sprintf(`<strong>ann</strong> archived <a href="/admin/templates/%d">template #%d</a>`, tp.ID, tp.ID),
		fmt.Sprintf(`<strong>bob</strong> changed the budget of <a href="/admin/campaigns/%d">campaign #%d</a>`, camp.ID, camp.ID),
		"budget $25.00 · budget before $10.00 · taken by its coupons $0.00",
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("audit page without %q", want)
		}
	}
	if t.Failed() {
		t.Log(p.Body)
	}
}

// TestPagesAuditTill: a redemption at the till and its refund appear in the
// audit as sentences, each once, with the order and the amounts as money; a
// redemption sent again adds no line.
func TestPagesAuditTill(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.Template(t, "$10 off orders")
	coupon := e.ClaimFor(t, threshold.ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	for range 2 {
		if p := cashier.Form("/pos", "/pos/redeem", url.Values{"code": {coupon.Code}, "order_id": {"A-1"}, "amount": {"60"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("redeem: %v", p)
		}
	}
	admin := e.Client(t)
	admin.Login("admin")
	// The console's coupon names the order it was used on and links to
	// its return by item.
	if p := admin.Get("/admin/coupons?code=" + coupon.Code); !strings.Contains(p.Body, `<a href="/pos/return?order_id=A-1" data-return-items>Return items of order A-1</a>`) {
		t.Fatalf("the used coupon's page without a link to the return by item: %s", p.Text())
	}
	if p := cashier.Form("/pos", "/pos/refund", url.Values{"code": {coupon.Code}, "order_id": {"A-1"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("refund: %v", p)
	}
	text := admin.Get("/admin/audit?action=coupon.").Text()
	shown := coupon.Code[:4] + "-" + coupon.Code[4:8] + "-" + coupon.Code[8:] // as the pages show a code
	for want, n := range map[string]int{
		"cashier redeemed at the till coupon " + shown + " ":        1,
		" UTC · order A-1 · order amount $60.00 · discount $10.00 ": 1,
		"cashier refunded coupon " + shown + " ":                    1,
	} {
		if got := strings.Count(text, want); got != n {
			t.Errorf("the audit says %q %d times, want %d", want, got, n)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
}
