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
)

// kindForm is the create form of a template of the demo campaign, with the
// fields given set over sensible defaults.
func kindForm(e *testsupport.PageEnv, name string, kv ...string) url.Values {
	f := url.Values{"campaign_id": {fmt.Sprint(e.Demo.Campaign.ID)}, "name": {name}, "total_stock": {"50"},
		"per_user_limit": {"1"}, "validity": {"days"}, "valid_days": {"10"}, "refund_policy": {"restore"},
		"priority": {"100"}, "applies_to": {"order"}}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

// created reads the template the form made, by name.
func created(t *testing.T, e *testsupport.PageEnv, name string) models.Template {
	t.Helper()
	var tp models.Template
	if err := e.Backends.DB.Where("name = ?", name).First(&tp).Error; err != nil {
		t.Fatalf("template %q: %v", name, err)
	}
	return tp
}

// TestPagesTemplateFormKinds: the console's form creates an items template
// with its target lists, a tiered template from its lines, a buy-x-get-y
// and a free-shipping one; the template's page shows what it applies to.
func TestPagesTemplateFormKinds(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	post := func(form url.Values) testsupport.Page {
		t.Helper()
		p := admin.Form("/admin/templates/new", "/admin/templates", form)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("create %q: status %d\n%s", form.Get("name"), p.Status, p.Text())
		}
		return p
	}

	p := post(kindForm(e, "Shoes 20%", "kind", "percent", "percent_off", "20", "max_discount", "50.00",
		"applies_to", "items", "target_category_ids", "shoes\nboots, sandals\n\n", "target_exclude_skus", "SALE-2,SALE-1 , SALE-2",
		"target_skus", "ignored? no: kept", "min_quantity", "2", "priority", "5", "face_value", "3.00"))
	tp := created(t, e, "Shoes 20%")
	want := models.TemplateTarget{SKUs: []string{"ignored? no: kept"}, CategoryIDs: []string{"boots", "sandals", "shoes"},
		ExcludeSKUs: []string{"SALE-1", "SALE-2"}}
	if tp.Kind != models.KindPercent || tp.AppliesTo != models.AppliesToItems || fmt.Sprint(tp.Target) != fmt.Sprint(want) ||
		tp.MinQuantity != 2 || tp.Priority != 5 || tp.FaceValueCents != 0 || tp.Currency != "USD" || tp.MaxDiscountCents != 5000 {
		t.Fatalf("items template: %+v", tp)
	}
	page := admin.Get(p.Location()).Text()
	for _, s := range []string{"20% off boots or sandals or shoes or SKU ignored? no: kept, not on SKUs SALE-1, SALE-2 with 2 or more items, up to $50", "categories: boots, sandals, shoes", "not SKUs: SALE-1, SALE-2", "Priority 5"} {
		if !strings.Contains(page, s) {
			t.Errorf("the template's page does not say %q:\n%s", s, page)
		}
	}

	post(kindForm(e, "Spend more", "kind", "tiered", "tiers", "100.00: 15.00\r\n200: 40\n", "max_discount", "40",
		"applies_to", "items", "target_skus", "not read: applies_to is order below"))
	tp = created(t, e, "Spend more")
	if tp.Kind != models.KindTiered || fmt.Sprint(tp.Tiers) != "[{10000 1500 0 0 0} {20000 4000 0 0 0}]" || tp.MaxDiscountCents != 4000 {
		t.Fatalf("tiered template: %+v", tp)
	}
	post(kindForm(e, "Spend more pct", "kind", "tiered", "tiers", "50: 5%\n90: 10 %", "max_discount", "9"))
	if tp = created(t, e, "Spend more pct"); fmt.Sprint(tp.Tiers) != "[{5000 0 5 500 0} {9000 0 10 1000 0}]" {
		t.Fatalf("percent tiers: %+v", tp.Tiers)
	}
	post(kindForm(e, "Three for two", "kind", "buy_x_get_y", "buy_quantity", "2", "get_quantity", "1",
		"get_percent", "100", "max_discount", "30", "max_applications", ""))
	if tp = created(t, e, "Three for two"); tp.BuyQuantity != 2 || tp.GetQuantity != 1 || tp.GetPercent != 100 ||
		tp.MaxApplications != 0 || tp.ValueCents() != 3000 {
		t.Fatalf("buy_x_get_y template: %+v", tp)
	}
	post(kindForm(e, "Ship free", "kind", "free_shipping", "max_discount", "10", "applies_to", "items", "priority", ""))
	if tp = created(t, e, "Ship free"); tp.AppliesTo != models.AppliesToShipping || tp.Priority != 100 || !tp.Target.Empty() {
		t.Fatalf("free_shipping template: %+v", tp)
	}
}

// TestPagesTemplateFormPercentDecimals: a percent with decimals is typed
// in its own field (the whole one left empty), for the percent kind and
// buy_x_get_y, and in a tier's line; the page says it as typed. Both
// fields filled is named beside the one with decimals. The form's blocks
// for full-price items only and for unit bounds ("the cheapest item,
// once") create what they say.
func TestPagesTemplateFormPercentDecimals(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "A third off", "kind", "percent",
		"percent_exact", "33.33", "max_discount", "50"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", p.Status, p.Text())
	}
	tp := created(t, e, "A third off")
	if tp.PercentOffBP != 3333 || tp.PercentOff != 0 {
		t.Fatalf("percent: %d / %d bp, want 0 / 3333", tp.PercentOff, tp.PercentOffBP)
	}
	if page := admin.Get(p.Location()).Text(); !strings.Contains(page, "33.33% off your order, up to $50") {
		t.Errorf("the template's page does not say 33.33%%:\n%s", page)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Second at 12.5", "kind", "buy_x_get_y",
		"buy_quantity", "1", "get_quantity", "1", "get_percent_exact", "12.5", "max_discount", "30"))
	if tp = created(t, e, "Second at 12.5"); tp.GetPercentBP != 1250 || tp.GetPercent != 0 {
		t.Fatalf("get percent: %d / %d bp, want 0 / 1250", tp.GetPercent, tp.GetPercentBP)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Tiers 7.5", "kind", "tiered",
		"tiers", "50: 7.5%\n90: 10%", "max_discount", "9"))
	if tp = created(t, e, "Tiers 7.5"); fmt.Sprint(tp.Tiers) != "[{5000 0 0 750 0} {9000 0 10 1000 0}]" {
		t.Fatalf("tiers: %+v", tp.Tiers)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Full price 20", "kind", "percent",
		"percent_off", "20", "max_discount", "50", "full_price_only", "1"))
	if tp = created(t, e, "Full price 20"); !tp.FullPriceOnly {
		t.Fatalf("full price only: %+v", tp)
	}
	// Ticked on a shipping coupon, it is left out (the box is hidden there).
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Ship full", "kind", "free_shipping",
		"max_discount", "10", "full_price_only", "1"))
	if tp = created(t, e, "Ship full"); tp.FullPriceOnly {
		t.Fatalf("free shipping kept full_price_only: %+v", tp)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Cheapest free", "kind", "percent",
		"percent_off", "100", "max_discount", "50", "max_units_per_order", "1", "unit_order", "cheapest"))
	tp = created(t, e, "Cheapest free")
	if tp.MaxUnitsPerOrder != 1 || tp.MaxUnitsPerLine != 0 || tp.UnitOrder != models.UnitsCheapest {
		t.Fatalf("cheapest once: %+v", tp)
	}
	if page := admin.Get(fmt.Sprintf("/admin/templates/%d", tp.ID)).Text(); !strings.Contains(page, "100% off your order on the cheapest item, once, up to $50") {
		t.Errorf("the template's page does not say the cheapest item, once:\n%s", page)
	}
	// Without a bound the order chosen is not kept.
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "No bound", "kind", "percent",
		"percent_off", "10", "max_discount", "50", "unit_order", "dearest"))
	if tp = created(t, e, "No bound"); tp.UnitOrder != "" {
		t.Fatalf("no bound: %+v", tp)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "By quantity", "kind", "tiered",
		"tiers", "2 items: 5%\n4 items: 10%", "max_discount", "9"))
	if tp = created(t, e, "By quantity"); fmt.Sprint(tp.Tiers) != "[{0 0 5 500 2} {0 0 10 1000 4}]" {
		t.Fatalf("quantity tiers: %+v", tp.Tiers)
	}
	before := e.CountTemplates(t)
	p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Wrong", "kind", "percent",
		"percent_off", "10", "max_discount", "50", "max_units_per_line", "-2"))
	if got := testsupport.FieldErrorBeside(p.Body, "max_units_per_line"); p.Status != http.StatusBadRequest || !strings.Contains(got, "from 0 (all) to 1,000,000") {
		t.Errorf("max_units_per_line -2: status %d, %q", p.Status, got)
	}
	for _, tc := range []struct{ whole, exact, want string }{
		{"20", "20.5", "not both"},
		{"", "20.555", "at most two decimals"},
		{"", "abc", "at most two decimals"},
		{"", "100.01", "from 0.01 to 100"},
	} {
		p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Wrong", "kind", "percent",
			"percent_off", tc.whole, "percent_exact", tc.exact, "max_discount", "50"))
		if got := testsupport.FieldErrorBeside(p.Body, "percent_exact"); p.Status != http.StatusBadRequest || !strings.Contains(got, tc.want) {
			t.Errorf("%q and %q: status %d, beside percent_exact %q, want %q", tc.whole, tc.exact, p.Status, got, tc.want)
		}
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("a template was created: %d → %d", before, n)
	}
}

// TestPagesTemplateFormEveryMistake: a form with mistakes in several of
// the new fields shows each beside its field, in one answer, and creates
// nothing; the tiers' mistakes name their rows.
func TestPagesTemplateFormEveryMistake(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	before := e.CountTemplates(t)
	p := admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Wrong", "kind", "tiered",
		"tiers", "200: 10\n100: 5%", "max_discount", "", "priority", "1001", "currency", "EUR",
		"applies_to", "items", "target_skus", strings.Repeat("x", 65)))
	if p.Status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", p.Status)
	}
	for id, want := range map[string]string{
		"tiers":        "Row 2:",
		"max_discount": "Enter an amount",
		"priority":     "from 0 (applies first) to 1,000",
		"currency":     "USD",
		"target_skus":  "each 1 to 64 characters",
	} {
		if got := testsupport.FieldErrorBeside(p.Body, id); !strings.Contains(got, want) {
			t.Errorf("beside %s: %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(p.Body, `value="Wrong"`) || !strings.Contains(p.Body, "200: 10\n100: 5%") {
		t.Errorf("the form lost what was typed")
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("a template was created: %d → %d", before, n)
	}
	// Rows that cannot be read are named by their row, with the rest.
	p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Wrong", "kind", "tiered",
		"tiers", "100 15\n\n200: lots", "max_discount", "40", "min_quantity", "-1"))
	if got := testsupport.FieldErrorBeside(p.Body, "tiers"); !strings.Contains(got, "Row 1:") || !strings.Contains(got, "Row 2:") {
		t.Errorf("unreadable tiers: %q", got)
	}
	if got := testsupport.FieldErrorBeside(p.Body, "min_quantity"); !strings.Contains(got, "0 to 1,000,000") {
		t.Errorf("min_quantity: %q", got)
	}
}

// TestPagesTemplateFormCurrency: amounts are read with the digits of the
// campaign's currency (yen have none) and shown with them.
func TestPagesTemplateFormCurrency(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	camp, err := e.Service.CreateCampaign(context.Background(), "test", models.Campaign{Name: "Tokyo", Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	form := kindForm(e, "Yen off", "campaign_id", fmt.Sprint(camp.ID), "kind", "fixed", "face_value", "1,500", "min_order", "5000")
	p := admin.Form("/admin/templates/new", "/admin/templates", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("status %d: %s", p.Status, p.Text())
	}
	tp := created(t, e, "Yen off")
	if tp.Currency != "JPY" || tp.FaceValueCents != 1500 || tp.MinOrderCents != 5000 {
		t.Fatalf("yen template: %+v", tp)
	}
	page := admin.Get(p.Location()).Text()
	if !strings.Contains(page, "¥1,500 off") || !strings.Contains(page, "¥5,000") {
		t.Fatalf("the page does not show yen without decimals:\n%s", page)
	}
	// Decimals are refused in yen; another currency than the campaign's is
	// named beside the currency.
	form.Set("name", "Yen off 2")
	form.Set("face_value", "15.50")
	p = admin.Form("/admin/templates/new", "/admin/templates", form)
	if got := testsupport.FieldErrorBeside(p.Body, "face_value"); p.Status != http.StatusBadRequest || !strings.Contains(got, "Enter an amount, such as 1250.") {
		t.Fatalf("decimals in yen: status %d, %q", p.Status, got)
	}
	form.Set("face_value", "1500")
	form.Set("currency", "usd")
	p = admin.Form("/admin/templates/new", "/admin/templates", form)
	if got := testsupport.FieldErrorBeside(p.Body, "currency"); p.Status != http.StatusBadRequest || !strings.Contains(got, "JPY") {
		t.Fatalf("dollars in a yen campaign: status %d, %q", p.Status, got)
	}
	if !strings.Contains(p.Body, `value="USD"`) {
		t.Fatalf("the currency typed is not shown as kept")
	}
}

// TestPagesCampaignFormCurrency: the campaign form takes a currency (the
// deployment's when empty) and reads the budget with its digits.
func TestPagesCampaignFormCurrency(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Form("/admin/campaigns/new", "/admin/campaigns", url.Values{"name": {"Kuwait"}, "budget": {"1.250"}, "currency": {"kwd"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("status %d: %s", p.Status, p.Text())
	}
	p = admin.Form("/admin/campaigns/new", "/admin/campaigns", url.Values{"name": {"Home"}, "budget": {"12.50"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("status %d: %s", p.Status, p.Text())
	}
	var camps []models.Campaign
	if err := e.Backends.DB.Where("name IN ?", []string{"Kuwait", "Home"}).Order("id").Find(&camps).Error; err != nil {
		t.Fatal(err)
	}
	if len(camps) != 2 || camps[0].Currency != "KWD" || camps[0].BudgetCents != 1250 || camps[1].Currency != "USD" || camps[1].BudgetCents != 1250 {
		t.Fatalf("campaigns: %+v", camps)
	}
	p = admin.Form("/admin/campaigns/new", "/admin/campaigns", url.Values{"name": {""}, "currency": {"EURO"}})
	if got := testsupport.FieldErrorBeside(p.Body, "currency"); p.Status != http.StatusBadRequest || !strings.Contains(got, "ISO 4217") ||
		testsupport.FieldErrorBeside(p.Body, "name") == "" {
		t.Fatalf("status %d, currency error %q", p.Status, got)
	}
}
