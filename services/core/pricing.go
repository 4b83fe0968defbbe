package core

import (
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// PricingCoupon is what the pricing package needs of a coupon of template t
// (docs/pricing.md): its code and its template's rule. The target lists are
// shared with the template, not copied: a template's lists are stored
// sorted (Template.Validate), so a cart's lines are matched by halves. An
// empty applies_to is the whole order. The template's further actions
// follow its own kind fields, in order (docs/pricing.md, "Several
// actions").
func PricingCoupon(t *models.Template, code string) pricing.Coupon {
	first := t.Action(0)
	c := pricingAction(&first)
	c.Code, c.Currency = code, t.Currency
	c.MinOrderCents, c.MinQuantity, c.Priority = t.MinOrderCents, t.MinQuantity, t.Priority
	if cd := t.Condition; cd != nil {
		c.Condition = &pricing.Condition{
			Match:       matchOf(&cd.Target),
			MinQuantity: cd.MinQuantity, MinAmountCents: cd.MinAmountCents, Repeat: cd.Repeat,
		}
	}
	for i := range t.Actions {
		c.Actions = append(c.Actions, pricingAction(&t.Actions[i]))
	}
	return c
}

// pricingAction is one action of a template as pricing reads it.
func pricingAction(a *models.TemplateAction) pricing.Coupon {
	c := pricing.Coupon{
		Kind:             a.Kind,
		AppliesTo:        a.AppliesTo,
		FaceValueCents:   a.FaceValueCents,
		PercentOff:       a.PercentOff,
		PercentOffBP:     a.PercentOffBP,
		MaxDiscountCents: a.MaxDiscountCents,
		BuyQuantity:      a.BuyQuantity,
		GetQuantity:      a.GetQuantity,
		GetPercent:       a.GetPercent,
		GetPercentBP:     a.GetPercentBP,
		MaxApplications:  a.MaxApplications,
		FullPriceOnly:    a.FullPriceOnly,
		MaxUnitsPerLine:  a.MaxUnitsPerLine,
		MaxUnitsPerOrder: a.MaxUnitsPerOrder,
		UnitOrder:        a.UnitOrder,
		Match:            matchOf(&a.Target),
	}
	if c.AppliesTo == "" {
		c.AppliesTo = pricing.AppliesToOrder
	}
	for _, tier := range a.Tiers {
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
