package services_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
)

// A hold of coupons one of whose templates the order already carries (a
// coupon of it redeemed one step) is refused not_combinable naming that
// template, whether it is one coupon or one of several (order_coupons is
// one multi-row INSERT, refused by its unique (order_id, template_id)
// index), and changes nothing: the coupons stay issued, the order keeps its
// one coupon.
func TestHoldRefusesATemplateTheOrderCarries(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.tmpl(models.StackingCombinable, 500, 0, 0)
	b := f.tmpl(models.StackingCombinable, 300, 0, 0)
	if _, err := f.redeem(f.claim(a, "u1"), "carries-a", 10_000); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("order carries-a already carries a coupon of template %d", a.ID)
	for _, tc := range []struct {
		name    string
		coupons []*models.Coupon
	}{
		{"OneCoupon", []*models.Coupon{f.claim(a, "u1")}},
		{"SecondOfTwo", []*models.Coupon{f.claim(b, "u1"), f.claim(a, "u1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.hold("carries-a", 10_000, 600, tc.coupons...)
			var e *models.Error
			if !models.IsCode(err, models.CodeNotCombinable) || !errors.As(err, &e) || e.Message != want {
				t.Fatalf("hold: %v, want not_combinable %q", err, want)
			}
			for _, c := range tc.coupons {
				if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil {
					t.Errorf("coupon %d: %s on %v, want issued on no order", c.ID, got.Status, got.OrderID)
				}
			}
			o, found, err := f.Checkout.ReadOrder(f.Ctx, "carries-a")
			if err != nil || !found || o.Coupons != 1 || o.HoldState != nil {
				t.Errorf("order: %+v found %v %v, want its one redeemed coupon and no hold", o, found, err)
			}
		})
	}
}
