package pricing

import (
	"cmp"
	"math/bits"
	"slices"
)

// mulDiv returns a*b/c and its remainder, for a, b >= 0, c > 0 and a*b/c
// within int64: the product is taken in 128 bits, so that a percent of a
// large cart or a share of a large discount never overflows.
func mulDiv(a, b, c int64) (q, r int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	uq, ur := bits.Div64(hi, lo, uint64(c))
	return int64(uq), int64(ur)
}

// run is n consecutive units of a line that each have the value v (what is
// left of their price, a weight, or a discount). A line of 10,000 units is
// a handful of runs, never 10,000 numbers.
type run struct{ n, v int64 }

// UnitRun is a coupon's discount on consecutive units of a line: units
// First .. First+Count-1 (0-based, in the line's order) take PerUnitCents
// each.
type UnitRun struct {
	First, Count, PerUnitCents int64
}

// share is one party of a largest-remainder split.
type share struct {
	weight     int64
	got, rem   int64
	index, pos int
}

// largestRemainder splits total over the weights in proportion, in whole
// units: each gets the floor of its exact share, and what the floors leave
// goes one unit each to the largest remainders, ties to the earlier one.
// total must not exceed the sum of the weights, so that no one gets more
// than its weight. out[i] is weights[i]'s part; scratch is reused.
func largestRemainder(total int64, weights []int64, out []int64, scratch []share) []share {
	var sum int64
	for _, w := range weights {
		sum += w
	}
	for i := range out {
		out[i] = 0
	}
	if total <= 0 || sum <= 0 {
		return scratch
	}
	scratch = scratch[:0]
	left := total
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		q, r := mulDiv(total, w, sum)
		out[i] = q
		left -= q
		if r > 0 {
			scratch = append(scratch, share{rem: r, index: i})
		}
	}
	if left > 0 {
		sortShares(scratch)
		for k := 0; k < int(left); k++ {
			out[scratch[k].index]++
		}
	}
	return scratch
}

// sortShares orders by remainder, largest first, then index.
func sortShares(s []share) {
	slices.SortFunc(s, func(a, b share) int {
		if a.rem != b.rem {
			return cmp.Compare(b.rem, a.rem)
		}
		return cmp.Compare(a.index, b.index)
	})
}

// splitRuns splits total over the units of runs in proportion to their
// values (weights per unit), by largest remainder per unit, ties to the
// earlier unit, and appends the parts to out as runs aligned with the units:
// a run whose units get different parts is cut in two. The sum of the values
// times counts must be at least total.
func splitRuns(total int64, weights []run, out []run, scratch []share) ([]run, []share) {
	var sum int64
	for _, w := range weights {
		sum += w.n * w.v
	}
	if total <= 0 || sum <= 0 {
		for _, w := range weights {
			out = append(out, run{w.n, 0})
		}
		return out, scratch
	}
	// Units of a run have one weight, so one floor and one remainder: the
	// units of a run that take an extra unit are its first ones.
	scratch = scratch[:0]
	left := total
	for i, w := range weights {
		if w.v <= 0 {
			continue
		}
		q, r := mulDiv(total, w.v, sum)
		left -= q * w.n
		scratch = append(scratch, share{weight: w.n, got: q, rem: r, index: i})
	}
	// Hand the extras out by remainder, largest first, then position.
	sortShares(scratch)
	for k := range scratch {
		if left <= 0 || scratch[k].rem == 0 {
			break
		}
		take := min(left, scratch[k].weight)
		scratch[k].pos = int(take) // this run's first take units get one more
		left -= take
	}
	// Emit in the runs' order. scratch is in remainder order; find each
	// run's share by index (few runs: a scan).
	for i, w := range weights {
		var q, plus int64
		for k := range scratch {
			if scratch[k].index == i {
				q, plus = scratch[k].got, int64(scratch[k].pos)
				break
			}
		}
		if plus > 0 {
			out = append(out, run{plus, q + 1})
		}
		if w.n-plus > 0 {
			out = append(out, run{w.n - plus, q})
		}
	}
	return out, scratch
}
