package checkout

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"

	"pgregory.net/rapid"
)

func offer(id, off, minOrder int64, stacking string) *models.Template {
	return &models.Template{ID: id, Kind: models.KindFixed, AppliesTo: models.AppliesToOrder, FaceValueCents: off,
		MinOrderCents: minOrder, Stacking: stacking, CodeMode: models.CodeModeAutomatic, Priority: 100}
}

func cartOf(cents ...int64) pricing.Cart {
	var c pricing.Cart
	for i, p := range cents {
		c.Lines = append(c.Lines, pricing.Line{ID: string(rune('a' + i)), Quantity: 1, UnitPriceCents: p})
	}
	return c
}

// TestChooseAutomatic: which offers join a cart (docs/automatic-offers.md).
func TestChooseAutomatic(t *testing.T) {
	comb, excl := models.StackingCombinable, models.StackingExclusive
	cart := cartOf(3000, 3000)
	ids := func(ts []*models.Template) (out []int64) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		offers, typed []*models.Template
		want          []int64
	}{
		{"OK", []*models.Template{offer(1, 500, 5000, comb)}, nil, []int64{1}},
		{"BelowMinimum", []*models.Template{offer(1, 500, 6001, comb)}, nil, nil},
		{"TwoCombinable", []*models.Template{offer(1, 500, 0, comb), offer(2, 300, 0, comb)}, nil, []int64{1, 2}},
		{"ExclusiveAloneFirst", []*models.Template{offer(1, 500, 0, excl), offer(2, 300, 0, comb)}, nil, []int64{1}},
		{"ExclusiveAfterAnother", []*models.Template{offer(2, 300, 0, comb), offer(1, 500, 0, excl)}, nil, []int64{2}},
		{"TypedExclusiveKeepsTheCart", []*models.Template{offer(1, 500, 0, comb)}, []*models.Template{offer(9, 100, 0, excl)}, nil},
		{"TypedCombinable", []*models.Template{offer(1, 500, 0, comb)}, []*models.Template{offer(9, 100, 0, comb)}, []int64{1}},
		{"NothingLeftToDiscount", []*models.Template{offer(1, 500, 0, comb)}, []*models.Template{offer(9, 6000, 0, comb)}, nil},
		{"SameTemplateTyped", []*models.Template{offer(9, 500, 0, comb)}, []*models.Template{offer(9, 100, 0, comb)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chosen, _ := chooseAutomatic(tc.offers, tc.typed, &cart, true, 5, nil)
			got := ids(chosen)
			if len(got) != len(tc.want) {
				t.Fatalf("chose %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("chose %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestChooseAutomaticProperties: whatever the offers and typed coupons, the
// chosen set with the typed coupons is one the stacking rules accept, and
// every chosen offer discounts something on the cart with them, and so
// does every typed coupon that did without them.
func TestChooseAutomaticProperties(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		mk := func(label string, base int64) []*models.Template {
			n := rapid.IntRange(0, 4).Draw(r, label+"_n")
			out := make([]*models.Template, n)
			for i := range out {
				st := rapid.SampledFrom([]string{models.StackingCombinable, models.StackingExclusive}).Draw(r, label+"_stacking")
				out[i] = offer(base+int64(i), rapid.Int64Range(1, 5000).Draw(r, label+"_off"),
					rapid.Int64Range(0, 8000).Draw(r, label+"_min"), st)
			}
			return out
		}
		offers, typed := mk("offer", 1), mk("typed", 100)
		cart := cartOf(rapid.Int64Range(1, 4000).Draw(r, "p1"), rapid.Int64Range(1, 4000).Draw(r, "p2"))
		maxPer := rapid.IntRange(1, 5).Draw(r, "max")
		chosen, _ := chooseAutomatic(offers, typed, &cart, true, maxPer, nil)
		set := append(append([]*models.Template(nil), typed...), chosen...)
		if len(chosen) > 0 && stackingError(set, maxPer) != nil {
			r.Fatalf("chose %d offers the stacking rules refuse with the typed ones", len(chosen))
		}
		pcs := make([]pricing.Coupon, len(set))
		for i, st := range set {
			pcs[i] = core.PricingCoupon(st, string(rune('A'+i)))
		}
		res := pricing.Price(&cart, pcs)
		alone := pricing.Price(&cart, pcs[:len(typed)])
		for i := range set {
			before := i < len(typed) && alone.Coupons[i].Refusal == "" && alone.Coupons[i].DiscountCents > 0
			if (i >= len(typed) || before) && (res.Coupons[i].Refusal != "" || res.Coupons[i].DiscountCents <= 0) {
				r.Fatalf("coupon of template %d priced %+v with the chosen offers", set[i].ID, res.Coupons[i])
			}
		}
	})
}
