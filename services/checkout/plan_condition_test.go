package checkout

import (
	"errors"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// A coupon whose condition the cart does not meet is refused
// condition_not_met on the lines, saying what is missing: units, cents or
// both, of what the condition counts (every line, discountable or not).
func TestPlanRefusesConditionNotMet(t *testing.T) {
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "t", SKU: "T", CategoryIDs: []string{"trousers"}, Quantity: 1, UnitPriceCents: 4_000, NotDiscountable: true},
		{ID: "j", SKU: "J", CategoryIDs: []string{"jackets"}, Quantity: 1, UnitPriceCents: 12_000},
	}}
	for _, tc := range []struct {
		name string
		cond models.TemplateCondition
		want string
	}{
		{"Units", models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"trousers"}}, MinQuantity: 2},
			"coupon JK needs 2 items of category trousers, the cart has 1"},
		{"Cents", models.TemplateCondition{Target: models.TemplateTarget{SKUs: []string{"T"}}, MinAmountCents: 5_000},
			"coupon JK needs 5000 cents of SKU T, the cart has 4000 cents"},
		{"Both", models.TemplateCondition{Target: models.TemplateTarget{ExcludeCategoryIDs: []string{"jackets"}}, MinQuantity: 1, MinAmountCents: 4_001},
			"coupon JK needs 1 item and 4001 cents of any item, not jackets items, the cart has 1 and 4000 cents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := &models.Template{Kind: models.KindPercent, PercentOffBP: 1_000, MaxDiscountCents: 5_000, AppliesTo: models.AppliesToItems,
				Target: models.TemplateTarget{CategoryIDs: []string{"jackets"}}, Condition: &tc.cond}
			r := pricing.Price(&cart, []pricing.Coupon{core.PricingCoupon(tp, "JK")})
			err := couponRefusal(&r.Coupons[0], tp, &cart, true, nil)
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeConditionNotMet || e.Field != "lines" || e.Message != tc.want {
				t.Fatalf("refusal %v, want condition_not_met on lines %q", err, tc.want)
			}
		})
	}
}
