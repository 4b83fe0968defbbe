package models_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// kindTemplate returns a valid template of each kind.
func kindTemplate(kind string) models.Template {
	tp := fixedTemplate()
	tp.Kind, tp.FaceValueCents = kind, 0
	switch kind {
	case models.KindFixed:
		tp.FaceValueCents = 1000
	case models.KindPercent:
		tp.PercentOff, tp.MaxDiscountCents = 15, 2500
	case models.KindFixedPerItem:
		tp.FaceValueCents, tp.MaxDiscountCents = 500, 3000
	case models.KindBuyXGetY:
		tp.BuyQuantity, tp.GetQuantity, tp.GetPercent, tp.MaxDiscountCents = 2, 1, 100, 5000
	case models.KindTiered:
		tp.Tiers = []models.Tier{{MinCents: 10000, OffCents: 1500}, {MinCents: 20000, OffCents: 4000}}
		tp.MaxDiscountCents = 4000
	case models.KindFreeShipping:
		tp.MaxDiscountCents = 1000
	}
	return tp
}

// fieldsOf returns the fields an error names, in order.
func fieldsOf(err error) []string {
	var out []string
	for _, fe := range models.FieldsOf(err) {
		out = append(out, fe.Field)
	}
	return out
}

func TestTemplateValidateKinds(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, kind := range models.TemplateKinds {
			tp := kindTemplate(kind)
			if err := tp.Validate(); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			want := models.AppliesToOrder
			if kind == models.KindFreeShipping {
				want = models.AppliesToShipping
			}
			if tp.AppliesTo != want {
				t.Fatalf("%s: applies_to %q, want %q", kind, tp.AppliesTo, want)
			}
		}
	})
	t.Run("OKBounds", func(t *testing.T) {
		cases := map[string]func(*models.Template){
			"fixed_per_item face 1":     func(tp *models.Template) { tp.Kind = models.KindFixedPerItem; tp.FaceValueCents = 1 },
			"bxgy 1000 and 1000":        func(tp *models.Template) { tp.BuyQuantity, tp.GetQuantity = 1000, 1000 },
			"bxgy get_percent 1":        func(tp *models.Template) { tp.GetPercent = 1 },
			"bxgy max_applications max": func(tp *models.Template) { tp.MaxApplications = 1_000_000 },
			"min_quantity max":          func(tp *models.Template) { tp.MinQuantity = 1_000_000 },
			"priority 0":                func(tp *models.Template) { tp.Priority = 0 },
			"priority 1000":             func(tp *models.Template) { tp.Priority = 1000 },
			"currency JPY":              func(tp *models.Template) { tp.Currency = "JPY" },
			"max discount max":          func(tp *models.Template) { tp.MaxDiscountCents = models.MaxMoneyCents },
		}
		for name, mutate := range cases {
			tp := kindTemplate(models.KindBuyXGetY)
			if strings.HasPrefix(name, "fixed_per_item") {
				tp = kindTemplate(models.KindFixedPerItem)
			}
			mutate(&tp)
			if err := tp.Validate(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
	// Each case breaks one rule; fields are every field named, in order.
	cases := []struct {
		name, kind string
		mutate     func(*models.Template)
		fields     []string
	}{
		{"unknown kind", "fixed", func(tp *models.Template) { tp.Kind = "bogo" }, []string{"kind"}},
		{"fixed takes no cap", "fixed", func(tp *models.Template) { tp.MaxDiscountCents = 5 }, []string{"max_discount_cents"}},
		{"fixed no face", "fixed", func(tp *models.Template) { tp.FaceValueCents = 0 }, []string{"face_value_cents"}},
		{"full_price_only on shipping", "free_shipping", func(tp *models.Template) { tp.FullPriceOnly = true }, []string{"full_price_only"}},
		{"max_units_per_line negative", "percent", func(tp *models.Template) { tp.MaxUnitsPerLine = -1 }, []string{"max_units_per_line"}},
		{"max_units_per_order too many", "percent", func(tp *models.Template) { tp.MaxUnitsPerOrder = 1_000_001 }, []string{"max_units_per_order"}},
		{"max_units_per_line on buy_x_get_y", "buy_x_get_y", func(tp *models.Template) { tp.MaxUnitsPerLine = 2 }, []string{"max_units_per_line"}},
		{"max_units_per_order on shipping", "free_shipping", func(tp *models.Template) { tp.MaxUnitsPerOrder = 1 }, []string{"max_units_per_order"}},
		{"unit_order unknown", "percent", func(tp *models.Template) { tp.MaxUnitsPerOrder, tp.UnitOrder = 1, "random" }, []string{"unit_order"}},
		{"unit_order without a bound", "percent", func(tp *models.Template) { tp.UnitOrder = "dearest" }, []string{"unit_order"}},
		{"tier min_cents and min_quantity", "tiered", func(tp *models.Template) {
			tp.Tiers = []models.Tier{{MinQuantity: 2, MinCents: 100, OffCents: 100}}
		}, []string{"tiers[0].min_quantity"}},
		{"tier min_quantity falls", "tiered", func(tp *models.Template) {
			tp.Tiers = []models.Tier{{MinQuantity: 3, OffCents: 100}, {MinQuantity: 3, OffCents: 200}}
		}, []string{"tiers[1].min_quantity"}},
		{"tiers of two sorts", "tiered", func(tp *models.Template) {
			tp.Tiers = []models.Tier{{MinQuantity: 3, OffCents: 100}, {MinCents: 5000, OffCents: 200}}
		}, []string{"tiers[1].min_quantity"}},
		{"percent 101", "percent", func(tp *models.Template) { tp.PercentOff = 101 }, []string{"percent_off"}},
		{"percent_off_bp over 10000", "percent", func(tp *models.Template) { tp.PercentOff, tp.PercentOffBP = 0, 10_001 }, []string{"percent_off_bp"}},
		{"percent_off_bp negative", "percent", func(tp *models.Template) { tp.PercentOff, tp.PercentOffBP = 0, -1 }, []string{"percent_off_bp"}},
		{"percent_off and percent_off_bp disagree", "percent", func(tp *models.Template) { tp.PercentOff, tp.PercentOffBP = 20, 2050 }, []string{"percent_off_bp"}},
		{"percent_off_bp on fixed", "fixed", func(tp *models.Template) { tp.PercentOffBP = 2050 }, []string{"percent_off_bp"}},
		{"get_percent_bp over 10000", "buy_x_get_y", func(tp *models.Template) { tp.GetPercent, tp.GetPercentBP = 0, 10_001 }, []string{"get_percent_bp"}},
		{"get_percent_bp on percent", "percent", func(tp *models.Template) { tp.GetPercentBP = 5000 }, []string{"get_percent_bp"}},
		{"tier percent_off_bp over 10000", "tiered", func(tp *models.Template) {
			tp.Tiers = []models.Tier{{MinCents: 1000, PercentOffBP: 500}, {MinCents: 2000, PercentOffBP: 10_001}}
		}, []string{"tiers[1].percent_off_bp"}},
		{"tier percent_off_bp falls", "tiered", func(tp *models.Template) {
			tp.Tiers = []models.Tier{{MinCents: 1000, PercentOffBP: 1050}, {MinCents: 2000, PercentOff: 10}}
		}, []string{"tiers[1].percent_off"}},
		{"percent with face", "percent", func(tp *models.Template) { tp.FaceValueCents = 1 }, []string{"face_value_cents"}},
		{"percent no cap", "percent", func(tp *models.Template) { tp.MaxDiscountCents = 0 }, []string{"max_discount_cents"}},
		{"per item no face", "fixed_per_item", func(tp *models.Template) { tp.FaceValueCents = 0 }, []string{"face_value_cents"}},
		{"per item face too big", "fixed_per_item", func(tp *models.Template) { tp.FaceValueCents = models.MaxMoneyCents + 1 }, []string{"face_value_cents"}},
		{"per item no cap", "fixed_per_item", func(tp *models.Template) { tp.MaxDiscountCents = 0 }, []string{"max_discount_cents"}},
		{"per item cap too big", "fixed_per_item", func(tp *models.Template) { tp.MaxDiscountCents = models.MaxMoneyCents + 1 }, []string{"max_discount_cents"}},
		{"per item with percent", "fixed_per_item", func(tp *models.Template) { tp.PercentOff = 10 }, []string{"percent_off"}},
		{"bxgy everything wrong", "buy_x_get_y", func(tp *models.Template) {
			tp.BuyQuantity, tp.GetQuantity, tp.GetPercent, tp.MaxApplications, tp.MaxDiscountCents = 0, 1001, 101, -1, 0
		}, []string{"buy_quantity", "get_quantity", "get_percent", "max_applications", "max_discount_cents"}},
		{"bxgy max_applications too many", "buy_x_get_y", func(tp *models.Template) { tp.MaxApplications = 1_000_001 }, []string{"max_applications"}},
		{"bxgy get_percent 0", "buy_x_get_y", func(tp *models.Template) { tp.GetPercent = 0 }, []string{"get_percent"}},
		{"bxgy with face and tiers", "buy_x_get_y", func(tp *models.Template) {
			tp.FaceValueCents, tp.Tiers = 1, []models.Tier{{MinCents: 1, OffCents: 1}}
		}, []string{"face_value_cents", "tiers"}},
		{"fixed with bxgy fields", "fixed", func(tp *models.Template) {
			tp.BuyQuantity, tp.GetQuantity, tp.GetPercent, tp.MaxApplications = 1, 1, 1, 1
		}, []string{"buy_quantity", "get_quantity", "get_percent", "max_applications"}},
		{"tiered none", "tiered", func(tp *models.Template) { tp.Tiers = nil }, []string{"tiers"}},
		{"tiered 21", "tiered", func(tp *models.Template) {
			tp.Tiers = nil
			for i := range 21 {
				tp.Tiers = append(tp.Tiers, models.Tier{MinCents: int64(i + 1), OffCents: 1})
			}
		}, []string{"tiers"}},
		{"tiered no cap", "tiered", func(tp *models.Template) { tp.MaxDiscountCents = 0 }, []string{"max_discount_cents"}},
		{"tier min 0", "tiered", func(tp *models.Template) { tp.Tiers[0].MinCents = 0 }, []string{"tiers[0].min_cents"}},
		{"tiers not rising", "tiered", func(tp *models.Template) { tp.Tiers[1].MinCents = tp.Tiers[0].MinCents }, []string{"tiers[1].min_cents"}},
		{"tier both", "tiered", func(tp *models.Template) { tp.Tiers[1].PercentOff = 5 }, []string{"tiers[1].percent_off"}},
		{"tier neither", "tiered", func(tp *models.Template) { tp.Tiers[0].OffCents = 0 }, []string{"tiers[0].off_cents"}},
		{"tiers mixed", "tiered", func(tp *models.Template) { tp.Tiers[1] = models.Tier{MinCents: 20000, PercentOff: 10} }, []string{"tiers[1].percent_off"}},
		{"tiers mixed percent first", "tiered", func(tp *models.Template) { tp.Tiers[0] = models.Tier{MinCents: 10000, PercentOff: 10} }, []string{"tiers[1].off_cents"}},
		{"tier amount decreasing", "tiered", func(tp *models.Template) { tp.Tiers[1].OffCents = 1000 }, []string{"tiers[1].off_cents"}},
		{"tier percent decreasing", "tiered", func(tp *models.Template) {
			tp.Tiers = []models.Tier{{MinCents: 100, PercentOff: 10}, {MinCents: 200, PercentOff: 5}, {MinCents: 300, PercentOff: 101}}
		}, []string{"tiers[1].percent_off", "tiers[2].percent_off"}},
		{"tier amount too big", "tiered", func(tp *models.Template) { tp.Tiers[1].OffCents = models.MaxMoneyCents + 1 }, []string{"tiers[1].off_cents"}},
		{"tier negative amount", "tiered", func(tp *models.Template) { tp.Tiers[0].OffCents = -5 }, []string{"tiers[0].off_cents"}},
		{"tiers on percent", "percent", func(tp *models.Template) { tp.Tiers = []models.Tier{{MinCents: 1, OffCents: 1}} }, []string{"tiers"}},
		{"free shipping no cap", "free_shipping", func(tp *models.Template) { tp.MaxDiscountCents = 0 }, []string{"max_discount_cents"}},
		{"free shipping on order", "free_shipping", func(tp *models.Template) { tp.AppliesTo = "order" }, []string{"applies_to"}},
		{"free shipping with face", "free_shipping", func(tp *models.Template) { tp.FaceValueCents = 100 }, []string{"face_value_cents"}},
		{"applies_to unknown", "fixed", func(tp *models.Template) { tp.AppliesTo = "cart" }, []string{"applies_to"}},
		{"fixed_per_item on shipping", "fixed_per_item", func(tp *models.Template) { tp.AppliesTo = "shipping" }, []string{"applies_to"}},
		{"target on order", "fixed", func(tp *models.Template) { tp.Target.SKUs = []string{"A"} }, []string{"target"}},
		{"target too long", "fixed", func(tp *models.Template) {
			tp.AppliesTo = "items"
			for i := range 1001 {
				tp.Target.ExcludeCategoryIDs = append(tp.Target.ExcludeCategoryIDs, fmt.Sprint(i))
			}
		}, []string{"target.exclude_category_ids"}},
		{"target entries", "fixed", func(tp *models.Template) {
			tp.AppliesTo = "items"
			tp.Target.SKUs = []string{"ok", ""}
			tp.Target.ProductIDs = []string{strings.Repeat("p", 65)}
			tp.Target.CategoryIDs = []string{"tab\there"}
			tp.Target.ExcludeSKUs = []string{" lead"}
			tp.Target.ExcludeProductIDs = []string{"\xff"}
		}, []string{"target.skus", "target.product_ids", "target.category_ids", "target.exclude_skus", "target.exclude_product_ids"}},
		{"min_quantity", "fixed", func(tp *models.Template) { tp.MinQuantity = 1_000_001 }, []string{"min_quantity"}},
		{"min_quantity negative", "fixed", func(tp *models.Template) { tp.MinQuantity = -1 }, []string{"min_quantity"}},
		{"priority", "fixed", func(tp *models.Template) { tp.Priority = 1001 }, []string{"priority"}},
		{"priority negative", "fixed", func(tp *models.Template) { tp.Priority = -1 }, []string{"priority"}},
		{"currency lower case", "fixed", func(tp *models.Template) { tp.Currency = "usd" }, []string{"currency"}},
		{"currency unknown", "fixed", func(tp *models.Template) { tp.Currency = "XYZ" }, []string{"currency"}},
		{"every mistake at once", "percent", func(tp *models.Template) {
			tp.PercentOff, tp.Priority, tp.Currency, tp.AppliesTo, tp.MinQuantity = 0, 2000, "EURO", "all", -1
		}, []string{"percent_off", "min_quantity", "priority", "currency", "applies_to"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := kindTemplate(c.kind)
			c.mutate(&tp)
			err := tp.Validate()
			if got := fieldsOf(err); !slices.Equal(got, c.fields) {
				t.Fatalf("fields %q, want %q (%v)", got, c.fields, err)
			}
			assertInvalid(t, err, c.fields[0])
		})
	}
}

// TestTemplateValidateMessages: the kind's message lists the kinds, and a
// field of another kind says which kinds take it.
func TestTemplateValidateMessages(t *testing.T) {
	tp := kindTemplate(models.KindFixed)
	tp.Kind = "bogo"
	if err := tp.Validate(); !strings.Contains(err.Error(), `"fixed", "percent", "fixed_per_item", "buy_x_get_y", "tiered" or "free_shipping"`) {
		t.Fatalf("kind: %v", err)
	}
	tp = kindTemplate(models.KindFixed)
	tp.GetPercent = 5
	if err := tp.Validate(); !strings.Contains(err.Error(), "is only for \"buy_x_get_y\" coupons") {
		t.Fatalf("get_percent: %v", err)
	}
	tp = kindTemplate(models.KindPercent)
	tp.FaceValueCents = 5
	if err := tp.Validate(); !strings.Contains(err.Error(), `is only for "fixed" and "fixed_per_item" coupons`) {
		t.Fatalf("face_value_cents: %v", err)
	}
}

// TestTemplateValidateSortsTarget: each target list is stored sorted
// without repeats; empty lists are dropped.
func TestTemplateValidateSortsTarget(t *testing.T) {
	tp := kindTemplate(models.KindPercent)
	tp.AppliesTo = models.AppliesToItems
	tp.Target = models.TemplateTarget{SKUs: []string{"b", "a", "b", "c", "a"}, CategoryIDs: []string{"shoes"},
		ExcludeSKUs: []string{}, ExcludeCategoryIDs: []string{"sale", "clearance", "sale"}}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	want := models.TemplateTarget{SKUs: []string{"a", "b", "c"}, CategoryIDs: []string{"shoes"},
		ExcludeCategoryIDs: []string{"clearance", "sale"}}
	if fmt.Sprintf("%#v", tp.Target) != fmt.Sprintf("%#v", want) {
		t.Fatalf("target %#v, want %#v", tp.Target, want)
	}
	// An items template without lists targets every discountable line.
	tp.Target = models.TemplateTarget{}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	// A space inside an entry is kept; 64 characters are allowed.
	tp.Target.SKUs = []string{"Red shirt", strings.Repeat("é", 64)}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestTemplateValueCentsByKind: the budget value is the face value of a
// fixed coupon and the cap of every other kind.
func TestTemplateValueCentsByKind(t *testing.T) {
	want := map[string]int64{models.KindFixed: 1000, models.KindPercent: 2500, models.KindFixedPerItem: 3000,
		models.KindBuyXGetY: 5000, models.KindTiered: 4000, models.KindFreeShipping: 1000}
	for kind, v := range want {
		tp := kindTemplate(kind)
		if got := tp.ValueCents(); got != v {
			t.Errorf("%s: value %d, want %d", kind, got, v)
		}
	}
}

// A percent is given in whole percents or in basis points: Validate keeps
// both fields in step (the whole percent only when there are no
// decimals), and validating again changes nothing (docs/pricing.md,
// "Percents").
func TestTemplatePercentInBasisPoints(t *testing.T) {
	cases := []struct {
		name                string
		whole, bp           int64
		wantWhole, wantBP   int64
		getWhole, getBP     int64
		wantGet, wantGetBP  int64
		tierWhole, tierBP   int64
		wantTier, wantTierB int64
	}{
		{"whole", 20, 0, 20, 2000, 100, 0, 100, 10_000, 15, 0, 15, 1500},
		{"basis points of a whole percent", 0, 2000, 20, 2000, 0, 10_000, 100, 10_000, 0, 1500, 15, 1500},
		{"decimals", 0, 3333, 0, 3333, 0, 2050, 0, 2050, 0, 1234, 0, 1234},
		{"both, agreeing", 100, 10_000, 100, 10_000, 50, 5000, 50, 5000, 1, 100, 1, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := kindTemplate(models.KindPercent)
			p.PercentOff, p.PercentOffBP = c.whole, c.bp
			b := kindTemplate(models.KindBuyXGetY)
			b.GetPercent, b.GetPercentBP = c.getWhole, c.getBP
			tr := kindTemplate(models.KindTiered)
			tr.Tiers = []models.Tier{{MinCents: 1000, PercentOff: c.tierWhole, PercentOffBP: c.tierBP}}
			for range 2 { // validating again changes nothing
				if err := p.Validate(); err != nil {
					t.Fatal(err)
				}
				if err := b.Validate(); err != nil {
					t.Fatal(err)
				}
				if err := tr.Validate(); err != nil {
					t.Fatal(err)
				}
				if p.PercentOff != c.wantWhole || p.PercentOffBP != c.wantBP || p.PercentBasisPoints() != c.wantBP {
					t.Fatalf("percent: %d / %d bp, want %d / %d", p.PercentOff, p.PercentOffBP, c.wantWhole, c.wantBP)
				}
				if b.GetPercent != c.wantGet || b.GetPercentBP != c.wantGetBP || b.GetPercentBasisPoints() != c.wantGetBP {
					t.Fatalf("get percent: %d / %d bp, want %d / %d", b.GetPercent, b.GetPercentBP, c.wantGet, c.wantGetBP)
				}
				if got := tr.Tiers[0]; got.PercentOff != c.wantTier || got.PercentOffBP != c.wantTierB || got.BasisPoints() != c.wantTierB {
					t.Fatalf("tier: %+v, want %d / %d bp", got, c.wantTier, c.wantTierB)
				}
			}
		})
	}
}

// The amount-only reference rule reads basis points too: 33.33% of 10,000
// is 3,333; of 999 it is 332.97, rounded down to 332.
func TestDiscountInBasisPointsRoundsDown(t *testing.T) {
	tp := kindTemplate(models.KindPercent)
	tp.PercentOff, tp.PercentOffBP, tp.MaxDiscountCents = 0, 3333, 1_000_000
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	if d := tp.Discount(10_000); d != 3333 {
		t.Fatalf("33.33%% of 10,000 = %d, want 3333", d)
	}
	if d := tp.Discount(999); d != 332 {
		t.Fatalf("33.33%% of 999 = %d, want 332", d)
	}
}

// A unit bound without unit_order discounts the cheapest units first;
// without a bound, unit_order stays empty.
func TestTemplateUnitOrderDefault(t *testing.T) {
	tp := kindTemplate(models.KindPercent)
	tp.MaxUnitsPerOrder = 1
	if err := tp.Validate(); err != nil || tp.UnitOrder != models.UnitsCheapest {
		t.Fatalf("unit_order %q (%v), want cheapest", tp.UnitOrder, err)
	}
	tp = kindTemplate(models.KindFixedPerItem)
	tp.MaxUnitsPerLine, tp.UnitOrder = 2, models.UnitsDearest
	if err := tp.Validate(); err != nil || tp.UnitOrder != models.UnitsDearest {
		t.Fatalf("unit_order %q (%v), want dearest", tp.UnitOrder, err)
	}
	tp = kindTemplate(models.KindPercent)
	if err := tp.Validate(); err != nil || tp.UnitOrder != "" {
		t.Fatalf("unit_order %q (%v), want empty", tp.UnitOrder, err)
	}
}
