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
// than its weight. out[i] is weights[i]'s part; s is reused.
func (s *scratch) largestRemainder(total int64, weights []int64, out []int64) {
	var sum int64
	for _, w := range weights {
		sum += w
	}
	for i := range out {
		out[i] = 0
	}
	if total <= 0 || sum <= 0 {
		return
	}
	s.shares, s.rems = s.shares[:0], s.rems[:0]
	left := total
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		q, r := mulDiv(total, w, sum)
		out[i] = q
		left -= q
		if r > 0 {
			s.shares = append(s.shares, share{rem: r, index: i})
			s.rems = append(s.rems, r)
		}
	}
	if left <= 0 {
		return
	}
	// The floors leave fewer units than there are remainders (each is a
	// fraction of one). Rather than sort them all, find the left-th largest
	// remainder: every larger one takes a unit, and the equal ones take what
	// is left in the lines' order.
	t := kthLargest(s.rems, int(left))
	for _, sh := range s.shares {
		if sh.rem > t {
			out[sh.index]++
			left--
		}
	}
	for _, sh := range s.shares {
		if left == 0 {
			break
		}
		if sh.rem == t {
			out[sh.index]++
			left--
		}
	}
}

// kthLargest returns the k-th largest of a (1 <= k <= len(a)), reordering
// a: Hoare's selection, linear on average.
func kthLargest(a []int64, k int) int64 {
	k-- // its index once a is in decreasing order
	lo, hi := 0, len(a)-1
	for lo < hi {
		pivot := a[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for a[i] > pivot {
				i++
			}
			for a[j] < pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// a[lo..j] >= pivot >= a[i..hi], and a[j+1..i-1] == pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

// scratch is the working memory of the splits.
type scratch struct {
	shares []share
	rems   []int64
	order  []int
}

// splitRuns splits total over the units of runs in proportion to their
// values (weights per unit), by largest remainder per unit, ties to the
// earlier unit, and appends the parts to out as runs aligned with the units:
// a run whose units get different parts is cut in two. The sum of the values
// times counts must be at least total.
func (s *scratch) splitRuns(total int64, weights []run, out []run) []run {
	var sum int64
	for _, w := range weights {
		sum += w.n * w.v
	}
	if total <= 0 || sum <= 0 {
		for _, w := range weights {
			out = append(out, run{w.n, 0})
		}
		return out
	}
	// Units of a run have one weight, so one floor and one remainder: the
	// units of a run that take an extra unit are its first ones. shares[i]
	// is run i's; order lists the runs with a remainder.
	s.shares, s.order = resize(s.shares, len(weights)), s.order[:0]
	left := total
	for i, w := range weights {
		s.shares[i] = share{}
		if w.v <= 0 {
			continue
		}
		q, r := mulDiv(total, w.v, sum)
		left -= q * w.n
		s.shares[i] = share{weight: w.n, got: q, rem: r, index: i}
		if r > 0 {
			s.order = append(s.order, i)
		}
	}
	// Hand the extras out by remainder, largest first, then position (a
	// line has few runs; most have one, which needs no sort).
	if len(s.order) > 1 {
		slices.SortFunc(s.order, func(a, b int) int {
			if ra, rb := s.shares[a].rem, s.shares[b].rem; ra != rb {
				return cmp.Compare(rb, ra)
			}
			return cmp.Compare(a, b)
		})
	}
	for _, k := range s.order {
		if left <= 0 {
			break
		}
		take := min(left, s.shares[k].weight)
		s.shares[k].pos = int(take) // this run's first take units get one more
		left -= take
	}
	for i, w := range weights {
		q, plus := s.shares[i].got, int64(s.shares[i].pos)
		if plus > 0 {
			out = append(out, run{plus, q + 1})
		}
		if w.n-plus > 0 {
			out = append(out, run{w.n - plus, q})
		}
	}
	return out
}
