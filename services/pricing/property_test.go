package pricing_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"pgregory.net/rapid"
)

var (
	skus       = []string{"s1", "s2", "s3", "s4", "s5"}
	categories = []string{"c1", "c2", "c3"}
	kinds      = []string{pricing.KindFixed, pricing.KindPercent, pricing.KindFixedPerItem,
		pricing.KindBuyXGetY, pricing.KindTiered, pricing.KindFreeShipping}
)

func genCart(t *rapid.T) pricing.Cart {
	n := rapid.IntRange(1, 12).Draw(t, "lines")
	c := pricing.Cart{ShippingCents: rapid.Int64Range(0, 2000).Draw(t, "shipping")}
	for i := range n {
		q := rapid.Int64Range(1, 6).Draw(t, "qty")
		if rapid.IntRange(0, 9).Draw(t, "bigQty") == 0 {
			q = rapid.Int64Range(1, 10_000).Draw(t, "qtyBig")
		}
		l := pricing.Line{
			ID: fmt.Sprintf("L%d", i), SKU: rapid.SampledFrom(skus).Draw(t, "sku"), ProductID: rapid.SampledFrom(skus).Draw(t, "product"),
			Quantity: q, UnitPriceCents: rapid.Int64Range(0, 50_000).Draw(t, "price"),
			NotDiscountable: rapid.IntRange(0, 7).Draw(t, "nd") == 0,
		}
		// A compare-at price below, at or above the price (marked down).
		switch rapid.IntRange(0, 3).Draw(t, "compareAt") {
		case 1:
			l.CompareAtPriceCents = l.UnitPriceCents
		case 2:
			l.CompareAtPriceCents = l.UnitPriceCents + rapid.Int64Range(1, 5_000).Draw(t, "markdown")
		case 3:
			l.CompareAtPriceCents = rapid.Int64Range(0, l.UnitPriceCents).Draw(t, "compareBelow")
		}
		for _, cat := range categories {
			if rapid.Bool().Draw(t, "cat") {
				l.CategoryIDs = append(l.CategoryIDs, cat)
			}
		}
		c.Lines = append(c.Lines, l)
	}
	return c
}

// genCoupon is a coupon of one action, or, one time in four, of two or
// three (docs/pricing.md, "Several actions").
func genCoupon(t *rapid.T, i int) pricing.Coupon {
	c := genAction(t, i)
	if rapid.IntRange(0, 3).Draw(t, "several") == 0 {
		for range rapid.IntRange(1, 2).Draw(t, "actions") {
			a := genAction(t, i)
			a.Code, a.Priority, a.MinOrderCents, a.MinQuantity = "", 0, 0, 0
			c.Actions = append(c.Actions, a)
		}
	}
	return c
}

func genAction(t *rapid.T, i int) pricing.Coupon {
	c := pricing.Coupon{
		Code:             fmt.Sprintf("C%d", i),
		Kind:             rapid.SampledFrom(kinds).Draw(t, "kind"),
		Priority:         rapid.SampledFrom([]int64{0, 100, 100, 100, 500}).Draw(t, "priority"),
		MaxDiscountCents: rapid.Int64Range(1, 100_000).Draw(t, "max"),
		MinOrderCents:    rapid.SampledFrom([]int64{0, 0, 0, 1000, 20_000}).Draw(t, "min"),
		MinQuantity:      rapid.SampledFrom([]int64{0, 0, 0, 2, 5}).Draw(t, "minQty"),
		FullPriceOnly:    rapid.IntRange(0, 3).Draw(t, "fullPrice") == 0,
	}
	if rapid.IntRange(0, 2).Draw(t, "selects") == 0 {
		c.MaxUnitsPerLine = rapid.Int64Range(0, 3).Draw(t, "perLine")
		c.MaxUnitsPerOrder = rapid.Int64Range(0, 4).Draw(t, "perOrder")
		c.UnitOrder = rapid.SampledFrom([]string{"", pricing.UnitsCheapest, pricing.UnitsDearest}).Draw(t, "unitOrder")
	}
	switch rapid.IntRange(0, 3).Draw(t, "appliesTo") {
	case 1:
		c.AppliesTo = pricing.AppliesToItems
		c.Match.SKUs = rapid.SliceOfDistinct(rapid.SampledFrom(skus), rapid.ID[string]).Draw(t, "skus")
		c.Match.CategoryIDs = rapid.SliceOfDistinct(rapid.SampledFrom(categories), rapid.ID[string]).Draw(t, "cats")
		c.Match.ExcludeCategoryIDs = rapid.SliceOfNDistinct(rapid.SampledFrom(categories), 0, 1, rapid.ID[string]).Draw(t, "excats")
		c.Match.Sort()
	case 2:
		c.AppliesTo = pricing.AppliesToShipping
	}
	switch c.Kind {
	case pricing.KindFixed, pricing.KindFixedPerItem:
		c.FaceValueCents = rapid.Int64Range(1, 30_000).Draw(t, "face")
	case pricing.KindPercent:
		if rapid.Bool().Draw(t, "pctBP") {
			c.PercentOffBP = rapid.Int64Range(1, 10_000).Draw(t, "bp")
		} else {
			c.PercentOff = rapid.Int64Range(1, 100).Draw(t, "pct")
		}
	case pricing.KindBuyXGetY:
		c.BuyQuantity = rapid.Int64Range(1, 4).Draw(t, "buy")
		c.GetQuantity = rapid.Int64Range(1, 3).Draw(t, "get")
		if rapid.Bool().Draw(t, "getBP") {
			c.GetPercentBP = rapid.Int64Range(1, 10_000).Draw(t, "getPctBP")
		} else {
			c.GetPercent = rapid.Int64Range(1, 100).Draw(t, "getPct")
		}
		c.MaxApplications = rapid.Int64Range(0, 5).Draw(t, "apps")
	case pricing.KindTiered:
		var min int64
		percent := rapid.Bool().Draw(t, "tierPct")
		quantity := rapid.IntRange(0, 2).Draw(t, "tierQty") == 0
		for range rapid.IntRange(1, 3).Draw(t, "tiers") {
			var tier pricing.Tier
			if quantity {
				min += rapid.Int64Range(1, 4).Draw(t, "tierQtyStep")
				tier.MinQuantity = min
			} else {
				min += rapid.Int64Range(1, 30_000).Draw(t, "tierStep")
				tier.MinCents = min
			}
			if percent {
				tier.PercentOffBP = rapid.Int64Range(1, 10_000).Draw(t, "tierPctOffBP")
			} else {
				tier.OffCents = rapid.Int64Range(1, 30_000).Draw(t, "tierOff")
			}
			c.Tiers = append(c.Tiers, tier)
		}
	}
	if rapid.IntRange(0, 2).Draw(t, "conditioned") == 0 {
		c.Condition = genCondition(t)
	}
	return c
}

// genCondition draws a condition over the same SKUs and categories as the
// carts, sometimes repeated.
func genCondition(t *rapid.T) *pricing.Condition {
	cd := &pricing.Condition{
		MinQuantity:    rapid.SampledFrom([]int64{0, 1, 2, 3, 5}).Draw(t, "condQty"),
		MinAmountCents: rapid.SampledFrom([]int64{0, 0, 1000, 30_000}).Draw(t, "condCents"),
		Repeat:         rapid.Bool().Draw(t, "condRepeat"),
	}
	cd.Match.SKUs = rapid.SliceOfNDistinct(rapid.SampledFrom(skus), 0, 2, rapid.ID[string]).Draw(t, "condSkus")
	cd.Match.CategoryIDs = rapid.SliceOfNDistinct(rapid.SampledFrom(categories), 0, 1, rapid.ID[string]).Draw(t, "condCats")
	cd.Match.ExcludeSKUs = rapid.SliceOfNDistinct(rapid.SampledFrom(skus), 0, 1, rapid.ID[string]).Draw(t, "condExSkus")
	cd.Match.Sort()
	return cd
}

// unitsPerOrder is the coupon's bound on its units in all on the cart: its
// MaxUnitsPerOrder, times what its repeated condition met.
func unitsPerOrder(c *pricing.Coupon, cart *pricing.Cart) int64 {
	if c.Condition == nil || !c.Condition.Repeat || c.MaxUnitsPerOrder == 0 {
		return c.MaxUnitsPerOrder
	}
	return c.MaxUnitsPerOrder * max(c.Condition.Times(cart), 1)
}

func genCoupons(t *rapid.T) []pricing.Coupon {
	var out []pricing.Coupon
	for i := range rapid.IntRange(0, 5).Draw(t, "coupons") {
		out = append(out, genCoupon(t, i))
	}
	return out
}

// checkExact checks that every part adds up: per coupon, per line, per unit.
func checkExact(t *rapid.T, cart *pricing.Cart, coupons []pricing.Coupon, r pricing.Result) {
	var byCoupons, byLines int64
	unitParts := make([][]pricing.UnitRun, len(cart.Lines))
	for ci, cr := range r.Coupons {
		var sum int64
		checkActions(t, cart, &coupons[ci], &cr)
		for _, ls := range cr.Lines {
			var units int64
			for _, u := range ls.Units {
				units += u.Count * u.PerUnitCents
				if u.PerUnitCents <= 0 || u.First < 0 || u.First+u.Count > cart.Lines[ls.Line].Quantity {
					t.Fatalf("coupon %s line %d: bad unit run %+v", cr.Code, ls.Line, u)
				}
			}
			if units != ls.DiscountCents {
				t.Fatalf("coupon %s line %d: units sum to %d, share %d", cr.Code, ls.Line, units, ls.DiscountCents)
			}
			sum += ls.DiscountCents
			unitParts[ls.Line] = append(unitParts[ls.Line], ls.Units...)
		}
		if sum+cr.ShippingCents != cr.DiscountCents {
			t.Fatalf("coupon %s: lines %d + shipping %d != %d", cr.Code, sum, cr.ShippingCents, cr.DiscountCents)
		}
		if cr.Refusal != "" && cr.DiscountCents != 0 {
			t.Fatalf("coupon %s refused (%s) with a discount of %d", cr.Code, cr.Refusal, cr.DiscountCents)
		}
		byCoupons += cr.DiscountCents
	}
	var discountable int64
	for i, lr := range r.Lines {
		l := &cart.Lines[i]
		var parts int64
		for _, p := range lr.Coupons {
			parts += p.DiscountCents
		}
		if parts != lr.DiscountCents {
			t.Fatalf("line %s: parts %d != %d", l.ID, parts, lr.DiscountCents)
		}
		if lr.DiscountCents > l.AmountCents() || (l.NotDiscountable && lr.DiscountCents != 0) {
			t.Fatalf("line %s: discount %d, amount %d, discountable %v", l.ID, lr.DiscountCents, l.AmountCents(), !l.NotDiscountable)
		}
		if !l.NotDiscountable {
			discountable += l.AmountCents()
		}
		// No unit's discount exceeds its price: check each run boundary.
		for _, u := range unitParts[i] {
			for _, at := range []int64{u.First, u.First + u.Count - 1} {
				if d := pricing.UnitsDiscountCents(unitParts[i], at, 1); d > l.UnitPriceCents {
					t.Fatalf("line %s unit %d: discount %d over its price %d", l.ID, at, d, l.UnitPriceCents)
				}
			}
		}
		byLines += lr.DiscountCents
	}
	if r.ShippingDiscountCents > cart.ShippingCents {
		t.Fatalf("shipping discount %d over shipping %d", r.ShippingDiscountCents, cart.ShippingCents)
	}
	if byCoupons != r.DiscountCents || byLines+r.ShippingDiscountCents != r.DiscountCents {
		t.Fatalf("total %d: coupons %d, lines %d + shipping %d", r.DiscountCents, byCoupons, byLines, r.ShippingDiscountCents)
	}
	if r.DiscountCents > discountable+cart.ShippingCents || r.PayableCents != cart.TotalCents()-r.DiscountCents {
		t.Fatalf("total %d over discountable %d + shipping %d, or payable %d wrong", r.DiscountCents, discountable, cart.ShippingCents, r.PayableCents)
	}
}

func TestPropertyEveryCentAccountedFor(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		checkExact(t, &cart, coupons, pricing.Price(&cart, coupons))
	})
}

func TestPropertySameCartSameAnswer(t *testing.T) {
	var p pricing.Pricer
	var reused pricing.Result
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		fresh := pricing.Price(&cart, coupons)
		// A Pricer and a Result that priced another cart before give the same.
		other, otherCoupons := genCart(t), genCoupons(t)
		p.Price(&other, otherCoupons, &reused)
		p.Price(&cart, coupons, &reused)
		if !equalResults(fresh, reused) {
			t.Fatalf("reused pricer differs:\n%+v\n%+v", fresh, reused)
		}
		// Given in another order, every coupon still gets the same.
		rev := make([]pricing.Coupon, len(coupons))
		for i := range coupons {
			rev[len(coupons)-1-i] = coupons[i]
		}
		back := pricing.Price(&cart, rev)
		for i := range coupons {
			a, b := fresh.Coupons[i], back.Coupons[len(coupons)-1-i]
			if a.DiscountCents != b.DiscountCents || a.Refusal != b.Refusal || !equalShares(a.Lines, b.Lines) {
				t.Fatalf("coupon %s depends on the order given: %+v vs %+v", a.Code, a, b)
			}
		}
	})
}

func equalResults(a, b pricing.Result) bool {
	if a.DiscountCents != b.DiscountCents || a.PayableCents != b.PayableCents || a.ShippingDiscountCents != b.ShippingDiscountCents ||
		len(a.Coupons) != len(b.Coupons) || len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Coupons {
		x, y := a.Coupons[i], b.Coupons[i]
		if x.Code != y.Code || x.DiscountCents != y.DiscountCents || x.Refusal != y.Refusal || x.ShippingCents != y.ShippingCents || !equalShares(x.Lines, y.Lines) {
			return false
		}
	}
	for i := range a.Lines {
		x, y := a.Lines[i], b.Lines[i]
		if x.ID != y.ID || x.DiscountCents != y.DiscountCents || len(x.Coupons) != len(y.Coupons) {
			return false
		}
		for j := range x.Coupons {
			if x.Coupons[j] != y.Coupons[j] {
				return false
			}
		}
	}
	return true
}

func equalShares(a, b []pricing.LineShare) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Line != b[i].Line || a[i].DiscountCents != b[i].DiscountCents || len(a[i].Units) != len(b[i].Units) {
			return false
		}
		for j := range a[i].Units {
			if a[i].Units[j] != b[i].Units[j] {
				return false
			}
		}
	}
	return true
}

func TestPropertyReturnsGiveBackExactlyTheDiscount(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		r := pricing.Price(&cart, coupons)
		for i, l := range cart.Lines {
			// The parts of each coupon on this line.
			var perCoupon [][]pricing.UnitRun
			var codes []string
			for _, cr := range r.Coupons {
				for _, ls := range cr.Lines {
					if ls.Line == i {
						perCoupon = append(perCoupon, ls.Units)
						codes = append(codes, cr.Code)
					}
				}
			}
			var all []pricing.UnitRun
			for _, p := range perCoupon {
				all = append(all, p...)
			}
			// Return the line's units in random returns.
			var returned, refund, discount int64
			couponBack := make([]int64, len(perCoupon))
			for returned < l.Quantity {
				n := rapid.Int64Range(1, l.Quantity-returned).Draw(t, "return")
				rf, d := pricing.Return(l.UnitPriceCents, all, returned, n)
				if rf < 0 || rf > n*l.UnitPriceCents {
					t.Fatalf("line %s: refund %d for %d units at %d", l.ID, rf, n, l.UnitPriceCents)
				}
				for k, p := range perCoupon {
					couponBack[k] += pricing.UnitsDiscountCents(p, returned, n)
				}
				returned += n
				refund += rf
				discount += d
			}
			if discount != r.Lines[i].DiscountCents || refund != l.AmountCents()-r.Lines[i].DiscountCents {
				t.Fatalf("line %s: returned discount %d of %d, refund %d of %d", l.ID, discount, r.Lines[i].DiscountCents, refund, l.AmountCents()-r.Lines[i].DiscountCents)
			}
			for _, p := range r.Lines[i].Coupons {
				k := slices.Index(codes, p.Code)
				if k < 0 || couponBack[k] != p.DiscountCents {
					t.Fatalf("line %s coupon %s: %v back of %d", l.ID, p.Code, couponBack, p.DiscountCents)
				}
			}
		}
	})
}

// The cart of an amount-only order gives exactly the amount-only rule's
// numbers, coupon by coupon, whenever the coupons' order is not a tie (a tie
// between equal coupons is ordered by code now, by the order given before).
func TestPropertyOneLineCartIsTheAmountOnlyRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		amount := rapid.Int64Range(0, 1_000_000).Draw(t, "amount")
		cart := pricing.OneLine("", amount)
		var coupons []pricing.Coupon
		var templates []*models.Template
		seen := map[string]bool{}
		for i := range rapid.IntRange(0, 5).Draw(t, "coupons") {
			tpl := &models.Template{MinOrderCents: rapid.SampledFrom([]int64{0, 0, 500, 5000}).Draw(t, "min")}
			c := pricing.Coupon{Code: fmt.Sprintf("C%d", i), Priority: 100, MinOrderCents: tpl.MinOrderCents}
			if rapid.Bool().Draw(t, "percent") {
				tpl.Kind, tpl.PercentOffBP, tpl.MaxDiscountCents = models.KindPercent, rapid.Int64Range(1, 10_000).Draw(t, "bp"), rapid.Int64Range(1, 100_000).Draw(t, "max")
				c.Kind, c.PercentOffBP, c.MaxDiscountCents = pricing.KindPercent, tpl.PercentOffBP, tpl.MaxDiscountCents
			} else {
				tpl.Kind, tpl.FaceValueCents = models.KindFixed, rapid.Int64Range(1, 100_000).Draw(t, "face")
				c.Kind, c.FaceValueCents = pricing.KindFixed, tpl.FaceValueCents
			}
			key := fmt.Sprint(tpl.Kind, tpl.FaceValueCents, tpl.PercentOffBP)
			if seen[key] {
				continue // a tie: see above
			}
			seen[key] = true
			templates = append(templates, tpl)
			coupons = append(coupons, c)
		}
		old := models.Price(amount, templates)
		r := pricing.Price(&cart, coupons)
		got := make([]int64, len(coupons))
		below := make([]bool, len(coupons))
		for i, cr := range r.Coupons {
			got[i] = cr.DiscountCents
			below[i] = cr.Refusal == pricing.RefusalBelowMinimum
		}
		if amount == 0 && len(coupons) > 0 {
			// An order of 0: nothing to discount either way.
			if r.DiscountCents != 0 || old.DiscountCents != 0 {
				t.Fatalf("order of 0: %d and %d", r.DiscountCents, old.DiscountCents)
			}
			return
		}
		if !reflect.DeepEqual(got, old.Discounts) || !reflect.DeepEqual(below, old.BelowMinimum) ||
			r.DiscountCents != old.DiscountCents || r.PayableCents != old.PayableCents {
			t.Fatalf("amount %d: lines rule %v %v (payable %d), amount rule %v %v (payable %d)",
				amount, got, below, r.PayableCents, old.Discounts, old.BelowMinimum, old.PayableCents)
		}
	})
}

// takenBy is what the coupons of r took: each line's runs of all of them
// (overlapping where several discount a unit) and their shipping.
func takenBy(n int, r pricing.Result) (pricing.Taken, int64) {
	taken := pricing.Taken{Lines: make([][]pricing.UnitRun, n)}
	for _, cr := range r.Coupons {
		for _, ls := range cr.Lines {
			taken.Lines[ls.Line] = append(taken.Lines[ls.Line], ls.Units...)
		}
		taken.ShippingCents += cr.ShippingCents
	}
	return taken, r.DiscountCents
}

// A coupon redeemed on an order that already has coupons is priced on what
// they left: PriceAfter with what the earlier coupons took gives it exactly
// what pricing them all together gives it, when they go first.
func TestPropertyPriceAfterIsPricingTogether(t *testing.T) {
	var p pricing.Pricer
	var after pricing.Result
	rapid.Check(t, func(t *rapid.T) {
		cart := genCart(t)
		b := genCoupon(t, 9)
		b.Priority = rapid.SampledFrom([]int64{100, 500}).Draw(t, "bPriority")
		var coupons []pricing.Coupon
		for i := range rapid.IntRange(1, 3).Draw(t, "earlier") {
			a := genCoupon(t, i)
			a.Priority = rapid.Int64Range(0, b.Priority-1).Draw(t, "aPriority")
			coupons = append(coupons, a)
		}
		before := pricing.Price(&cart, coupons)
		taken, takenCents := takenBy(len(cart.Lines), before)
		if rapid.Bool().Draw(t, "shortTaken") {
			// Lines with nothing taken may be left off the end.
			for len(taken.Lines) > 0 && len(taken.Lines[len(taken.Lines)-1]) == 0 {
				taken.Lines = taken.Lines[:len(taken.Lines)-1]
			}
		}
		together := pricing.Price(&cart, append(slices.Clone(coupons), b))
		p.PriceAfter(&cart, taken, []pricing.Coupon{b}, &after)
		want, got := together.Coupons[len(coupons)], after.Coupons[0]
		if got.Code != want.Code || got.DiscountCents != want.DiscountCents || got.Refusal != want.Refusal ||
			got.ShippingCents != want.ShippingCents || !equalShares(got.Lines, want.Lines) {
			t.Fatalf("after %d coupons:\n got %+v\nwant %+v", len(coupons), got, want)
		}
		// Every part adds up, and no unit takes more than its price in all.
		var lines int64
		for _, ls := range got.Lines {
			var units int64
			for _, u := range ls.Units {
				units += u.Count * u.PerUnitCents
			}
			if units != ls.DiscountCents || after.Lines[ls.Line].DiscountCents != ls.DiscountCents {
				t.Fatalf("line %d: units %d, share %d, line %d", ls.Line, units, ls.DiscountCents, after.Lines[ls.Line].DiscountCents)
			}
			lines += ls.DiscountCents
			l := &cart.Lines[ls.Line]
			var all []pricing.UnitRun
			if ls.Line < len(taken.Lines) {
				all = append(all, taken.Lines[ls.Line]...)
			}
			all = append(all, ls.Units...)
			for _, u := range all {
				for _, at := range []int64{u.First, u.First + u.Count} {
					if at < l.Quantity && pricing.UnitsDiscountCents(all, at, 1) > l.UnitPriceCents {
						t.Fatalf("line %s unit %d: %d off a price of %d", l.ID, at, pricing.UnitsDiscountCents(all, at, 1), l.UnitPriceCents)
					}
				}
			}
		}
		if lines+got.ShippingCents != got.DiscountCents || after.DiscountCents != got.DiscountCents ||
			after.ShippingDiscountCents != got.ShippingCents || taken.ShippingCents+got.ShippingCents > cart.ShippingCents ||
			after.PayableCents != cart.TotalCents()-takenCents-got.DiscountCents || after.PayableCents != together.PayableCents {
			t.Fatalf("sums: lines %d + shipping %d, discount %d, payable %d (together %d)",
				lines, got.ShippingCents, after.DiscountCents, after.PayableCents, together.PayableCents)
		}
	})
}

// Price is PriceAfter with nothing taken.
func TestPropertyPriceIsPriceAfterNothing(t *testing.T) {
	var p pricing.Pricer
	var after pricing.Result
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		p.PriceAfter(&cart, pricing.Taken{Lines: make([][]pricing.UnitRun, len(cart.Lines))}, coupons, &after)
		if r := pricing.Price(&cart, coupons); !equalResults(r, after) {
			t.Fatalf("Price %+v\nPriceAfter %+v", r, after)
		}
	})
}

// A whole percent N and N×100 basis points are the same coupon: every
// percent the package reads goes through pricing.BasisPoints.
func TestPropertyWholePercentIsItsBasisPoints(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		bp := slices.Clone(coupons)
		for i := range bp {
			c := &bp[i]
			c.PercentOffBP, c.PercentOff = pricing.BasisPoints(c.PercentOff, c.PercentOffBP), 0
			c.GetPercentBP, c.GetPercent = pricing.BasisPoints(c.GetPercent, c.GetPercentBP), 0
			c.Tiers = slices.Clone(c.Tiers)
			for k := range c.Tiers {
				tr := &c.Tiers[k]
				tr.PercentOffBP, tr.PercentOff = pricing.BasisPoints(tr.PercentOff, tr.PercentOffBP), 0
			}
		}
		if a, b := pricing.Price(&cart, coupons), pricing.Price(&cart, bp); !equalResults(a, b) {
			t.Fatalf("whole percents %+v\nbasis points %+v", a, b)
		}
	})
}

// A coupon with unit bounds discounts at most MaxUnitsPerLine units of each
// line and MaxUnitsPerOrder in all (buy_x_get_y aside: its sets choose).
func TestPropertyUnitBoundsHold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		r := pricing.Price(&cart, coupons)
		for ci := range r.Coupons {
			eachAction(&coupons[ci], &r.Coupons[ci], func(c *pricing.Coupon, cr *pricing.CouponResult) {
				checkUnitBounds(t, c, cr, unitsPerOrder(c, &cart))
			})
		}
	})
}

// A coupon whose condition the cart meets prices exactly as the same coupon
// without it (a repeated one as the coupon with its bound multiplied by
// the times met); one whose condition the cart does not meet takes 0,
// refused condition_not_met, and the others price as if it were not there.
func TestPropertyConditionMetPricesAsWithoutIt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart, coupons := genCart(t), genCoupons(t)
		got := pricing.Price(&cart, coupons)
		checkExact(t, &cart, coupons, got)
		var plain []pricing.Coupon
		var at []int // plain[k] is coupons[at[k]]
		for i, c := range coupons {
			if c.Condition != nil {
				times := c.Condition.Times(&cart)
				if times == 0 {
					if r := got.Coupons[i]; r.Refusal != pricing.RefusalCondition || r.DiscountCents != 0 || len(r.Lines) != 0 {
						t.Fatalf("coupon %s: condition not met, got %+v", c.Code, r)
					}
					continue
				}
				c.MaxUnitsPerOrder = unitsPerOrder(&c, &cart)
				c.Condition = nil
			}
			plain = append(plain, c)
			at = append(at, i)
		}
		want := pricing.Price(&cart, plain)
		if want.DiscountCents != got.DiscountCents || want.ShippingDiscountCents != got.ShippingDiscountCents || want.PayableCents != got.PayableCents {
			t.Fatalf("with conditions %+v\nwithout %+v", got, want)
		}
		for k, i := range at {
			a, b := got.Coupons[i], want.Coupons[k]
			if a.DiscountCents != b.DiscountCents || a.Refusal != b.Refusal || a.ShippingCents != b.ShippingCents || !equalShares(a.Lines, b.Lines) {
				t.Fatalf("coupon %s: with its condition %+v, without %+v", a.Code, a, b)
			}
		}
	})
}

// checkUnitBounds checks one action's units against its bounds, perOrder
// being its MaxUnitsPerOrder as its coupon's condition repeats it.
func checkUnitBounds(t *rapid.T, c *pricing.Coupon, cr *pricing.CouponResult, perOrder int64) {
	if c.Kind == pricing.KindBuyXGetY {
		return
	}
	var all int64
	for _, ls := range cr.Lines {
		var units int64
		for _, u := range ls.Units {
			units += u.Count
		}
		if c.MaxUnitsPerLine > 0 && units > c.MaxUnitsPerLine {
			t.Fatalf("coupon %s: %d units of line %d, at most %d", cr.Code, units, ls.Line, c.MaxUnitsPerLine)
		}
		all += units
	}
	if perOrder > 0 && all > perOrder {
		t.Fatalf("coupon %s: %d units in all, at most %d", cr.Code, all, perOrder)
	}
}
