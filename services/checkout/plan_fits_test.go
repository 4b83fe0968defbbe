package checkout

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// planFits is the one decision of whether a hold or a late confirm fits
// next to what the order carries (docs/checkout.md, "The order state and
// the plan"): the used, held and settled discounts (the settled at most
// what the order kept) and the request's own never sum over what it kept.
func TestPlanFits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       orderDiscounts
		adding  int64
		wantSum int64 // 0: fits
		payable int64
	}{
		{name: "OK alone", d: orderDiscounts{Kept: 600}, adding: 500, payable: 100},
		{name: "OK to the cent", d: orderDiscounts{Kept: 600, Used: 100}, adding: 500, payable: 0},
		{name: "OK beside a hold", d: orderDiscounts{Kept: 1000, Used: 100, Held: 200}, adding: 700, payable: 0},
		{name: "OK settled left out of the payable", d: orderDiscounts{Kept: 1000, Settled: 300}, adding: 500, payable: 500},
		{name: "OK nothing added", d: orderDiscounts{Kept: 0}, adding: 0, payable: 0},
		{name: "ErrOverUsed", d: orderDiscounts{Kept: 600, Used: 200}, adding: 500, wantSum: 700},
		{name: "ErrOverHeld", d: orderDiscounts{Kept: 600, Held: 101}, adding: 500, wantSum: 601},
		{name: "ErrOverSettled", d: orderDiscounts{Kept: 600, Settled: 150}, adding: 500, wantSum: 650},
		{name: "ErrSettledCappedAtKept", d: orderDiscounts{Kept: 400, Settled: 900}, adding: 1, wantSum: 401},
		{name: "ErrReturnedInFull", d: orderDiscounts{Kept: 0}, adding: 1, wantSum: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := planFits("o-1", tc.d, tc.adding)
			if tc.wantSum == 0 {
				if err != nil {
					t.Fatalf("planFits(%+v, %d) = %v, want nil", tc.d, tc.adding, err)
				}
				if got := tc.d.payableWith(tc.adding); got != tc.payable {
					t.Errorf("payableWith(%d) = %d, want %d", tc.adding, got, tc.payable)
				}
				return
			}
			want := models.Errorf(models.CodeNotCombinable,
				"the coupons of order o-1 would discount %d cents of its %d: those redeemed on it already leave too little", tc.wantSum, tc.d.Kept)
			if !models.IsCode(err, models.CodeNotCombinable) || err.Error() != want.Error() {
				t.Fatalf("planFits(%+v, %d) = %v, want %v", tc.d, tc.adding, err, want)
			}
		})
	}
}
