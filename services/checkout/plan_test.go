package checkout

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"

	"pgregory.net/rapid"
)

// The plan's own tests: no database, Redis or clock (docs/checkout.md,
// "The order state and the plan").

func fixed(code string, cents int64) pricing.Coupon {
	return pricing.Coupon{Code: code, Kind: pricing.KindFixed, AppliesTo: pricing.AppliesToOrder, FaceValueCents: cents, Priority: 100}
}

func percent(code string, pct, max int64) pricing.Coupon {
	return pricing.Coupon{Code: code, Kind: pricing.KindPercent, AppliesTo: pricing.AppliesToOrder, PercentOff: pct, MaxDiscountCents: max, Priority: 100}
}

// store keeps a coupon's planned share as its stored rows on the state.
func (st *orderState) store(id int64, r *pricing.CouponResult) {
	if st.live == nil {
		st.live = map[int64][]LineDiscountRow{}
	}
	for _, ls := range r.Lines {
		if ls.DiscountCents == 0 {
			continue
		}
		u := EncodeUnits(ls.Units)
		st.live[id] = append(st.live[id], LineDiscountRow{CouponID: id, LineNo: ls.Line, DiscountCents: ls.DiscountCents, Units: &u})
	}
	if r.ShippingCents > 0 {
		st.live[id] = append(st.live[id], LineDiscountRow{CouponID: id, LineNo: ShippingLineNo, DiscountCents: r.ShippingCents})
	}
}

// partsOf is every stored part on line i, as a return reads them.
func (st *orderState) partsOf(t interface{ Fatal(...any) }, i int) []storedPart {
	var out []storedPart
	for id, rs := range st.live {
		for _, r := range rs {
			if r.LineNo != i {
				continue
			}
			runs, err := DecodeUnits(r.Units)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, storedPart{couponID: id, live: true, runs: runs})
		}
	}
	return out
}

func TestPlanCouponsTable(t *testing.T) {
	two := pricing.Cart{Lines: []pricing.Line{{ID: "l1", Quantity: 1, UnitPriceCents: 1_000}, {ID: "l2", Quantity: 1, UnitPriceCents: 1_000}}}
	cases := []struct {
		name     string
		returned []int64
		before   []pricing.Coupon
		add      pricing.Coupon
		discount int64
		lines    []int64 // the added coupon's part of each line
		payable  int64
	}{
		{"NewOrder", nil, nil, fixed("B", 100), 100, []int64{50, 50}, 1_900},
		{"AfterACoupon", nil, []pricing.Coupon{fixed("A", 900)}, percent("B", 50, 100_000), 550, []int64{275, 275}, 550},
		{"AfterALineReturn", []int64{1, 0}, []pricing.Coupon{fixed("A", 100)}, fixed("B", 100), 100, []int64{0, 100}, 850},
		{"NinetyNinePercentAfterAReturn", []int64{1, 0}, []pricing.Coupon{fixed("A", 100)}, percent("B", 99, 100_000), 940, []int64{0, 940}, 10},
		{"EverythingReturned", []int64{1, 1}, []pricing.Coupon{fixed("A", 100)}, fixed("B", 100), 0, []int64{0, 0}, 0},
		{"FullyDiscounted", nil, []pricing.Coupon{fixed("A", 2_000)}, fixed("B", 100), 0, []int64{0, 0}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cart := two
			st := &orderState{cart: &cart, returned: make([]int64, 2)}
			for i, c := range tc.before {
				var r pricing.Result
				if err := planCoupons(st, &cart, []pricing.Coupon{c}, &r); err != nil {
					t.Fatal(err)
				}
				st.store(int64(i+1), &r.Coupons[0])
			}
			copy(st.returned, tc.returned)
			var r pricing.Result
			if err := planCoupons(st, &cart, []pricing.Coupon{tc.add}, &r); err != nil {
				t.Fatal(err)
			}
			got := []int64{r.Lines[0].DiscountCents, r.Lines[1].DiscountCents}
			if r.Coupons[0].DiscountCents != tc.discount || got[0] != tc.lines[0] || got[1] != tc.lines[1] || r.PayableCents != tc.payable {
				t.Fatalf("planned %d on lines %v, payable %d; want %d on %v, payable %d",
					r.Coupons[0].DiscountCents, got, r.PayableCents, tc.discount, tc.lines, tc.payable)
			}
		})
	}
}

func TestPlanLineReturnTable(t *testing.T) {
	runs := func(per int64) []pricing.UnitRun { return []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: per}} }
	cases := []struct {
		name             string
		parts            []storedPart
		from, n          int64
		refund, discount int64
		back             map[int64]int64
	}{
		{"NoCoupon", nil, 0, 2, 2_000, 0, map[int64]int64{}},
		{"LiveCoupon", []storedPart{{1, true, runs(100)}}, 0, 1, 900, 100, map[int64]int64{1: 100}},
		{"RefundedCouponStillPaid", []storedPart{{1, false, runs(150)}, {2, true, runs(100)}}, 1, 1, 750, 250, map[int64]int64{2: 100}},
		{"NeverBelowZero", []storedPart{{1, false, runs(900)}, {2, true, runs(900)}}, 0, 1, 0, 1_000, map[int64]int64{2: 900}},
		{"UnitsPastTheParts", []storedPart{{1, true, runs(100)}}, 2, 1, 1_000, 0, map[int64]int64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planLineReturn(1_000, tc.parts, tc.from, tc.n)
			if p.refund != tc.refund || p.discount != tc.discount || fmt.Sprint(p.back) != fmt.Sprint(tc.back) {
				t.Fatalf("planned %+v, want refund %d discount %d back %v", p, tc.refund, tc.discount, tc.back)
			}
		})
	}
}

// Over any sequence of coupons added and units returned, on random carts:
// each coupon's allocation sums to its discount; no unit is discounted
// below 0 or above its price; a coupon added after a return discounts no
// returned unit; payable is the kept units' price less every discount on
// them; refunds never exceed what was paid, and equal it when every unit
// came back.
func TestPlanPropertyMoneyHolds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "lines")
		cart := pricing.Cart{}
		for i := range n {
			cart.Lines = append(cart.Lines, pricing.Line{ID: fmt.Sprintf("L%d", i), SKU: "s",
				Quantity: rapid.Int64Range(1, 4).Draw(t, "qty"), UnitPriceCents: rapid.Int64Range(0, 2_000).Draw(t, "price")})
		}
		st := &orderState{cart: &cart, returned: make([]int64, n)}
		var paid, refunded, id int64
		paid = cart.SubtotalCents()
		steps := rapid.IntRange(1, 12).Draw(t, "steps")
		for range steps {
			if rapid.Bool().Draw(t, "addCoupon") {
				id++
				var c pricing.Coupon
				if rapid.Bool().Draw(t, "fixedKind") {
					c = fixed(fmt.Sprintf("C%d", id), rapid.Int64Range(1, 3_000).Draw(t, "face"))
				} else {
					c = percent(fmt.Sprintf("C%d", id), rapid.Int64Range(1, 100).Draw(t, "pct"), rapid.Int64Range(1, 5_000).Draw(t, "max"))
				}
				before, err := st.taken()
				if err != nil {
					t.Fatal(err)
				}
				var r pricing.Result
				if err := planCoupons(st, &cart, []pricing.Coupon{c}, &r); err != nil {
					t.Fatal(err)
				}
				cr := &r.Coupons[0]
				var sum int64
				for _, ls := range cr.Lines {
					sum += ls.DiscountCents
					if d := pricing.UnitsDiscountCents(ls.Units, 0, st.returned[ls.Line]); d != 0 {
						t.Fatalf("coupon %s discounts %d of line %d's returned units", c.Code, d, ls.Line)
					}
					if u := pricing.UnitsDiscountCents(ls.Units, 0, cart.Lines[ls.Line].Quantity); u != ls.DiscountCents {
						t.Fatalf("line %d: units sum to %d, share %d", ls.Line, u, ls.DiscountCents)
					}
				}
				if sum != cr.DiscountCents {
					t.Fatalf("coupon %s: lines sum to %d, discount %d", c.Code, sum, cr.DiscountCents)
				}
				var kept int64
				for i, l := range cart.Lines {
					kept += (l.Quantity - st.returned[i]) * l.UnitPriceCents
				}
				var pr pricing.Result
				var p pricing.Pricer
				p.PriceAfter(&cart, before, nil, &pr)
				if r.PayableCents != pr.PayableCents-cr.DiscountCents || r.PayableCents < 0 || r.PayableCents > kept {
					t.Fatalf("payable %d: before %d, discount %d, kept %d", r.PayableCents, pr.PayableCents, cr.DiscountCents, kept)
				}
				st.store(id, cr)
				paid -= cr.DiscountCents
				continue
			}
			i := rapid.IntRange(0, n-1).Draw(t, "line")
			left := cart.Lines[i].Quantity - st.returned[i]
			if left == 0 {
				continue
			}
			k := rapid.Int64Range(1, left).Draw(t, "units")
			pl := planLineReturn(cart.Lines[i].UnitPriceCents, st.partsOf(t, i), st.returned[i], k)
			if pl.refund < 0 || pl.refund > k*cart.Lines[i].UnitPriceCents {
				t.Fatalf("refund %d of %d units at %d", pl.refund, k, cart.Lines[i].UnitPriceCents)
			}
			st.returned[i] += k
			refunded += pl.refund
			if refunded > paid {
				t.Fatalf("refunded %d against %d paid", refunded, paid)
			}
		}
		// Every unit comes back: refunds equal what was paid, to the cent.
		for i := range cart.Lines {
			if left := cart.Lines[i].Quantity - st.returned[i]; left > 0 {
				refunded += planLineReturn(cart.Lines[i].UnitPriceCents, st.partsOf(t, i), st.returned[i], left).refund
				st.returned[i] += left
			}
		}
		if refunded != paid {
			t.Fatalf("every unit returned: refunded %d, paid %d", refunded, paid)
		}
	})
}
