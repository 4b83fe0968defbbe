package checkout

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// The best-of search (docs/checkout.md, "Choosing the best coupons"): which
// set of candidate coupons the stacking rules allow takes the most off the
// order. It prices nothing itself: the caller's value prices a set with the
// plan (pricing.Pricer.PriceAfter on what the order left), so whatever
// changes what a coupon takes is picked up. It reads no database, Redis or
// clock.

const (
	// BestExhaustive is the number of combinable candidates up to which
	// every allowed set is priced (at most 1585 sets with a cap of 5);
	// past it the search is greedy (at most 90 sets with a cap of 5).
	BestExhaustive = 12
	// BestMaxCandidates is the number of candidates the search weighs:
	// those that take the most alone (ties to the earlier); the rest are
	// left out not_considered.
	BestMaxCandidates = 20
)

// bestCandidate is one coupon the search may choose, refused by nothing on
// its own: its code, its template, whether it is exclusive, and what it
// takes off the order alone.
type bestCandidate struct {
	Code       string
	TemplateID int64
	Exclusive  bool
	Alone      int64
}

// bestRules are the stacking rules of the order the set goes on: at most
// MaxCoupons coupons (the cap, less the coupons already on the order), and
// no exclusive coupon when NoExclusive (the order carries coupons already).
type bestRules struct {
	MaxCoupons  int
	NoExclusive bool
}

// bestValue prices a set of candidates (their indexes, ascending) together:
// their whole discount, and ok false when one of them would take nothing
// in that set (a set the plan refuses).
type bestValue func(set []int) (discount int64, ok bool)

// bestChoice is the search's answer: the set chosen (indexes, ascending;
// empty when no set takes anything), its discount, and which candidates
// were weighed.
type bestChoice struct {
	Set           []int
	DiscountCents int64
	Considered    []bool
}

// betterSet orders two priced sets: more off first, then fewer coupons,
// then the earlier indexes (the order of the codes): a total order, so the
// choice never depends on the order sets are tried in.
func betterSet(a int64, as []int, b int64, bs []int) bool {
	if a != b {
		return a > b
	}
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	return slices.Compare(as, bs) < 0
}

// chooseBest chooses among cands the set rules allow that value prices
// highest (betterSet on ties): each exclusive candidate alone, and the
// sets of combinable candidates of distinct templates of at most
// rules.MaxCoupons, all of them up to BestExhaustive combinable
// candidates, greedily past it (the candidate that adds most, until none
// adds anything or the cap is reached). Only the BestMaxCandidates that
// take most alone are weighed.
func chooseBest(cands []bestCandidate, rules bestRules, value bestValue) bestChoice {
	ch := bestChoice{Set: []int{}, Considered: considered(cands)}
	if rules.MaxCoupons < 1 {
		return ch
	}
	keep := func(set []int, v int64) {
		if v > 0 && betterSet(v, set, ch.DiscountCents, ch.Set) {
			ch.Set, ch.DiscountCents = slices.Clone(set), v
		}
	}
	try := func(set []int) {
		if v, ok := value(set); ok {
			keep(set, v)
		}
	}
	var comb []int
	for i, c := range cands {
		switch {
		case !ch.Considered[i]:
		case c.Exclusive:
			if !rules.NoExclusive {
				try([]int{i})
			}
		default:
			comb = append(comb, i)
		}
	}
	if len(comb) <= BestExhaustive {
		eachSet(cands, comb, rules.MaxCoupons, make([]int, 0, rules.MaxCoupons), try)
		return ch
	}
	greedy(cands, comb, rules.MaxCoupons, value, keep)
	return ch
}

// considered marks the BestMaxCandidates candidates that take most alone
// (ties to the earlier).
func considered(cands []bestCandidate) []bool {
	out := make([]bool, len(cands))
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cands[b].Alone, cands[a].Alone) })
	for _, i := range order[:min(len(order), BestMaxCandidates)] {
		out[i] = true
	}
	return out
}

// eachSet calls try with every non-empty set of comb (ascending) of
// distinct templates and at most maxN coupons that extends set.
func eachSet(cands []bestCandidate, comb []int, maxN int, set []int, try func([]int)) {
	for k, i := range comb {
		if slices.ContainsFunc(set, func(j int) bool { return cands[j].TemplateID == cands[i].TemplateID }) {
			continue
		}
		next := append(set, i)
		try(next)
		if len(next) < maxN {
			eachSet(cands, comb[k+1:], maxN, next, try)
		}
	}
}

// greedy grows a set of comb one candidate at a time, adding the one that
// gives the best set (betterSet), while it takes more than the set before
// and the cap leaves room, and keeps each set it grows with its price.
func greedy(cands []bestCandidate, comb []int, maxN int, value bestValue, keep func([]int, int64)) {
	var set []int
	var have int64
	for len(set) < maxN {
		var bestSet []int
		var best int64
		for _, i := range comb {
			if slices.ContainsFunc(set, func(j int) bool { return j == i || cands[j].TemplateID == cands[i].TemplateID }) {
				continue
			}
			next := append(slices.Clone(set), i)
			slices.Sort(next)
			if v, ok := value(next); ok && v > have && (bestSet == nil || betterSet(v, next, best, bestSet)) {
				bestSet, best = next, v
			}
		}
		if bestSet == nil {
			return
		}
		set, have = bestSet, best
		keep(set, have)
	}
}

// leftOutReason says why the search left candidate i out of ch (a
// models.LeftOut* word and a message), ok false when ch holds it.
func leftOutReason(cands []bestCandidate, rules bestRules, ch bestChoice, i int) (reason, message string, ok bool) {
	if slices.Contains(ch.Set, i) {
		return "", "", false
	}
	c := cands[i]
	if !ch.Considered[i] {
		return models.LeftOutNotConsidered, fmt.Sprintf("only the %d coupons that take the most alone are weighed", BestMaxCandidates), true
	}
	if rules.MaxCoupons < 1 {
		return models.LeftOutNotCombinable, "the order has no room for another coupon", true
	}
	if len(ch.Set) == 1 && cands[ch.Set[0]].Exclusive {
		return models.LeftOutNotCombinable, fmt.Sprintf("exclusive %s gives more alone", cands[ch.Set[0]].Code), true
	}
	if c.Exclusive && rules.NoExclusive {
		return models.LeftOutNotCombinable, "an exclusive coupon is the only one on its order, and the order carries coupons already", true
	}
	if c.Exclusive {
		return models.LeftOutNotBest, fmt.Sprintf("the coupons chosen give more together than exclusive %s alone", c.Code), true
	}
	for _, j := range ch.Set {
		if cands[j].TemplateID == c.TemplateID {
			return models.LeftOutNotCombinable, fmt.Sprintf("an order carries one coupon of template %d: %s gives more", c.TemplateID, cands[j].Code), true
		}
	}
	if len(ch.Set) >= rules.MaxCoupons {
		return models.LeftOutNotCombinable, fmt.Sprintf("the order has room for %d coupons: those chosen give more", rules.MaxCoupons), true
	}
	return models.LeftOutNotBest, "the coupons chosen give more without it", true
}

// planValue is the bestValue of coupons on cart as the plan prices them:
// on what the order's coupons and returns left (taken), minimums on the
// whole cart (pricing.Pricer.PriceAfter, as decide prices a hold). A set
// in which a coupon takes nothing is refused, as decide refuses it
// (couponRefusal).
func planValue(cart *pricing.Cart, taken pricing.Taken, coupons []pricing.Coupon) bestValue {
	var p pricing.Pricer
	var out pricing.Result
	buf := make([]pricing.Coupon, 0, len(coupons))
	return func(set []int) (int64, bool) {
		buf = buf[:0]
		for _, i := range set {
			buf = append(buf, coupons[i])
		}
		p.PriceAfter(cart, taken, buf, &out)
		for _, c := range out.Coupons {
			if c.Refusal != "" || c.DiscountCents <= 0 {
				return 0, false
			}
		}
		return out.DiscountCents, true
	}
}
