package pages

import (
	"testing"
	"time"

	"couponsvc/models"
)

func TestExpiresIn(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		left time.Duration
		want string
	}{
		{7*24*time.Hour - time.Second, "expires in 7 days"},
		{3 * 24 * time.Hour, "expires in 3 days"},
		{2*24*time.Hour + 13*time.Hour, "expires in 3 days"},
		{2*24*time.Hour + 11*time.Hour, "expires in 2 days"},
		{47 * time.Hour, "expires in 47 hours"},
		{2 * time.Hour, "expires in 2 hours"},
		{119 * time.Minute, "expires in 119 minutes"},
		{2 * time.Minute, "expires in 2 minutes"},
		{30 * time.Second, "expires in a minute"},
		{0, "expired"},
		{-time.Hour, "expired"},
	} {
		if got := expiresIn(now, now.Add(tc.left)); got != tc.want {
			t.Errorf("expiresIn(%v left) = %q, want %q", tc.left, got, tc.want)
		}
	}
}

func TestRestatesValue(t *testing.T) {
	p := &Pages{money: newMoneyFormat("USD")}
	fixed := func(name string, cents int64) models.Template {
		return models.Template{Name: name, Kind: models.KindFixed, FaceValueCents: cents}
	}
	percent := func(name string, pct, capCents int64) models.Template {
		return models.Template{Name: name, Kind: models.KindPercent, PercentOff: pct, MaxDiscountCents: capCents}
	}
	for _, tc := range []struct {
		t    models.Template
		want bool
	}{
		{fixed("$5 off your order", 500), true},
		{fixed("Save $5.00 today", 500), true},
		{fixed("$50 off big orders", 500), false},
		{fixed("$5.50 off", 500), false},
		{fixed("Weekend treat", 200), false},
		{fixed("$2.50 off", 250), true},
		{percent("15% off, up to $20", 15, 2000), true},
		{percent("15% off", 15, 2000), false}, // the cap is the value too
		{percent("Spring treat", 15, 2000), false},
	} {
		if got := p.restatesValue(tc.t); got != tc.want {
			t.Errorf("restatesValue(%q) = %v, want %v", tc.t.Name, got, tc.want)
		}
	}
}
