package services_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/reports"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// checkSums fails when one of the identities the figures promise does not
// hold.
func checkSums(t *testing.T, f reports.TemplateFigures) {
	t.Helper()
	if f.Claimed != f.HoldingSlot+f.RevokedSlotReturned {
		t.Errorf("template %d: claimed %d != holding a slot %d + revoked, slot returned %d", f.TemplateID, f.Claimed, f.HoldingSlot, f.RevokedSlotReturned)
	}
	if f.HoldingSlot != f.Issued+f.Expired+f.Held+f.Redeemed+f.RevokedSlotKept {
		t.Errorf("template %d: holding a slot %d != issued %d + expired %d + held %d + redeemed %d + revoked, slot kept %d",
			f.TemplateID, f.HoldingSlot, f.Issued, f.Expired, f.Held, f.Redeemed, f.RevokedSlotKept)
	}
	if f.Revoked != f.RevokedSlotKept+f.RevokedSlotReturned {
		t.Errorf("template %d: revoked %d != kept %d + returned %d", f.TemplateID, f.Revoked, f.RevokedSlotKept, f.RevokedSlotReturned)
	}
	if f.Redemptions != f.Redeemed+f.Refunded {
		t.Errorf("template %d: redemptions %d != redeemed %d + refunded %d", f.TemplateID, f.Redemptions, f.Redeemed, f.Refunded)
	}
	if f.Remaining == nil || f.InFlightOrDrift == nil || f.TotalStock != *f.Remaining+f.HoldingSlot+*f.InFlightOrDrift {
		t.Errorf("template %d: total stock %d != remaining %v + holding a slot %d + in flight %v", f.TemplateID, f.TotalStock, f.Remaining, f.HoldingSlot, f.InFlightOrDrift)
	}
	if f.Live != f.HoldingSlot {
		t.Errorf("template %d: live %d != holding a slot %d", f.TemplateID, f.Live, f.HoldingSlot)
	}
}

// TestTemplateFiguresAddUp: after claims, redemptions, refunds under both
// policies, revokes with and without the stock returned, an expired coupon
// and a claim in flight, every figure is exact and every identity holds.
func TestTemplateFiguresAddUp(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	fx := testenv.NewFixtureAt(t, services.Config{}, start)
	ctx, svc, clk := fx.Ctx, fx.Svc, fx.Clock
	camp := fx.CreateCampaign(models.Campaign{Name: "Sums", BudgetCents: 100_000})
	r := fx.Template(models.Template{CampaignID: camp.ID, Name: "Restore",
		Kind: models.KindFixed, FaceValueCents: 500, TotalStock: 20, PerUserLimit: 5, ValidDays: 2,
		RefundPolicy: models.RefundRestore})
	y := fx.Template(models.Template{CampaignID: camp.ID, Name: "Recycle",
		Kind: models.KindFixed, FaceValueCents: 300, TotalStock: 10, PerUserLimit: 3, ValidDays: 30,
		RefundPolicy: models.RefundRecycle})
	n := 0
	claim := func(tid int64, user string) *models.Coupon {
		t.Helper()
		n++
		res, err := fx.Claim(tid, user, fmt.Sprint("sum-", n))
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		return res.Coupon
	}
	redeem := func(c *models.Coupon, order string) {
		t.Helper()
		if _, err := svc.Redeem(ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: 1000, Cashier: "till"}); err != nil {
			t.Fatalf("redeem %s: %v", order, err)
		}
	}
	refund := func(c *models.Coupon, order string) {
		t.Helper()
		if _, err := svc.Refund(ctx, checkout.RefundRequest{CouponCode: c.Code, OrderID: order, Cashier: "till"}); err != nil {
			t.Fatalf("refund %s: %v", order, err)
		}
	}
	revoke := func(c *models.Coupon, returnStock bool) {
		t.Helper()
		if _, err := svc.Revoke(ctx, "admin", c.Code, returnStock, "test"); err != nil {
			t.Fatalf("revoke: %v", err)
		}
	}

	// R (restore): "old" expires; a and c are used; b is used, refunded,
	// used and refunded again (issued, two refunds); d is revoked keeping
	// its slot, e revoked returning it; f is simply held.
	claim(r.ID, "old")
	clk.Set(start.Add(72 * time.Hour))
	a, b, c, d, e := claim(r.ID, "a"), claim(r.ID, "b"), claim(r.ID, "c"), claim(r.ID, "d"), claim(r.ID, "e")
	claim(r.ID, "f")
	redeem(a, "ra")
	redeem(b, "rb1")
	redeem(c, "rc")
	refund(b, "rb1")
	redeem(b, "rb2")
	refund(b, "rb2")
	revoke(d, false)
	revoke(e, true)
	// Y (recycle): p used; q used and refunded (revoked, slot returned); r2
	// revoked returning its slot; s revoked keeping it; one claim reserved
	// in Redis whose coupon is not written yet.
	p, q, r2, s := claim(y.ID, "p"), claim(y.ID, "q"), claim(y.ID, "r"), claim(y.ID, "s")
	redeem(p, "yp")
	redeem(q, "yq")
	refund(q, "yq")
	revoke(r2, true)
	revoke(s, false)
	prefix := fx.Key(camp.ID, "")
	tkey := fmt.Sprintf("%st:%d", prefix, y.ID)
	vals, err := lua.Deduct.Run(ctx, fx.Backends.Redis, []string{prefix + "budget", tkey, tkey + ":free", tkey + ":users",
		prefix + "idem:inflight", prefix + "pending", tkey + ":rule"}, y.ID, "w", "inflight", clk.Now().UnixMilli(), 3600, "att1").Slice()
	if err != nil || vals[0].(int64) != lua.DeductReserved {
		t.Fatalf("reserve: %v %v", vals, err)
	}

	want := map[int64]reports.TemplateFigures{
		r.ID: {TemplateID: r.ID, CampaignID: camp.ID, TotalStock: 20, Claimed: 7, Issued: 2, Expired: 1, Redeemed: 2,
			Refunded: 2, Redemptions: 4, Revoked: 2, RevokedSlotKept: 1, RevokedSlotReturned: 1, HoldingSlot: 6, Live: 6,
			ValueIssuedCents: 3000},
		y.ID: {TemplateID: y.ID, CampaignID: camp.ID, TotalStock: 10, Claimed: 4, Issued: 0, Expired: 0, Redeemed: 1,
			Refunded: 1, Redemptions: 2, Revoked: 3, RevokedSlotKept: 1, RevokedSlotReturned: 2, HoldingSlot: 2, Live: 2,
			ValueIssuedCents: 600},
	}
	wantLeft := map[int64][2]int64{r.ID: {14, 0}, y.ID: {7, 1}} // remaining, in flight
	all, err := svc.ListTemplateFigures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range []int64{r.ID, y.ID} {
		st, err := svc.TemplateStats(ctx, tid, 24)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []reports.TemplateFigures{st.TemplateFigures, all[tid]} {
			checkSums(t, got)
			if got.Remaining == nil || got.InFlightOrDrift == nil ||
				[2]int64{*got.Remaining, *got.InFlightOrDrift} != wantLeft[tid] {
				t.Errorf("template %d: remaining %v, in flight %v; want %v", tid, got.Remaining, got.InFlightOrDrift, wantLeft[tid])
			}
			got.Remaining, got.InFlightOrDrift = nil, nil
			if got != want[tid] {
				t.Errorf("template %d figures\n got %+v\nwant %+v", tid, got, want[tid])
			}
		}
	}
	cf, err := svc.ListCampaignFigures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f := cf[camp.ID]; f.ValueIssuedCents != 3600 || f.BudgetLeftCents == nil || *f.BudgetLeftCents != 96_400 ||
		*f.BudgetLeftCents+f.ValueIssuedCents != f.BudgetCents {
		t.Errorf("campaign figures %+v, want 3600 held and 96400 left of 100000", f)
	}
	var total reports.TemplateFigures
	total.Add(all[r.ID])
	total.Add(all[y.ID])
	if total.Claimed != 11 || total.HoldingSlot != 8 || total.RevokedSlotReturned != 3 || total.Redemptions != 6 || total.TotalStock != 30 {
		t.Errorf("totals %+v", total)
	}
}
