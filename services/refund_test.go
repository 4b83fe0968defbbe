package services_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestRefund(t *testing.T) {
	t.Run("OKRestore", refundOKRestore)
	t.Run("Duplicate", refundDuplicate)
	t.Run("ErrNotRedeemed", refundErrNotRedeemed)
	t.Run("BadInput", refundBadInput)
	t.Run("ExtendOnRefund", refundExtendOnRefund)
	t.Run("ExpiredWhileUsed", refundExpiredWhileUsed)
	t.Run("ExpiredWhileUsedExtended", refundExpiredWhileUsedExtended)
	t.Run("OKRecycle", refundOKRecycle)
}

func refundOKRestore(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.mustRedeem(c, "o1", 10_000)
	orig := f.coupon(c.ID)
	before := f.remaining()
	res := f.mustRefund(c, "o1")
	if res.StockReturned || res.Coupon.Status != models.CouponIssued || res.Coupon.OrderID != nil || res.Coupon.Version != 2 {
		t.Fatalf("answer %+v", res)
	}
	got := f.coupon(c.ID)
	if got.Status != models.CouponIssued || got.OrderID != nil || got.UsedAt != nil || got.Version != 2 || got.Slot == nil ||
		!got.ValidUntil.Equal(orig.ValidUntil) {
		t.Fatalf("coupon %+v", got)
	}
	logs := f.logs(c.ID)
	if len(logs) != 1 || !logs[0].UndoFlag || logs[0].UndoneAt == nil {
		t.Fatalf("use log %+v", logs)
	}
	if f.remaining() != before {
		t.Fatal("a refund under restore changed the stock")
	}
	var audit []models.AuditEntry
	f.Env.Backends.DB.Where("action = ?", "coupon.refund").Find(&audit)
	if len(audit) != 1 || audit[0].Actor != "cashier" || !strings.Contains(audit[0].Detail, "order=o1") ||
		!strings.Contains(audit[0].Detail, "discount_cents=500") {
		t.Fatalf("audit %+v", audit)
	}
	// The holder can use it again, on another order.
	f.mustRedeem(c, "o2", 10_000)
	f.checkStock()
}

func refundDuplicate(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.mustRedeem(c, "o1", 10_000)
	f.mustRefund(c, "o1")
	res, err := f.refund(c, "o1")
	if err != nil || !res.Duplicate || res.Coupon.Version != 2 {
		t.Fatalf("replay %+v, %v", res, err)
	}
	// Still a replay after the coupon went on to another order.
	f.mustRedeem(c, "o2", 10_000)
	res, err = f.refund(c, "o1")
	if err != nil || !res.Duplicate {
		t.Fatalf("replay %+v, %v", res, err)
	}
	if got := f.coupon(c.ID); *got.OrderID != "o2" || got.Version != 3 {
		t.Fatalf("the replay changed the coupon %+v", got)
	}
}

func refundErrNotRedeemed(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	_, err := f.refund(c, "o1")
	wantCode(t, err, models.CodeNotRedeemed)
	f.mustRedeem(c, "o1", 10_000)
	_, err = f.refund(c, "o2")
	e := wantCode(t, err, models.CodeNotRedeemed)
	if !strings.Contains(e.Message, "order o1 does") {
		t.Fatalf("message %q", e.Message)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || got.Version != 1 || len(f.liveLogs(c.ID)) != 1 {
		t.Fatalf("changed %+v", got)
	}
}

func refundBadInput(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.mustRedeem(c, "o1", 10_000)
	for _, tc := range []struct {
		name, code, order, field string
		want                     models.Code
	}{
		{"MistypedCode", mistype(c.Code), "o1", "coupon_code", models.CodeInvalidRequest},
		{"EmptyCode", "", "o1", "coupon_code", models.CodeInvalidRequest},
		{"EmptyOrder", c.Code, "", "order_id", models.CodeInvalidRequest},
		{"LongOrder", c.Code, strings.Repeat("9", 65), "order_id", models.CodeInvalidRequest},
		{"ControlInOrder", c.Code, "o\n1", "order_id", models.CodeInvalidRequest},
		{"UnknownCode", models.NewCouponCode(), "o1", "", models.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: tc.code, OrderID: tc.order, Cashier: "x"})
			if e := wantCode(t, err, tc.want); e.Field != tc.field {
				t.Fatalf("field %q, want %q", e.Field, tc.field)
			}
		})
	}
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || got.Version != 1 || len(f.liveLogs(c.ID)) != 1 {
		t.Fatalf("changed %+v", got)
	}
}

func refundExtendOnRefund(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{ExtendOnRefund: true})
	c := f.claim("u1")
	orig := f.coupon(c.ID)
	f.Clock.Advance(24 * time.Hour)
	used := f.mustRedeem(c, "o1", 10_000)
	f.Clock.Advance(48 * time.Hour)
	res := f.mustRefund(c, "o1")
	held := res.Coupon.UpdatedAt.Sub(*used.Coupon.UsedAt)
	if held < 48*time.Hour || held > 49*time.Hour {
		t.Fatalf("held %v", held)
	}
	want := orig.ValidUntil.Add(held)
	got := f.coupon(c.ID)
	if !got.ValidUntil.Equal(want) || !res.Coupon.ValidUntil.Equal(want) {
		t.Fatalf("valid_until %v (answer %v), want %v", got.ValidUntil, res.Coupon.ValidUntil, want)
	}
}

// A coupon whose validity ended while its order held it comes back
// expired under restore: the refund does not renew it.
func refundExpiredWhileUsed(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{ValidDays: 1})
	c := f.claim("u1")
	orig := f.coupon(c.ID)
	f.Clock.Advance(12 * time.Hour)
	f.mustRedeem(c, "o1", 10_000)
	f.Clock.Advance(48 * time.Hour)
	res := f.mustRefund(c, "o1")
	if res.Coupon.Status != models.CouponExpired {
		t.Fatalf("status %q, want expired", res.Coupon.Status)
	}
	got := f.coupon(c.ID)
	if got.Status != models.CouponIssued || !got.ValidUntil.Equal(orig.ValidUntil) {
		t.Fatalf("coupon %+v", got)
	}
	_, err := f.redeem(c, "o2", 10_000)
	wantCode(t, err, models.CodeNotValidNow)
	f.checkStock()
}

// With extend_on_refund it gets back the time it had left when used.
func refundExpiredWhileUsedExtended(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{ValidDays: 1, ExtendOnRefund: true})
	c := f.claim("u1")
	f.Clock.Advance(12 * time.Hour)
	used := f.mustRedeem(c, "o1", 10_000)
	hadLeft := c.ValidUntil.Sub(*used.Coupon.UsedAt)
	f.Clock.Advance(48 * time.Hour)
	res := f.mustRefund(c, "o1")
	left := res.Coupon.ValidUntil.Sub(res.Coupon.UpdatedAt)
	if res.Coupon.Status != models.CouponIssued || left != hadLeft {
		t.Fatalf("status %q, %v left, want %v", res.Coupon.Status, left, hadLeft)
	}
	f.mustRedeem(c, "o2", 10_000)
}

func refundOKRecycle(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 2, PerUserLimit: 1, RefundPolicy: models.RefundRecycle})
	c := f.claim("u1")
	f.claim("u2")
	f.mustRedeem(c, "o1", 10_000)
	if _, err := f.Claim(f.tmpl.ID, "u3", "sold-out"); !models.IsCode(err, models.CodeSoldOut) {
		t.Fatalf("claim before the refund: %v", err)
	}
	res := f.mustRefund(c, "o1")
	if !res.StockReturned || res.Coupon.Status != models.CouponRevoked || res.Coupon.Slot != nil || res.Coupon.UserOrdinal != nil {
		t.Fatalf("answer %+v", res)
	}
	got := f.coupon(c.ID)
	if got.Status != models.CouponRevoked || got.Slot != nil || got.UserOrdinal != nil || got.OrderID != nil {
		t.Fatalf("coupon %+v", got)
	}
	if f.remaining() != 1 {
		t.Fatalf("remaining %d, want 1", f.remaining())
	}
	f.checkStock()
	// The slot and u1's ordinal are back: u1 (limit 1) can claim again.
	f.claim("u1")
	f.checkStock()
	res2, err := f.refund(c, "o1")
	if err != nil || !res2.Duplicate || !res2.StockReturned {
		t.Fatalf("replay %+v, %v", res2, err)
	}
	if f.remaining() != 0 {
		t.Fatal("the replay returned stock again")
	}
	_, err = f.redeem(c, "o1", 10_000)
	wantCode(t, err, models.CodeRevoked)
	f.checkStock()
}

// TestRefundRace releases 20 refunds of one redemption together: one flip, at
// most one stock return, the rest replays (or busy).
func TestRefundRace(t *testing.T) {
	for _, policy := range []string{models.RefundRecycle, models.RefundRestore} {
		t.Run(policy, func(t *testing.T) {
			f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 3, RefundPolicy: policy})
			c := f.claim("u1")
			f.claim("u2")
			f.mustRedeem(c, "o1", 10_000)
			before := f.remaining()
			svcs := []*services.App{f.Svc, f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})}
			var mu sync.Mutex
			counts := map[string]int{}
			race(20, func(i int) {
				res, err := svcs[i%2].Refund(f.Ctx, checkout.RefundRequest{CouponCode: c.Code, OrderID: "o1", Cashier: "cashier"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && res.Duplicate:
					counts["duplicate"]++
				case err == nil:
					counts["refunded"]++
					if res.StockReturned != (policy == models.RefundRecycle) {
						t.Errorf("stock_returned %t", res.StockReturned)
					}
				case models.IsCode(err, models.CodeBusy):
					counts["busy"]++
				default:
					t.Errorf("never %v", err)
				}
			})
			t.Logf("%s: %v", testenv.BackendName(), counts)
			if counts["refunded"] != 1 || counts["duplicate"]+counts["busy"] != 19 {
				t.Fatalf("results %v", counts)
			}
			got := f.coupon(c.ID)
			if got.Version != 2 {
				t.Fatalf("coupon changed %d times", got.Version-1)
			}
			if logs := f.logs(c.ID); len(logs) != 1 || !logs[0].UndoFlag {
				t.Fatalf("use log %+v", logs)
			}
			want := before
			if policy == models.RefundRecycle {
				want++
			}
			if f.remaining() != want {
				t.Fatalf("remaining %d, want %d", f.remaining(), want)
			}
			var audits int64
			f.Env.Backends.DB.Model(&models.AuditEntry{}).Where("action = ?", "coupon.refund").Count(&audits)
			if audits != 1 {
				t.Fatalf("%d refund audit entries", audits)
			}
			f.checkStock()
		})
	}
}

// TestRefundRecycleAfterRedisFlush refunds under recycle after Redis lost
// every counter: the stock comes back once, from the database, never from
// nothing.
func TestRefundRecycleAfterRedisFlush(t *testing.T) {
	for _, reload := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReloadedBeforeRefund=%t", reload), func(t *testing.T) {
			f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 3, PerUserLimit: 1, RefundPolicy: models.RefundRecycle})
			c := f.claim("u1")
			f.claim("u2")
			f.claim("u3")
			f.mustRedeem(c, "o1", 10_000)
			f.Env.FlushRedis(t)
			if reload && f.remaining() != 0 {
				t.Fatalf("reloaded remaining %d, want 0", f.remaining())
			}
			res := f.mustRefund(c, "o1")
			if !res.StockReturned {
				t.Fatalf("answer %+v", res)
			}
			if got := f.remaining(); got != 1 {
				t.Fatalf("remaining %d, want 1", got)
			}
			f.checkStock()
			f.claim("u4")
			for _, u := range []string{"u1", "u5"} {
				_, err := f.Claim(f.tmpl.ID, u, "late-"+u)
				wantCode(t, err, models.CodeSoldOut)
			}
			var live int64
			f.Env.Backends.DB.Model(&models.Coupon{}).Where("template_id = ? AND status <> ?", f.tmpl.ID, models.CouponRevoked).Count(&live)
			if live != 3 {
				t.Fatalf("%d live coupons, stock 3", live)
			}
			f.checkStock()
		})
	}
}
