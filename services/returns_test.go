package services_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestPartialReturns(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fixed := f.tmpl(models.StackingCombinable, 2_000, 0, 0)
	pct := f.tmpl(models.StackingCombinable, 5_000, 10, 5_000)
	cf, cp := f.claim(fixed, "u1"), f.claim(pct, "u1")
	if _, err := f.hold("ret", 10_000, 60, cf, cp); err != nil {
		t.Fatal(err)
	}
	conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "ret"})
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
		res, err := f.Checkout.ReturnPart(f.Ctx, "pos", "ret", step.id, step.amount)
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
		again, err := f.Checkout.ReturnPart(f.Ctx, "pos", "ret", step.id, step.amount)
		if err != nil || !again.Duplicate || again.ClawbackCents != res.ClawbackCents || again.KeptAmountCents != res.KeptAmountCents {
			t.Fatalf("%s again: %+v %v", step.id, again, err)
		}
	}
	// 3000 then 2500 returned: 4500 kept, under the percent coupon's minimum.
	if given != 2_000 {
		t.Fatalf("discount kept %d, want 2000", given)
	}
	_, err = f.Checkout.ReturnPart(f.Ctx, "pos", "ret", "r3", 4_501)
	wantCode(t, err, models.CodeReturnExceedsOrder)
	// Through Refund, as the refunds endpoint takes it.
	rr, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{OrderID: "ret", ReturnID: "r4", ReturnedAmountCents: 4_500, Cashier: "pos"})
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
	_, err = f.Checkout.ReturnPart(f.Ctx, "pos", "none", "r1", 1)
	wantCode(t, err, models.CodeNotRedeemed)
	f.checkInvariants()
}

// Concurrent returns of one order never sum over its amount.
func TestPartialReturnsRace(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "race", OrderAmountCents: 10_000}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	race(20, func(i int) {
		// 999 each: ten fit in 10000, the eleventh does not.
		_, err := f.Checkout.ReturnPart(f.Ctx, "pos", "race", fmt.Sprintf("ret-%d", i), 999)
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

// Partial returns on a table of cases: each step's kept amount, discount
// kept and clawback are the numbers below, computed by hand, and equal
// models.Price on the kept amount; the use log rows carry the discount
// kept; the same return_id again answers duplicate with the first answer;
// the return that completes the order refunds its coupons.
func TestPartialReturnsTable(t *testing.T) {
	type step struct {
		id                       string
		returned                 int64
		kept, discountKept, claw int64
		exceeds                  bool
	}
	type coupon struct {
		stacking                string
		face, percent, minOrder int64
	}
	cases := []struct {
		name    string
		amount  int64
		coupons []coupon
		given   int64
		steps   []step
	}{
		{"fixed", 10_000, []coupon{{"", 1_000, 0, 0}}, 1_000, []step{
			{"r1", 3_000, 7_000, 1_000, 0, false},
			{"r2", 6_500, 500, 500, 500, false},
			{"r3", 501, 0, 0, 0, true},
			{"r4", 500, 0, 0, 500, false},
		}},
		{"percent with cap", 10_000, []coupon{{"", 1_500, 20, 0}}, 1_500, []step{
			{"r1", 2_000, 8_000, 1_500, 0, false},
			{"r2", 2_000, 6_000, 1_200, 300, false},
			{"r3", 6_000, 0, 0, 1_200, false},
		}},
		{"minimum crossed", 6_000, []coupon{{"", 800, 0, 5_000}}, 800, []step{
			{"r1", 500, 5_500, 800, 0, false},
			{"r2", 1_000, 4_500, 0, 800, false},
			{"r3", 4_501, 0, 0, 0, true},
			{"r4", 4_500, 0, 0, 0, false},
		}},
		{"two coupons", 10_000, []coupon{{models.StackingCombinable, 1_000, 0, 0}, {models.StackingCombinable, 5_000, 10, 0}}, 1_900, []step{
			{"r1", 5_000, 5_000, 1_400, 500, false},
			{"r2", 4_500, 500, 500, 900, false},
			{"r3", 500, 0, 0, 500, false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newHoldFixture(t, services.Config{})
			var ts []*models.Template
			var cs []*models.Coupon
			for _, c := range tc.coupons {
				tp := f.tmpl(c.stacking, c.face, c.percent, c.minOrder)
				ts = append(ts, tp)
				cs = append(cs, f.claim(tp, "u1"))
			}
			if _, err := f.hold("o", tc.amount, 60, cs...); err != nil {
				t.Fatal(err)
			}
			conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o"})
			if err != nil || conf.DiscountCents != tc.given || models.Price(tc.amount, ts).DiscountCents != tc.given {
				t.Fatalf("confirm %+v %v, want %d off", conf, err, tc.given)
			}
			for _, s := range tc.steps {
				res, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", s.id, s.returned)
				if s.exceeds {
					wantCode(t, err, models.CodeReturnExceedsOrder)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", s.id, err)
				}
				full := s.kept == 0
				if res.Duplicate || res.KeptAmountCents != s.kept || res.DiscountKeptCents != s.discountKept ||
					res.ClawbackCents != s.claw || res.FullRefund != full {
					t.Fatalf("%s: %+v, want kept %d, discount %d, clawback %d", s.id, res, s.kept, s.discountKept, s.claw)
				}
				if p := models.Price(s.kept, ts); p.DiscountCents != s.discountKept {
					t.Fatalf("%s: models.Price on %d gives %d, the table %d", s.id, s.kept, p.DiscountCents, s.discountKept)
				}
				again, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", s.id, s.returned)
				if err != nil || !again.Duplicate || again.KeptAmountCents != s.kept || again.DiscountKeptCents != s.discountKept ||
					again.ClawbackCents != s.claw {
					t.Fatalf("%s again: %+v %v", s.id, again, err)
				}
				var logged int64
				if err := f.Backends.DB.Model(&models.UseLog{}).Where("order_id = ? AND undo_flag = ?", "o", false).
					Select("COALESCE(SUM(discount_cents), 0)").Scan(&logged).Error; err != nil {
					t.Fatal(err)
				}
				if !full && logged != s.discountKept {
					t.Fatalf("%s: the use log carries %d off, want %d", s.id, logged, s.discountKept)
				}
			}
			for _, c := range cs {
				if got := f.coupon(c.ID); got.Status != models.CouponIssued || f.useLogs(c.ID) != 0 {
					t.Fatalf("coupon after the completing return: %s with %d live use log rows", got.Status, f.useLogs(c.ID))
				}
			}
			f.checkInvariants()
		})
	}
}

// One return_id sent at once with other amounts: one return is recorded,
// and every other request answers idempotency_mismatch naming the amount,
// never return_exceeds_order (docs/returns.md), whichever committed first.
func TestPartialReturnsSameIDRace(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	for round := 0; round < 8; round++ {
		order := fmt.Sprintf("same-%d", round)
		c := f.claim(tp, fmt.Sprintf("u%d", round))
		if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: 10_000}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		counts := map[string]int{}
		race(6, func(i int) {
			// Any two of these exceed the order: only the replay check
			// tells the later ones apart.
			_, err := f.Checkout.ReturnPart(f.Ctx, "pos", order, "ret", int64(6_000+i))
			mu.Lock()
			defer mu.Unlock()
			var e *models.Error
			switch {
			case err == nil:
				counts["ok"]++
			case errors.As(err, &e) && e.Code == models.CodeIdempotencyMismatch && e.Field == "returned_amount_cents":
				counts["mismatch"]++
			default:
				t.Errorf("round %d, request %d: %v", round, i, err)
			}
		})
		if counts["ok"] != 1 || counts["mismatch"] != 5 {
			t.Fatalf("round %d: %v, want 1 ok and 5 idempotency_mismatch", round, counts)
		}
	}
}
