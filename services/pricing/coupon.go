package pricing

import (
	"cmp"
	"slices"
)

// The kinds of discount.
const (
	KindFixed        = "fixed"          // FaceValueCents off the targeted lines, once per order
	KindPercent      = "percent"        // a percent (in basis points) of the targeted lines, at most MaxDiscountCents
	KindFixedPerItem = "fixed_per_item" // FaceValueCents off each targeted unit, at most its price
	KindBuyXGetY     = "buy_x_get_y"    // of each set of Buy+Get units, GetPercent off its Get cheapest
	KindTiered       = "tiered"         // the highest tier met on the targeted subtotal
	KindFreeShipping = "free_shipping"  // the shipping, at most MaxDiscountCents
)

// What a coupon applies to.
const (
	AppliesToOrder    = "order"    // every discountable line
	AppliesToItems    = "items"    // the discountable lines its Match selects
	AppliesToShipping = "shipping" // the shipping
)

// Coupon is what pricing needs of a coupon: its code and its template's
// rule. Currency empty matches any cart (the deployment's one currency).
type Coupon struct {
	Code      string
	Currency  string
	Kind      string
	AppliesTo string
	Match     Match
	// FaceValueCents: fixed, fixed_per_item. PercentOff: percent, in whole
	// percents; PercentOffBP, in basis points (1/100 of a percent), is used
	// instead when it is set (see BasisPoints).
	FaceValueCents, PercentOff, PercentOffBP int64
	// MaxDiscountCents caps the coupon's discount (0: no cap; every kind but
	// fixed has one when its template is valid).
	MaxDiscountCents int64
	// MinOrderCents and MinQuantity are checked on the targeted lines'
	// subtotal and units before any discount (for shipping: on the
	// discountable lines').
	MinOrderCents, MinQuantity int64
	// buy_x_get_y: sets of BuyQuantity+GetQuantity units, GetPercent off the
	// GetQuantity cheapest of each, at most MaxApplications sets (0: no
	// limit but MaxDiscountCents). GetPercentBP, in basis points, is used
	// instead of GetPercent when it is set.
	BuyQuantity, GetQuantity, GetPercent, MaxApplications int64
	GetPercentBP                                          int64
	// Tiers, for tiered, in increasing MinCents.
	Tiers []Tier
	// Priority orders the coupons of one cart: lower first (default 100).
	Priority int64
	// FullPriceOnly skips the lines the shop marked down (Line.MarkedDown)
	// as if the coupon did not target them: they count toward none of its
	// minimums and take none of its discount.
	FullPriceOnly bool
	// MaxUnitsPerLine and MaxUnitsPerOrder bound the units the coupon
	// discounts (0: no bound), chosen in UnitOrder (UnitsCheapest or
	// UnitsDearest; empty is cheapest) among its targeted units. Not for
	// buy_x_get_y (its sets choose) nor the shipping.
	MaxUnitsPerLine, MaxUnitsPerOrder int64
	UnitOrder                         string
	// Actions are the coupon's further actions ("20% off + free
	// shipping"): the coupon itself is its first action, then each of these
	// in order, each priced on what the earlier ones left. Only an action's
	// kind, AppliesTo, Match, kind fields, cap, FullPriceOnly and unit
	// bounds count: its code, currency, priority and minimums are the
	// coupon's (docs/pricing.md, "Several actions").
	Actions []Coupon
	// Condition, when set, is what the cart must hold for the coupon to
	// apply at all, apart from what it discounts (see Condition).
	Condition *Condition
}

// Which units a coupon with a unit bound discounts first.
const (
	UnitsCheapest = "cheapest" // the units with the least left of their price first
	UnitsDearest  = "dearest"  // the units with the most left of their price first
)

// selects reports whether the coupon discounts only some of its targeted
// units.
func (c *Coupon) selects() bool {
	return (c.MaxUnitsPerLine > 0 || c.MaxUnitsPerOrder > 0) && c.Kind != KindBuyXGetY
}

// Tier is one step of a tiered coupon: from MinCents of targeted subtotal
// (or, a quantity tier, from MinQuantity targeted units), OffCents off, or
// PercentOff of the targeted lines (PercentOffBP, in basis points, instead
// when it is set).
type Tier struct {
	MinCents, OffCents, PercentOff, PercentOffBP int64
	MinQuantity                                  int64
}

// BasisPoints is a percent in basis points (10,000 is 100%): bp when it is
// set, else the whole percent times 100. Every percent of the package is
// read through it, so that a whole percent and its basis points price the
// same (docs/pricing.md, "Percents").
func BasisPoints(whole, bp int64) int64 {
	if bp != 0 {
		return bp
	}
	return whole * 100
}

// percentOf is bp basis points of amount, rounded down to the minor unit.
func percentOf(amount, bp int64) int64 {
	d, _ := mulDiv(max(amount, 0), max(bp, 0), 10_000)
	return d
}

// Match selects lines for AppliesToItems: a line matches when it meets any
// include list (or every line when no include list is given) and no exclude
// list. Lists sorted in increasing order (Sort) are searched by halves; the
// templates keep them so.
type Match struct {
	SKUs, ProductIDs, CategoryIDs                      []string
	ExcludeSKUs, ExcludeProductIDs, ExcludeCategoryIDs []string
}

// Sort sorts every list and drops repeated entries.
func (m *Match) Sort() {
	for _, l := range []*[]string{&m.SKUs, &m.ProductIDs, &m.CategoryIDs, &m.ExcludeSKUs, &m.ExcludeProductIDs, &m.ExcludeCategoryIDs} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
}

func (m *Match) matches(l *Line) bool {
	if has(m.ExcludeSKUs, l.SKU) || has(m.ExcludeProductIDs, l.ProductID) || hasAny(m.ExcludeCategoryIDs, l.CategoryIDs) {
		return false
	}
	if len(m.SKUs) == 0 && len(m.ProductIDs) == 0 && len(m.CategoryIDs) == 0 {
		return true
	}
	return has(m.SKUs, l.SKU) || has(m.ProductIDs, l.ProductID) || hasAny(m.CategoryIDs, l.CategoryIDs)
}

func has(list []string, v string) bool {
	if v == "" || len(list) == 0 {
		return false
	}
	if _, ok := slices.BinarySearch(list, v); ok {
		return true
	}
	if slices.IsSorted(list) {
		return false
	}
	return slices.Contains(list, v) // a list nobody sorted: slower, still right
}

func hasAny(list, vs []string) bool {
	for _, v := range vs {
		if has(list, v) {
			return true
		}
	}
	return false
}

// targets reports whether the coupon may discount line l (shipping aside).
func (c *Coupon) targets(l *Line) bool {
	if l.NotDiscountable || l.Quantity <= 0 || l.UnitPriceCents <= 0 || (c.FullPriceOnly && l.MarkedDown()) {
		return false
	}
	switch c.AppliesTo {
	case AppliesToShipping:
		return false
	case AppliesToItems:
		return c.Match.matches(l)
	}
	return true
}

func (c *Coupon) onShipping() bool {
	return c.Kind == KindFreeShipping || c.AppliesTo == AppliesToShipping
}

// isPercent tells the coupons priced as a share of what is left (percent,
// buy_x_get_y and percent tiers) from those priced as an amount: amounts go
// first, as they always have.
func (c *Coupon) isPercent() bool {
	switch c.Kind {
	case KindPercent, KindBuyXGetY:
		return true
	case KindTiered:
		return len(c.Tiers) > 0 && BasisPoints(c.Tiers[0].PercentOff, c.Tiers[0].PercentOffBP) > 0
	}
	return false
}

// size is what "larger first" compares within amounts and within percents.
func (c *Coupon) size() int64 {
	switch c.Kind {
	case KindFixed, KindFixedPerItem:
		return c.FaceValueCents
	case KindPercent:
		return BasisPoints(c.PercentOff, c.PercentOffBP)
	case KindBuyXGetY:
		return BasisPoints(c.GetPercent, c.GetPercentBP)
	}
	return c.MaxDiscountCents
}

// compareOrder is the order the coupons of a cart apply in: priority (lower
// first), then amounts before percents, larger first, then code.
func compareOrder(a, b *Coupon) int {
	if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
		return c
	}
	if ap, bp := a.isPercent(), b.isPercent(); ap != bp {
		if bp {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.size(), a.size()); c != 0 {
		return c
	}
	return cmp.Compare(a.Code, b.Code)
}
