package models

import "sort"

// Pricing is what a set of coupons takes off one order (see Price).
type Pricing struct {
	// Discounts holds each coupon's discount, in the order the coupons were
	// given; BelowMinimum marks a coupon whose min_order_cents the order
	// amount does not reach (its discount is 0).
	Discounts    []int64
	BelowMinimum []bool
	// DiscountCents is the sum of Discounts, never more than the order amount;
	// PayableCents is what is left to pay.
	DiscountCents, PayableCents int64
}

// Price is the amount-only rule the service priced orders with before
// services/pricing (docs/pricing.md). No production code calls it: it is
// kept as the reference the tests (in models, services and
// services/pricing) compare the one-line cart with. Fixed-amount
// coupons first (largest face value first), then percent coupons (largest
// percent first), each computed on the amount left after the ones before it;
// min_order_cents is checked against the original amount. Ties keep the
// order the coupons were given in. For one coupon it is Template.Discount.
func Price(orderAmountCents int64, ts []*Template) Pricing {
	p := Pricing{Discounts: make([]int64, len(ts)), BelowMinimum: make([]bool, len(ts))}
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ta, tb := ts[order[a]], ts[order[b]]
		if (ta.Kind == KindFixed) != (tb.Kind == KindFixed) {
			return ta.Kind == KindFixed
		}
		if ta.Kind == KindFixed {
			return ta.FaceValueCents > tb.FaceValueCents
		}
		return ta.PercentBasisPoints() > tb.PercentBasisPoints()
	})
	left := max(orderAmountCents, 0)
	for _, i := range order {
		t := ts[i]
		if orderAmountCents < t.MinOrderCents {
			p.BelowMinimum[i] = true
			continue
		}
		d := t.Discount(left)
		p.Discounts[i] = d
		p.DiscountCents += d
		left -= d
	}
	p.PayableCents = left
	return p
}
