package pages_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPagesTemplateFormFurtherAction: the form's "And also take off"
// creates "20% off + free shipping" as one template of two actions; a
// further percentage without its percent is refused beside that field,
// and nothing is created; the form has models.MaxActions further
// actions.
func TestPagesTemplateFormFurtherAction(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Both", "kind", "percent", "percent_off", "20",
		"max_discount", "50.00", "act0_kind", "free_shipping", "act0_max_discount", "10.00", "act0_percent", "30"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d\n%s", p.Status, p.Text())
	}
	tp := created(t, e, "Both")
	want := []models.TemplateAction{{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1000}}
	if !reflect.DeepEqual(tp.Actions, want) || tp.ValueCents() != 6000 {
		t.Fatalf("actions %+v (value %d), want %+v", tp.Actions, tp.ValueCents(), want)
	}
	p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Half", "kind", "fixed", "face_value", "5.00",
		"act0_kind", "percent", "act0_max_discount", "10.00"))
	if got := testsupport.FieldErrorBeside(p.Body, "act0_percent"); p.Status != http.StatusBadRequest || got == "" {
		t.Fatalf("status %d, beside act0_percent %q", p.Status, got)
	}
	var n int64
	if err := e.Backends.DB.Model(&models.Template{}).Where("name = ?", "Half").Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("templates named Half: %d (%v), want none", n, err)
	}
	txt := p.Text()
	if !strings.Contains(txt, "And also take off") || !strings.Contains(txt, "Further offer 4") || strings.Contains(txt, "Further offer 5") {
		t.Fatalf("the form does not have %d further actions:\n%s", models.MaxActions, txt)
	}
}

// TestPagesTemplateFormSeveralActions: three further actions typed in
// the first, second and fourth places (the third left at "Nothing more")
// are stored in their order with their targets and unit bounds; the
// service's error on its actions[2] (the form's fourth) shows beside the
// fourth action's field, the form keeping what was typed.
func TestPagesTemplateFormSeveralActions(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	form := kindForm(e, "Four", "kind", "percent", "percent_off", "20", "max_discount", "50.00",
		"act0_kind", "free_shipping", "act0_max_discount", "10.00",
		"act1_kind", "percent", "act1_percent", "12.5", "act1_max_discount", "5.00", "act1_applies_to", "items",
		"act1_target_category_ids", "socks\nhats", "act1_target_exclude_skus", "SOCK-9", "act1_max_units_per_order", "2",
		"act1_unit_order", "dearest", "act1_full_price_only", "1",
		"act2_amount", "9.00", // no kind: left out
		"act3_kind", "fixed", "act3_amount", "3.00", "act3_applies_to", "items", "act3_target_product_ids", "p1, p2",
		"act3_max_units_per_line", "1")
	p := admin.Form("/admin/templates/new", "/admin/templates", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d\n%s", p.Status, p.Text())
	}
	want := []models.TemplateAction{
		{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1000},
		{Kind: models.KindPercent, AppliesTo: models.AppliesToItems, PercentOffBP: 1250, MaxDiscountCents: 500,
			Target:           models.TemplateTarget{CategoryIDs: []string{"hats", "socks"}, ExcludeSKUs: []string{"SOCK-9"}},
			MaxUnitsPerOrder: 2, UnitOrder: models.UnitsDearest, FullPriceOnly: true},
		{Kind: models.KindFixed, AppliesTo: models.AppliesToItems, FaceValueCents: 300,
			Target: models.TemplateTarget{ProductIDs: []string{"p1", "p2"}}, MaxUnitsPerLine: 1, UnitOrder: models.UnitsCheapest},
	}
	if tp := created(t, e, "Four"); !reflect.DeepEqual(tp.Actions, want) {
		t.Fatalf("actions\n%+v\nwant\n%+v", tp.Actions, want)
	}

	before := e.CountTemplates(t)
	form.Set("name", "Four again")
	form.Set("act3_target_product_ids", "p1, "+strings.Repeat("x", 65))
	p = admin.Form("/admin/templates/new", "/admin/templates", form)
	if p.Status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400\n%s", p.Status, p.Text())
	}
	if got := testsupport.FieldErrorBeside(p.Body, "act3_target_product_ids"); !strings.Contains(got, "1 to 64 characters") {
		t.Errorf("beside the fourth action's products: %q", got)
	}
	for _, other := range []string{"act2_target_product_ids", "act1_target_product_ids", "target_product_ids"} {
		if got := testsupport.FieldErrorBeside(p.Body, other); got != "" {
			t.Errorf("beside %s: %q, want nothing", other, got)
		}
	}
	if !strings.Contains(p.Body, "socks\nhats</textarea>") || !strings.Contains(p.Body, `name="act1_percent" type="text" inputmode="decimal" value="12.5"`) {
		t.Errorf("the form lost what was typed")
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("a template was created: %d → %d", before, n)
	}
}
