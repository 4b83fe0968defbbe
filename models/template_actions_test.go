package models_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// twentyOffAndFreeShipping is a template of two actions: 20% off the order
// (at most 50.00), then free shipping (at most 10.00).
func twentyOffAndFreeShipping() models.Template {
	tp := kindTemplate(models.KindPercent)
	tp.PercentOff, tp.MaxDiscountCents = 20, 5000
	tp.Actions = []models.TemplateAction{{Kind: models.KindFreeShipping, MaxDiscountCents: 1000}}
	return tp
}

func TestTemplateActionsValidate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		tp := twentyOffAndFreeShipping()
		tp.Actions = append(tp.Actions, models.TemplateAction{Kind: models.KindPercent, PercentOffBP: 1000, MaxDiscountCents: 700,
			AppliesTo: models.AppliesToItems, Target: models.TemplateTarget{SKUs: []string{"b", "a", "b"}}, MaxUnitsPerLine: 1})
		if err := tp.Validate(); err != nil {
			t.Fatal(err)
		}
		// Defaults and normal forms as a template's own fields get them.
		a, b := tp.Actions[0], tp.Actions[1]
		if a.AppliesTo != models.AppliesToShipping || b.PercentOff != 10 || b.UnitOrder != models.UnitsCheapest ||
			!reflect.DeepEqual(b.Target.SKUs, []string{"a", "b"}) {
			t.Fatalf("actions %+v", tp.Actions)
		}
		if got := tp.ValueCents(); got != 5000+1000+700 {
			t.Fatalf("budget value %d, want 6,700 (every action's cap)", got)
		}
	})
	for _, tc := range []struct {
		name   string
		action models.TemplateAction
		want   []string
	}{
		{"ErrKind", models.TemplateAction{Kind: "bogus"}, []string{"actions[1].kind"}},
		{"ErrPercentBP", models.TemplateAction{Kind: models.KindPercent, PercentOffBP: 10_001, MaxDiscountCents: 100}, []string{"actions[1].percent_off_bp"}},
		{"ErrCapMissing", models.TemplateAction{Kind: models.KindPercent, PercentOff: 10}, []string{"actions[1].max_discount_cents"}},
		{"ErrOtherKindsField", models.TemplateAction{Kind: models.KindFixed, FaceValueCents: 100, BuyQuantity: 2}, []string{"actions[1].buy_quantity"}},
		{"ErrTarget", models.TemplateAction{Kind: models.KindFixed, FaceValueCents: 100, Target: models.TemplateTarget{SKUs: []string{"a"}}}, []string{"actions[1].target"}},
		{"ErrShippingBound", models.TemplateAction{Kind: models.KindFreeShipping, MaxDiscountCents: 100, MaxUnitsPerOrder: 1}, []string{"actions[1].max_units_per_order"}},
		{"ErrTier", models.TemplateAction{Kind: models.KindTiered, MaxDiscountCents: 100, Tiers: []models.Tier{{MinCents: 0, OffCents: 5}}}, []string{"actions[1].tiers[0].min_cents"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := twentyOffAndFreeShipping()
			tp.Actions = append(tp.Actions, tc.action)
			if got := fieldsOf(tp.Validate()); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("fields %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("ErrTooMany", func(t *testing.T) {
		tp := twentyOffAndFreeShipping()
		for range models.MaxActions {
			tp.Actions = append(tp.Actions, models.TemplateAction{Kind: models.KindFixed, FaceValueCents: 100})
		}
		if got := fieldsOf(tp.Validate()); !reflect.DeepEqual(got, []string{"actions"}) {
			t.Fatalf("fields %v, want [actions]", got)
		}
	})
	t.Run("NoneIsAbsent", func(t *testing.T) {
		tp := kindTemplate(models.KindFixed)
		tp.Actions = []models.TemplateAction{}
		if err := tp.Validate(); err != nil || tp.Actions != nil || tp.ValueCents() != 1000 {
			t.Fatalf("err %v actions %#v value %d", err, tp.Actions, tp.ValueCents())
		}
	})
}

// TestDescribeTemplateOfSeveralActions: the sentence says each further
// action with its own target (and exclusions), unit bounds and cap, then
// the template's minimums, condition and rule, once.
func TestDescribeTemplateOfSeveralActions(t *testing.T) {
	money := func(c int64) string { return fmt.Sprintf("$%d.%02d", c/100, c%100) }
	socks := models.TemplateAction{Kind: models.KindPercent, PercentOff: 10, MaxDiscountCents: 500, AppliesTo: models.AppliesToItems,
		Target: models.TemplateTarget{CategoryIDs: []string{"socks"}}, MaxUnitsPerOrder: 2}
	for _, tc := range []struct {
		name string
		edit func(tp *models.Template)
		want string
	}{
		{"minimum", func(tp *models.Template) { tp.MinOrderCents = 10_000 },
			"20% off your order, up to $50.00, and free shipping, up to $10.00 off, on orders over $100.00"},
		{"target and unit bounds", func(tp *models.Template) { tp.Actions = append(tp.Actions, socks) },
			"20% off your order, up to $50.00, and free shipping, up to $10.00 off, and 10% off socks on up to 2 items, cheapest first, up to $5.00"},
		{"exclusions, per line, dearest", func(tp *models.Template) {
			tp.Actions = []models.TemplateAction{{Kind: models.KindFixed, FaceValueCents: 300, AppliesTo: models.AppliesToItems,
				Target:          models.TemplateTarget{SKUs: []string{"HAT-1"}, ExcludeSKUs: []string{"HAT-9"}, ExcludeCategoryIDs: []string{"sale"}},
				MaxUnitsPerLine: 1, UnitOrder: models.UnitsDearest, FullPriceOnly: true}}
		}, "20% off your order, up to $50.00, and $3.00 off SKU HAT-1, not on sale items or SKU HAT-9 on full-price items only on up to 1 unit per line, dearest first"},
		{"condition, rule, automatic", func(tp *models.Template) {
			tp.Actions = append(tp.Actions, socks)
			tp.MinQuantity = 3
			tp.Condition = &models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"shoes"}, ExcludeSKUs: []string{"X"}}, MinQuantity: 1}
			tp.Eligibility = "channel == \"web\""
			tp.CodeMode = models.CodeModeAutomatic
		}, "Automatic: 20% off your order, up to $50.00, and free shipping, up to $10.00 off, and 10% off socks on up to 2 items, cheapest first, up to $5.00," +
			" with 3 or more items, when the cart has 1 item of category shoes, not SKU X, for customers who meet the rule “channel == \"web\"”"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := twentyOffAndFreeShipping()
			tc.edit(&tp)
			if err := tp.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := models.DescribeTemplate(&tp, money); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
