package pricing

import (
	"cmp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// largestRemainderBySort is the split of largestRemainder done the plain
// way, sorting every remainder: the selection must give the same parts.
func largestRemainderBySort(total int64, weights []int64) []int64 {
	out := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += w
	}
	if total <= 0 || sum <= 0 {
		return out
	}
	var shares []share
	left := total
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		q, r := mulDiv(total, w, sum)
		out[i] = q
		left -= q
		shares = append(shares, share{rem: r, index: i})
	}
	slices.SortFunc(shares, func(a, b share) int {
		if a.rem != b.rem {
			return cmp.Compare(b.rem, a.rem)
		}
		return cmp.Compare(a.index, b.index)
	})
	for k := 0; k < int(left); k++ {
		out[shares[k].index]++
	}
	return out
}

func TestPropertyLargestRemainderSelectsAsASortWould(t *testing.T) {
	var s scratch
	rapid.Check(t, func(t *rapid.T) {
		// Few distinct weights give many equal remainders (the ties).
		weights := rapid.SliceOfN(rapid.SampledFrom([]int64{0, 1, 3, 7, 100, 333, 1000, 99_999}), 0, 300).Draw(t, "weights")
		var sum int64
		for _, w := range weights {
			sum += w
		}
		total := rapid.Int64Range(0, sum).Draw(t, "total")
		got := make([]int64, len(weights))
		s.largestRemainder(total, weights, got)
		if want := largestRemainderBySort(total, weights); !slices.Equal(got, want) {
			t.Fatalf("split of %d over %v:\n got %v\nwant %v", total, weights, got, want)
		}
	})
}

func TestPropertyKthLargest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SliceOfN(rapid.Int64Range(0, 20), 1, 200).Draw(t, "a")
		k := rapid.IntRange(1, len(a)).Draw(t, "k")
		sorted := slices.Clone(a)
		slices.Sort(sorted)
		if got, want := kthLargest(a, k), sorted[len(sorted)-k]; got != want {
			t.Fatalf("%d-th largest: %d, want %d", k, got, want)
		}
	})
}

func TestPropertySortSetsIsTheEntriesOrder(t *testing.T) {
	var p Pricer
	rapid.Check(t, func(t *rapid.T) {
		// Values past what a key holds take the plain sort.
		values := []int64{1, 2, 50, 50, 999, 1 << 38, 1<<39 - 1}
		if rapid.Bool().Draw(t, "huge") {
			values = append(values, 1<<39, 1<<62)
		}
		p.sets = p.sets[:0]
		for line := range rapid.IntRange(0, 40).Draw(t, "lines") {
			for r := range rapid.IntRange(1, 4).Draw(t, "runs") {
				p.sets = append(p.sets, setEntry{line: line, run: r, n: 1, v: rapid.SampledFrom(values).Draw(t, "v")})
			}
		}
		want := slices.Clone(p.sets)
		slices.SortFunc(want, compareSetEntries)
		p.sortSets()
		if !slices.Equal(p.sets, want) {
			t.Fatalf("got %v\nwant %v", p.sets, want)
		}
	})
}
