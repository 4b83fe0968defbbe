package services_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/reports"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestTemplateStats(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour).Add(10 * time.Minute)
	f := testenv.NewFixtureAt(t, services.Config{}, start)
	env, ctx, clk := f.Env, f.Ctx, f.Clock
	camp := f.CreateCampaign(models.Campaign{Name: "Stats", BudgetCents: 100_000})
	tp := f.Template(models.Template{CampaignID: camp.ID, Name: "Five off",
		Kind: models.KindFixed, FaceValueCents: 500, TotalStock: 20, PerUserLimit: 5, ValidDays: 2,
		RefundPolicy: models.RefundRecycle})
	claim := func(user string) *models.Coupon {
		t.Helper()
		res, err := f.Claim(tp.ID, user, fmt.Sprintf("%s-%d", user, clk.Now().UnixNano()))
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		return res.Coupon
	}
	// Hour 0: three claims. Hour 2: two claims, one redeemed, one redeemed
	// and refunded (recycled), one revoked with its stock kept.
	a, b, c := claim("a"), claim("b"), claim("c")
	clk.Set(start.Add(2 * time.Hour))
	d, e := claim("d"), claim("e")
	for i, cp := range []*models.Coupon{a, b} {
		if _, err := env.Service.Redeem(ctx, checkout.RedeemRequest{CouponCode: cp.Code, OrderID: fmt.Sprint("o", i),
			OrderAmountCents: 1000, Cashier: "till"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Service.Refund(ctx, checkout.RefundRequest{CouponCode: b.Code, OrderID: "o1", Cashier: "till"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.Revoke(ctx, "admin", c.Code, false, "test"); err != nil {
		t.Fatal(err)
	}
	_, _ = d, e
	// Four hours later e's validity (2 days) still runs; nothing expired.
	clk.Set(start.Add(5 * time.Hour))

	st, err := env.Service.TemplateStats(ctx, tp.ID, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := reports.TemplateFigures{TemplateID: tp.ID, CampaignID: camp.ID, TotalStock: 20,
		Claimed: 5, Issued: 2, Redeemed: 1, Refunded: 1, Redemptions: 2, Revoked: 2, RevokedSlotKept: 1,
		RevokedSlotReturned: 1, HoldingSlot: 4, Live: 4, ValueIssuedCents: 2000}
	got := st.TemplateFigures
	got.Remaining, got.InFlightOrDrift = nil, nil
	if got != want {
		t.Errorf("figures\n got %+v\nwant %+v", got, want)
	}
	if st.Remaining == nil || *st.Remaining != 16 {
		t.Errorf("remaining %v, want 16 (20 - 4 live)", st.Remaining)
	}
	if len(st.Hours) != 6 {
		t.Fatalf("%d hours, want 6", len(st.Hours))
	}
	var claims, uses []int64
	for _, h := range st.Hours {
		claims = append(claims, h.Claims)
		uses = append(uses, h.Redemptions)
		if h.Hour.Minute() != 0 || h.Hour.Location() != time.UTC {
			t.Errorf("hour %v does not start an hour in UTC", h.Hour)
		}
	}
	if fmt.Sprint(claims) != "[3 0 2 0 0 0]" || fmt.Sprint(uses) != "[0 0 2 0 0 0]" {
		t.Errorf("per hour: claims %v, redemptions %v; want [3 0 2 0 0 0] and [0 0 2 0 0 0]", claims, uses)
	}
	if !st.Hours[5].Hour.Equal(start.Add(5 * time.Hour).Truncate(time.Hour)) {
		t.Errorf("the last hour is %v, want the current one", st.Hours[5].Hour)
	}

	// Past e's validity: e (and d) count as expired. Validity runs to the
	// end of the day two days after the claim (models.EndOfDays), so four
	// days on is past it whatever the hour the test runs at (72 hours was
	// not, for claims made just after midnight).
	clk.Set(start.Add(4 * 24 * time.Hour))
	st, err = env.Service.TemplateStats(ctx, tp.ID, 24)
	if err != nil {
		t.Fatal(err)
	}
	if st.Expired != 2 || st.Issued != 0 || len(st.Hours) != 24 {
		t.Errorf("later: expired %d issued %d hours %d; want 2, 0, 24", st.Expired, st.Issued, len(st.Hours))
	}

	figs, err := env.Service.ListTemplateFigures(ctx)
	if err != nil || figs[tp.ID].Claimed != 5 {
		t.Errorf("ListTemplateFigures = %+v, %v", figs, err)
	}
	cf, err := env.Service.ListCampaignFigures(ctx)
	if err != nil || cf[camp.ID].ValueIssuedCents != 2000 || cf[camp.ID].BudgetLeftCents == nil || *cf[camp.ID].BudgetLeftCents != 98_000 {
		t.Errorf("ListCampaignFigures = %+v, %v", cf[camp.ID], err)
	}
	if _, err := env.Service.TemplateStats(ctx, 9999, 24); !models.IsCode(err, models.CodeNotFound) {
		t.Errorf("stats of an unknown template: %v, want not_found", err)
	}
}
