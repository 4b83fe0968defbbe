package pricing

import (
	"cmp"
	"slices"
)

// Why a coupon takes nothing off a cart.
const (
	// RefusalBelowMinimum: the targeted subtotal is below MinOrderCents, its
	// units below MinQuantity, or no tier is met.
	RefusalBelowMinimum = "below_minimum"
	// RefusalCurrency: the coupon is in another currency than the cart.
	RefusalCurrency = "currency_mismatch"
	// RefusalNoLines: no line of the cart is one the coupon targets (or, for
	// shipping, the cart has no shipping).
	RefusalNoLines = "no_lines"
)

// Result is what the coupons take off a cart. Per coupon and per line the
// parts add up exactly: the sum of Coupons' DiscountCents is DiscountCents,
// and so is the sum of Lines' DiscountCents plus ShippingDiscountCents.
type Result struct {
	// Coupons is in the order the coupons were given.
	Coupons []CouponResult
	// Lines is in the cart's order.
	Lines                 []LineResult
	ShippingDiscountCents int64
	// DiscountCents is the whole discount, PayableCents what is left to pay
	// of the subtotal and shipping.
	DiscountCents, PayableCents int64
}

// CouponResult is one coupon's discount and where it goes.
type CouponResult struct {
	Code          string
	DiscountCents int64
	// Refusal says why the coupon takes nothing ("" when it applies).
	Refusal string
	// Lines lists the lines it discounts, in the cart's order, each with its
	// per-unit split; ShippingCents is its part of the shipping.
	Lines         []LineShare
	ShippingCents int64
	// Actions is, for a coupon of several actions, each action's part (its
	// first the coupon's own kind, then Coupon.Actions in order), with the
	// coupon's code: their discounts, lines and shipping add up to the
	// coupon's, unit by unit. nil for a coupon of one action.
	Actions []CouponResult
}

// LineShare is a coupon's discount on one line.
type LineShare struct {
	// Line is the line's index in the cart.
	Line          int
	DiscountCents int64
	// Units splits DiscountCents over the line's units (runs of equal
	// parts, in unit order; units with no part are left out).
	Units []UnitRun
}

// LineResult is one line's discount from all coupons.
type LineResult struct {
	ID            string
	DiscountCents int64
	// Coupons lists each coupon's part, in the order they applied.
	Coupons []CouponPart
}

// CouponPart is one coupon's part of a line's discount.
type CouponPart struct {
	Code          string
	DiscountCents int64
}

// Price prices the coupons on the cart (see Pricer.Price).
func Price(cart *Cart, coupons []Coupon) Result {
	var p Pricer
	var out Result
	p.Price(cart, coupons, &out)
	return out
}

// Pricer prices carts, reusing its working memory and the Result given to
// it: a Pricer kept for a loop allocates nothing once its buffers have
// grown. It is not safe for concurrent use.
type Pricer struct {
	order   []int
	left    [][]run // what is left of each unit's price, per line
	weights [][]run // the current coupon's weight per unit, per line
	cut     []run
	merged  []run
	lineW   []int64
	lineD   []int64
	// targeted marks the lines the current coupon may discount; inSets
	// counts, per line and run, the units in a buy_x_get_y coupon's sets.
	targeted []bool
	inSets   [][]int64
	split    scratch
	sets     []setEntry
	sorted   []setEntry // sortSets' other buffer
	keys     []uint64
	edges    []edge
	gated    Coupon // the current coupon as its repeated condition widens it
}

// Price writes into out each coupon's discount on the cart and its
// allocation. The coupons apply in order of Priority (lower first), then
// amounts before percents (larger first), then code; each is priced on what
// the ones before it left of each line, and checks, before any discount,
// its currency, its Condition on the whole cart (once) and then
// MinOrderCents and MinQuantity on its targeted lines. A coupon's discount
// is split over its lines in proportion to what is left of them, by largest
// remainder (ties to the earlier line), and over each line's units the same
// way (ties to the earlier unit); a buy_x_get_y discount over the units of
// its sets only, a fixed_per_item one in proportion to each unit's own
// discount. No unit's discount exceeds its price; shipping's never exceeds
// shipping. The same cart and coupons always give the same answer.
func (p *Pricer) Price(cart *Cart, coupons []Coupon, out *Result) {
	p.PriceAfter(cart, Taken{}, coupons, out)
}

// Taken is what coupons already on an order took from its cart: Lines[i]
// is the sum of their parts on line i (several coupons' runs may overlap;
// their parts add up; Lines may be nil or shorter than the cart),
// ShippingCents their part of the shipping.
type Taken struct {
	Lines         [][]UnitRun
	ShippingCents int64
}

// PriceAfter prices the coupons as Price does, on what the coupons already
// on the order left: each unit's price less what was taken of it, and the
// shipping less what was taken of it, as if the coupons that took it had
// been priced first. MinOrderCents and MinQuantity are still checked on the
// targeted lines' amounts before any discount. out describes the new
// coupons only (their discounts, DiscountCents, ShippingDiscountCents and
// the lines' parts); PayableCents is what is left to pay after the taken
// discount and theirs.
func (p *Pricer) PriceAfter(cart *Cart, taken Taken, coupons []Coupon, out *Result) {
	n := len(cart.Lines)
	takenCents := p.reset(cart, taken.Lines)
	out.Coupons = resize(out.Coupons, len(coupons))
	out.Lines = resize(out.Lines, n)
	out.ShippingDiscountCents, out.DiscountCents = 0, 0
	for i := range out.Lines {
		out.Lines[i].ID = cart.Lines[i].ID
		out.Lines[i].DiscountCents = 0
		out.Lines[i].Coupons = out.Lines[i].Coupons[:0]
	}
	p.order = p.order[:0]
	for i := range coupons {
		p.order = append(p.order, i)
	}
	for i := 1; i < len(p.order); i++ { // insertion sort: few coupons, no allocation
		for j := i; j > 0 && compareOrder(&coupons[p.order[j-1]], &coupons[p.order[j]]) > 0; j-- {
			p.order[j-1], p.order[j] = p.order[j], p.order[j-1]
		}
	}
	takenShipping := min(max(taken.ShippingCents, 0), max(cart.ShippingCents, 0))
	shippingLeft := max(cart.ShippingCents, 0) - takenShipping
	for _, ci := range p.order {
		c := &coupons[ci]
		r := &out.Coupons[ci]
		r.Code, r.DiscountCents, r.Refusal, r.ShippingCents = c.Code, 0, "", 0
		r.Lines = r.Lines[:0]
		if c.Currency != "" && cart.Currency != "" && c.Currency != cart.Currency {
			r.Refusal = RefusalCurrency
			continue
		}
		c, ok := c.gate(cart, &p.gated)
		if !ok {
			r.Refusal = RefusalCondition
			r.Actions = r.Actions[:0]
			continue
		}
		if len(c.Actions) == 0 {
			r.Actions = r.Actions[:0]
			p.priceOne(cart, c, r, out, &shippingLeft)
			continue
		}
		p.priceActions(cart, c, r, out, &shippingLeft)
	}
	out.PayableCents = cart.SubtotalCents() + max(cart.ShippingCents, 0) - takenCents - takenShipping - out.DiscountCents
}

// priceOne prices one action (a coupon of one action, or one action of a
// coupon) into r, on what is left of the lines and of the shipping.
func (p *Pricer) priceOne(cart *Cart, c *Coupon, r *CouponResult, out *Result, shippingLeft *int64) {
	if c.onShipping() {
		d, refusal := p.priceShipping(cart, c, *shippingLeft)
		r.Refusal = refusal
		r.DiscountCents, r.ShippingCents = d, d
		*shippingLeft -= d
		out.ShippingDiscountCents += d
		out.DiscountCents += d
		return
	}
	d, refusal := p.weigh(cart, c)
	if refusal != "" {
		r.Refusal = refusal
		return
	}
	p.allocate(d, r, out)
	r.DiscountCents = d
	out.DiscountCents += d
}

// reset makes every line's units whole again, less what was taken of them
// (taken may be nil or shorter than the lines), and returns the sum taken.
func (p *Pricer) reset(cart *Cart, taken [][]UnitRun) int64 {
	n := len(cart.Lines)
	p.left = resize(p.left, n)
	p.weights = resize(p.weights, n)
	p.lineW = resize(p.lineW, n)
	p.lineD = resize(p.lineD, n)
	p.targeted = resize(p.targeted, n)
	p.inSets = resize(p.inSets, n)
	var sum int64
	for i := range cart.Lines {
		l := &cart.Lines[i]
		p.left[i] = p.left[i][:0]
		if l.Quantity <= 0 {
			continue
		}
		price := max(l.UnitPriceCents, 0)
		if i >= len(taken) || len(taken[i]) == 0 {
			p.left[i] = append(p.left[i], run{l.Quantity, price})
			continue
		}
		var s int64
		p.left[i], s = p.leftAfter(p.left[i], l.Quantity, price, taken[i])
		sum += s
	}
	return sum
}

// edge is where a taken run starts (+v per unit) or ends (-v).
type edge struct{ at, dv int64 }

// leftAfter appends to left what is left of q units at price once the
// parts taken (runs that may overlap and add up) are taken off, never below
// 0, and returns it with the sum actually taken.
func (p *Pricer) leftAfter(left []run, q, price int64, taken []UnitRun) ([]run, int64) {
	p.edges = p.edges[:0]
	for _, u := range taken {
		lo, hi := max(u.First, 0), min(u.First+u.Count, q)
		if hi <= lo || u.PerUnitCents <= 0 {
			continue
		}
		p.edges = append(p.edges, edge{lo, u.PerUnitCents}, edge{hi, -u.PerUnitCents})
	}
	slices.SortFunc(p.edges, func(a, b edge) int { return cmp.Compare(a.at, b.at) })
	var at, cur, sum int64
	emit := func(to int64) {
		if to <= at {
			return
		}
		v := max(price-cur, 0)
		sum += (to - at) * (price - v)
		if k := len(left); k > 0 && left[k-1].v == v {
			left[k-1].n += to - at
		} else {
			left = append(left, run{to - at, v})
		}
		at = to
	}
	for _, e := range p.edges {
		emit(e.at)
		cur += e.dv
	}
	emit(q)
	return left, sum
}

// priceShipping is the discount of a coupon on shipping: minimums and
// tiers are judged on the discountable lines before any discount.
func (p *Pricer) priceShipping(cart *Cart, c *Coupon, shippingLeft int64) (int64, string) {
	var sub, units int64
	for i := range cart.Lines {
		if l := &cart.Lines[i]; !l.NotDiscountable && l.Quantity > 0 {
			sub += l.AmountCents()
			units += l.Quantity
		}
	}
	if sub < c.MinOrderCents || units < c.MinQuantity {
		return 0, RefusalBelowMinimum
	}
	if shippingLeft <= 0 {
		return 0, RefusalNoLines
	}
	var d int64
	switch c.Kind {
	case KindFixed:
		d = c.FaceValueCents
	case KindPercent:
		d = percentOf(shippingLeft, BasisPoints(c.PercentOff, c.PercentOffBP))
	case KindTiered:
		// The tier met on the discountable lines gives its amount or its
		// percent of the shipping left (docs/pricing.md, "Tiers on shipping").
		t, ok := tierMet(c.Tiers, sub, units)
		if !ok {
			return 0, RefusalBelowMinimum
		}
		d = t.OffCents
		if bp := BasisPoints(t.PercentOff, t.PercentOffBP); bp > 0 {
			d = percentOf(shippingLeft, bp)
		}
	default: // free_shipping
		d = shippingLeft
	}
	return capped(d, c.MaxDiscountCents, shippingLeft), ""
}

// capped bounds d by the coupon's cap (0: none) and by what is left.
func capped(d, maxDiscount, left int64) int64 {
	if maxDiscount > 0 {
		d = min(d, maxDiscount)
	}
	return max(min(d, left), 0)
}

// weigh checks the coupon's minimums on its targeted lines, sets each
// line's weights per unit for the split (p.weights, p.lineW) and returns its
// discount.
func (p *Pricer) weigh(cart *Cart, c *Coupon) (int64, string) {
	var sub, units int64
	for i := range cart.Lines {
		l := &cart.Lines[i]
		p.weights[i] = p.weights[i][:0]
		p.lineW[i] = 0
		p.targeted[i] = c.targets(l)
		if !p.targeted[i] {
			continue
		}
		sub += l.AmountCents()
		units += l.Quantity
	}
	if units == 0 {
		return 0, RefusalNoLines
	}
	if sub < c.MinOrderCents || units < c.MinQuantity {
		return 0, RefusalBelowMinimum
	}
	var d int64
	if c.selects() {
		p.selectUnits(c)
	}
	switch c.Kind {
	case KindFixed:
		d = c.FaceValueCents
		p.weighByLeft(0, c.selects())
	case KindPercent:
		d = percentOf(p.weighByLeft(0, c.selects()), BasisPoints(c.PercentOff, c.PercentOffBP))
	case KindTiered:
		t, ok := tierMet(c.Tiers, sub, units)
		if !ok {
			return 0, RefusalBelowMinimum
		}
		w := p.weighByLeft(0, c.selects())
		if bp := BasisPoints(t.PercentOff, t.PercentOffBP); bp > 0 {
			d = percentOf(w, bp)
		} else {
			d = t.OffCents
		}
	case KindFixedPerItem:
		d = p.weighByLeft(c.FaceValueCents, c.selects())
	case KindBuyXGetY:
		d = p.weighSets(c)
	}
	var wsum int64
	for i := range p.lineW {
		wsum += p.lineW[i]
	}
	return capped(d, c.MaxDiscountCents, wsum), ""
}

// tierMet returns the highest tier whose minimum the targeted subtotal
// meets, or, for a quantity tier (MinQuantity set), the targeted units.
func tierMet(tiers []Tier, sub, units int64) (Tier, bool) {
	var best Tier
	found := false
	for _, t := range tiers {
		if t.MinQuantity > 0 {
			if units >= t.MinQuantity && (!found || t.MinQuantity >= best.MinQuantity) {
				best, found = t, true
			}
			continue
		}
		if sub >= t.MinCents && (!found || t.MinCents >= best.MinCents) {
			best, found = t, true
		}
	}
	return best, found
}

// weighByLeft weighs each targeted unit by what is left of it, at most per
// (0: no bound), and returns the sum of the weights. With selected, only
// the units selectUnits chose (the first p.inSets[i][j] of each run) weigh;
// the others weigh 0.
func (p *Pricer) weighByLeft(per int64, selected bool) int64 {
	var sum int64
	for i := range p.targeted {
		if !p.targeted[i] {
			continue
		}
		var w int64
		for j, u := range p.left[i] {
			v := u.v
			if per > 0 {
				v = min(v, per)
			}
			in := u.n
			if selected {
				in = p.inSets[i][j]
			}
			if in > 0 {
				p.weights[i] = append(p.weights[i], run{in, v})
				w += in * v
			}
			if u.n-in > 0 {
				p.weights[i] = append(p.weights[i], run{u.n - in, 0})
			}
		}
		p.lineW[i] = w
		sum += w
	}
	return sum
}

// collectUnits puts every run of the targeted lines with something left of
// its units' price in p.sets, in line and run order, zeroes p.inSets for
// them (how many of each run's units are chosen) and returns how many
// units they hold.
func (p *Pricer) collectUnits() int64 {
	p.sets = p.sets[:0]
	var total int64
	for i := range p.targeted {
		if !p.targeted[i] {
			continue
		}
		p.inSets[i] = resize(p.inSets[i], len(p.left[i]))
		for j, u := range p.left[i] {
			p.inSets[i][j] = 0
			if u.v > 0 {
				p.sets = append(p.sets, setEntry{line: i, run: j, n: u.n, v: u.v})
				total += u.n
			}
		}
	}
	return total
}

// selectUnits chooses the units a coupon with a unit bound discounts:
// among the targeted units with something left of their price, in
// c.UnitOrder (cheapest or dearest first; ties to the earlier line and
// unit), at most MaxUnitsPerLine of each line and MaxUnitsPerOrder in all.
// It sets p.inSets[i][j] to how many of run j's units (its first ones) are
// chosen.
func (p *Pricer) selectUnits(c *Coupon) {
	p.collectUnits()
	if c.UnitOrder == UnitsDearest {
		p.sortSets() // most left first, ties in line and run order
	} else {
		slices.SortFunc(p.sets, func(a, b setEntry) int {
			if a.v != b.v {
				return cmp.Compare(a.v, b.v)
			}
			if a.line != b.line {
				return cmp.Compare(a.line, b.line)
			}
			return cmp.Compare(a.run, b.run)
		})
	}
	left := c.MaxUnitsPerOrder
	for _, s := range p.sets {
		take := s.n
		if c.MaxUnitsPerLine > 0 {
			var taken int64
			for _, n := range p.inSets[s.line] {
				taken += n
			}
			take = min(take, max(c.MaxUnitsPerLine-taken, 0))
		}
		if c.MaxUnitsPerOrder > 0 {
			take = min(take, left)
			left -= take
		}
		p.inSets[s.line][s.run] = take
	}
}

// setEntry is a run of a targeted line in the buy_x_get_y sort.
type setEntry struct {
	line, run int
	n, v      int64
}

// weighSets forms the sets of a buy_x_get_y coupon from the most expensive
// units down (what is left of them; ties to the earlier line and unit),
// weighs the units in sets by what is left of them and the others by 0, and
// returns GetPercent of the Get cheapest units of each set.
func (p *Pricer) weighSets(c *Coupon) int64 {
	k := c.BuyQuantity + c.GetQuantity
	if c.BuyQuantity < 0 || c.GetQuantity <= 0 {
		return 0
	}
	total := p.collectUnits()
	p.sortSets()
	sets := total / k
	if c.MaxApplications > 0 {
		sets = min(sets, c.MaxApplications)
	}
	limit := sets * k
	// gets(x) counts the "get" positions among the first x of the order:
	// in each set of k, the last GetQuantity.
	gets := func(x int64) int64 { return x/k*c.GetQuantity + max(0, x%k-c.BuyQuantity) }
	var getSum, pos int64
	for e := range p.sets {
		s := &p.sets[e]
		lo, hi := min(pos, limit), min(pos+s.n, limit)
		p.inSets[s.line][s.run] = hi - lo
		getSum += s.v * (gets(hi) - gets(lo))
		pos += s.n
	}
	// The weights, per line in unit order: a run's units in sets are its
	// first ones (the sort keeps a run's units together, first units first).
	for i := range p.targeted {
		if !p.targeted[i] {
			continue
		}
		for j, u := range p.left[i] {
			in := p.inSets[i][j]
			if in > 0 {
				p.weights[i] = append(p.weights[i], run{in, u.v})
				p.lineW[i] += in * u.v
			}
			if u.n-in > 0 {
				p.weights[i] = append(p.weights[i], run{u.n - in, 0})
			}
		}
	}
	return percentOf(getSum, BasisPoints(c.GetPercent, c.GetPercentBP))
}

// posBits is how many low bits of a sort key hold the entry's position.
const posBits = 24

// sortSets sorts p.sets by compareSetEntries. They were appended in line
// and run order, so that order is by value, larger first, then position:
// when the values and positions fit, each entry becomes one integer key
// (value from the top, position below) and plain integers are sorted, a
// good deal cheaper than comparing entries.
func (p *Pricer) sortSets() {
	var top int64
	for i := range p.sets {
		top = max(top, p.sets[i].v)
	}
	if len(p.sets) >= 1<<posBits || top >= 1<<(63-posBits) {
		slices.SortFunc(p.sets, compareSetEntries)
		return
	}
	p.keys = p.keys[:0]
	for i := range p.sets {
		p.keys = append(p.keys, uint64(top-p.sets[i].v)<<posBits|uint64(i))
	}
	slices.Sort(p.keys)
	p.sorted = p.sorted[:0]
	for _, key := range p.keys {
		p.sorted = append(p.sorted, p.sets[key&(1<<posBits-1)])
	}
	p.sets, p.sorted = p.sorted, p.sets
}

// compareSetEntries orders units from the most expensive down, ties to the
// earlier line and unit.
func compareSetEntries(a, b setEntry) int {
	if a.v != b.v {
		return cmp.Compare(b.v, a.v)
	}
	if a.line != b.line {
		return cmp.Compare(a.line, b.line)
	}
	return cmp.Compare(a.run, b.run)
}

// allocate splits d over the weighed lines, then over each line's units,
// takes it from what is left and records it in r and out.Lines.
func (p *Pricer) allocate(d int64, r *CouponResult, out *Result) {
	p.split.largestRemainder(d, p.lineW, p.lineD)
	for i, ld := range p.lineD {
		if ld <= 0 {
			continue
		}
		p.cut = p.split.splitRuns(ld, p.weights[i], p.cut[:0])
		p.left[i], p.merged = subtract(p.left[i], p.cut, p.merged[:0])
		r.Lines = grow(r.Lines)
		ls := &r.Lines[len(r.Lines)-1]
		ls.Line, ls.DiscountCents = i, ld
		ls.Units = unitRuns(p.cut, ls.Units[:0])
		lr := &out.Lines[i]
		lr.DiscountCents += ld
		if k := len(lr.Coupons); k > 0 && lr.Coupons[k-1].Code == r.Code {
			lr.Coupons[k-1].DiscountCents += ld // another action of the same coupon
			continue
		}
		lr.Coupons = append(lr.Coupons, CouponPart{Code: r.Code, DiscountCents: ld})
	}
}

// subtract returns left minus the parts cut (both cover the same units, in
// runs of their own boundaries), merging equal neighbours; the old left's
// memory becomes the next scratch.
func subtract(left, cut, scratch []run) (newLeft, oldLeft []run) {
	out := scratch
	i, j := 0, 0
	var li, cj run
	if len(left) > 0 {
		li = left[0]
	}
	if len(cut) > 0 {
		cj = cut[0]
	}
	for i < len(left) && j < len(cut) {
		n := min(li.n, cj.n)
		v := li.v - cj.v
		if k := len(out); k > 0 && out[k-1].v == v {
			out[k-1].n += n
		} else {
			out = append(out, run{n, v})
		}
		li.n -= n
		cj.n -= n
		if li.n == 0 {
			if i++; i < len(left) {
				li = left[i]
			}
		}
		if cj.n == 0 {
			if j++; j < len(cut) {
				cj = cut[j]
			}
		}
	}
	return out, left[:0]
}

// unitRuns turns per-unit parts into UnitRuns, leaving out units with none.
func unitRuns(parts []run, out []UnitRun) []UnitRun {
	var first int64
	for _, u := range parts {
		if u.v > 0 {
			if k := len(out); k > 0 && out[k-1].PerUnitCents == u.v && out[k-1].First+out[k-1].Count == first {
				out[k-1].Count += u.n
			} else {
				out = append(out, UnitRun{First: first, Count: u.n, PerUnitCents: u.v})
			}
		}
		first += u.n
	}
	return out
}

// resize returns s with length n, keeping its elements' memory for reuse.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// grow adds one element to s, reusing the memory of one cut off before.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	var zero T
	return append(s, zero)
}
