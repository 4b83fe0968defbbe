package services_test

import (
	"fmt"
	"sync"
	"testing"

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/testenv"
)

func TestPartialReturns(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fixed := f.tmpl(models.StackingCombinable, 2_000, 0, 0)
	pct := f.tmpl(models.StackingCombinable, 5_000, 10, 5_000)
	cf, cp := f.claim(fixed, "u1"), f.claim(pct, "u1")
	if _, err := f.hold("ret", 10_000, 60, cf, cp); err != nil {
		t.Fatal(err)
	}
	conf, err := f.Svc.Confirm(f.Ctx, services.ConfirmRequest{OrderID: "ret"})
	if err != nil || conf.DiscountCents != 2_800 {
		t.Fatalf("confirm %+v %v", conf, err)
	}
	ts := []*models.Template{fixed, pct}
	given := int64(2_800)
	returned := int64(0)
	for _, step := range []struct {
		id     string
		amount int64
	}{{"r1", 3_000}, {"r2", 2_500}} {
		res, err := f.Svc.ReturnPart(f.Ctx, "pos", "ret", step.id, step.amount)
		if err != nil {
			t.Fatal(err)
		}
		returned += step.amount
		want := models.Price(10_000-returned, ts)
		if res.Duplicate || res.FullRefund || res.KeptAmountCents != 10_000-returned || res.DiscountKeptCents != want.DiscountCents ||
			res.ClawbackCents != given-want.DiscountCents {
			t.Fatalf("%s: %+v, want kept %d discount %+v", step.id, res, 10_000-returned, want)
		}
		given = want.DiscountCents
		again, err := f.Svc.ReturnPart(f.Ctx, "pos", "ret", step.id, step.amount)
		if err != nil || !again.Duplicate || again.ClawbackCents != res.ClawbackCents || again.KeptAmountCents != res.KeptAmountCents {
			t.Fatalf("%s again: %+v %v", step.id, again, err)
		}
	}
	// 3000 then 2500 returned: 4500 kept, under the percent coupon's minimum.
	if given != 2_000 {
		t.Fatalf("discount kept %d, want 2000", given)
	}
	_, err = f.Svc.ReturnPart(f.Ctx, "pos", "ret", "r3", 4_501)
	wantCode(t, err, models.CodeReturnExceedsOrder)
	// Through Refund, as the refunds endpoint takes it.
	rr, err := f.Svc.Refund(f.Ctx, services.RefundRequest{OrderID: "ret", ReturnID: "r4", ReturnedAmountCents: 4_500, Cashier: "pos"})
	if err != nil || rr.Return == nil {
		t.Fatalf("refund with a return id: %+v %v", rr, err)
	}
	full := rr.Return
	if !full.FullRefund || full.KeptAmountCents != 0 || full.DiscountKeptCents != 0 || len(full.Refunds) != 2 {
		t.Fatalf("completing return %+v %v", full, err)
	}
	for _, c := range []*models.Coupon{cf, cp} {
		if got := f.coupon(c.ID); got.Status != models.CouponIssued {
			t.Fatalf("coupon after the full return %+v", got)
		}
	}
	if n := f.audits("order.return"); n != 3 {
		t.Fatalf("return audits %d", n)
	}
	_, err = f.Svc.ReturnPart(f.Ctx, "pos", "none", "r1", 1)
	wantCode(t, err, models.CodeNotRedeemed)
	f.checkInvariants()
}

// Concurrent returns of one order never sum over its amount.
func TestPartialReturnsRace(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	if _, err := f.Svc.Redeem(f.Ctx, services.RedeemRequest{CouponCode: c.Code, OrderID: "race", OrderAmountCents: 10_000}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	race(20, func(i int) {
		// 999 each: ten fit in 10000, the eleventh does not.
		_, err := f.Svc.ReturnPart(f.Ctx, "pos", "race", fmt.Sprintf("ret-%d", i), 999)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			counts["ok"]++
		case models.IsCode(err, models.CodeReturnExceedsOrder), models.IsCode(err, models.CodeBusy):
			counts[models.ErrorCode(err).Word()]++
		default:
			t.Errorf("%d: %v", i, err)
		}
	})
	t.Logf("%s: %v", testenv.BackendName(), counts)
	var sum int64
	if err := f.Backends.DB.Raw("SELECT COALESCE(SUM(returned_amount_cents), 0) FROM order_returns WHERE order_id = ?", "race").Scan(&sum).Error; err != nil {
		t.Fatal(err)
	}
	if sum > 10_000 || sum != int64(counts["ok"])*999 || (counts["busy"] == 0 && counts["ok"] != 10) {
		t.Fatalf("returned %d, %v", sum, counts)
	}
}
