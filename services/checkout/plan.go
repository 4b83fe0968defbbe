package checkout

import (
	"fmt"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/models/eligibility"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// The plan: the one decision of what coupons take off an order and what a
// return gives back, made on the order's state (state.go) without a
// database, Redis or clock (docs/checkout.md, "The order state and the
// plan"). The writes apply it.

// taken is what the order leaves out of a new coupon's reach, as
// pricing.Taken: the parts its live and settled coupons took of each
// line's units and of the shipping, and every returned unit whole (and
// the shipping whole once every unit came back). Units come back first in
// each line's order (docs/returns.md), so a coupon added after a return
// discounts the kept units only, and a later return of them gives back
// exactly what was paid for them.
func (st *orderState) taken() (pricing.Taken, error) {
	if st == nil || st.cart == nil {
		return pricing.Taken{}, nil
	}
	t := pricing.Taken{Lines: make([][]pricing.UnitRun, len(st.cart.Lines))}
	for i, n := range st.returned {
		if n > 0 && i < len(st.cart.Lines) {
			t.Lines[i] = append(t.Lines[i], pricing.UnitRun{First: 0, Count: n, PerUnitCents: max(st.cart.Lines[i].UnitPriceCents, 0)})
		}
	}
	for _, m := range []map[int64][]LineDiscountRow{st.live, st.settled} {
		for _, rs := range m {
			for _, r := range rs {
				if r.LineNo == ShippingLineNo {
					t.ShippingCents += r.DiscountCents
					continue
				}
				if r.LineNo < 0 || r.LineNo >= len(st.cart.Lines) {
					continue
				}
				units, err := DecodeUnits(r.Units)
				if err != nil {
					return t, err
				}
				t.Lines[r.LineNo] = append(t.Lines[r.LineNo], units...)
			}
		}
	}
	if !st.keptUnits() {
		// An order returned in full keeps nothing to discount, its
		// shipping neither (docs/checkout.md, "One amount per order").
		t.ShippingCents = max(st.cart.ShippingCents, 0)
	}
	return t, nil
}

// settledKept is the part the settled coupons (refunded off the order)
// took of its kept units and its shipping: paid, it is taken from what a
// new coupon may discount, but it is no coupon's on the order now, and
// the order's payable does not count it.
func (st *orderState) settledKept() (int64, error) {
	if st == nil || st.cart == nil {
		return 0, nil
	}
	var sum int64
	for _, rs := range st.settled {
		for _, r := range rs {
			if r.LineNo == ShippingLineNo {
				sum += r.DiscountCents
				continue
			}
			if r.LineNo < 0 || r.LineNo >= len(st.cart.Lines) {
				continue
			}
			units, err := DecodeUnits(r.Units)
			if err != nil {
				return 0, err
			}
			from := int64(0)
			if r.LineNo < len(st.returned) {
				from = st.returned[r.LineNo]
			}
			sum += pricing.UnitsDiscountCents(units, from, st.cart.Lines[r.LineNo].Quantity-from)
		}
	}
	return sum, nil
}

// forRequest puts in req what the order's state takes of its cart for the
// request's coupons (p), which are priced as themselves (left out of the
// state), and the settled part of it; it answers req.taken.
func (st *orderState) forRequest(req *CheckoutRequest, p *priced) (pricing.Taken, error) {
	st.without(p.ids()...)
	tk, err := st.taken()
	if err != nil {
		return pricing.Taken{}, err
	}
	settled, err := st.settledKept()
	if err != nil {
		return pricing.Taken{}, err
	}
	carry, err := st.carriedAll()
	if err != nil {
		return pricing.Taken{}, err
	}
	req.taken, req.settled, req.carry = tk, settled, carry
	req.park = req.park[:0]
	for _, id := range p.ids() {
		if len(st.superseded[id]) > 0 {
			req.park = append(req.park, id)
		}
	}
	return tk, nil
}

// keptUnits says whether any unit of the order's lines was not returned.
func (st *orderState) keptUnits() bool {
	if st == nil || st.cart == nil {
		return true
	}
	for i, l := range st.cart.Lines {
		if i >= len(st.returned) || st.returned[i] < l.Quantity {
			return true
		}
	}
	return false
}

// keptCents is the price of the order's kept units and its shipping.
func (st *orderState) keptCents() int64 {
	sum := max(st.cart.ShippingCents, 0)
	for i, l := range st.cart.Lines {
		n := l.Quantity
		if i < len(st.returned) {
			n -= st.returned[i]
		}
		sum += n * max(l.UnitPriceCents, 0)
	}
	return sum
}

// planCoupons prices coupons added to an order (st nil: a new order) on
// the cart: each on what the order's live coupons and its returns left
// (pricing.Pricer.PriceAfter over st.taken), minimums on the whole cart.
// out.PayableCents is what the order pays for what it kept after every
// coupon on it, the new ones included (a coupon refunded off it is not on
// it).
func planCoupons(st *orderState, cart *pricing.Cart, coupons []pricing.Coupon, out *pricing.Result) error {
	tk, err := st.taken()
	if err != nil {
		return err
	}
	settled, err := st.settledKept()
	if err != nil {
		return err
	}
	var p pricing.Pricer
	p.PriceAfter(cart, tk, coupons, out)
	out.PayableCents += settled
	return nil
}

// carried is what a coupon priced again on the order (a coupon refunded
// off it and redeemed or held on it again) keeps of its earlier part:
// its runs on the units of each line returned before, clipped to them.
// Those units were paid and settled by their returns, so the earlier
// discount on them stays the coupon's on the order; its new part covers
// the kept units alone (docs/returns.md, "A refund"). By line; nil when
// nothing is carried.
func (st *orderState) carried(couponID int64) (map[int][]pricing.UnitRun, error) {
	if st == nil || st.cart == nil {
		return nil, nil
	}
	var out map[int][]pricing.UnitRun
	for _, r := range st.superseded[couponID] {
		if r.LineNo < 0 || r.LineNo >= len(st.returned) || st.returned[r.LineNo] == 0 {
			continue
		}
		units, err := DecodeUnits(r.Units)
		if err != nil {
			return nil, err
		}
		if runs := clipRuns(units, st.returned[r.LineNo]); len(runs) > 0 {
			if out == nil {
				out = map[int][]pricing.UnitRun{}
			}
			out[r.LineNo] = runs
		}
	}
	return out, nil
}

// carriedAll is carried for every coupon without took out, by coupon id
// (nil when none carries anything).
func (st *orderState) carriedAll() (map[int64]map[int][]pricing.UnitRun, error) {
	var out map[int64]map[int][]pricing.UnitRun
	for id := range st.superseded {
		c, err := st.carried(id)
		if err != nil {
			return nil, err
		}
		if c != nil {
			if out == nil {
				out = map[int64]map[int][]pricing.UnitRun{}
			}
			out[id] = c
		}
	}
	return out, nil
}

// clipRuns is the runs' part on the units before n, runs of 0 left out.
func clipRuns(runs []pricing.UnitRun, n int64) []pricing.UnitRun {
	var out []pricing.UnitRun
	for _, u := range runs {
		if hi := min(u.First+u.Count, n); hi > u.First && u.PerUnitCents != 0 {
			out = append(out, pricing.UnitRun{First: u.First, Count: hi - u.First, PerUnitCents: u.PerUnitCents})
		}
	}
	return out
}

// runsCents is what the runs add up to.
func runsCents(runs []pricing.UnitRun) int64 {
	var sum int64
	for _, u := range runs {
		sum += u.Count * u.PerUnitCents
	}
	return sum
}

// storedPart is one coupon's stored discount on one line of an order, as a
// return reads it: live when the coupon still uses the order (its use log
// row is live); a refunded or only held coupon's part was given too.
type storedPart struct {
	couponID int64
	live     bool
	runs     []pricing.UnitRun
}

// lineReturnPlan is what a return of units of one line gives back: the
// shopper's refund (what was paid for them), the discount they carried,
// and per live coupon its part of it, which goes back to its campaign.
type lineReturnPlan struct {
	refund, discount int64
	back             map[int64]int64
}

// planLineReturn plans the return of n units of a line at unitPrice, of
// which from units came back before: every stored part on those units
// lowers the refund (a coupon refunded off the order was still part of
// what was paid for them), never below 0; the live coupons' parts go back.
func planLineReturn(unitPrice int64, parts []storedPart, from, n int64) lineReturnPlan {
	p := lineReturnPlan{back: map[int64]int64{}}
	for _, sp := range parts {
		d := pricing.UnitsDiscountCents(sp.runs, from, n)
		p.discount += d
		if sp.live && d != 0 {
			p.back[sp.couponID] += d
		}
	}
	price := n * max(unitPrice, 0)
	p.discount = min(p.discount, price)
	p.refund = price - p.discount
	return p
}

// discountKey is one coupon's stored row on one line of an order.
type discountKey struct {
	coupon int64
	line   int
}

// returnAsk is one line of a return by line as its plan reads it: the
// line's unit price, the units returned before and those returned now.
type returnAsk struct {
	lineNo            int
	unitPrice, before int64
	n                 int64
}

// linesReturnPlan is what a return by line gives back: per line (by
// line_no) its plan, per live coupon its part (back to its campaign), per
// stored row what its returned part grows by, and the shipping discount
// the live coupons give back when the return completes the order.
type linesReturnPlan struct {
	lines     map[int]lineReturnPlan
	perCoupon map[int64]int64
	rows      map[discountKey]int64
	shipping  int64
}

// planLinesReturn is the one decision of a return by line, made on the
// order's stored discounts (ds, every row: live or not) for the lines
// asked; full says it completes the order. The return applies it under
// the order's lock, its preview answers it (docs/returns.md).
func planLinesReturn(asks []returnAsk, ds []returnDiscountRow, full bool) (linesReturnPlan, error) {
	p := linesReturnPlan{lines: make(map[int]lineReturnPlan, len(asks)), perCoupon: map[int64]int64{}, rows: map[discountKey]int64{}}
	asked := make(map[int]bool, len(asks))
	for _, a := range asks {
		asked[a.lineNo] = true
	}
	parts := make(map[int][]storedPart, len(asks))
	for _, d := range ds {
		if d.LineNo == ShippingLineNo {
			if !full || !d.Live {
				continue
			}
			back := d.DiscountCents - d.ReturnedDiscountCents
			p.shipping += back
			p.perCoupon[d.CouponID] += back
			p.rows[discountKey{d.CouponID, d.LineNo}] += back
			continue
		}
		if !asked[d.LineNo] {
			continue
		}
		runs, err := DecodeUnits(d.Units)
		if err != nil {
			return p, err
		}
		parts[d.LineNo] = append(parts[d.LineNo], storedPart{couponID: d.CouponID, live: d.Live, runs: runs})
	}
	for _, a := range asks {
		pl := planLineReturn(a.unitPrice, parts[a.lineNo], a.before, a.n)
		p.lines[a.lineNo] = pl
		for id, back := range pl.back {
			p.perCoupon[id] += back
			p.rows[discountKey{id, a.lineNo}] += back
		}
	}
	return p, nil
}

// leftTaken is what an amount-only order's cart (one line of its amount)
// gives away when left of it is what a new coupon may discount.
func leftTaken(cart *pricing.Cart, left int64) pricing.Taken {
	if len(cart.Lines) != 1 {
		return pricing.Taken{}
	}
	price := max(cart.Lines[0].UnitPriceCents, 0)
	if gone := price - min(max(left, 0), price); gone > 0 {
		return pricing.Taken{Lines: [][]pricing.UnitRun{{{First: 0, Count: 1, PerUnitCents: gone}}}}
	}
	return pricing.Taken{}
}

// planFits is the one decision of whether a hold or a confirm whose
// coupons take adding cents fits on the order: d is the order's state
// read under its row lock before the writes, the request's own coupons
// and hold left out (lockedDiscounts). The discounts of its used coupons,
// of a hold still held, the settled ones (at most what it kept) and the
// new ones must not sum over what it kept: a hold or a late confirm next
// to coupons redeemed one step at a time that left it too little is
// refused (docs/checkout.md, "One amount per order").
func planFits(orderID string, d orderDiscounts, adding int64) error {
	if sum := d.Used + d.Held + min(d.Settled, d.Kept) + adding; sum > d.Kept {
		return models.Errorf(models.CodeNotCombinable,
			"the coupons of order %s would discount %d cents of its %d: those redeemed on it already leave too little", orderID, sum, d.Kept)
	}
	return nil
}

// payableWith is what the order pays after every coupon on it once the
// request's coupons (adding cents) are on it too, d as planFits reads it:
// the settled discounts are no coupon's on the order (not counted).
func (d orderDiscounts) payableWith(adding int64) int64 {
	return max(d.Kept-d.Used-d.Held-adding, 0)
}

// planHeldAmount prices the coupons of an amount-only order's hold as the
// hold priced them, from what it stored (held, their whole discount): on
// the order's one-line cart of which the hold saw some amount left. Each
// coupon's part grows with what is left, so every amount left that gives
// held gives the same parts: the smallest is found by halving.
func planHeldAmount(cart *pricing.Cart, held int64, coupons []pricing.Coupon, out *pricing.Result) {
	var p pricing.Pricer
	lo, hi := int64(0), int64(0)
	if len(cart.Lines) == 1 {
		hi = max(cart.Lines[0].UnitPriceCents, 0)
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		p.PriceAfter(cart, leftTaken(cart, mid), coupons, out)
		if out.DiscountCents >= held {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	p.PriceAfter(cart, leftTaken(cart, lo), coupons, out)
}

// planAmountReturn plans a return by amount of an amount-only order that
// kept keptBefore and keeps kept after it: the settled discounts (of the
// coupons refunded off it: paid, at most what the order kept) come off
// the kept amount first and give back settledBack of their part; its used
// coupons (keptCoupons) are priced again on what they leave of the
// one-line cart of the kept amount, minimums on the whole: a coupon whose
// minimum the kept amount no longer meets keeps nothing.
func planAmountReturn(keptBefore, kept, settled int64, coupons []pricing.Coupon) (pr pricing.Result, settledBack int64) {
	kept = max(kept, 0)
	before, after := min(settled, max(keptBefore, 0)), min(settled, kept)
	cart := pricing.OneLine("", kept)
	var tk pricing.Taken
	if after > 0 {
		tk.Lines = [][]pricing.UnitRun{{{First: 0, Count: 1, PerUnitCents: after}}}
	}
	var p pricing.Pricer
	p.PriceAfter(&cart, tk, coupons, &pr)
	return pr, before - after
}

// couponRefusal is the one refusal of a coupon the plan priced, the same
// on every path (nil when it applies): its template's eligibility rule
// judged on the request's facts (eligibilityRefusal), pricing's refusal (refusalError),
// or a coupon that would take nothing off what the order leaves (a
// shipping coupon on a shipping already discounted in full, a buy x get y
// without a whole set, a fixed coupon on an order already discounted in
// full), refused not_combinable and never held nor used
// (docs/result-codes.md).
func couponRefusal(r *pricing.CouponResult, t *models.Template, cart *pricing.Cart, lined bool, f *facts) error {
	if err := eligibilityRefusal(f, t, r.Code); err != nil {
		return err
	}
	if r.Refusal == pricing.RefusalNoLines && onShipping(t) && cart.ShippingCents > 0 {
		return nothingToDiscount(r.Code, "the cart's shipping is discounted in full already")
	}
	if err := refusalError(r.Refusal, r.Code, t, cart, lined); err != nil {
		return err
	}
	if r.DiscountCents == 0 {
		return nothingToDiscount(r.Code, "nothing of what it applies to is left to discount")
	}
	return nil
}

// eligibilityRefusal refuses a coupon whose template's eligibility rule
// the request's facts do not meet, not_eligible naming the rule
// (docs/eligibility.md). The rule was compiled when the template was
// saved; f's cache compiles it once per template version, never per
// request. A rule that fails as it runs admits no one and is logged. Facts
// always carry the service's cache (readFacts, factsOr): nil facts, or
// facts without a cache, admit no one rather than compile the rule again.
func eligibilityRefusal(f *facts, t *models.Template, code string) error {
	if t.Eligibility == "" {
		return nil
	}
	ok := false
	var err error
	if f != nil && f.rules != nil {
		prog, cerr := f.rules.Program(t.ID, t.UpdatedAt, t.Eligibility)
		if err = cerr; err == nil {
			ok, err = eligibility.Eval(prog, f.envFor(t))
		}
	}
	if err != nil && f.log != nil {
		f.log.Warn("eligibility rule failed", "template_id", t.ID, "err", err)
	}
	if ok {
		return nil
	}
	return &models.Error{Code: models.CodeNotEligible, Field: "customer",
		Message: fmt.Sprintf("coupon %s is only for customers who meet its rule: %s", code, t.Eligibility)}
}

// ruled says some template carries an eligibility rule: only then are a
// request's facts read (readFacts); without one, eligibilityRefusal
// judges nothing and the amount-only checkout allocates none of them.
func ruled(ts []*models.Template) bool {
	for _, t := range ts {
		if t != nil && t.Eligibility != "" {
			return true
		}
	}
	return false
}

// onShipping says the template's coupons discount the shipping.
func onShipping(t *models.Template) bool {
	return t.Kind == models.KindFreeShipping || t.AppliesTo == models.AppliesToShipping
}

// nothingToDiscount refuses a coupon the plan gives 0.
func nothingToDiscount(code, why string) error {
	return models.Errorf(models.CodeNotCombinable, "coupon %s would discount nothing on this order: %s", code, why)
}

// refusalError is the error of a coupon pricing refused (nil when it
// applies): below_minimum for a minimum not met or a cart with no line the
// coupon applies to, condition_not_met for a condition the cart does not
// meet, currency_mismatch for another currency.
func refusalError(refusal, code string, t *models.Template, cart *pricing.Cart, lined bool) error {
	field := "order_amount_cents"
	if lined {
		field = "lines"
	}
	switch refusal {
	case "":
		return nil
	case pricing.RefusalCurrency:
		cur := t.Currency
		return &models.Error{Code: models.CodeCurrencyMismatch, Field: "currency",
			Message: fmt.Sprintf("coupon %s is in %s, the cart in %s", code, cur, cart.Currency)}
	case pricing.RefusalCondition:
		return conditionNotMet(code, t, cart, field)
	case pricing.RefusalNoLines:
		if onShipping(t) {
			return &models.Error{Code: models.CodeBelowMinimum, Field: "shipping_cents",
				Message: fmt.Sprintf("coupon %s discounts the shipping: the cart has none", code)}
		}
		return &models.Error{Code: models.CodeBelowMinimum, Field: field,
			Message: fmt.Sprintf("no line of the cart is one coupon %s applies to", code)}
	}
	if !lined {
		return &models.Error{Code: models.CodeBelowMinimum, Field: field,
			Message: fmt.Sprintf("coupon %s needs an order of at least %d cents", code, t.MinOrderCents)}
	}
	msg := fmt.Sprintf("coupon %s needs at least %d cents of the lines it applies to", code, t.MinOrderCents)
	if t.MinQuantity > 0 {
		msg += fmt.Sprintf(" and %d of their units", t.MinQuantity)
	}
	if t.Kind == models.KindTiered {
		msg += ", or a subtotal that meets one of its tiers"
	}
	return &models.Error{Code: models.CodeBelowMinimum, Field: field, Message: msg}
}

// conditionNotMet is the error of a coupon whose condition the cart does
// not meet, saying what is missing: what pricing measured of the lines the
// condition names (docs/pricing.md, "Conditions").
func conditionNotMet(code string, t *models.Template, cart *pricing.Cart, field string) error {
	var units, cents int64
	if pc := core.PricingCoupon(t, code); pc.Condition != nil {
		units, cents = pc.Condition.Measure(cart)
	}
	msg := "coupon " + code + " applies only to a cart that meets its condition"
	if t.Condition != nil {
		msg = "coupon " + code + " " + t.Condition.Missing(units, cents)
	}
	return &models.Error{Code: models.CodeConditionNotMet, Field: field, Message: msg}
}
