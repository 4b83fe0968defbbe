package checkout

import (
	"slices"
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

// TestChooseAutomaticNotApplied: every offer that does not join the cart
// is answered with why, in the offers' order (docs/automatic-offers.md,
// "Why an offer is not applied").
func TestChooseAutomaticNotApplied(t *testing.T) {
	comb, excl := models.StackingCombinable, models.StackingExclusive
	cart := pricing.Cart{Lines: []pricing.Line{
		{ID: "t", SKU: "T", CategoryIDs: []string{"trousers"}, Quantity: 1, UnitPriceCents: 4_000},
		{ID: "j", SKU: "J", CategoryIDs: []string{"jackets"}, Quantity: 1, UnitPriceCents: 12_000},
	}}
	jackets := &models.Template{ID: 3, Name: "Jackets deal", Kind: models.KindPercent, PercentOffBP: 1_000, AppliesTo: models.AppliesToItems,
		Target:    models.TemplateTarget{CategoryIDs: []string{"jackets"}},
		Condition: &models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"trousers"}}, MinQuantity: 2},
		Stacking:  comb, CodeMode: models.CodeModeAutomatic}
	named := func(tp *models.Template, name string) *models.Template { tp.Name = name; return tp }
	for _, tc := range []struct {
		name          string
		offers, typed []*models.Template
		chosen        []int64
		left          []OfferNotApplied
	}{
		{"AllJoin", []*models.Template{named(offer(1, 500, 0, comb), "A"), named(offer(2, 300, 0, comb), "B")}, nil, []int64{1, 2}, nil},
		{"Condition", []*models.Template{named(offer(1, 500, 0, comb), "A"), jackets}, nil, []int64{1},
			[]OfferNotApplied{{TemplateID: 3, Name: "Jackets deal", Reason: "condition_not_met",
				Message: "needs 2 items of category trousers, the cart has 1"}}},
		{"BelowMinimum", []*models.Template{named(offer(1, 500, 20_000, comb), "A")}, nil, nil,
			[]OfferNotApplied{{TemplateID: 1, Name: "A", Reason: "below_minimum",
				Message: "needs at least 20000 cents of the lines it applies to"}}},
		{"Stacking", []*models.Template{named(offer(1, 500, 0, comb), "A"), named(offer(2, 300, 0, excl), "B")}, nil, []int64{1},
			[]OfferNotApplied{{TemplateID: 2, Name: "B", Reason: "not_combinable",
				Message: "a coupon of template 2 is exclusive: it is the only coupon on its order"}}},
		{"TypedExclusive", []*models.Template{named(offer(1, 500, 0, comb), "A")}, []*models.Template{offer(9, 100, 0, excl)}, nil,
			[]OfferNotApplied{{TemplateID: 1, Name: "A", Reason: "not_combinable",
				Message: "a coupon of template 9 is exclusive: it is the only coupon on its order"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chosen, left := chooseAutomatic(tc.offers, tc.typed, &cart, true, 5, nil)
			var got []int64
			for _, c := range chosen {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, tc.chosen) {
				t.Fatalf("chose %v, want %v", got, tc.chosen)
			}
			if !slices.Equal(left, tc.left) {
				t.Fatalf("left out %+v, want %+v", left, tc.left)
			}
		})
	}
}
