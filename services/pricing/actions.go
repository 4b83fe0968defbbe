package pricing

import (
	"cmp"
	"slices"
)

// priceActions prices a coupon of several actions (docs/pricing.md,
// "Several actions"). The coupon's minimums are judged once, before any
// discount, as its first action judges them (on the lines it targets; for
// a first action on the shipping, on the discountable lines): not met, the
// coupon takes nothing. Then its actions are priced in order, the coupon's
// own kind first, each on what the earlier ones (and the earlier coupons)
// left, with no minimum of its own; r.Actions keeps each one's part and r
// their sum. An action that takes nothing does not refuse the coupon; a
// coupon whose every action takes nothing carries the first refusal of
// its actions.
func (p *Pricer) priceActions(cart *Cart, c *Coupon, r *CouponResult, out *Result, shippingLeft *int64) {
	r.Actions = resize(r.Actions, 1+len(c.Actions))
	if !p.meetsMinimums(cart, c) {
		r.Refusal = RefusalBelowMinimum
		r.Actions = r.Actions[:0]
		return
	}
	for k := range r.Actions {
		a := c
		if k > 0 {
			a = &c.Actions[k-1]
		}
		act := actionOf(c, a)
		ar := &r.Actions[k]
		ar.Code, ar.DiscountCents, ar.Refusal, ar.ShippingCents = c.Code, 0, "", 0
		ar.Lines, ar.Actions = ar.Lines[:0], nil
		p.priceOne(cart, &act, ar, out, shippingLeft)
		r.DiscountCents += ar.DiscountCents
		r.ShippingCents += ar.ShippingCents
	}
	r.Lines = mergeShares(r.Actions, r.Lines[:0])
	if r.DiscountCents == 0 {
		for k := range r.Actions {
			if r.Refusal = r.Actions[k].Refusal; r.Refusal != "" {
				break
			}
		}
	}
}

// actionOf is action a of coupon c as one coupon: a's kind, target, kind
// fields, cap and unit bounds, c's code and currency, no minimum and no
// further action.
func actionOf(c, a *Coupon) Coupon {
	act := *a
	act.Code, act.Currency, act.Priority = c.Code, c.Currency, c.Priority
	act.MinOrderCents, act.MinQuantity = 0, 0
	act.Actions = nil
	if act.AppliesTo == "" {
		act.AppliesTo = AppliesToOrder
	}
	return act
}

// meetsMinimums reports whether the cart meets c's MinOrderCents and
// MinQuantity, before any discount, on the lines c targets (for a coupon on
// the shipping: the discountable lines), as a coupon of one action checks
// them.
func (p *Pricer) meetsMinimums(cart *Cart, c *Coupon) bool {
	if c.MinOrderCents <= 0 && c.MinQuantity <= 0 {
		return true
	}
	var sub, units int64
	for i := range cart.Lines {
		l := &cart.Lines[i]
		if c.onShipping() {
			if l.NotDiscountable || l.Quantity <= 0 {
				continue
			}
		} else if !c.targets(l) {
			continue
		}
		sub += l.AmountCents()
		units += l.Quantity
	}
	return sub >= c.MinOrderCents && units >= c.MinQuantity
}

// mergeShares sums the actions' shares of each line, in the cart's order,
// unit by unit, appending to out.
func mergeShares(actions []CouponResult, out []LineShare) []LineShare {
	for k := range actions {
		for _, ls := range actions[k].Lines {
			i, found := slices.BinarySearchFunc(out, ls.Line, func(s LineShare, line int) int { return cmp.Compare(s.Line, line) })
			if !found {
				out = slices.Insert(out, i, LineShare{Line: ls.Line, DiscountCents: ls.DiscountCents, Units: slices.Clone(ls.Units)})
				continue
			}
			out[i].DiscountCents += ls.DiscountCents
			out[i].Units = AddUnitRuns(out[i].Units, ls.Units)
		}
	}
	return out
}

// AddUnitRuns is the unit-by-unit sum of two splits of one line (runs in
// unit order), as runs in unit order, units with nothing left out.
func AddUnitRuns(a, b []UnitRun) []UnitRun {
	edges := make([]edge, 0, 2*(len(a)+len(b)))
	for _, list := range [][]UnitRun{a, b} {
		for _, u := range list {
			if u.Count > 0 && u.PerUnitCents != 0 {
				edges = append(edges, edge{u.First, u.PerUnitCents}, edge{u.First + u.Count, -u.PerUnitCents})
			}
		}
	}
	slices.SortStableFunc(edges, func(x, y edge) int { return cmp.Compare(x.at, y.at) })
	var out []UnitRun
	var at, cur int64
	for i := 0; i < len(edges); {
		x := edges[i].at
		if x > at && cur != 0 {
			if k := len(out); k > 0 && out[k-1].PerUnitCents == cur && out[k-1].First+out[k-1].Count == at {
				out[k-1].Count += x - at
			} else {
				out = append(out, UnitRun{First: at, Count: x - at, PerUnitCents: cur})
			}
		}
		at = x
		for i < len(edges) && edges[i].at == x {
			cur += edges[i].dv
			i++
		}
	}
	return out
}
