package pages_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// offerHint is the reason the page gives on an offer's line.
var offerHint = regexp.MustCompile(`data-offer-line="(\d+)"[^>]*>(?:[^<]|<[^/]|</[^l])*not applied: <span data-offer-hint>([^<]*)</span>`)

// TestShopCheckoutOfferHint: an offer whose condition the cart does not
// meet is shown not applied with the service's reason in the shopper's
// words, whether another offer joins the cart (validate answers it) or
// none does (the refusal carries it) (docs/automatic-offers.md).
func TestShopCheckoutOfferHint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		autumn bool
	}{{"AnotherOfferJoins", true}, {"NoOfferJoins", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := testsupport.NewPageEnv(t)
			if tc.autumn {
				autumnOffer(t, e, e.Demo.Campaign.ID, 3000, 5)
			}
			mug, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: e.Demo.Campaign.ID,
				Name: "Mug deal", Kind: models.KindPercent, PercentOff: 10, MaxDiscountCents: 10000, AppliesTo: models.AppliesToItems,
				Target:     models.TemplateTarget{CategoryIDs: []string{"home"}},
				Condition:  &models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"clothing"}}, MinQuantity: 3},
				TotalStock: 20, PerUserLimit: 5, ValidDays: 30, Stacking: models.StackingCombinable, CodeMode: models.CodeModeAutomatic})
			if err != nil {
				t.Fatal(err)
			}
			shopper := e.Client(t)
			shopper.Login("shopper")
			p := shopper.Post("/checkout/check", cartForm(t, shopper, ""))
			m := offerHint.FindAllStringSubmatch(p.Body, -1)
			if p.Status != http.StatusOK || len(m) != 1 || m[0][1] != strconv.FormatInt(mug.ID, 10) ||
				m[0][2] != "needs 3 items of category clothing, the cart has 2" {
				t.Fatalf("check: %d, hints %q: %s", p.Status, m, p.Text())
			}
		})
	}
}
