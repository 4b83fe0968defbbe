package pricing

// UnitsDiscountCents is the discount of units from .. from+n-1 (0-based, in
// the line's order) of a line, given the parts of every coupon on it.
func UnitsDiscountCents(parts []UnitRun, from, n int64) int64 {
	var d int64
	for _, u := range parts {
		lo, hi := max(u.First, from), min(u.First+u.Count, from+n)
		if hi > lo {
			d += (hi - lo) * u.PerUnitCents
		}
	}
	return d
}

// Return prices the return of n units of a line of which returned units
// came back before: units come back in the line's order, so a line returned
// in any number of returns gives back exactly its discount. refund is what
// the shopper paid for those units (their price less their discount),
// discount their part of the coupons' discount.
func Return(unitPriceCents int64, parts []UnitRun, returned, n int64) (refund, discount int64) {
	discount = UnitsDiscountCents(parts, returned, n)
	return n*unitPriceCents - discount, discount
}
