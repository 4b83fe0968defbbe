package services_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// TestEligibilityAtTheTill: the till's check of a typed code, its sale's
// preview and the sale judge a rule on the channel till; the shop's
// validate names the channel it is given (the shop's pages say web).
func TestEligibilityAtTheTill(t *testing.T) {
	for _, c := range []struct {
		rule     string
		tillOK   bool
		webWord  string
		tillWord string
	}{
		{`channel == "till"`, true, "not_eligible", "ok"},
		{`channel == "web"`, false, "ok", "not_eligible"},
	} {
		t.Run(c.rule, func(t *testing.T) {
			f := newCheckoutFixture(t, services.Config{}, models.Template{Kind: models.KindFixed, FaceValueCents: 500,
				TotalStock: 5, PerUserLimit: 5, ValidDays: 10, Eligibility: c.rule})
			cp := f.claim("u1")
			chk, err := f.Checkout.CheckRedemption(f.Ctx, cp.Code, "t-1", 5_000)
			if err != nil {
				t.Fatal(err)
			}
			if got := chk.Refusal == nil; got != c.tillOK || (!c.tillOK && models.ErrorCode(chk.Refusal) != models.CodeNotEligible) {
				t.Fatalf("till check: refusal %v, want ok %v", chk.Refusal, c.tillOK)
			}
			lines := []pricing.Line{line("l1", 2, 1_500)}
			req := checkout.CheckoutRequest{OrderID: "t-1", CouponCodes: []string{cp.Code}, UserID: "u1", Actor: "till",
				Cart: checkout.Cart{Lines: lines}}
			pre, err := f.Checkout.PreviewSale(f.Ctx, req)
			if err != nil || pre.Result != c.tillWord || pre.Coupons[0].Result != c.tillWord {
				t.Fatalf("till preview: %+v, %v; want %s", pre, err, c.tillWord)
			}
			req.Cart.Channel = checkout.ChannelWeb
			web, err := f.Checkout.Validate(f.Ctx, req)
			if err != nil || web.Result != c.webWord {
				t.Fatalf("web validate: %+v, %v; want %s", web, err, c.webWord)
			}
			req.Cart.Channel = ""
			sale, err := f.Checkout.RedeemSale(f.Ctx, req, "till-1")
			if c.tillOK {
				if err != nil || sale.DiscountCents != 500 {
					t.Fatalf("till sale: %+v, %v; want 500 off", sale, err)
				}
				return
			}
			if models.ErrorCode(err) != models.CodeNotEligible {
				t.Fatalf("till sale: %+v, %v; want not_eligible", sale, err)
			}
			if got := f.coupon(cp.ID).Status; got != models.CouponIssued {
				t.Fatalf("after a refused sale the coupon is %s", got)
			}
		})
	}
}
