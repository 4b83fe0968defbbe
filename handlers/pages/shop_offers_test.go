package pages_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPagesCheckoutOfferRefused: a shopper with no code takes the
// automatic offer on her first order; on her next cart the service refuses
// the offer's claim (the offer's per-user limit of 1, or its campaign's
// per-customer cap of 1), so the check shows it not applied with the
// service's reason in her words, and the order is placed at its price with
// no second coupon.
func TestPagesCheckoutOfferRefused(t *testing.T) {
	cases := []struct {
		name             string
		perUser, perCust int64
		reason           string
	}{
		{"ErrUserLimitReached", 1, 0, "You already have as many of these as you may."},
		{"ErrCampaignLimit", 5, 1, "You already have as many coupons of this campaign as you may."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testsupport.NewPageEnv(t)
			camp, err := e.Service.CreateCampaign(context.Background(), "test", models.Campaign{Name: "Autumn", PerCustomerLimit: tc.perCust})
			if err != nil {
				t.Fatal(err)
			}
			autumnOffer(t, e, camp.ID, 3000, tc.perUser)
			shopper := e.Client(t)
			shopper.Login("shopper")
			// The page's text, its tags read as spaces.
			applied := "Autumn sale · Automatic: $5 off your order on orders over $30 : −$5.00"

			p := shopper.Post("/checkout/check", cartForm(t, shopper, ""))
			if p.Status != http.StatusOK || !strings.Contains(p.Text(), applied) {
				t.Fatalf("first check: %d, want the offer applied: %s", p.Status, p.Text())
			}
			p = shopper.Post("/checkout/order", cartForm(t, shopper, ""))
			if p.Status != http.StatusOK || !strings.Contains(p.Text(), "You paid $33.50 and saved $5.00 .") || !strings.Contains(p.Text(), applied) {
				t.Fatalf("first order: %d %s", p.Status, p.Text())
			}

			p = shopper.Post("/checkout/check", cartForm(t, shopper, ""))
			notApplied := "Autumn sale · Automatic: $5 off your order on orders over $30 : not applied to this cart " + tc.reason
			if p.Status != http.StatusOK || !strings.Contains(p.Text(), notApplied) || strings.Contains(p.Text(), "−$5.00") {
				t.Fatalf("second check: %d, want the offer not applied with the reason: %s", p.Status, p.Text())
			}
			p = shopper.Post("/checkout/order", cartForm(t, shopper, ""))
			if p.Status != http.StatusOK || !strings.Contains(p.Text(), "You paid $38.50 , no code applied.") {
				t.Fatalf("second order: %d %s", p.Status, p.Text())
			}
			if mine := e.UserCoupons(t, "shopper"); len(mine) != 1 || mine[0].Status != models.CouponUsed {
				t.Fatalf("the shopper holds %+v, want the one used coupon of her first order", mine)
			}
		})
	}
}
