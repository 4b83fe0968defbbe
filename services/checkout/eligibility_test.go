package checkout

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/models/eligibility"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// TestEligibilityInThePlan: couponRefusal judges the template's rule on the
// facts it is given, before pricing: not_eligible naming the rule, the
// campaign's counts of the template's own campaign, a nil facts as an
// anonymous customer, a rule that fails as it runs as not eligible.
func TestEligibilityInThePlan(t *testing.T) {
	cart := pricing.OneLine("USD", 5000)
	sunday := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	f := &facts{rules: &eligibility.Cache{}, counts: map[int64]campaignCounts{7: {CampaignID: 7, Claims: 2, Redemptions: 1}}}
	f.env.Customer.Tags, f.env.Channel, f.env.Now = []string{"vip"}, eligibility.ChannelWeb, eligibility.NowIn(sunday, time.UTC)
	f.env.Order = eligibility.Order{SubtotalCents: 5000, Items: 1, Currency: "USD"}
	cases := []struct {
		name, rule string
		campaign   int64
		f          *facts
		want       models.Code
	}{
		{"NoRule", "", 7, f, models.CodeOK},
		{"TagAndChannel", `"vip" in customer.tags && channel == "web"`, 7, f, models.CodeOK},
		{"Anonymous", `"vip" in customer.tags`, 7, nil, models.CodeNotEligible},
		{"CountsOfItsCampaign", `customer.redemptions_in_campaign == 1 && customer.claims_in_campaign == 2`, 7, f, models.CodeOK},
		{"CountsOfAnotherCampaign", `customer.redemptions_in_campaign == 1`, 8, f, models.CodeNotEligible},
		{"Order", `order.subtotal_cents == 5000 && order.items == 1 && order.currency == "USD"`, 7, f, models.CodeOK},
		{"Sunday", `now.weekday == 0 && now.hour == 10`, 7, f, models.CodeOK},
		{"RunTimeFault", `customer.tags[5] == "x"`, 7, f, models.CodeNotEligible},
		{"FalseBeforeMinimum", `false`, 7, f, models.CodeNotEligible},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := &models.Template{ID: int64(i + 1), CampaignID: c.campaign, Kind: models.KindFixed, FaceValueCents: 500,
				MinOrderCents: 9000, Currency: "USD", Eligibility: c.rule}
			pc := fixed("C", 500)
			pc.MinOrderCents, pc.Currency = 9000, "USD"
			r := pricing.Price(&cart, []pricing.Coupon{pc})
			err := couponRefusal(&r.Coupons[0], tp, &cart, false, c.f)
			got := models.ErrorCode(err)
			if c.want == models.CodeOK {
				// The rule admits: pricing's refusal (the minimum) answers.
				if got != models.CodeBelowMinimum {
					t.Fatalf("couponRefusal = %v, want below_minimum after an admitting rule", err)
				}
				return
			}
			if got != c.want {
				t.Fatalf("couponRefusal = %v, want %v", err, c.want)
			}
			if de := err.(*models.Error); de.Field != "customer" || de.Message != "coupon C is only for customers who meet its rule: "+c.rule {
				t.Fatalf("refusal %+v", de)
			}
		})
	}
}

// TestEligibilityRefusalUsesTheServiceCache: a path that read no facts
// judges a rule as an anonymous customer's over the service's own cache,
// so the rule is compiled once, not on every call; facts without a cache
// admit no one (docs/eligibility.md).
func TestEligibilityRefusalUsesTheServiceCache(t *testing.T) {
	s := &Checkout{Core: &core.Core{}}
	vip := &models.Template{ID: 1, CampaignID: 7, Eligibility: `"vip" in customer.tags`}
	first := &models.Template{ID: 2, CampaignID: 7, Eligibility: `customer.orders_count == 0`}
	for i := range 3 {
		if err := eligibilityRefusal(s.factsOr(nil), vip, "C"); models.ErrorCode(err) != models.CodeNotEligible {
			t.Fatalf("call %d: vip rule on no facts = %v, want not_eligible", i, err)
		}
		if err := eligibilityRefusal(s.factsOr(nil), first, "C"); err != nil {
			t.Fatalf("call %d: first-order rule on no facts = %v, want admitted", i, err)
		}
	}
	if n := s.rules.Len(); n != 2 {
		t.Fatalf("the service's cache holds %d rules, want 2", n)
	}
	if err := eligibilityRefusal(&facts{}, first, "C"); models.ErrorCode(err) != models.CodeNotEligible {
		t.Fatalf("facts without a cache: %v, want not_eligible", err)
	}
}
