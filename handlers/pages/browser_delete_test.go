package pages_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// TestBrowserConsoleDelete: a template that never issued a coupon, and a
// campaign without templates, show Delete; it asks first (no keeps it), then
// deletes and lands on the console with the notice; the audit page says it
// as a sentence. A template with a coupon and a campaign with templates show
// no Delete. Screenshots of both pages at 375 and 1280 pixels.
func TestBrowserConsoleDelete(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	fresh, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: e.Demo.Campaign.ID, Name: "Typo offer",
		Kind: models.KindFixed, FaceValueCents: 300, TotalStock: 10, PerUserLimit: 1, ValidDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	used, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: e.Demo.Campaign.ID, Name: "Claimed offer",
		Kind: models.KindFixed, FaceValueCents: 300, TotalStock: 10, PerUserLimit: 1, ValidDays: 30})
	if err != nil {
		t.Fatal(err)
	}
	e.ClaimFor(t, used.ID, "alice")
	empty, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Empty by mistake"})
	if err != nil {
		t.Fatal(err)
	}

	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	deleteButtons := func() int {
		return eval[int](admin, `document.querySelectorAll('form[data-delete] button[type="submit"]').length`)
	}

	admin.open(fmt.Sprintf("/admin/templates/%d", used.ID))
	if n := deleteButtons(); n != 0 {
		t.Fatalf("a template with a coupon shows %d Delete buttons", n)
	}
	admin.open(fmt.Sprintf("/admin/campaigns/%d", e.Demo.Campaign.ID))
	if n := deleteButtons(); n != 0 {
		t.Fatalf("a campaign with templates shows %d Delete buttons", n)
	}

	admin.open(fmt.Sprintf("/admin/templates/%d", fresh.ID))
	if n := deleteButtons(); n != 1 {
		t.Fatalf("a never-issued template shows %d Delete buttons, want 1", n)
	}
	admin.consoleShots("template-delete")
	admin.run("answer no", chromedp.Evaluate[chromedp.Void](
		`window.asked = ""; window.confirm = function (q) { window.asked = q; return false; }`))
	admin.run("press Delete", chromedp.Click(chromedp.CSS(`form[data-delete] button[type="submit"]`), chromedp.NodeVisible))
	asked := eval[string](admin, `window.asked`)
	for _, want := range []string{"Delete “Typo offer”?", "never issued a coupon", "cannot be undone"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the delete question %q does not say %q", asked, want)
		}
	}
	if st := e.TemplateStatus(t, fresh.ID); st != "active" {
		t.Fatalf("after answering no the template is %q, want active", st)
	}
	admin.run("answer yes", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.submit(`form[data-delete] button[type="submit"]`)
	admin.expectPage("Deleted the template “Typo offer”: it never issued a coupon.")
	if loc := admin.location(); loc != "/admin" {
		t.Fatalf("after the delete the page is %s, want /admin", loc)
	}
	var n int64
	e.Env.Backends.DB.Model(&models.Template{}).Where("id = ?", fresh.ID).Count(&n)
	if n != 0 {
		t.Fatalf("the template's row is still there")
	}

	admin.open(fmt.Sprintf("/admin/campaigns/%d", empty.ID))
	if n := deleteButtons(); n != 1 {
		t.Fatalf("an empty campaign shows %d Delete buttons, want 1", n)
	}
	admin.consoleShots("campaign-delete")
	admin.run("answer yes", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.submit(`form[data-delete] button[type="submit"]`)
	admin.expectPage("Deleted the campaign “Empty by mistake”.")

	admin.open("/admin/audit")
	admin.expectPage(fmt.Sprintf("deleted template #%d", fresh.ID))
	admin.expectPage(fmt.Sprintf("deleted campaign #%d", empty.ID))
}
