// Package pricing is the one rule of what coupons take off a cart: given a
// cart of lines (and shipping) and the coupons on it, it returns each
// coupon's discount and where every minor unit of it goes, per line and per
// unit. It is pure: no database, no Redis, no clock. Every flow that shows,
// holds, confirms, redeems or returns a discount calls it, and nothing else
// computes one (docs/pricing.md).
package pricing

import (
	"slices"
)

// Cart is what is priced: lines and shipping, in one currency. Amounts are
// integer minor units of the currency.
type Cart struct {
	Currency      string
	Lines         []Line
	ShippingCents int64
}

// Line is one line of a cart: Quantity units at UnitPriceCents each.
type Line struct {
	ID          string
	SKU         string
	ProductID   string
	CategoryIDs []string
	Quantity    int64
	// UnitPriceCents is one unit's price; the line's amount is Quantity times it.
	UnitPriceCents int64
	// NotDiscountable marks a line no coupon may discount (a gift card, an
	// item on sale the merchant protects).
	NotDiscountable bool
	// CompareAtPriceCents is one unit's price before the shop's own
	// markdown (0: not given). A line whose CompareAtPriceCents is above
	// its UnitPriceCents is marked down: a FullPriceOnly coupon skips it.
	CompareAtPriceCents int64
}

// MarkedDown reports whether the shop sells the line below its
// compare-at price (docs/pricing.md, "Full-price items only").
func (l *Line) MarkedDown() bool { return l.CompareAtPriceCents > l.UnitPriceCents }

// AmountCents is the line's amount before discounts.
func (l *Line) AmountCents() int64 { return l.Quantity * l.UnitPriceCents }

// OneLine is the cart of an amount-only order: one line "order" of one unit
// at the amount. Priced, it gives the numbers of the amount-only rule.
func OneLine(currency string, amountCents int64) Cart {
	return Cart{Currency: currency, Lines: []Line{{ID: OrderLineID, Quantity: 1, UnitPriceCents: amountCents}}}
}

// OrderLineID is the line id of an amount-only order's one line.
const OrderLineID = "order"

// SubtotalCents is the sum of the lines' amounts, without shipping.
func (c *Cart) SubtotalCents() int64 {
	var s int64
	for i := range c.Lines {
		s += c.Lines[i].AmountCents()
	}
	return s
}

// TotalCents is the subtotal plus shipping.
func (c *Cart) TotalCents() int64 { return c.SubtotalCents() + c.ShippingCents }

// Equal reports whether two carts are the same order: same currency,
// shipping, and lines (ids, quantities, prices and what they are) in the
// same order. A confirmation of a cart that is not Equal to the held one is
// refused: a held allocation is never re-priced.
func (c *Cart) Equal(o *Cart) bool {
	if c.Currency != o.Currency || c.ShippingCents != o.ShippingCents || len(c.Lines) != len(o.Lines) {
		return false
	}
	for i := range c.Lines {
		a, b := &c.Lines[i], &o.Lines[i]
		if a.ID != b.ID || a.SKU != b.SKU || a.ProductID != b.ProductID || a.Quantity != b.Quantity ||
			a.UnitPriceCents != b.UnitPriceCents || a.NotDiscountable != b.NotDiscountable ||
			a.CompareAtPriceCents != b.CompareAtPriceCents ||
			!slices.Equal(a.CategoryIDs, b.CategoryIDs) {
			return false
		}
	}
	return true
}
