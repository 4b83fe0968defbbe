package pages_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// chooseOption picks value in the select sel as a person does, so that
// the page's script hears the change.
func chooseOption(tb *tab, sel, value string) {
	tb.t.Helper()
	tb.run("choose "+value+" in "+sel, chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(function(){var s=document.querySelector(%q);s.value=%q;
			s.dispatchEvent(new Event("change",{bubbles:true}));})()`, sel, value)))
}

// visibleField reports whether the field sel is shown (hidden, or in a
// closed <details>, it is not).
func visibleField(tb *tab, sel string) bool {
	tb.t.Helper()
	return eval[bool](tb, fmt.Sprintf(`(function(){var e=document.querySelector(%q);
		return !!e && e.offsetParent !== null && (!e.closest("details") || e.closest("details").open);})()`, sel))
}

// startTemplateForm opens the new template form with the demo campaign
// chosen and name typed, and a percent on the order as its own kind.
func startTemplateForm(t *testing.T, e *testsupport.PageEnv, admin *tab, name string) {
	t.Helper()
	admin.open("/admin/templates/new")
	admin.run("choose the campaign", chromedp.SetValue(chromedp.CSS("#campaign_id"), fmt.Sprint(e.Demo.Campaign.ID)))
	admin.fill("#name", name)
	admin.run("choose percent", chromedp.Click(chromedp.CSS(`input[name="kind"][value="percent"]`), chromedp.NodeVisible))
	admin.fill("#percent_off", "20")
	admin.fill("#max_discount", "50.00")
}

// TestBrowserTemplateSeveralActions: in Chromium, an admin creates a
// template of 20% off the order with two further offers, free shipping
// and 10% off socks on at most 2 items, and a condition that never counts
// SKU SOCK-0; the service holds exactly what was typed and the template's
// page says it in one sentence. A percent of 150 on the second further
// offer is refused beside that offer's percent, the form keeping what was
// typed and creating nothing.
func TestBrowserTemplateSeveralActions(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])

	startTemplateForm(t, e, admin, "Socks and more")
	if !visibleField(admin, "#act0_kind") || visibleField(admin, "#act1_kind") {
		t.Fatalf("the first further offer is not the only one open")
	}
	chooseOption(admin, "#act0_kind", "free_shipping")
	if visibleField(admin, "#act0_applies_to") || visibleField(admin, "#act0_percent") || !visibleField(admin, "#act0_max_discount") {
		t.Fatalf("free shipping shows the wrong fields")
	}
	admin.fill("#act0_max_discount", "10.00")
	admin.run("open the second offer", chromedp.Click(chromedp.CSS(`details[data-action="1"] > summary`), chromedp.NodeVisible))
	chooseOption(admin, "#act1_kind", "percent")
	if visibleField(admin, "#act1_target_category_ids") {
		t.Fatalf("the target lists show for an offer on the whole order")
	}
	chooseOption(admin, "#act1_applies_to", "items")
	admin.fill("#act1_percent", "10")
	admin.fill("#act1_max_discount", "5.00")
	admin.fill("#act1_target_category_ids", "socks")
	admin.fill("#act1_max_units_per_order", "2")
	admin.fill("#cond_exclude_skus", "SOCK-0")
	admin.fill("#cond_min_quantity", "1")
	admin.screenshot("template-form-several-actions")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.expectPage("Created “Socks and more”.")
	sentence := "20% off your order, up to $50, and free shipping, up to $10 off, and 10% off socks on up to 2 items, cheapest first, up to $5," +
		" when the cart has 1 item of any item, not SKU SOCK-0"
	admin.expectPage(sentence)

	path := admin.location()
	id, err := strconv.ParseInt(strings.TrimPrefix(path, "/admin/templates/"), 10, 64)
	if err != nil {
		t.Fatalf("the page after creating is %s", path)
	}
	tp, err := e.Service.GetTemplate(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Name != "Socks and more" || tp.Kind != models.KindPercent || tp.PercentOff != 20 || tp.MaxDiscountCents != 5000 ||
		tp.AppliesTo != models.AppliesToOrder {
		t.Fatalf("the template's own kind: %+v", tp)
	}
	wantActions := []models.TemplateAction{
		{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1000},
		{Kind: models.KindPercent, AppliesTo: models.AppliesToItems, PercentOff: 10, PercentOffBP: 1000, MaxDiscountCents: 500,
			Target: models.TemplateTarget{CategoryIDs: []string{"socks"}}, MaxUnitsPerOrder: 2, UnitOrder: models.UnitsCheapest},
	}
	if !reflect.DeepEqual(tp.Actions, wantActions) {
		t.Fatalf("actions\n%+v\nwant\n%+v", tp.Actions, wantActions)
	}
	wantCondition := &models.TemplateCondition{Target: models.TemplateTarget{ExcludeSKUs: []string{"SOCK-0"}}, MinQuantity: 1}
	if !reflect.DeepEqual(tp.Condition, wantCondition) {
		t.Fatalf("condition %+v, want %+v", tp.Condition, wantCondition)
	}

	// A mistake on the second further offer, beside its own field.
	before := e.CountTemplates(t)
	startTemplateForm(t, e, admin, "Too much")
	chooseOption(admin, "#act0_kind", "free_shipping")
	admin.fill("#act0_max_discount", "10.00")
	admin.run("open the second offer", chromedp.Click(chromedp.CSS(`details[data-action="1"] > summary`), chromedp.NodeVisible))
	chooseOption(admin, "#act1_kind", "percent")
	admin.fill("#act1_percent", "150")
	admin.fill("#act1_max_discount", "5.00")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	expectFieldError(t, admin, "#act1_percent", "Enter a percentage from 0.01 to 100.")
	for _, sel := range []string{"#act0_max_discount", "#act0_kind", "#act1_max_discount", "#percent_off", "#act2_percent"} {
		expectFieldValid(t, admin, sel)
	}
	if n := eval[int](admin, `document.querySelectorAll(".field-error").length`); n != 1 {
		t.Errorf("%d field errors shown, want 1", n)
	}
	if !visibleField(admin, "#act1_percent") {
		t.Errorf("the second further offer is closed over its error")
	}
	for sel, want := range map[string]string{"#act1_percent": "150", "#act1_max_discount": "5.00", "#act0_max_discount": "10.00",
		"#act1_kind": "percent", "#act0_kind": "free_shipping", "#name": "Too much"} {
		if got := eval[string](admin, fmt.Sprintf(`document.querySelector(%q).value`, sel)); got != want {
			t.Errorf("%s keeps %q, want %q", sel, got, want)
		}
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("a template was created: %d → %d", before, n)
	}
}

// TestBrowserTemplateEditEligibility: the template's edit form shows its
// eligibility rule; a rule that compiles is saved and shown (in the field
// and in the template's sentence); a broken one is refused beside the
// field with its line and column, and the rule saved before stays.
func TestBrowserTemplateEditEligibility(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	ruleOf := func() string {
		t.Helper()
		got, err := e.Service.GetTemplate(context.Background(), tp.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Eligibility
	}
	page := fmt.Sprintf("/admin/templates/%d", tp.ID)
	save := `form[action="` + page + `"] button[type="submit"]`
	field := func() string { return eval[string](admin, `document.querySelector('#edit-eligibility').value`) }

	admin.open(page)
	if got := field(); got != ruleOf() || got != "" {
		t.Fatalf("the edit form shows the rule %q, the template has %q", got, ruleOf())
	}
	admin.fill("#edit-eligibility", `"vip" in customer.tags`)
	admin.submit(save)
	admin.expectPage("Saved “" + tp.Name + "”.")
	if got := ruleOf(); got != `"vip" in customer.tags` {
		t.Fatalf("saved rule %q", got)
	}
	if got := field(); got != `"vip" in customer.tags` {
		t.Fatalf("after saving the field shows %q", got)
	}
	admin.expectPage(`for customers who meet the rule “"vip" in customer.tags”`)

	admin.fill("#edit-eligibility", `customer.age > 18`)
	admin.submit(save)
	expectFieldError(t, admin, "#edit-eligibility", "Line 1, column 10: type eligibility.Customer has no field age")
	if got := field(); got != "customer.age > 18" {
		t.Errorf("the form lost the rule typed: %q", got)
	}
	if got := ruleOf(); got != `"vip" in customer.tags` {
		t.Fatalf("after a broken rule the template's rule is %q, want the one saved before", got)
	}

	// Emptied, the rule admits everyone.
	admin.open(page)
	admin.run("empty the rule", chromedp.Evaluate[chromedp.Void](`document.querySelector('#edit-eligibility').value = ""`))
	admin.submit(save)
	admin.expectPage("Saved “" + tp.Name + "”.")
	if got := ruleOf(); got != "" {
		t.Fatalf("an emptied rule is stored as %q", got)
	}
}
