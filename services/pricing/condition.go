package pricing

// RefusalCondition: the cart does not meet the coupon's Condition (what
// the cart must hold, apart from what the coupon discounts).
const RefusalCondition = "condition_not_met"

// Condition is what a cart must hold for a coupon to apply, apart from
// what the coupon discounts (docs/pricing.md, "Conditions"): at least
// MinQuantity units and MinAmountCents of the lines Match selects, judged
// on the cart before any discount. Every line of the cart counts, whether
// a coupon may discount it or not: a condition says what the shopper buys.
// "Buy 2 trousers, get 10% off jackets" is a Condition on trousers and a
// percent coupon on jackets.
type Condition struct {
	Match                       Match
	MinQuantity, MinAmountCents int64
	// Repeat multiplies the coupon's MaxUnitsPerOrder by the times the
	// cart holds MinQuantity matching units: "each 2 of A gives 1 of B".
	Repeat bool
}

// Measure is what the cart holds of the lines the condition selects: their
// units and their amount before any discount.
func (c *Condition) Measure(cart *Cart) (units, cents int64) {
	for i := range cart.Lines {
		l := &cart.Lines[i]
		if l.Quantity <= 0 || !c.Match.matches(l) {
			continue
		}
		units += l.Quantity
		cents += l.Quantity * max(l.UnitPriceCents, 0)
	}
	return units, cents
}

// Times is how many times the cart meets the condition: 0 when it does
// not, else 1, or, with Repeat, the whole times it holds MinQuantity
// units (at least 1).
func (c *Condition) Times(cart *Cart) int64 {
	units, cents := c.Measure(cart)
	if units < c.MinQuantity || cents < c.MinAmountCents || units == 0 {
		return 0
	}
	if c.Repeat && c.MinQuantity > 0 {
		return units / c.MinQuantity
	}
	return 1
}

// gate applies the coupon's condition to the cart, once per coupon: ok is
// false when the cart does not meet it; else it returns the coupon as
// priced (c itself, or, with Repeat, a copy in into whose
// MaxUnitsPerOrder the times met are multiplied).
func (c *Coupon) gate(cart *Cart, in *Coupon) (*Coupon, bool) {
	if c.Condition == nil {
		return c, true
	}
	n := c.Condition.Times(cart)
	if n == 0 {
		return c, false
	}
	if !c.Condition.Repeat || c.MaxUnitsPerOrder <= 0 || n == 1 {
		return c, true
	}
	*in = *c
	if n > MaxRepeatUnits/c.MaxUnitsPerOrder {
		in.MaxUnitsPerOrder = MaxRepeatUnits
	} else {
		in.MaxUnitsPerOrder = c.MaxUnitsPerOrder * n
	}
	return in, true
}

// MaxRepeatUnits bounds the units a repeated condition lets a coupon
// discount, so that the product never overflows; the coupon's
// MaxDiscountCents caps its discount well before.
const MaxRepeatUnits = 1 << 40
