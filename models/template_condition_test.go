package models

import (
	"reflect"
	"testing"
)

// jacketsWhenTrousers is "10% off jackets when the cart has 2 trousers".
func jacketsWhenTrousers() Template {
	return Template{CampaignID: 1, Name: "Jackets", Kind: KindPercent, PercentOff: 10, MaxDiscountCents: 5000,
		TotalStock: 10, PerUserLimit: 1, ValidDays: 30, AppliesTo: AppliesToItems,
		Target:    TemplateTarget{CategoryIDs: []string{"jackets"}},
		Condition: &TemplateCondition{Target: TemplateTarget{CategoryIDs: []string{"trousers", "shorts", "trousers"}}, MinQuantity: 2}}
}

func TestTemplateConditionValidate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		tp := jacketsWhenTrousers()
		if err := tp.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := tp.Condition.Target.CategoryIDs; !reflect.DeepEqual(got, []string{"shorts", "trousers"}) {
			t.Fatalf("condition's categories %v, want sorted without repeats", got)
		}
	})
	t.Run("OKRepeat", func(t *testing.T) {
		tp := jacketsWhenTrousers()
		tp.Condition.Repeat, tp.MaxUnitsPerOrder = true, 1
		if err := tp.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		mutate func(*Template)
		fields []string
	}{
		{"no minimum", func(tp *Template) { tp.Condition.MinQuantity = 0 }, []string{"condition.min_quantity"}},
		{"negative quantity", func(tp *Template) { tp.Condition.MinQuantity = -1 }, []string{"condition.min_quantity"}},
		{"amount too big", func(tp *Template) { tp.Condition.MinAmountCents = MaxMoneyCents + 1 }, []string{"condition.min_amount_cents"}},
		{"bad entry", func(tp *Template) { tp.Condition.Target.SKUs = []string{" A"} }, []string{"condition.target.skus"}},
		{"repeat without a bound", func(tp *Template) { tp.Condition.Repeat = true }, []string{"condition.repeat"}},
		{"repeat without a quantity", func(tp *Template) {
			tp.Condition.Repeat, tp.MaxUnitsPerOrder, tp.Condition.MinQuantity, tp.Condition.MinAmountCents = true, 1, 0, 100
		}, []string{"condition.repeat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := jacketsWhenTrousers()
			tc.mutate(&tp)
			var got []string
			for _, fe := range FieldsOf(tp.Validate()) {
				got = append(got, fe.Field)
			}
			if !reflect.DeepEqual(got, tc.fields) {
				t.Fatalf("fields %v, want %v", got, tc.fields)
			}
		})
	}
}

func TestDescribeCondition(t *testing.T) {
	tp := jacketsWhenTrousers()
	tp.Condition.Target.CategoryIDs = []string{"trousers"}
	if got, want := DescribeTemplate(&tp, dollars), "10% off jackets when the cart has 2 items of category trousers, up to $50"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	ab := Template{Kind: KindPercent, PercentOffBP: 10_000, PercentOff: 100, MaxDiscountCents: 10_000, AppliesTo: AppliesToItems,
		Target: TemplateTarget{SKUs: []string{"B"}}, MaxUnitsPerOrder: 1, UnitOrder: UnitsCheapest,
		Condition: &TemplateCondition{Target: TemplateTarget{SKUs: []string{"A"}, ExcludeCategoryIDs: []string{"sale"}}, MinQuantity: 2, MinAmountCents: 5000, Repeat: true}}
	if got, want := DescribeTemplate(&ab, dollars), "100% off SKU B on the cheapest item, once when the cart has 2 items and $50 of SKU A, not sale items, again for every 2 more, up to $100"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	ship := Template{Kind: KindTiered, AppliesTo: AppliesToShipping, MaxDiscountCents: 1000,
		Tiers: []Tier{{MinCents: 5000, OffCents: 300}, {MinCents: 10000, PercentOff: 100}}}
	if got, want := DescribeTemplate(&ship, dollars), "$3 off shipping from $50, 100% off shipping from $100, up to $10 off"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
