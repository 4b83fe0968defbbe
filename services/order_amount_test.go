package services_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// orderFigures reads an order's amount and returns, the sum of its live use
// log discounts and the sum of its recorded returns.
func (f *holdFixture) orderFigures(orderID string) (amount, returned, discounts, returns int64) {
	f.T.Helper()
	var row struct{ AmountCents, ReturnedCents int64 }
	db := f.Backends.DB
	if err := db.Raw("SELECT amount_cents, returned_cents FROM checkout_orders WHERE order_id = ?", orderID).Scan(&row).Error; err != nil {
		f.T.Fatal(err)
	}
	if err := db.Raw("SELECT COALESCE(SUM(discount_cents), 0) FROM coupon_use_log WHERE order_id = ? AND undo_flag = ?", orderID, false).
		Scan(&discounts).Error; err != nil {
		f.T.Fatal(err)
	}
	if err := db.Raw("SELECT COALESCE(SUM(returned_amount_cents), 0) FROM order_returns WHERE order_id = ?", orderID).
		Scan(&returns).Error; err != nil {
		f.T.Fatal(err)
	}
	return row.AmountCents, row.ReturnedCents, discounts, returns
}

func (f *holdFixture) redeem(c *models.Coupon, order string, amount int64) (*checkout.RedeemResult, error) {
	return f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: amount, Cashier: "till"})
}

// Combinable coupons redeemed one step at a time on one order: each is
// priced on what the others leave of its one amount, so their discounts
// never sum over it; a redemption with another amount is refused.
func TestRedeemStepsStayWithinOrder(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	a := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	b := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	p := f.claim(f.tmpl(models.StackingCombinable, 1_000, 10, 0), "u1")
	c := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")

	res, err := f.redeem(a, "till-1", 600)
	if err != nil || res.DiscountCents != 500 || res.PayableCents != 100 {
		t.Fatalf("first: %+v %v", res, err)
	}
	// Another amount on the same order: 422, nothing changed.
	_, err = f.redeem(b, "till-1", 700)
	if e := wantCode(t, err, models.CodeIdempotencyMismatch); e.Field != "order_amount_cents" || !strings.Contains(e.Message, "600") {
		t.Fatalf("mismatch: %+v", e)
	}
	if got := f.coupon(b.ID); got.Status != models.CouponIssued || got.Version != 0 {
		t.Fatalf("the refused coupon changed: %+v", got)
	}
	// A percent coupon is priced on the 100 left: 10 off; the order pays 90.
	res, err = f.redeem(p, "till-1", 600)
	if err != nil || res.DiscountCents != 10 || res.PayableCents != 90 {
		t.Fatalf("percent: %+v %v", res, err)
	}
	// 500 off with 90 left: 90 off; the order pays nothing.
	res, err = f.redeem(b, "till-1", 600)
	if err != nil || res.DiscountCents != 90 || res.PayableCents != 0 {
		t.Fatalf("second fixed: %+v %v", res, err)
	}
	// Nothing left: refused, the coupon stays the shopper's.
	_, err = f.redeem(c, "till-1", 600)
	if e := wantCode(t, err, models.CodeNotCombinable); !strings.Contains(e.Message, "already discount 600 of its 600 cents") {
		t.Fatalf("nothing left: %q", e.Message)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.Version != 0 {
		t.Fatalf("the refused coupon changed: %+v", got)
	}
	amount, _, discounts, _ := f.orderFigures("till-1")
	if amount != 600 || discounts != 600 {
		t.Fatalf("order amount %d, discounts %d; want 600 and 600", amount, discounts)
	}
	// The replay of a redemption is still its duplicate, with its amounts.
	res, err = f.redeem(b, "till-1", 600)
	if err != nil || !res.Duplicate || res.DiscountCents != 90 {
		t.Fatalf("replay: %+v %v", res, err)
	}
	// A refund gives the coupon back to its holder; its 500 off was paid
	// and stays taken (docs/checkout.md, "The order state and the plan"):
	// the next coupon finds nothing left, and the payable of the order
	// (after the coupons on it: 90 and 10) is 500.
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: a.Code, OrderID: "till-1", Cashier: "till"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.redeem(c, "till-1", 600)
	if e := wantCode(t, err, models.CodeNotCombinable); !strings.Contains(e.Message, "already discount 600 of its 600 cents") {
		t.Fatalf("after a refund: %q", e.Message)
	}
	if _, _, discounts, _ := f.orderFigures("till-1"); discounts != 100 {
		t.Fatalf("live discounts %d after the refund, want 100", discounts)
	}
	f.checkInvariants()
}

// A coupon redeemed one step at a time on an order held with others is
// priced on what the hold leaves.
func TestRedeemStepNextToHold(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	held := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	step := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	if _, err := f.hold("web-1", 600, 60, held); err != nil {
		t.Fatal(err)
	}
	res, err := f.redeem(step, "web-1", 600)
	if err != nil || res.DiscountCents != 100 || res.PayableCents != 0 {
		t.Fatalf("next to the hold: %+v %v", res, err)
	}
	conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "web-1"})
	if err != nil || conf.DiscountCents != 500 {
		t.Fatalf("confirm: %+v %v", conf, err)
	}
	if _, _, discounts, _ := f.orderFigures("web-1"); discounts != 600 {
		t.Fatalf("discounts %d, want 600", discounts)
	}
	f.checkInvariants()
}

// Eight combinable 100-off coupons raced onto an order of 350, one step
// each: three give 100, one the 50 left, four are refused not_combinable
// (the amount is all discounted, or the cap of five is reached).
func TestRedeemStepsRace(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	var cs []*models.Coupon
	for range 8 {
		cs = append(cs, f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1"))
	}
	var mu sync.Mutex
	words := map[string]int{}
	var discounts []int64
	race(len(cs), func(i int) {
		res, err := f.redeem(cs[i], "race-350", 350)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			words["redeemed"]++
			discounts = append(discounts, res.DiscountCents)
		case models.IsCode(err, models.CodeNotCombinable):
			words[models.ErrorCode(err).Word()]++
		default:
			t.Errorf("%d: %v", i, err)
		}
	})
	t.Logf("%s: %v %v", testenv.BackendName(), words, discounts)
	slices.Sort(discounts)
	if words["redeemed"] != 4 || words["not_combinable"] != 4 || !slices.Equal(discounts, []int64{50, 100, 100, 100}) {
		t.Fatalf("answers %v, discounts %v; want 4 redeemed (50, 100, 100, 100) and 4 not_combinable", words, discounts)
	}
	amount, _, total, _ := f.orderFigures("race-350")
	var used int64
	f.Backends.DB.Model(&models.Coupon{}).Where("order_id = ? AND status = ?", "race-350", models.CouponUsed).Count(&used)
	if amount != 350 || total != 350 || used != 4 {
		t.Fatalf("order of %d: %d off by %d coupons, want 350 off by 4", amount, total, used)
	}
	f.checkInvariants()
}

// A refund and a redemption again on the same order keep its amount and
// its returns: every return of the order, by any path, sums to at most its
// amount.
func TestReturnsAfterRefundAndRedeemAgain(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	if _, err := f.redeem(c, "o", 10_000); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 9_999); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: c.Code, OrderID: "o", Cashier: "pos"}); err != nil {
		t.Fatal(err)
	}
	// Again with another amount: the order has one.
	_, err := f.redeem(c, "o", 20_000)
	wantCode(t, err, models.CodeIdempotencyMismatch)
	// Again with its amount: priced on the 1 cent kept.
	res, err := f.redeem(c, "o", 10_000)
	if err != nil || res.DiscountCents != 1 || res.PayableCents != 0 {
		t.Fatalf("again: %+v %v", res, err)
	}
	_, err = f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r2", 8_000)
	wantCode(t, err, models.CodeReturnExceedsOrder)
	amount, returned, _, returns := f.orderFigures("o")
	if amount != 10_000 || returned != 9_999 || returns != 9_999 {
		t.Fatalf("amount %d, returned %d, returns %d; want 10000, 9999, 9999", amount, returned, returns)
	}
	full, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r3", 1)
	if err != nil || !full.FullRefund || full.KeptAmountCents != 0 || full.ClawbackCents != 1 {
		t.Fatalf("completing return: %+v %v", full, err)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued {
		t.Fatalf("coupon after the completing return: %+v", got)
	}
	// Returned in full: nothing left for a coupon, nothing left to return.
	_, err = f.redeem(c, "o", 10_000)
	if e := wantCode(t, err, models.CodeNotCombinable); !strings.Contains(e.Message, "returned in full") {
		t.Fatalf("after the full return: %q", e.Message)
	}
	_, err = f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r4", 1)
	wantCode(t, err, models.CodeNotRedeemed)
	amount, returned, discounts, returns := f.orderFigures("o")
	if amount != 10_000 || returned != 10_000 || returns != 10_000 || discounts != 0 {
		t.Fatalf("amount %d, returned %d, returns %d, discounts %d", amount, returned, returns, discounts)
	}
	f.checkInvariants()
}

// The same return_id with another amount is not the same return: 422, and
// nothing is recorded; the same amount is its duplicate.
func TestReturnSameIDOtherAmount(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	if _, err := f.redeem(c, "o", 10_000); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 1_000); err != nil {
		t.Fatal(err)
	}
	again, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 1_000)
	if err != nil || !again.Duplicate || again.KeptAmountCents != 9_000 {
		t.Fatalf("duplicate: %+v %v", again, err)
	}
	_, err = f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 2_000)
	if e := wantCode(t, err, models.CodeIdempotencyMismatch); e.Field != "returned_amount_cents" || !strings.Contains(e.Message, "1000") {
		t.Fatalf("mismatch: %+v", e)
	}
	_, returned, _, returns := f.orderFigures("o")
	if returned != 1_000 || returns != 1_000 || f.audits("order.return") != 1 {
		t.Fatalf("returned %d, returns %d, audits %d", returned, returns, f.audits("order.return"))
	}
}

// Each return writes one order.returned event in its transaction, the
// completing one too; a duplicate or a refused return writes none.
func TestReturnEvents(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 2_000), "u1")
	if _, err := f.redeem(c, "o", 3_000); err != nil {
		t.Fatal(err)
	}
	read := func() []models.OrderReturnEvent {
		t.Helper()
		var evs []models.Event
		if err := f.Backends.DB.Where("type = ?", models.EventOrderReturned).Order("id").Find(&evs).Error; err != nil {
			t.Fatal(err)
		}
		out := make([]models.OrderReturnEvent, len(evs))
		for i, e := range evs {
			if err := json.Unmarshal(e.Data, &out[i]); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 1_500); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r1", 1_500); err != nil {
		t.Fatal(err)
	}
	_, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r2", 1_501)
	wantCode(t, err, models.CodeReturnExceedsOrder)
	want := []models.OrderReturnEvent{{OrderID: "o", ReturnID: "r1", ReturnedAmountCents: 1_500, Currency: "USD", OrderAmountCents: 3_000,
		ReturnedTotalCents: 1_500, KeptAmountCents: 1_500, DiscountKeptCents: 0, ClawbackCents: 500, Actor: "pos"}}
	if got := read(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a partial return: %+v, want %+v", got, want)
	}
	if _, err := f.Checkout.ReturnPart(f.Ctx, "pos", "o", "r2", 1_500); err != nil {
		t.Fatal(err)
	}
	want = append(want, models.OrderReturnEvent{OrderID: "o", ReturnID: "r2", ReturnedAmountCents: 1_500, Currency: "USD", OrderAmountCents: 3_000,
		ReturnedTotalCents: 3_000, FullRefund: true, Actor: "pos"})
	if got := read(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the completing return: %+v, want %+v", got, want)
	}
	var refunded int64
	f.Backends.DB.Model(&models.Event{}).Where("type = ?", models.EventCouponRefunded).Count(&refunded)
	if refunded != 1 {
		t.Fatalf("%d coupon.refunded events, want 1", refunded)
	}
}

// A shared code redeemed on an order with another amount is refused and its
// claim given back; with the order's amount it is priced on what the
// order's other coupon leaves.
func TestRedeemSharedCodeOneAmount(t *testing.T) {
	combinable := func(tp *models.Template) { tp.Stacking = models.StackingCombinable }
	f := newSharedFixture(t, 5, 1, combinable)
	other := f.template(f.campaign.ID, 5, 1, 500, combinable)
	c := f.MustClaim(other.ID, "dan", "other-1").Coupon
	if res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "mix", OrderAmountCents: 600}); err != nil || res.DiscountCents != 500 {
		t.Fatalf("first: %+v %v", res, err)
	}
	before := f.remaining()
	_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "mix", OrderAmountCents: 700, UserID: "dan"})
	if e := wantCode(t, err, models.CodeIdempotencyMismatch); e.Field != "order_amount_cents" {
		t.Fatalf("field %q", e.Field)
	}
	if f.remaining() != before || f.ordinals("dan") != "" {
		t.Fatalf("the refused redemption kept its claim: remaining %d (was %d), ordinals %q", f.remaining(), before, f.ordinals("dan"))
	}
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "summer10", OrderID: "mix", OrderAmountCents: 600, UserID: "dan"})
	if err != nil || res.DiscountCents != 100 || res.PayableCents != 0 {
		t.Fatalf("with the order's amount: %+v %v", res, err)
	}
	f.assertNoDrift()
}

// A hold replacing a released one carries the order's amount.
func TestHoldAgainOneAmount(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	if _, err := f.hold("web-2", 600, 60, c); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.Release(f.Ctx, "shop", "web-2"); err != nil {
		t.Fatal(err)
	}
	_, err := f.hold("web-2", 700, 60, c)
	if e := wantCode(t, err, models.CodeIdempotencyMismatch); e.Field != "order_amount_cents" {
		t.Fatalf("field %q", e.Field)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued {
		t.Fatalf("the refused hold changed the coupon: %+v", got)
	}
	res, err := f.hold("web-2", 600, 60, c)
	if err != nil || res.DiscountCents != 500 || res.PayableCents != 100 {
		t.Fatalf("with the order's amount: %+v %v", res, err)
	}
	f.checkInvariants()
}

// A hold next to coupons redeemed one step at a time, and a late confirm
// after one was redeemed while the hold was expired, never bring the
// order's discounts over its amount: refused not_combinable, nothing taken.
func TestHoldAndLateConfirmNextToSteps(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	step := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	held := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	if _, err := f.redeem(step, "mix-1", 600); err != nil {
		t.Fatal(err)
	}
	// The hold is priced on the 100 the step left, as validate prices it.
	h, err := f.hold("mix-1", 600, 60, held)
	if err != nil || h.DiscountCents != 100 || h.PayableCents != 0 {
		t.Fatalf("hold next to a step: %+v %v; want 100 off, 0 to pay", h, err)
	}
	if _, err := f.Checkout.Release(f.Ctx, "shop", "mix-1"); err != nil {
		t.Fatal(err)
	}

	// Held first, expired, then a coupon redeemed one step: the late
	// confirm prices again on the 100 left.
	if _, err := f.hold("mix-2", 600, 5, held); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(6 * time.Second)
	if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	other := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	if res, err := f.redeem(other, "mix-2", 600); err != nil || res.DiscountCents != 500 {
		t.Fatalf("step after the expiry: %+v %v", res, err)
	}
	c, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "mix-2"})
	if err != nil || !c.Late || c.DiscountCents != 100 || c.PayableCents != 0 {
		t.Fatalf("late confirm: %+v %v; want late, 100 off, 0 to pay", c, err)
	}
	for order, want := range map[string]int64{"mix-1": 500, "mix-2": 600} {
		if _, _, discounts, _ := f.orderFigures(order); discounts != want {
			t.Fatalf("order %s: %d off, want %d", order, discounts, want)
		}
	}
	f.checkInvariants()
}

// Property: for any order amount and any fixed-value combinable coupons
// redeemed one step at a time, each coupon takes min(its value, what the
// order leaves), the answer's payable is what is left, a coupon meeting
// nothing left is refused and stays its holder's, and the order's use log
// sums to exactly min(amount, sum of values). The seed is logged.
func TestRedeemStepsProperty(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	f := newHoldFixture(t, services.Config{})
	for i := 0; i < 20; i++ {
		order := fmt.Sprintf("prop-%d", i)
		amount := 1 + rng.Int64N(3_000)
		left, sum := amount, int64(0)
		for k := 1 + rng.IntN(5); k > 0; k-- {
			value := 1 + rng.Int64N(2_000)
			sum += value
			c := f.claim(f.tmpl(models.StackingCombinable, value, 0, 0), "u1")
			res, err := f.redeem(c, order, amount)
			if left == 0 {
				wantCode(t, err, models.CodeNotCombinable)
				if got := f.coupon(c.ID); got.Status != models.CouponIssued {
					t.Fatalf("seed %d order %s: refused coupon is %s", seed, order, got.Status)
				}
				continue
			}
			want := min(value, left)
			if err != nil || res.DiscountCents != want || res.PayableCents != left-want {
				t.Fatalf("seed %d order %s (amount %d, %d left): %d off coupon gave %+v %v, want %d off, payable %d",
					seed, order, amount, left, value, res, err, want, left-want)
			}
			left -= want
		}
		got, _, discounts, _ := f.orderFigures(order)
		if got != amount || discounts != min(amount, sum) || discounts != amount-left {
			t.Fatalf("seed %d order %s: amount %d, discounts %d; want %d and %d", seed, order, got, discounts, amount, min(amount, sum))
		}
	}
	f.checkInvariants()
}
