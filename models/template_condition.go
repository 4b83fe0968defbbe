package models

import (
	"fmt"
	"strings"
)

// MaxConditionQuantity bounds a condition's min_quantity.
const MaxConditionQuantity = MaxMinQuantity

// TemplateCondition is what a cart must hold for a template's coupons to
// apply, apart from what they discount (docs/pricing.md, "Conditions"): at
// least MinQuantity units and MinAmountCents of the lines Target selects
// (every line when it has no include list), judged on the cart before any
// discount. "Buy 2 trousers, get 10% off jackets" is the condition
// {category trousers, min_quantity 2} on a percent template on jackets.
type TemplateCondition struct {
	Target         TemplateTarget `json:"target"`
	MinQuantity    int64          `json:"min_quantity,omitempty" schema:"min_quantity"`
	MinAmountCents int64          `json:"min_amount_cents,omitempty" schema:"money"`
	// Repeat multiplies the template's max_units_per_order by the times
	// the cart holds min_quantity matching units ("each 2 of A gives 1 of
	// B"); it needs both.
	Repeat bool `json:"repeat,omitempty"`
}

// validateCondition checks the condition (nil is none): a target's lists
// as target's, min_quantity and min_amount_cents in their bounds, one of
// them at least 1, and repeat only with min_quantity and
// max_units_per_order. Each list is sorted without repeats.
func (t *Template) validateCondition(errs *FieldErrors) {
	c := t.Condition
	if c == nil {
		return
	}
	c.Target.validateLists("condition.target.", errs)
	if c.MinQuantity < 0 || c.MinQuantity > MaxConditionQuantity {
		errs.Add(Invalid("condition.min_quantity", "must be between 0 and %d", int64(MaxConditionQuantity)))
	}
	if c.MinAmountCents < 0 || c.MinAmountCents > MaxMoneyCents {
		errs.Add(Invalid("condition.min_amount_cents", "must be between 0 and %d", int64(MaxMoneyCents)))
	}
	if c.MinQuantity == 0 && c.MinAmountCents == 0 {
		errs.Add(Invalid("condition.min_quantity", "give min_quantity or min_amount_cents (at least 1): what the cart must hold"))
	}
	if c.Repeat && (c.MinQuantity < 1 || t.MaxUnitsPerOrder < 1) {
		errs.Add(Invalid("condition.repeat", "needs condition.min_quantity and max_units_per_order: so many units per so many bought"))
	}
}

// ConditionWords says a template's condition as a merchant reads it: "when
// the cart has 2 items of category trousers", "when the cart has $50 of SKU
// A, again for every 2 more" ("" for none); money writes an amount of the template's currency.
func ConditionWords(t *Template, money func(cents int64) string) string {
	c := t.Condition
	if c == nil {
		return ""
	}
	of := conditionScope(&c.Target)
	var needs []string
	if c.MinQuantity > 0 {
		needs = append(needs, fmt.Sprintf("%d %s", c.MinQuantity, plural(c.MinQuantity, "item")))
	}
	if c.MinAmountCents > 0 {
		needs = append(needs, money(c.MinAmountCents))
	}
	s := "when the cart has " + strings.Join(needs, " and ") + " of " + of
	if c.Repeat {
		s += fmt.Sprintf(", again for every %d more", c.MinQuantity)
	}
	return s
}

// conditionScope is what a condition counts, in words: "category
// trousers", "SKU A, not sale items", "any item".
func conditionScope(tt *TemplateTarget) string {
	on := listWords(tt.CategoryIDs, "", tt.SKUs, tt.ProductIDs)
	if len(tt.CategoryIDs) > 0 {
		on = "category " + on
	}
	if on == "" {
		on = "any item"
	}
	if not := listWords(tt.ExcludeCategoryIDs, " items", tt.ExcludeSKUs, tt.ExcludeProductIDs); not != "" {
		on += ", not " + not
	}
	return on
}

// Missing says what a cart holding units and cents of the condition's
// lines lacks: "needs 2 items of category trousers, the cart has 1"
// (amounts in cents, as the API's other messages).
func (c *TemplateCondition) Missing(units, cents int64) string {
	var needs, has []string
	if c.MinQuantity > 0 {
		needs = append(needs, fmt.Sprintf("%d %s", c.MinQuantity, plural(c.MinQuantity, "item")))
		has = append(has, fmt.Sprint(units))
	}
	if c.MinAmountCents > 0 {
		needs = append(needs, fmt.Sprintf("%d cents", c.MinAmountCents))
		has = append(has, fmt.Sprintf("%d cents", cents))
	}
	return "needs " + strings.Join(needs, " and ") + " of " + conditionScope(&c.Target) + ", the cart has " + strings.Join(has, " and ")
}
