package checkout

import (
	"fmt"
	"slices"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"

	"pgregory.net/rapid"
)

// The best-of search's own tests: no database, Redis or clock
// (docs/checkout.md, "Choosing the best coupons").

// bestOffer is a candidate of a test: its pricing coupon, template and
// stacking.
type bestOffer struct {
	coupon    pricing.Coupon
	template  int64
	exclusive bool
}

// bestInputs makes the candidates and the plan's value of offers on cart,
// each candidate's Alone priced alone.
func bestInputs(cart *pricing.Cart, offers []bestOffer) ([]bestCandidate, bestValue) {
	coupons := make([]pricing.Coupon, len(offers))
	for i, o := range offers {
		coupons[i] = o.coupon
	}
	value := planValue(cart, pricing.Taken{}, coupons)
	cands := make([]bestCandidate, len(offers))
	for i, o := range offers {
		alone, _ := value([]int{i})
		cands[i] = bestCandidate{Code: o.coupon.Code, TemplateID: o.template, Exclusive: o.exclusive, Alone: alone}
	}
	return cands, value
}

func TestChooseBest(t *testing.T) {
	cart := pricing.OneLine("", 10_000)
	pct := func(code string, p int64, tmpl int64, excl bool) bestOffer {
		return bestOffer{coupon: percent(code, p, 0), template: tmpl, exclusive: excl}
	}
	fix := func(code string, c int64, tmpl int64, excl bool) bestOffer {
		return bestOffer{coupon: fixed(code, c), template: tmpl, exclusive: excl}
	}
	type left struct{ reason, message string }
	tests := []struct {
		name     string
		offers   []bestOffer
		rules    bestRules
		set      []int
		discount int64
		left     map[int]left
	}{
		{"exclusive 30% over 10% and 5% together", []bestOffer{pct("TEN", 10, 1, false), pct("FIVE", 5, 2, false), pct("THIRTY", 30, 3, true)},
			bestRules{MaxCoupons: 5}, []int{2}, 3000, map[int]left{
				0: {models.LeftOutNotCombinable, "exclusive THIRTY gives more alone"},
				1: {models.LeftOutNotCombinable, "exclusive THIRTY gives more alone"}}},
		{"20% and 15% together over exclusive 30%", []bestOffer{pct("THIRTY", 30, 3, true), pct("TWENTY", 20, 1, false), pct("FIFTEEN", 15, 2, false)},
			bestRules{MaxCoupons: 5}, []int{1, 2}, 3200, map[int]left{
				0: {models.LeftOutNotBest, "the coupons chosen give more together than exclusive THIRTY alone"}}},
		{"a tie of two exclusive coupons goes to the earlier code", []bestOffer{fix("B", 500, 1, true), fix("A", 500, 2, true)},
			bestRules{MaxCoupons: 5}, []int{0}, 500, map[int]left{1: {models.LeftOutNotCombinable, "exclusive B gives more alone"}}},
		{"a tie goes to fewer coupons", []bestOffer{fix("X", 500, 1, false), fix("Y", 500, 2, false), fix("ONE", 1000, 3, true)},
			bestRules{MaxCoupons: 5}, []int{2}, 1000, map[int]left{
				0: {models.LeftOutNotCombinable, "exclusive ONE gives more alone"},
				1: {models.LeftOutNotCombinable, "exclusive ONE gives more alone"}}},
		{"one coupon of a template", []bestOffer{fix("SMALL", 300, 7, false), fix("BIG", 700, 7, false), fix("OTHER", 100, 8, false)},
			bestRules{MaxCoupons: 5}, []int{1, 2}, 800, map[int]left{
				0: {models.LeftOutNotCombinable, "an order carries one coupon of template 7: BIG gives more"}}},
		{"the cap keeps the two that give most", []bestOffer{fix("A", 100, 1, false), fix("B", 300, 2, false), fix("C", 200, 3, false)},
			bestRules{MaxCoupons: 2}, []int{1, 2}, 500, map[int]left{
				0: {models.LeftOutNotCombinable, "the order has room for 2 coupons: those chosen give more"}}},
		{"an order with coupons takes no exclusive one", []bestOffer{fix("EX", 900, 1, true), fix("C", 200, 2, false)},
			bestRules{MaxCoupons: 3, NoExclusive: true}, []int{1}, 200, map[int]left{
				0: {models.LeftOutNotCombinable, "an exclusive coupon is the only one on its order, and the order carries coupons already"}}},
		{"a coupon that adds nothing is left out", []bestOffer{fix("ALL", 10_000, 1, false), fix("MORE", 100, 2, false)},
			bestRules{MaxCoupons: 5}, []int{0}, 10_000, map[int]left{1: {models.LeftOutNotBest, "the coupons chosen give more without it"}}},
		{"no room chooses nothing", []bestOffer{fix("A", 100, 1, false)}, bestRules{MaxCoupons: 0}, []int{}, 0,
			map[int]left{0: {models.LeftOutNotCombinable, "the order has no room for another coupon"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cands, value := bestInputs(&cart, tc.offers)
			ch := chooseBest(cands, tc.rules, value)
			if !slices.Equal(ch.Set, tc.set) || ch.DiscountCents != tc.discount {
				t.Fatalf("chose %v for %d, want %v for %d", ch.Set, ch.DiscountCents, tc.set, tc.discount)
			}
			for i := range cands {
				reason, msg, ok := leftOutReason(cands, tc.rules, ch, i)
				want, out := tc.left[i]
				if ok != out || reason != want.reason || msg != want.message {
					t.Errorf("candidate %d left out %v (%q, %q), want %v (%q, %q)", i, ok, reason, msg, out, want.reason, want.message)
				}
			}
		})
	}
}

// Past BestMaxCandidates the candidates that take least alone are not
// weighed; past BestExhaustive combinable ones the search is greedy.
func TestChooseBestBounds(t *testing.T) {
	cart := pricing.OneLine("", 1_000_000)
	var offers []bestOffer
	for i := range BestMaxCandidates + 2 {
		offers = append(offers, bestOffer{coupon: fixed(fmt.Sprintf("C%02d", i), int64(100+10*i)), template: int64(i + 1)})
	}
	cands, value := bestInputs(&cart, offers)
	ch := chooseBest(cands, bestRules{MaxCoupons: 3}, value)
	// The three largest: C21, C20, C19.
	if !slices.Equal(ch.Set, []int{19, 20, 21}) || ch.DiscountCents != 290+300+310 {
		t.Fatalf("chose %v for %d", ch.Set, ch.DiscountCents)
	}
	for _, i := range []int{0, 1} {
		if reason, msg, _ := leftOutReason(cands, bestRules{MaxCoupons: 3}, ch, i); reason != models.LeftOutNotConsidered ||
			msg != "only the 20 coupons that take the most alone are weighed" {
			t.Errorf("candidate %d: %q %q", i, reason, msg)
		}
	}
	if n := countTrue(ch.Considered); n != BestMaxCandidates {
		t.Fatalf("%d considered, want %d", n, BestMaxCandidates)
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// allowedSet says whether the stacking rules allow set: one exclusive
// coupon alone (when the order may take one), or combinable coupons of
// distinct templates, at most the cap.
func allowedSet(cands []bestCandidate, rules bestRules, set []int) bool {
	if len(set) == 0 {
		return true
	}
	if len(set) > rules.MaxCoupons {
		return false
	}
	if len(set) == 1 && cands[set[0]].Exclusive {
		return !rules.NoExclusive
	}
	seen := map[int64]bool{}
	for _, i := range set {
		if cands[i].Exclusive || seen[cands[i].TemplateID] {
			return false
		}
		seen[cands[i].TemplateID] = true
	}
	return true
}

func genBestOffer(t *rapid.T, i int) bestOffer {
	o := bestOffer{template: rapid.Int64Range(1, 4).Draw(t, "template"), exclusive: rapid.IntRange(0, 3).Draw(t, "exclusive") == 0}
	code := fmt.Sprintf("K%d", i)
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		o.coupon = fixed(code, rapid.Int64Range(1, 3000).Draw(t, "face"))
	case 1:
		o.coupon = percent(code, rapid.Int64Range(1, 60).Draw(t, "pct"), rapid.Int64Range(0, 2000).Draw(t, "cap"))
	default:
		o.coupon = fixed(code, rapid.Int64Range(1, 3000).Draw(t, "face"))
		o.coupon.MinOrderCents = rapid.Int64Range(0, 8000).Draw(t, "min")
	}
	o.coupon.Priority = rapid.Int64Range(99, 101).Draw(t, "priority")
	return o
}

// On up to 7 candidates the search gives the set a brute force over every
// subset finds (the stacking rules allow it, nothing allowed takes more,
// ties as betterSet), and gives it again.
func TestChooseBestIsTheBruteForceBest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart := pricing.Cart{ShippingCents: 0}
		for i := range rapid.IntRange(1, 4).Draw(t, "lines") {
			cart.Lines = append(cart.Lines, pricing.Line{ID: fmt.Sprint(i), SKU: "s", Quantity: rapid.Int64Range(1, 3).Draw(t, "qty"),
				UnitPriceCents: rapid.Int64Range(0, 4000).Draw(t, "price")})
		}
		n := rapid.IntRange(1, 7).Draw(t, "candidates")
		offers := make([]bestOffer, n)
		for i := range offers {
			offers[i] = genBestOffer(t, i)
		}
		rules := bestRules{MaxCoupons: rapid.IntRange(0, 5).Draw(t, "cap"), NoExclusive: rapid.Bool().Draw(t, "noExclusive")}
		cands, value := bestInputs(&cart, offers)
		ch := chooseBest(cands, rules, value)
		if !allowedSet(cands, rules, ch.Set) {
			t.Fatalf("chose %v, which the stacking rules refuse", ch.Set)
		}
		want, wantV := []int{}, int64(0)
		for mask := 1; mask < 1<<n; mask++ {
			var set []int
			for i := range n {
				if mask&(1<<i) != 0 {
					set = append(set, i)
				}
			}
			if !allowedSet(cands, rules, set) {
				continue
			}
			if v, ok := value(set); ok && v > 0 && betterSet(v, set, wantV, want) {
				want, wantV = set, v
			}
		}
		if !slices.Equal(ch.Set, want) || ch.DiscountCents != wantV {
			t.Fatalf("chose %v for %d, the brute force %v for %d", ch.Set, ch.DiscountCents, want, wantV)
		}
		if got, v := value(ch.Set); len(ch.Set) > 0 && (!v || got != ch.DiscountCents) {
			t.Fatalf("the set chosen prices %d (%v), the search said %d", got, v, ch.DiscountCents)
		}
		again := chooseBest(cands, rules, value)
		if !slices.Equal(again.Set, ch.Set) || again.DiscountCents != ch.DiscountCents {
			t.Fatalf("chose %v, then %v", ch.Set, again.Set)
		}
	})
}

// Past BestExhaustive combinable candidates the greedy search still
// chooses a set the stacking rules allow, at least the best allowed one
// alone, and the same one again.
func TestChooseBestGreedyIsAllowed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cart := pricing.OneLine("", rapid.Int64Range(1, 50_000).Draw(t, "amount"))
		n := rapid.IntRange(BestExhaustive+1, BestMaxCandidates+3).Draw(t, "candidates")
		offers := make([]bestOffer, n)
		for i := range offers {
			offers[i] = genBestOffer(t, i)
			offers[i].template = rapid.Int64Range(1, 30).Draw(t, "template")
		}
		rules := bestRules{MaxCoupons: rapid.IntRange(1, 5).Draw(t, "cap")}
		cands, value := bestInputs(&cart, offers)
		ch := chooseBest(cands, rules, value)
		if !allowedSet(cands, rules, ch.Set) {
			t.Fatalf("chose %v, which the stacking rules refuse", ch.Set)
		}
		for i, c := range cands {
			if ch.Considered[i] && c.Alone > ch.DiscountCents {
				t.Fatalf("chose %v for %d, candidate %d takes %d alone", ch.Set, ch.DiscountCents, i, c.Alone)
			}
		}
		if again := chooseBest(cands, rules, value); !slices.Equal(again.Set, ch.Set) {
			t.Fatalf("chose %v, then %v", ch.Set, again.Set)
		}
	})
}

// BenchmarkChooseBest5Coupons100Lines chooses among the five coupons of
// benchcart (made combinable, of five templates) on its 100-line cart:
// the 31 sets the cap of 5 allows, each priced by the plan.
func BenchmarkChooseBest5Coupons100Lines(b *testing.B) {
	cart, coupons := benchcart.New(100)
	offers := make([]bestOffer, len(coupons))
	for i, c := range coupons {
		offers[i] = bestOffer{coupon: c, template: int64(i + 1)}
	}
	cands, value := bestInputs(&cart, offers)
	b.ReportAllocs()
	var ch bestChoice
	for b.Loop() {
		ch = chooseBest(cands, bestRules{MaxCoupons: 5}, value)
	}
	if len(ch.Set) == 0 {
		b.Fatal("nothing chosen")
	}
}

// The search prices a bounded number of sets: every allowed set up to
// BestExhaustive combinable candidates (31 for 5 of distinct templates,
// 1,585 for 12 with a cap of 5), past it at most the cap's rounds of one
// set per candidate left; exclusive candidates once each.
func TestChooseBestPricesABoundedNumberOfSets(t *testing.T) {
	for _, tc := range []struct{ combinable, exclusive, want int }{
		{5, 0, 31}, {5, 2, 33}, {BestExhaustive, 0, 1585}, {BestExhaustive + 1, 0, 13 + 12 + 11 + 10 + 9},
		{BestMaxCandidates + 5, 0, 20 + 19 + 18 + 17 + 16},
	} {
		cands := make([]bestCandidate, 0, tc.combinable+tc.exclusive)
		for i := range tc.combinable + tc.exclusive {
			cands = append(cands, bestCandidate{Code: fmt.Sprint(i), TemplateID: int64(i), Exclusive: i >= tc.combinable, Alone: 1})
		}
		calls := 0
		// Each coupon adds 1: the greedy search always finds one more.
		ch := chooseBest(cands, bestRules{MaxCoupons: 5}, func(set []int) (int64, bool) { calls++; return int64(len(set)), true })
		if calls != tc.want {
			t.Errorf("%d combinable and %d exclusive candidates: %d sets priced, want %d", tc.combinable, tc.exclusive, calls, tc.want)
		}
		if want := min(5, tc.combinable); len(ch.Set) != want {
			t.Errorf("%d combinable candidates: chose %v, want %d coupons", tc.combinable, ch.Set, want)
		}
	}
}
