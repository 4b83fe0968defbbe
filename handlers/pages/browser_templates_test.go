package pages_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// TestBrowserTemplateKinds: through the console's form, an admin creates a
// percent template on some items (a target list typed one a line) and a
// tiered one (its tiers as lines), seeing only the fields of the kind and
// target chosen; a form with three mistakes in the new fields answers all
// three at once, each beside its field.
func TestBrowserTemplateKinds(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	campaign := fmt.Sprint(e.Demo.Campaign.ID)
	visible := func(sel string) bool {
		return eval[bool](admin, fmt.Sprintf(`(function(){var e=document.querySelector(%q);return !!e && e.offsetParent !== null;})()`, sel))
	}
	choose := func(name, value string) {
		t.Helper()
		admin.run("choose "+name+" "+value, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input[name=%q][value=%q]`, name, value)), chromedp.NodeVisible))
	}
	start := func(name string) {
		t.Helper()
		admin.open("/admin/templates/new")
		admin.run("choose the campaign", chromedp.SetValue(chromedp.CSS("#campaign_id"), campaign))
		admin.fill("#name", name)
	}
	created := func(name string) models.Template {
		t.Helper()
		var tp models.Template
		if err := e.Backends.DB.Where("name = ?", name).First(&tp).Error; err != nil {
			t.Fatalf("template %q: %v\npage text: %s", name, err, admin.pageText())
		}
		return tp
	}

	// A percent template on shoes, not on sale items.
	start("Shoes 20%")
	choose("kind", "percent")
	if visible("#target_category_ids") || visible("#tiers") || visible("#face_value") {
		t.Fatalf("the target lists, tiers or amount show for a percent template on the whole order")
	}
	admin.fill("#percent_off", "20")
	admin.fill("#max_discount", "50.00")
	choose("applies_to", "items")
	if !visible("#target_category_ids") || !visible("#target_exclude_category_ids") {
		t.Fatalf("the target lists do not show for items")
	}
	admin.fill("#target_category_ids", "shoes\nboots")
	admin.fill("#target_exclude_category_ids", "sale")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.expectPage("Created “Shoes 20%”.")
	admin.expectPage("categories: boots, shoes; not in categories: sale")
	tp := created("Shoes 20%")
	if tp.AppliesTo != models.AppliesToItems || fmt.Sprint(tp.Target.CategoryIDs) != "[boots shoes]" ||
		fmt.Sprint(tp.Target.ExcludeCategoryIDs) != "[sale]" || tp.PercentOff != 20 || tp.MaxDiscountCents != 5000 || tp.Priority != 100 {
		t.Fatalf("items template: %+v", tp)
	}

	// A tiered template: spend 100 save 15, spend 200 save 40.
	start("Spend more")
	choose("kind", "tiered")
	if !visible("#tiers") || visible("#percent_off") || visible("#face_value") {
		t.Fatalf("a tiered template shows the wrong fields")
	}
	admin.fill("#tiers", "100.00: 15.00\n200.00: 40.00")
	admin.fill("#max_discount", "40")
	admin.fill("#priority", "10")
	admin.screenshot("template-form-tiered")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.expectPage("Created “Spend more”.")
	admin.expectPage("$15 off from $100, $40 off from $200, up to $40 off")
	tp = created("Spend more")
	if fmt.Sprint(tp.Tiers) != "[{10000 1500 0 0 0} {20000 4000 0 0 0}]" || tp.MaxDiscountCents != 4000 || tp.Priority != 10 {
		t.Fatalf("tiered template: %+v", tp)
	}

	// Three mistakes, one answer.
	templates := e.CountTemplates(t)
	start("Wrong")
	choose("kind", "tiered")
	admin.fill("#tiers", "200: 10\n100: 5")
	admin.fill("#priority", "1001")
	admin.fill("#currency", "EUR")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	expectFieldError(t, admin, "#tiers", "Row 2: the minimum must be more than zero and more than the row above's.")
	expectFieldError(t, admin, "#max_discount", "Enter an amount, such as 12.50.")
	expectFieldError(t, admin, "#priority", "Enter a priority from 0 (applies first) to 1,000.")
	expectFieldError(t, admin, "#currency", "USD, the currency of the campaign")
	expectFieldValid(t, admin, "#name")
	if n := eval[int](admin, `document.querySelectorAll(".field-error").length`); n != 4 {
		t.Errorf("%d field errors shown, want 4", n)
	}
	admin.screenshot("template-form-mistakes")
	if n := e.CountTemplates(t); n != templates {
		t.Fatalf("a template was created: %d → %d", templates, n)
	}
}
