package models_test

import (
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

func TestPrice(t *testing.T) {
	fixed := func(face, min int64) *models.Template {
		return &models.Template{Kind: models.KindFixed, FaceValueCents: face, MinOrderCents: min}
	}
	percent := func(p, maxCents, min int64) *models.Template {
		return &models.Template{Kind: models.KindPercent, PercentOff: p, MaxDiscountCents: maxCents, MinOrderCents: min}
	}
	cases := []struct {
		name      string
		amount    int64
		ts        []*models.Template
		discounts []int64
		below     []bool
		total     int64
	}{
		{"fixed", 10000, []*models.Template{fixed(500, 0)}, []int64{500}, []bool{false}, 500},
		{"fixed above the amount", 300, []*models.Template{fixed(500, 0)}, []int64{300}, []bool{false}, 300},
		{"percent under its cap", 10000, []*models.Template{percent(10, 5000, 0)}, []int64{1000}, []bool{false}, 1000},
		{"percent with cap", 100000, []*models.Template{percent(20, 1500, 0)}, []int64{1500}, []bool{false}, 1500},
		{"percent rounds down", 999, []*models.Template{percent(10, 5000, 0)}, []int64{99}, []bool{false}, 99},
		{"minimum met", 5000, []*models.Template{fixed(500, 5000)}, []int64{500}, []bool{false}, 500},
		{"minimum crossed", 4999, []*models.Template{fixed(500, 5000)}, []int64{0}, []bool{true}, 0},
		{"two coupons: percent on what the fixed one left", 10000,
			[]*models.Template{percent(10, 5000, 0), fixed(2000, 0)}, []int64{800, 2000}, []bool{false, false}, 2800},
		{"two fixed: largest first, total capped by the amount", 1000,
			[]*models.Template{fixed(300, 0), fixed(900, 0)}, []int64{100, 900}, []bool{false, false}, 1000},
		{"two percent: largest percent first", 10000,
			[]*models.Template{percent(10, 5000, 0), percent(50, 5000, 0)}, []int64{500, 5000}, []bool{false, false}, 5500},
		{"minimum on the original amount, not on what is left", 6000,
			[]*models.Template{fixed(2000, 0), percent(10, 5000, 5000)}, []int64{2000, 400}, []bool{false, false}, 2400},
		{"one of two below its minimum", 3000,
			[]*models.Template{fixed(2000, 0), percent(10, 5000, 5000)}, []int64{2000, 0}, []bool{false, true}, 2000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := models.Price(c.amount, c.ts)
			if !reflect.DeepEqual(p.Discounts, c.discounts) || !reflect.DeepEqual(p.BelowMinimum, c.below) ||
				p.DiscountCents != c.total || p.PayableCents != c.amount-c.total {
				t.Fatalf("Price(%d) = %+v, want discounts %v below %v total %d", c.amount, p, c.discounts, c.below, c.total)
			}
			if len(c.ts) == 1 && !c.below[0] && p.DiscountCents != c.ts[0].Discount(c.amount) {
				t.Fatalf("one coupon: %d, Template.Discount says %d", p.DiscountCents, c.ts[0].Discount(c.amount))
			}
		})
	}
}

func TestStackingDefault(t *testing.T) {
	if models.CodeHeld.Word() != "held" || models.CodeNotCombinable.Word() != "not_combinable" ||
		models.CodeHoldExpired.Word() != "hold_expired" || models.CodeReturnExceedsOrder.Word() != "return_exceeds_order" {
		t.Fatal("checkout result words")
	}
	if models.CodeHeld != 19 || models.CodeNotCombinable != 20 || models.CodeHoldExpired != 21 || models.CodeReturnExceedsOrder != 22 {
		t.Fatal("checkout result numbers")
	}
}
