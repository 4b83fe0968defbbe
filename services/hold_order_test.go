package services_test

import (
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// codesOf lists the coupon codes of a checkout answer in its order.
func heldCodesOf(r *checkout.CheckoutResult) string {
	var out []string
	for _, c := range r.Coupons {
		out = append(out, c.CouponCode)
	}
	return strings.Join(out, ",")
}

// The confirm, a replay of the hold and the hold's read list the coupons
// in the order the hold did (its request's), not sorted by code.
func TestConfirmListsCouponsAsTheHold(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 300, 0, 0), "u1")
	first, second := a, b
	if a.Code < b.Code {
		first, second = b, a // the larger code first: sorted would differ
	}
	want := first.Code + "," + second.Code
	h, err := f.hold("order-kept", 5_000, 60, first, second)
	if err != nil || heldCodesOf(h) != want {
		t.Fatalf("hold %q, %v; want %q", heldCodesOf(h), err, want)
	}
	again, err := f.hold("order-kept", 5_000, 60, first, second)
	if err != nil || !again.Duplicate || heldCodesOf(again) != want {
		t.Fatalf("hold again %q %+v, %v; want a duplicate listing %q", heldCodesOf(again), again, err, want)
	}
	got, err := f.Checkout.GetHold(f.Ctx, "order-kept")
	if err != nil || heldCodesOf(got) != want {
		t.Fatalf("read hold %q, %v; want %q", heldCodesOf(got), err, want)
	}
	conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "order-kept"})
	if err != nil || heldCodesOf(conf) != want || conf.DiscountCents != 800 {
		t.Fatalf("confirm %q %+v, %v; want %q", heldCodesOf(conf), conf, err, want)
	}
	// The hold's codes in another order are the same hold.
	swapped, err := f.hold("order-kept", 5_000, 60, second, first)
	if err != nil || !swapped.Duplicate || heldCodesOf(swapped) != want {
		t.Fatalf("hold swapped %q %+v, %v; want a duplicate listing %q", heldCodesOf(swapped), swapped, err, want)
	}
}
