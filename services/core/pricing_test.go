package core

import (
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"
)

func TestPricingCouponCarriesEveryRule(t *testing.T) {
	tpl := &models.Template{Kind: models.KindBuyXGetY, AppliesTo: models.AppliesToItems, Currency: "EUR",
		MaxDiscountCents: 5000, MinOrderCents: 100, MinQuantity: 3, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100,
		MaxApplications: 4, Priority: 7,
		Target: models.TemplateTarget{SKUs: []string{"A", "B"}, ExcludeCategoryIDs: []string{"sale"}},
		Tiers:  []models.Tier{{MinCents: 1000, OffCents: 100}}}
	got := PricingCoupon(tpl, "CODE1")
	want := pricing.Coupon{Code: "CODE1", Currency: "EUR", Kind: pricing.KindBuyXGetY, AppliesTo: pricing.AppliesToItems,
		MaxDiscountCents: 5000, MinOrderCents: 100, MinQuantity: 3, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100,
		MaxApplications: 4, Priority: 7,
		Match: pricing.Match{SKUs: []string{"A", "B"}, ExcludeCategoryIDs: []string{"sale"}},
		Tiers: []pricing.Tier{{MinCents: 1000, OffCents: 100}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("PricingCoupon = %+v\nwant %+v", got, want)
	}
	if c := PricingCoupon(&models.Template{Kind: models.KindFixed, FaceValueCents: 500}, "X"); c.AppliesTo != pricing.AppliesToOrder {
		t.Fatalf("an empty applies_to gives %q, want order", c.AppliesTo)
	}
}
