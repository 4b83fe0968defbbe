package models

import (
	"fmt"
	"strings"
)

// DescribeTemplate says in one sentence what a coupon of t does, from its
// fields alone: its value, the items or the shipping it applies to, what
// it leaves out, its minimum, its condition on the cart and its cap ("Buy 2, get 1 free on shoes, not
// on sale items, up to $80 off", "Free shipping on orders over $25", "20%
// off shirts, up to $15"). money writes an amount of the template's
// currency. Every page that says what a coupon covers says it with this
// one function (docs/pages.md, "Every coupon in words").
//
// A template of several actions says each action in turn (its target, unit
// bounds and cap), then the template's minimums, condition and rule: "20%
// off your order, up to $50.00, and free shipping, up to $10.00 off, on
// orders over $100.00".
func DescribeTemplate(t *Template, money func(cents int64) string) string {
	if len(t.Actions) == 0 {
		return describeAction(t, money, true)
	}
	parts := make([]string, 0, 1+len(t.Actions))
	for k := range 1 + len(t.Actions) {
		a := t.Action(k)
		at := a.AsTemplate()
		at.Currency = t.Currency
		s := describeAction(&at, money, false)
		if k > 0 && s != "" {
			s = strings.ToLower(s[:1]) + s[1:]
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, ", and ")
	if m := minimumWords(t, money); m != "" {
		s += "," + m
	}
	// The condition, the rule and the code mode are the whole template's,
	// said once after every action (docs/pricing.md, "Several actions").
	if c := ConditionWords(t, money); c != "" {
		s += ", " + c
	}
	s += eligibilityWords(t)
	if t.CodeMode == CodeModeAutomatic {
		return "Automatic: " + s
	}
	return s
}

// minimumWords says a template's minimums (" on orders over $25.00 with 2
// or more items"; "" for none).
func minimumWords(t *Template, money func(cents int64) string) string {
	var b strings.Builder
	if t.MinOrderCents > 0 {
		b.WriteString(" on orders over " + money(t.MinOrderCents))
	}
	if t.MinQuantity > 0 {
		fmt.Fprintf(&b, " with %d or more items", t.MinQuantity)
	}
	return b.String()
}

// describeAction is the sentence of one action: its value, target, unit
// bounds, the template's minimums when withMinimums, and its cap.
func describeAction(t *Template, money func(cents int64) string, withMinimums bool) string {
	scope := targetWords(t)
	var b strings.Builder
	switch t.Kind {
	case KindPercent:
		fmt.Fprintf(&b, "%s off %s", PercentWords(t.PercentBasisPoints()), orOrder(scope.on, t))
	case KindFixedPerItem:
		b.WriteString(money(t.FaceValueCents) + " off each item" + prefixed(" on ", scope.on))
	case KindBuyXGetY:
		get := "free"
		if bp := t.GetPercentBasisPoints(); bp < MaxBasisPoints {
			get = "at " + PercentWords(bp) + " off"
		}
		fmt.Fprintf(&b, "Buy %d, get %d %s%s", t.BuyQuantity, t.GetQuantity, get, prefixed(" on ", scope.on))
	case KindTiered:
		steps := make([]string, len(t.Tiers))
		for i, tier := range t.Tiers {
			off := money(tier.OffCents)
			if bp := tier.BasisPoints(); bp > 0 {
				off = PercentWords(bp)
			}
			from := money(tier.MinCents)
			if tier.MinQuantity > 0 {
				from = fmt.Sprintf("%d %s", tier.MinQuantity, plural(tier.MinQuantity, "item"))
			}
			steps[i] = off + " off from " + from
			if t.AppliesTo == AppliesToShipping {
				steps[i] = off + " off shipping from " + from
			}
		}
		b.WriteString(strings.Join(steps, ", "))
		if t.AppliesTo != AppliesToShipping {
			b.WriteString(prefixed(" spent on ", scope.on))
		}
	case KindFreeShipping:
		b.WriteString("Free shipping")
	default:
		b.WriteString(money(t.FaceValueCents) + " off " + orOrder(scope.on, t))
	}
	if scope.not != "" {
		b.WriteString(", not on " + scope.not)
	}
	if t.FullPriceOnly {
		b.WriteString(" on full-price items only")
	}
	b.WriteString(unitWords(t))
	if withMinimums {
		b.WriteString(minimumWords(t, money))
	}
	b.WriteString(prefixed(" ", ConditionWords(t, money)))
	switch {
	case t.Kind == KindPercent && t.MaxDiscountCents > 0:
		b.WriteString(", up to " + money(t.MaxDiscountCents))
	case t.Kind != KindFixed && t.MaxDiscountCents > 0:
		b.WriteString(", up to " + money(t.MaxDiscountCents) + " off")
	}
	b.WriteString(eligibilityWords(t))
	if t.CodeMode == CodeModeAutomatic {
		// No code: the shopper learns it applies by itself
		// (docs/automatic-offers.md).
		return "Automatic: " + b.String()
	}
	return b.String()
}

// eligibilityWords says who a template's eligibility rule admits, quoting
// the rule as the merchant wrote it (docs/eligibility.md): ", for customers
// who meet the rule “customer.orders_count == 0”" ("" without a rule).
func eligibilityWords(t *Template) string {
	if strings.TrimSpace(t.Eligibility) == "" {
		return ""
	}
	return ", for customers who meet the rule “" + strings.Join(strings.Fields(t.Eligibility), " ") + "”"
}

// unitWords says a template's unit bounds: " on the cheapest item, once",
// " on up to 2 units per line", " on up to 3 items, cheapest first" ("" for
// none).
func unitWords(t *Template) string {
	perLine, perOrder := t.MaxUnitsPerLine, t.MaxUnitsPerOrder
	first := UnitsCheapest
	if t.UnitOrder == UnitsDearest {
		first = UnitsDearest
	}
	switch {
	case perLine <= 0 && perOrder <= 0:
		return ""
	case perLine <= 0 && perOrder == 1:
		return " on the " + first + " item, once"
	}
	var parts []string
	if perLine > 0 {
		parts = append(parts, fmt.Sprintf("up to %d %s per line", perLine, plural(perLine, "unit")))
	}
	switch {
	case perOrder > 0 && perLine > 0:
		parts = append(parts, fmt.Sprintf("%d in all", perOrder))
	case perOrder > 0:
		parts = append(parts, fmt.Sprintf("up to %d %s", perOrder, plural(perOrder, "item")))
	}
	s := " on " + strings.Join(parts, " and ")
	if first == UnitsDearest || perOrder > 1 {
		s += ", " + first + " first"
	}
	return s
}

// plural is word, with an s unless n is 1.
func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// scopeWords are the items a template applies to and those it leaves out,
// in words ("shoes or SKU BOOT-42", "sale items").
type scopeWords struct{ on, not string }

// targetWords says a template's target: categories by name, SKUs and
// products by their ids; the shipping for a shipping template.
func targetWords(t *Template) scopeWords {
	if t.AppliesTo == AppliesToShipping {
		return scopeWords{on: "shipping"}
	}
	if t.AppliesTo != AppliesToItems {
		return scopeWords{}
	}
	tt := t.Target
	return scopeWords{
		on:  listWords(tt.CategoryIDs, "", tt.SKUs, tt.ProductIDs),
		not: listWords(tt.ExcludeCategoryIDs, " items", tt.ExcludeSKUs, tt.ExcludeProductIDs),
	}
}

// listWords joins categories (each followed by suffix), SKUs and products
// with "or".
func listWords(cats []string, suffix string, skus, products []string) string {
	var parts []string
	if len(cats) > 0 {
		parts = append(parts, strings.Join(cats, " or ")+suffix)
	}
	if len(skus) == 1 {
		parts = append(parts, "SKU "+skus[0])
	} else if len(skus) > 1 {
		parts = append(parts, "SKUs "+strings.Join(skus, ", "))
	}
	if len(products) == 1 {
		parts = append(parts, "product "+products[0])
	} else if len(products) > 1 {
		parts = append(parts, "products "+strings.Join(products, ", "))
	}
	return strings.Join(parts, " or ")
}

// orOrder is the scope after "off": the items or shipping, else "your
// order" (or "items" for an items template with no include list).
func orOrder(on string, t *Template) string {
	switch {
	case on != "":
		return on
	case t.AppliesTo == AppliesToItems:
		return "every item"
	}
	return "your order"
}

// prefixed is s after prefix, or "" for no s.
func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// PercentWords writes a percent given in basis points as a merchant reads
// it: "20%", "20.5%", "33.33%" (no trailing zero after the point).
func PercentWords(bp int64) string {
	whole, frac := bp/100, bp%100
	switch {
	case frac == 0:
		return fmt.Sprintf("%d%%", whole)
	case frac%10 == 0:
		return fmt.Sprintf("%d.%d%%", whole, frac/10)
	}
	return fmt.Sprintf("%d.%02d%%", whole, frac)
}

// PercentText is the percent kind's percent in words ("33.33%"), for the
// pages that show it beside an amount.
func (t *Template) PercentText() string { return PercentWords(t.PercentBasisPoints()) }
