package pricing_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"

	"pgregory.net/rapid"
)

// eachAction calls fn with each action of coupon c and its part of cr: the
// coupon itself for a coupon of one action.
func eachAction(c *pricing.Coupon, cr *pricing.CouponResult, fn func(a *pricing.Coupon, ar *pricing.CouponResult)) {
	if len(c.Actions) == 0 || len(cr.Actions) == 0 {
		fn(c, cr)
		return
	}
	for k := range cr.Actions {
		a := c
		if k > 0 {
			a = &c.Actions[k-1]
		}
		fn(a, &cr.Actions[k])
	}
}

// checkActions checks one coupon's result against its actions: each
// action's part is within its cap and skips marked-down lines when it is
// for full-price items only; the parts add up to the coupon's, per line,
// per unit and on the shipping; a refused coupon has no part.
func checkActions(t *rapid.T, cart *pricing.Cart, c *pricing.Coupon, cr *pricing.CouponResult) {
	if len(c.Actions) > 0 && cr.Refusal == "" && len(cr.Actions) != 1+len(c.Actions) {
		t.Fatalf("coupon %s: %d action parts for %d actions", cr.Code, len(cr.Actions), 1+len(c.Actions))
	}
	var sum, shipping int64
	perLine := map[int][]pricing.UnitRun{}
	eachAction(c, cr, func(a *pricing.Coupon, ar *pricing.CouponResult) {
		if a.Kind != pricing.KindFixed && a.MaxDiscountCents > 0 && ar.DiscountCents > a.MaxDiscountCents {
			t.Fatalf("coupon %s action %s: %d over its cap %d", cr.Code, a.Kind, ar.DiscountCents, a.MaxDiscountCents)
		}
		var lines int64
		for _, ls := range ar.Lines {
			if a.FullPriceOnly && cart.Lines[ls.Line].MarkedDown() && ls.DiscountCents != 0 {
				t.Fatalf("coupon %s action %s (full price only) takes %d off marked-down line %d", cr.Code, a.Kind, ls.DiscountCents, ls.Line)
			}
			perLine[ls.Line] = append(perLine[ls.Line], ls.Units...)
			lines += ls.DiscountCents
		}
		if lines+ar.ShippingCents != ar.DiscountCents {
			t.Fatalf("coupon %s action %s: lines %d + shipping %d != %d", cr.Code, a.Kind, lines, ar.ShippingCents, ar.DiscountCents)
		}
		sum += ar.DiscountCents
		shipping += ar.ShippingCents
	})
	if sum != cr.DiscountCents || shipping != cr.ShippingCents {
		t.Fatalf("coupon %s: actions take %d (shipping %d), the coupon %d (shipping %d)", cr.Code, sum, shipping, cr.DiscountCents, cr.ShippingCents)
	}
	if len(c.Actions) == 0 {
		return
	}
	if len(perLine) != len(cr.Lines) {
		t.Fatalf("coupon %s: actions on %d lines, the coupon on %d", cr.Code, len(perLine), len(cr.Lines))
	}
	for _, ls := range cr.Lines {
		// Every unit of the line: the coupon's part is the sum of its
		// actions' parts (checked at each run's boundaries).
		for _, runs := range [][]pricing.UnitRun{ls.Units, perLine[ls.Line]} {
			for _, u := range runs {
				for _, at := range []int64{u.First, u.First + u.Count - 1} {
					if a, b := pricing.UnitsDiscountCents(ls.Units, at, 1), pricing.UnitsDiscountCents(perLine[ls.Line], at, 1); a != b {
						t.Fatalf("coupon %s line %d unit %d: %d, its actions %d", cr.Code, ls.Line, at, a, b)
					}
				}
			}
		}
	}
}

// Returning every unit of a line, in any split, gives back exactly each
// action's part of the line, and the actions' parts add up to the
// coupon's.
func TestPropertyReturnsGiveBackEachAction(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		r := pricing.Price(&cart, coupons)
		for ci := range r.Coupons {
			cr := &r.Coupons[ci]
			for _, ls := range cr.Lines {
				l := &cart.Lines[ls.Line]
				var returned, back int64
				actionBack := make([]int64, len(cr.Actions))
				for returned < l.Quantity {
					n := rapid.Int64Range(1, l.Quantity-returned).Draw(t, "return")
					_, d := pricing.Return(l.UnitPriceCents, ls.Units, returned, n)
					back += d
					for k := range cr.Actions {
						actionBack[k] += pricing.UnitsDiscountCents(actionUnits(&cr.Actions[k], ls.Line), returned, n)
					}
					returned += n
				}
				if back != ls.DiscountCents {
					t.Fatalf("coupon %s line %d: %d back of %d", cr.Code, ls.Line, back, ls.DiscountCents)
				}
				var sum int64
				for k := range cr.Actions {
					var want int64
					for _, as := range cr.Actions[k].Lines {
						if as.Line == ls.Line {
							want = as.DiscountCents
						}
					}
					if actionBack[k] != want {
						t.Fatalf("coupon %s line %d action %d: %d back of %d", cr.Code, ls.Line, k, actionBack[k], want)
					}
					sum += want
				}
				if len(cr.Actions) > 0 && sum != ls.DiscountCents {
					t.Fatalf("coupon %s line %d: actions %d, coupon %d", cr.Code, ls.Line, sum, ls.DiscountCents)
				}
			}
		}
	})
}

func actionUnits(ar *pricing.CouponResult, line int) []pricing.UnitRun {
	for _, ls := range ar.Lines {
		if ls.Line == line {
			return ls.Units
		}
	}
	return nil
}

// A coupon of several actions below its minimums takes nothing, whatever
// its actions; one that meets them is refused only when every action takes
// nothing.
func TestPropertyActionsRefusedTogether(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		r := pricing.Price(&cart, coupons)
		for ci, cr := range r.Coupons {
			if len(coupons[ci].Actions) == 0 {
				continue
			}
			if cr.Refusal != "" && cr.DiscountCents != 0 {
				t.Fatalf("coupon %s refused (%s) with %d", cr.Code, cr.Refusal, cr.DiscountCents)
			}
			if cr.Refusal == pricing.RefusalBelowMinimum && len(cr.Actions) == 0 {
				continue
			}
			for _, ar := range cr.Actions {
				if ar.DiscountCents > 0 && cr.Refusal != "" {
					t.Fatalf("coupon %s refused (%s) though an action takes %d", cr.Code, cr.Refusal, ar.DiscountCents)
				}
			}
		}
	})
}
