package core

import (
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// PricingCoupon is what the pricing package needs of a coupon of template t
// (docs/pricing.md): its code and its template's rule. The target lists are
// shared with the template, not copied: a template's lists are stored
// sorted (Template.Validate), so a cart's lines are matched by halves. An
// empty applies_to is the whole order.
func PricingCoupon(t *models.Template, code string) pricing.Coupon {
	c := pricing.Coupon{
		Code:             code,
		Currency:         t.Currency,
		Kind:             t.Kind,
		AppliesTo:        t.AppliesTo,
		FaceValueCents:   t.FaceValueCents,
		PercentOff:       t.PercentOff,
		PercentOffBP:     t.PercentOffBP,
		MaxDiscountCents: t.MaxDiscountCents,
		MinOrderCents:    t.MinOrderCents,
		MinQuantity:      t.MinQuantity,
		BuyQuantity:      t.BuyQuantity,
		GetQuantity:      t.GetQuantity,
		GetPercent:       t.GetPercent,
		GetPercentBP:     t.GetPercentBP,
		MaxApplications:  t.MaxApplications,
		Priority:         t.Priority,
		FullPriceOnly:    t.FullPriceOnly,
		MaxUnitsPerLine:  t.MaxUnitsPerLine,
		MaxUnitsPerOrder: t.MaxUnitsPerOrder,
		UnitOrder:        t.UnitOrder,
		Match:            matchOf(&t.Target),
	}
	if c.AppliesTo == "" {
		c.AppliesTo = pricing.AppliesToOrder
	}
	if cd := t.Condition; cd != nil {
		c.Condition = &pricing.Condition{
			Match:       matchOf(&cd.Target),
			MinQuantity: cd.MinQuantity, MinAmountCents: cd.MinAmountCents, Repeat: cd.Repeat,
		}
	}
	for _, tier := range t.Tiers {
		c.Tiers = append(c.Tiers, pricing.Tier{MinCents: tier.MinCents, OffCents: tier.OffCents, PercentOff: tier.PercentOff, PercentOffBP: tier.PercentOffBP, MinQuantity: tier.MinQuantity})
	}
	return c
}

// matchOf is a template's target (or its condition's) as pricing reads it.
func matchOf(tt *models.TemplateTarget) pricing.Match {
	return pricing.Match{
		SKUs: tt.SKUs, ProductIDs: tt.ProductIDs, CategoryIDs: tt.CategoryIDs,
		ExcludeSKUs: tt.ExcludeSKUs, ExcludeProductIDs: tt.ExcludeProductIDs,
		ExcludeCategoryIDs: tt.ExcludeCategoryIDs,
	}
}
