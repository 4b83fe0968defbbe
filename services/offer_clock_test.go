package services_test

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestOfferCachesReadTheServiceClock: the template and shared-code caches
// and the campaign caps an instance keeps for TemplateCacheTTL are aged by the service's
// clock (Config.Now), so a test moves them on with the clock
// (docs/automatic-offers.md, "The live offers, in memory").
func TestOfferCachesReadTheServiceClock(t *testing.T) {
	f := testenv.NewFixtureAt(t, services.Config{}, time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC))
	camp := f.CreateCampaign(models.Campaign{Name: "campaign", PerCustomerLimit: 2})
	tp := f.Template(models.Template{CampaignID: camp.ID, Name: "before"})
	db := f.Backends.DB

	t.Run("Template", func(t *testing.T) {
		if got, err := f.Core.Template(f.Ctx, tp.ID); err != nil || got.Name != "before" {
			t.Fatalf("template %+v, %v", got, err)
		}
		if err := db.Model(&models.Template{}).Where("id = ?", tp.ID).Update("name", "after").Error; err != nil {
			t.Fatal(err)
		}
		if got, err := f.Core.Template(f.Ctx, tp.ID); err != nil || got.Name != "before" {
			t.Fatalf("within the second: %q, %v; want the cached \"before\"", got.Name, err)
		}
		f.Clock.Advance(2 * time.Second)
		if got, err := f.Core.Template(f.Ctx, tp.ID); err != nil || got.Name != "after" {
			t.Fatalf("2 s later on the service's clock: %q, %v; want \"after\"", got.Name, err)
		}
	})
	t.Run("SharedCode", func(t *testing.T) {
		shared := f.Template(models.Template{CampaignID: camp.ID, CodeMode: models.CodeModeShared, SharedCode: "POSTER42"})
		validate := func() string {
			t.Helper()
			res, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 6000, UserID: "ann", CouponCodes: []string{"POSTER42"}})
			if err != nil {
				t.Fatal(err)
			}
			return res.Result
		}
		if got := validate(); got != "ok" {
			t.Fatalf("the shared code validates %q, want ok", got)
		}
		if err := db.Model(&models.Template{}).Where("id = ?", shared.ID).Update("shared_code", "POSTER43").Error; err != nil {
			t.Fatal(err)
		}
		if got := validate(); got != "ok" {
			t.Fatalf("within the second: %q, want the cached ok", got)
		}
		f.Clock.Advance(2 * time.Second)
		if got := validate(); got != "not_found" {
			t.Fatalf("2 s later on the service's clock: %q, want not_found", got)
		}
	})
	t.Run("CampaignCap", func(t *testing.T) {
		if cc, err := f.Core.CampaignCapOf(f.Ctx, camp.ID); err != nil || cc.Limit != 2 {
			t.Fatalf("cap %+v, %v", cc, err)
		}
		if err := db.Model(&models.Campaign{}).Where("id = ?", camp.ID).Update("per_customer_limit", 3).Error; err != nil {
			t.Fatal(err)
		}
		if cc, err := f.Core.CampaignCapOf(f.Ctx, camp.ID); err != nil || cc.Limit != 2 {
			t.Fatalf("within the second: %+v, %v; want the cached 2", cc, err)
		}
		f.Clock.Advance(2 * time.Second)
		if cc, err := f.Core.CampaignCapOf(f.Ctx, camp.ID); err != nil || cc.Limit != 3 {
			t.Fatalf("2 s later on the service's clock: %+v, %v; want 3", cc, err)
		}
	})
}
