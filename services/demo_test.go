package services_test

import (
	"context"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestSeedDemo(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		env := testenv.New(t, services.Config{})
		ctx := context.Background()
		demo, err := env.Service.SeedDemo(ctx)
		if err != nil || demo == nil {
			t.Fatalf("SeedDemo = %v, %v", demo, err)
		}
		if demo.Campaign.BudgetCents <= 0 {
			t.Errorf("the demo campaign has no budget")
		}
		var fixed, percent, threshold, five bool
		for _, tp := range demo.Templates {
			fixed = fixed || tp.Kind == models.KindFixed && tp.MinOrderCents == 0
			percent = percent || tp.Kind == models.KindPercent && tp.MaxDiscountCents > 0
			threshold = threshold || tp.MinOrderCents > 0
			five = five || tp.TotalStock == 5
		}
		if len(demo.Templates) != 4 || !fixed || !percent || !threshold || !five {
			t.Errorf("demo templates %+v: want a fixed one, a percent one with a cap, a threshold one and one with stock 5", demo.Templates)
		}
		views, err := env.Service.ListTemplates(ctx, true)
		if err != nil || len(views) != 4 {
			t.Fatalf("ListTemplates = %d, %v", len(views), err)
		}
		for _, v := range views {
			if v.Remaining == nil || *v.Remaining != v.TotalStock {
				t.Errorf("template %q: remaining %v, want %d loaded", v.Name, v.Remaining, v.TotalStock)
			}
		}
		seen := map[string]bool{}
		for _, u := range demo.Users {
			if len(u.Password) < 16 || seen[u.Password] {
				t.Errorf("user %s has a weak or repeated password %q", u.Username, u.Password)
			}
			seen[u.Password] = true
			got, err := env.Service.AuthenticatePassword(ctx, u.Username, u.Password)
			if err != nil || got.Role != u.Role || u.Username != u.Role {
				t.Errorf("log in as %s: %v %v", u.Username, got, err)
			}
		}
		if len(demo.Users) != 3 {
			t.Errorf("demo users %v, want admin, cashier and shopper", demo.Users)
		}
	})
	t.Run("OnlyWhenNoUsers", func(t *testing.T) {
		env := testenv.New(t, services.Config{})
		ctx := context.Background()
		if _, err := env.Service.SeedDemo(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := env.Service.SeedDemo(ctx)
		if err != nil || again != nil {
			t.Fatalf("second SeedDemo = %v, %v; want nothing done", again, err)
		}
		camps, _ := env.Service.ListCampaigns(ctx)
		if len(camps) != 1 {
			t.Fatalf("%d campaigns after two seeds, want 1", len(camps))
		}
		other := testenv.New(t, services.Config{})
		if _, err := other.Service.CreateUser(ctx, "test", "someone", "a password of theirs", models.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		if demo, err := other.Service.SeedDemo(ctx); err != nil || demo != nil {
			t.Fatalf("SeedDemo with a user already there = %v, %v; want nothing done", demo, err)
		}
	})
}

// TestSeedDemoNamesInTheDeploymentCurrency: the demo's names state their
// amounts in the deployment's currency, as the pages show the values.
func TestSeedDemoNamesInTheDeploymentCurrency(t *testing.T) {
	for _, tc := range []struct {
		currency string
		want     []string
	}{
		{"USD", []string{"$5 off your order", "15% off, up to $20", "$10 off orders of $50", "Flash deal: $25 off"}},
		{"EUR", []string{"€5 off your order", "15% off, up to €20", "€10 off orders of €50", "Flash deal: €25 off"}},
		{"JPY", []string{"¥500 off your order", "15% off, up to ¥2,000", "¥1,000 off orders of ¥5,000", "Flash deal: ¥2,500 off"}},
	} {
		t.Run(tc.currency, func(t *testing.T) {
			env := testenv.New(t, services.Config{CoreConfig: services.CoreConfig{Currency: tc.currency}})
			demo, err := env.Service.SeedDemo(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tp := range demo.Templates {
				got = append(got, tp.Name)
				if tp.Currency != tc.currency {
					t.Errorf("template %q in %s, want %s", tp.Name, tp.Currency, tc.currency)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("names %q, want %q", got, tc.want)
			}
		})
	}
}
