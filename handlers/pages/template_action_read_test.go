package pages

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// postedForm is a gin context of a POST carrying the pairs kv as its form.
func postedForm(t *testing.T, kv ...string) *gin.Context {
	t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/admin/templates", strings.NewReader(v.Encode()))
	c.Request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c
}

// TestReadActionForms: the further actions as typed become the service's
// actions: those without a kind left out, the others in their order, the
// fields of another kind or of another scope left out, and what cannot be
// read named beside its own action's field.
func TestReadActionForms(t *testing.T) {
	socks := models.TemplateTarget{CategoryIDs: []string{"socks"}, ExcludeSKUs: []string{"S-9", "S-8"}}
	for _, tc := range []struct {
		name     string
		kv       []string
		want     []models.TemplateAction
		wantErrs formErrors
	}{
		{"nothing", nil, nil, formErrors{}},
		{"no kind, fields typed", []string{"act0_amount", "5.00", "act2_percent", "10"}, nil, formErrors{}},
		{"free shipping keeps its cap alone", []string{"act0_kind", "free_shipping", "act0_max_discount", "10.00", "act0_percent", "30",
			"act0_amount", "2", "act0_applies_to", "items", "act0_target_skus", "A", "act0_max_units_per_line", "2", "act0_full_price_only", "1"},
			[]models.TemplateAction{{Kind: models.KindFreeShipping, MaxDiscountCents: 1000}}, formErrors{}},
		{"percent on some items, bounded", []string{"act1_kind", "percent", "act1_percent", "10", "act1_max_discount", "5", "act1_amount", "3",
			"act1_applies_to", "items", "act1_target_category_ids", "socks", "act1_target_exclude_skus", "S-9\nS-8",
			"act1_max_units_per_order", "2", "act1_unit_order", "dearest", "act1_full_price_only", "1"},
			[]models.TemplateAction{{Kind: models.KindPercent, AppliesTo: models.AppliesToItems, PercentOffBP: 1000, MaxDiscountCents: 500,
				Target: socks, MaxUnitsPerOrder: 2, UnitOrder: models.UnitsDearest, FullPriceOnly: true}}, formErrors{}},
		{"on the order: no target lists", []string{"act0_kind", "fixed", "act0_amount", "2.50", "act0_applies_to", "order",
			"act0_target_skus", "A", "act0_max_units_per_line", "1", "act0_unit_order", "cheapest"},
			[]models.TemplateAction{{Kind: models.KindFixed, AppliesTo: models.AppliesToOrder, FaceValueCents: 250, MaxUnitsPerLine: 1,
				UnitOrder: models.UnitsCheapest}}, formErrors{}},
		{"on the shipping: no bounds, not full price", []string{"act0_kind", "percent", "act0_percent", "50", "act0_max_discount", "4",
			"act0_applies_to", "shipping", "act0_max_units_per_line", "1", "act0_full_price_only", "1"},
			[]models.TemplateAction{{Kind: models.KindPercent, AppliesTo: models.AppliesToShipping, PercentOffBP: 5000, MaxDiscountCents: 400}},
			formErrors{}},
		{"unit order without a bound", []string{"act0_kind", "fixed", "act0_amount", "1", "act0_applies_to", "order", "act0_unit_order", "dearest"},
			[]models.TemplateAction{{Kind: models.KindFixed, AppliesTo: models.AppliesToOrder, FaceValueCents: 100}}, formErrors{}},
		{"places 0 and 3, in order", []string{"act3_kind", "fixed", "act3_amount", "1", "act3_applies_to", "order",
			"act0_kind", "free_shipping", "act0_max_discount", "2"},
			[]models.TemplateAction{{Kind: models.KindFreeShipping, MaxDiscountCents: 200},
				{Kind: models.KindFixed, AppliesTo: models.AppliesToOrder, FaceValueCents: 100}}, formErrors{}},
		{"mistakes beside their action's fields", []string{"act0_kind", "percent", "act0_percent", "ten", "act0_max_discount", "5",
			"act2_kind", "fixed", "act2_applies_to", "order", "act2_max_units_per_order", "two", "act3_kind", "tiered"},
			[]models.TemplateAction{{Kind: models.KindPercent, MaxDiscountCents: 500},
				{Kind: models.KindFixed, AppliesTo: models.AppliesToOrder}, {Kind: models.KindTiered}},
			formErrors{"act0_percent": "Enter a percentage such as 10 or 12.5, with at most two decimals.",
				"act2_amount": "Enter an amount, such as 12.50.", "act2_max_units_per_order": "Enter a whole number, such as 100.",
				"act3_kind": "Choose what the coupon also takes off, or nothing more."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forms := readActionForms(postedForm(t, tc.kv...))
			if len(forms) != models.MaxActions {
				t.Fatalf("%d places, want %d", len(forms), models.MaxActions)
			}
			errs := formErrors{}
			money := func(field, value string, required bool) int64 {
				return formMoneyDigits(errs, field, value, required, 2)
			}
			got := actions(forms, errs, money)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("actions\n%+v\nwant\n%+v", got, tc.want)
			}
			if !reflect.DeepEqual(errs, tc.wantErrs) {
				t.Errorf("errors %v, want %v", errs, tc.wantErrs)
			}
		})
	}
}

// TestActionFieldsOf: the service's names of the further actions go to
// the form's fields of the action each came from, whatever places were
// left empty before it; every place has every field and its message.
func TestActionFieldsOf(t *testing.T) {
	places := func(kinds ...int) []actionForm {
		forms := newActionForms()
		for _, i := range kinds {
			forms[i].Kind = models.KindFixed
		}
		return forms
	}
	for _, tc := range []struct {
		name  string
		forms []actionForm
		want  map[string]string
	}{
		{"none", places(), map[string]string{"actions[0].kind": "act0_kind", "actions[1].percent_off_bp": "act1_percent"}},
		{"in order", places(0, 1), map[string]string{"actions[0].kind": "act0_kind", "actions[1].percent_off_bp": "act1_percent",
			"actions[1].target.exclude_skus": "act1_target_exclude_skus"}},
		{"places 1 and 3", places(1, 3), map[string]string{"actions[0].percent_off_bp": "act1_percent", "actions[0].target": "act1_applies_to",
			"actions[1].target.skus": "act3_target_skus", "actions[1].max_units_per_order": "act3_max_units_per_order", "kind": "kind"}},
		{"place 2 alone", places(2), map[string]string{"actions[0].face_value_cents": "act2_amount", "actions[0].unit_order": "act2_unit_order"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := actionFieldsOf(tc.forms)
			for service, form := range tc.want {
				if got[service] != form {
					t.Errorf("%s → %q, want %q", service, got[service], form)
				}
			}
		})
	}
	if templateFields["actions[0].percent_off_bp"] != "act0_percent" {
		t.Fatalf("actionFieldsOf changed the shared map: %q", templateFields["actions[0].percent_off_bp"])
	}
	for i := range models.MaxActions {
		for _, af := range actionFields {
			for _, name := range af.Service {
				service, form := fmt.Sprintf("actions[%d].%s", i, name), fmt.Sprintf("act%d_%s", i, af.Form)
				if templateFields[service] != form || templateFieldMessages[form] == "" {
					t.Errorf("%s → %q (message %q), want %q", service, templateFields[service], templateFieldMessages[form], form)
				}
			}
		}
	}
	if _, ok := templateFields[fmt.Sprintf("actions[%d].kind", models.MaxActions)]; ok {
		t.Errorf("a place past models.MaxActions is mapped")
	}
}

// TestReadConditionFormExclusions: the condition's three "never" lists
// are read, each alone making a condition.
func TestReadConditionFormExclusions(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want *models.TemplateCondition
	}{
		{"none", nil, nil},
		{"never these SKUs", []string{"cond_exclude_skus", "A-1, A-2", "cond_min_quantity", "2"},
			&models.TemplateCondition{Target: models.TemplateTarget{ExcludeSKUs: []string{"A-1", "A-2"}}, MinQuantity: 2}},
		{"never these products", []string{"cond_exclude_product_ids", "p9"},
			&models.TemplateCondition{Target: models.TemplateTarget{ExcludeProductIDs: []string{"p9"}}}},
		{"all three beside a category", []string{"cond_category_ids", "shoes", "cond_exclude_skus", "X", "cond_exclude_product_ids", "p1\np2",
			"cond_exclude_category_ids", "sale", "cond_min_amount", "12.50"},
			&models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"shoes"}, ExcludeSKUs: []string{"X"},
				ExcludeProductIDs: []string{"p1", "p2"}, ExcludeCategoryIDs: []string{"sale"}}, MinAmountCents: 1250}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := readConditionForm(postedForm(t, tc.kv...))
			errs := formErrors{}
			if got := cf.condition(errs, 2); !reflect.DeepEqual(got, tc.want) || len(errs) != 0 {
				t.Errorf("condition %+v (errors %v), want %+v", got, errs, tc.want)
			}
		})
	}
}

// TestEditFormEligibility: the edit form's rule is patched trimmed when
// the form sends its field (empty: everyone), and left as it is when the
// form has no such field.
func TestEditFormEligibility(t *testing.T) {
	p := &Pages{loc: time.UTC}
	for _, tc := range []struct {
		name string
		kv   []string
		want *string
	}{
		{"no field", nil, nil},
		{"a rule", []string{"eligibility", "  channel == \"web\"\n"}, ptr(`channel == "web"`)},
		{"emptied", []string{"eligibility", " "}, ptr("")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := postedForm(t, append([]string{"name", "N", "claim_starts_at", "2026-03-01 09:00"}, tc.kv...)...)
			f := readEditForm(c)
			got := f.patch(p).Eligibility
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) || len(f.Errors) != 0 {
				t.Errorf("eligibility %s, want %s (errors %v)", show(got), show(tc.want), f.Errors)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// show writes a string that may be absent.
func show(s *string) string {
	if s == nil {
		return "absent"
	}
	return fmt.Sprintf("%q", *s)
}
