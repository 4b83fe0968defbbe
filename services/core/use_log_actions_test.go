package core

import (
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"
)

func TestUseLogActionsKeepThePlansParts(t *testing.T) {
	two := &pricing.CouponResult{DiscountCents: 975, Actions: []pricing.CouponResult{{DiscountCents: 500}, {DiscountCents: 475}}}
	one := &pricing.CouponResult{DiscountCents: 1_000}
	for _, tc := range []struct {
		name   string
		redeem *pricing.CouponResult
		ret    *pricing.CouponResult
		want   string
	}{
		{"SeveralActions", two, &pricing.CouponResult{DiscountCents: 775, Actions: []pricing.CouponResult{{DiscountCents: 500}, {DiscountCents: 275}}},
			`[{"discount_cents":500,"kept_cents":500},{"discount_cents":475,"kept_cents":275}]`},
		{"SeveralBelowTheMinimum", two, &pricing.CouponResult{Refusal: pricing.RefusalBelowMinimum},
			`[{"discount_cents":500,"kept_cents":0},{"discount_cents":475,"kept_cents":0}]`},
		{"OneAction", one, &pricing.CouponResult{DiscountCents: 600},
			`[{"discount_cents":1000,"kept_cents":600}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeepUseLogActions(EncodeUseLogActions(tc.redeem), tc.ret)
			if err != nil || got == nil || *got != tc.want {
				t.Fatalf("kept %v (%v), want %s", deref(got), err, tc.want)
			}
		})
	}
	t.Run("NoneStored", func(t *testing.T) {
		if got, err := KeepUseLogActions(nil, one); got != nil || err != nil {
			t.Fatalf("kept %v (%v), want nil", deref(got), err)
		}
	})
	t.Run("ErrActionsChanged", func(t *testing.T) {
		if _, err := KeepUseLogActions(EncodeUseLogActions(one), two); err == nil {
			t.Fatal("two actions kept on a row of one: no error")
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
