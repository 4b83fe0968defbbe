package pages

import (
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

func TestExpiresIn(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone data")
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		until time.Time
		loc   *time.Location
		want  string
	}{
		{time.Date(2026, 12, 9, 0, 0, 0, 0, time.UTC), time.UTC, "expires in 7 days"}, // the end of 8 Dec
		{time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC), time.UTC, "expires in 3 days"},
		{time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), time.UTC, "expires tomorrow"},
		{time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), time.UTC, "expires in 12 hours"},
		{now.Add(119 * time.Minute), time.UTC, "expires in 119 minutes"},
		{now.Add(30 * time.Second), time.UTC, "expires in a minute"},
		{now, time.UTC, "expired"},
		// 07:00 in New York: midnight there on the 3rd is the end of the 2nd.
		{time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC), ny, "expires tomorrow"},
		{time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC), time.UTC, "expires in 2 days"},
	} {
		if got := expiresIn(now, tc.until, tc.loc); got != tc.want {
			t.Errorf("expiresIn(until %v in %v) = %q, want %q", tc.until, tc.loc, got, tc.want)
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
