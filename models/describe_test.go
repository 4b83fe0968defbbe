package models

import (
	"fmt"
	"testing"
)

// dollars writes cents as the pages' short form: "$25", "$2.50".
func dollars(c int64) string {
	if c%100 == 0 {
		return fmt.Sprintf("$%d", c/100)
	}
	return fmt.Sprintf("$%d.%02d", c/100, c%100)
}

// TestDescribeTemplate: every kind, on the order, on items (categories,
// SKUs, products, exclusions) and on the shipping, with minimums and caps.
func TestDescribeTemplate(t *testing.T) {
	shoes := TemplateTarget{CategoryIDs: []string{"shoes"}, ExcludeCategoryIDs: []string{"sale"}}
	for _, tc := range []struct {
		name string
		t    Template
		want string
	}{
		{"fixed order", Template{Kind: KindFixed, FaceValueCents: 500, AppliesTo: AppliesToOrder}, "$5 off your order"},
		{"fixed order min", Template{Kind: KindFixed, FaceValueCents: 1000, MinOrderCents: 5000}, "$10 off your order on orders over $50"},
		{"automatic percent min", Template{Kind: KindPercent, PercentOff: 10, MinOrderCents: 5000, CodeMode: CodeModeAutomatic},
			"Automatic: 10% off your order on orders over $50"},
		{"fixed shoes", Template{Kind: KindFixed, FaceValueCents: 500, AppliesTo: AppliesToItems,
			Target: TemplateTarget{CategoryIDs: []string{"shoes"}}}, "$5 off shoes"},
		{"fixed skus", Template{Kind: KindFixed, FaceValueCents: 250, AppliesTo: AppliesToItems,
			Target: TemplateTarget{SKUs: []string{"A-1", "B-2"}}}, "$2.50 off SKUs A-1, B-2"},
		{"fixed product not sku", Template{Kind: KindFixed, FaceValueCents: 100, AppliesTo: AppliesToItems,
			Target: TemplateTarget{ProductIDs: []string{"p9"}, ExcludeSKUs: []string{"X"}}}, "$1 off product p9, not on SKU X"},
		{"fixed items no include", Template{Kind: KindFixed, FaceValueCents: 100, AppliesTo: AppliesToItems,
			Target: TemplateTarget{ExcludeProductIDs: []string{"p1", "p2"}}}, "$1 off every item, not on products p1, p2"},
		{"fixed shipping", Template{Kind: KindFixed, FaceValueCents: 300, AppliesTo: AppliesToShipping}, "$3 off shipping"},
		{"percent shirts", Template{Kind: KindPercent, PercentOff: 20, MaxDiscountCents: 1500, AppliesTo: AppliesToItems,
			Target: TemplateTarget{CategoryIDs: []string{"shirts"}}}, "20% off shirts, up to $15"},
		{"percent order", Template{Kind: KindPercent, PercentOff: 15, MaxDiscountCents: 2000}, "15% off your order, up to $20"},
		{"percent two categories min qty", Template{Kind: KindPercent, PercentOff: 10, MaxDiscountCents: 500, AppliesTo: AppliesToItems,
			MinQuantity: 3, Target: TemplateTarget{CategoryIDs: []string{"shirts", "hats"}, SKUs: []string{"S-1"}}},
			"10% off shirts or hats or SKU S-1 with 3 or more items, up to $5"},
		{"per item", Template{Kind: KindFixedPerItem, FaceValueCents: 200, MaxDiscountCents: 1000, AppliesTo: AppliesToItems,
			Target: TemplateTarget{CategoryIDs: []string{"socks"}}}, "$2 off each item on socks, up to $10 off"},
		{"per item order", Template{Kind: KindFixedPerItem, FaceValueCents: 200, MaxDiscountCents: 1000}, "$2 off each item, up to $10 off"},
		{"buy 2 get 1", Template{Kind: KindBuyXGetY, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100, MaxDiscountCents: 8000,
			AppliesTo: AppliesToItems, Target: shoes}, "Buy 2, get 1 free on shoes, not on sale items, up to $80 off"},
		{"buy 1 get 1 half", Template{Kind: KindBuyXGetY, BuyQuantity: 1, GetQuantity: 1, GetPercent: 50, MaxDiscountCents: 3000},
			"Buy 1, get 1 at 50% off, up to $30 off"},
		{"tiered", Template{Kind: KindTiered, MaxDiscountCents: 2500, AppliesTo: AppliesToItems, Target: TemplateTarget{CategoryIDs: []string{"toys"}},
			Tiers: []Tier{{MinCents: 5000, OffCents: 500}, {MinCents: 10000, PercentOff: 15}}},
			"$5 off from $50, 15% off from $100 spent on toys, up to $25 off"},
		{"full price only", Template{Kind: KindPercent, PercentOff: 20, MaxDiscountCents: 1500, FullPriceOnly: true, AppliesTo: AppliesToItems,
			Target: TemplateTarget{CategoryIDs: []string{"shirts"}}}, "20% off shirts on full-price items only, up to $15"},
		{"full price only fixed", Template{Kind: KindFixed, FaceValueCents: 500, FullPriceOnly: true}, "$5 off your order on full-price items only"},
		{"cheapest once", Template{Kind: KindPercent, PercentOff: 100, MaxDiscountCents: 5000, MaxUnitsPerOrder: 1, UnitOrder: UnitsCheapest},
			"100% off your order on the cheapest item, once, up to $50"},
		{"dearest once", Template{Kind: KindFixedPerItem, FaceValueCents: 500, MaxDiscountCents: 500, MaxUnitsPerOrder: 1, UnitOrder: UnitsDearest},
			"$5 off each item on the dearest item, once, up to $5 off"},
		{"two per line", Template{Kind: KindPercent, PercentOff: 20, MaxDiscountCents: 1500, MaxUnitsPerLine: 2, UnitOrder: UnitsCheapest,
			AppliesTo: AppliesToItems, Target: TemplateTarget{CategoryIDs: []string{"shirts"}}}, "20% off shirts on up to 2 units per line, up to $15"},
		{"per line and order", Template{Kind: KindPercent, PercentOff: 20, MaxDiscountCents: 1500, MaxUnitsPerLine: 1, MaxUnitsPerOrder: 3,
			UnitOrder: UnitsDearest}, "20% off your order on up to 1 unit per line and 3 in all, dearest first, up to $15"},
		{"three items", Template{Kind: KindPercent, PercentOff: 20, MaxDiscountCents: 1500, MaxUnitsPerOrder: 3, UnitOrder: UnitsCheapest},
			"20% off your order on up to 3 items, cheapest first, up to $15"},
		{"quantity tiers", Template{Kind: KindTiered, MaxDiscountCents: 2500,
			Tiers: []Tier{{MinQuantity: 1, PercentOff: 5}, {MinQuantity: 3, PercentOff: 10}}},
			"5% off from 1 item, 10% off from 3 items, up to $25 off"},
		{"percent in basis points", Template{Kind: KindPercent, PercentOffBP: 3333, MaxDiscountCents: 5000}, "33.33% off your order, up to $50"},
		{"percent one decimal", Template{Kind: KindPercent, PercentOffBP: 2050, MaxDiscountCents: 5000}, "20.5% off your order, up to $50"},
		{"percent 100", Template{Kind: KindPercent, PercentOffBP: 10_000, MaxDiscountCents: 5000}, "100% off your order, up to $50"},
		{"buy 1 get 1 at 12.5%", Template{Kind: KindBuyXGetY, BuyQuantity: 1, GetQuantity: 1, GetPercentBP: 1250, MaxDiscountCents: 3000},
			"Buy 1, get 1 at 12.5% off, up to $30 off"},
		{"buy 1 get 1 free in basis points", Template{Kind: KindBuyXGetY, BuyQuantity: 1, GetQuantity: 1, GetPercentBP: 10_000, MaxDiscountCents: 3000},
			"Buy 1, get 1 free, up to $30 off"},
		{"tiered basis points", Template{Kind: KindTiered, MaxDiscountCents: 2500,
			Tiers: []Tier{{MinCents: 5000, PercentOffBP: 750}, {MinCents: 10000, PercentOffBP: 1005}}},
			"7.5% off from $50, 10.05% off from $100, up to $25 off"},
		{"free shipping min", Template{Kind: KindFreeShipping, AppliesTo: AppliesToShipping, MinOrderCents: 2500},
			"Free shipping on orders over $25"},
		{"free shipping cap", Template{Kind: KindFreeShipping, AppliesTo: AppliesToShipping, MaxDiscountCents: 1000},
			"Free shipping, up to $10 off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescribeTemplate(&tc.t, dollars); got != tc.want {
				t.Errorf("DescribeTemplate = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDescribeEligibility: the sentence of a template with a rule says
// whom it is for, quoting the rule on one line.
func TestDescribeEligibility(t *testing.T) {
	tp := Template{Kind: KindFixed, FaceValueCents: 500, MinOrderCents: 2000, Eligibility: "\"vip\" in customer.tags &&\n  channel == \"web\""}
	want := `$5 off your order on orders over $20, for customers who meet the rule “"vip" in customer.tags && channel == "web"”`
	if got := DescribeTemplate(&tp, dollars); got != want {
		t.Fatalf("DescribeTemplate = %q, want %q", got, want)
	}
	tp.Eligibility = "  "
	if got := DescribeTemplate(&tp, dollars); got != "$5 off your order on orders over $20" {
		t.Fatalf("a blank rule: %q", got)
	}
}
