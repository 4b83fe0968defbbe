package services_test

import (
	"context"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestFillCurrency: at start, a campaign or template written before
// currencies (an empty currency) gets the deployment's; rows with a currency keep
// theirs, and a second run changes nothing.
func TestFillCurrency(t *testing.T) {
	env := testenv.New(t, services.Config{CoreConfig: services.CoreConfig{Currency: "EUR"}})
	ctx := context.Background()
	svc := env.Service
	eur, err := svc.CreateCampaign(ctx, "admin", models.Campaign{Name: "Herbst"})
	if err != nil {
		t.Fatal(err)
	}
	jpy, err := svc.CreateCampaign(ctx, "admin", models.Campaign{Name: "Aki", Currency: "JPY"})
	if err != nil {
		t.Fatal(err)
	}
	if eur.Currency != "EUR" || jpy.Currency != "JPY" {
		t.Fatalf("campaign currencies %q and %q, want EUR (the deployment's) and JPY", eur.Currency, jpy.Currency)
	}
	tp := models.Template{CampaignID: eur.ID, Name: "Five off", Kind: models.KindFixed, FaceValueCents: 500,
		TotalStock: 10, PerUserLimit: 1, ValidDays: 30}
	created, err := svc.CreateTemplate(ctx, "admin", tp)
	if err != nil {
		t.Fatal(err)
	}
	if created.Currency != "EUR" {
		t.Fatalf("template currency %q, want EUR", created.Currency)
	}
	tp.CampaignID, tp.Currency = jpy.ID, "JPY"
	if _, err := svc.CreateTemplate(ctx, "admin", tp); err != nil {
		t.Fatal(err)
	}
	// Rows as written before currencies: empty.
	db := env.Backends.DB
	for _, sql := range []string{"UPDATE campaigns SET currency = '' WHERE id = ?", "UPDATE templates SET currency = '' WHERE campaign_id = ?"} {
		if err := db.Exec(sql, eur.ID).Error; err != nil {
			t.Fatal(err)
		}
	}
	var updatedAt models.Template
	if err := db.First(&updatedAt, created.ID).Error; err != nil {
		t.Fatal(err)
	}
	n, err := svc.FillCurrency(ctx)
	if err != nil || n != 2 {
		t.Fatalf("filled %d rows (%v), want 2", n, err)
	}
	var camps []models.Campaign
	var tps []models.Template
	if err := db.Order("id").Find(&camps).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Order("id").Find(&tps).Error; err != nil {
		t.Fatal(err)
	}
	if len(camps) != 2 || camps[0].Currency != "EUR" || camps[1].Currency != "JPY" {
		t.Fatalf("campaigns after the fill: %+v", camps)
	}
	if len(tps) != 2 || tps[0].Currency != "EUR" || tps[1].Currency != "JPY" {
		t.Fatalf("templates after the fill: %+v", tps)
	}
	if !tps[0].UpdatedAt.Equal(updatedAt.UpdatedAt) {
		t.Fatalf("the fill moved updated_at from %v to %v", updatedAt.UpdatedAt, tps[0].UpdatedAt)
	}
	if n, err := svc.FillCurrency(ctx); err != nil || n != 0 {
		t.Fatalf("a second fill changed %d rows (%v), want 0", n, err)
	}
}
