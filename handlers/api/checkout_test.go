package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

func TestCheckoutValidateHoldConfirmAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	five := e.Template(t, 500, 1000, models.StackingExclusive)
	c1 := e.Claim(t, five, "alice")

	// Validate changes nothing and prices the cart.
	st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":3000,"coupon_codes":["`+c1+`"],"user_id":"alice"}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 500, 2500)
	if cs := out["coupons"].([]any); len(cs) != 1 || cs[0].(map[string]any)["result"] != "ok" ||
		cs[0].(map[string]any)["discount_cents"] != float64(500) || cs[0].(map[string]any)["coupon_code"] != c1 {
		t.Fatalf("validate coupons: %v", cs)
	}
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":900,"coupon_codes":["`+c1+`"]}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "below_minimum", 0, 900)
	// Another user's coupon is a not_found line, as a code no coupon has.
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":3000,"coupon_codes":["`+c1+`"],"user_id":"bob"}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "not_found", 0, 3000)
	// A shopper validates as themself: bob's session cannot price alice's coupon.
	st, out = e.Call(t, "POST", "/api/v1/checkout/validate", "", map[string]string{testsupport.SessionHeader: "bob"},
		`{"order_amount_cents":3000,"coupon_codes":["`+c1+`"]}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "not_found", 0, 3000)
	if cs := out["coupons"].([]any); len(cs) != 1 || cs[0].(map[string]any)["result"] != "not_found" || cs[0].(map[string]any)["coupon_code"] != c1 {
		t.Fatalf("bob's session validating alice's coupon: %v, want its not_found line", cs)
	}
	if s := e.CouponStatus(t, c1); s != models.CouponIssued {
		t.Fatalf("validate changed the coupon: %s", s)
	}

	// Hold, then the same hold again.
	hold := `{"order_id":"web-1","order_amount_cents":3000,"coupon_codes":["` + c1 + `"],"user_id":"alice","ttl_seconds":600}`
	st, out = e.Post(t, "/api/v1/holds", e.App, hold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 2500)
	expires := out["expires_at"]
	if expires == nil || out["state"] != "held" {
		t.Fatalf("hold: %v", out)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, hold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 200, "duplicate", 500, 2500)
	if out["expires_at"] != expires {
		t.Fatalf("a duplicate hold moved expires_at: %v, first %v", out["expires_at"], expires)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"web-1","order_amount_cents":4000,"coupon_codes":["`+c1+`"]}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 422, "idempotency_mismatch", -1, 0)
	// Another order cannot take the held coupon.
	st, out = e.Post(t, "/api/v1/holds", e.Cashier, `{"order_id":"web-2","order_amount_cents":3000,"coupon_codes":["`+c1+`"]}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 409, "held", -1, 0)
	if s := e.CouponStatus(t, c1); s != models.CouponHeld {
		t.Fatalf("held coupon: %s", s)
	}
	st, out = e.Call(t, "GET", "/api/v1/holds/web-1", e.Cashier, nil, "")
	e.Want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 2500)
	if out["state"] != "held" || out["expires_at"] != expires {
		t.Fatalf("hold state: %v", out)
	}

	// Confirm, then again; release after confirm is refused.
	st, out = e.Post(t, "/api/v1/holds/web-1/confirm", e.App, `{"order_amount_cents":3000}`)
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "redeemed", 500, 2500)
	if out["late"] != false {
		t.Fatalf("confirm: %v", out)
	}
	st, out = e.Post(t, "/api/v1/holds/web-1/confirm", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "duplicate", 500, 2500)
	st, out = e.Post(t, "/api/v1/holds/web-1/release", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 409, "already_used", -1, 0)
	if s := e.CouponStatus(t, c1); s != models.CouponUsed {
		t.Fatalf("confirmed coupon: %s", s)
	}
	var logs int64
	e.Backends.DB.Model(&models.UseLog{}).Where("order_id = ?", "web-1").Count(&logs)
	if logs != 1 {
		t.Fatalf("use log rows of web-1: %d, want 1", logs)
	}
	st, out = e.Call(t, "GET", "/api/v1/holds/web-1", e.Cashier, nil, "")
	e.Want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 2500)
	if out["state"] != "confirmed" {
		t.Fatalf("confirmed hold state: %v", out)
	}

	// Release gives the coupon back; again is a duplicate.
	c2 := e.Claim(t, five, "alice")
	st, out = e.Post(t, "/api/v1/holds", e.Cashier, `{"order_id":"web-3","order_amount_cents":2000,"coupon_codes":["`+c2+`"]}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	st, out = e.Post(t, "/api/v1/holds/web-3/release", e.Cashier, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "released", -1, 0)
	st, out = e.Post(t, "/api/v1/holds/web-3/release", e.Cashier, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "duplicate", -1, 0)
	if s := e.CouponStatus(t, c2); s != models.CouponIssued {
		t.Fatalf("released coupon: %s", s)
	}
	st, out = e.Post(t, "/api/v1/holds/web-3/confirm", e.Cashier, "")
	if st == 200 {
		t.Fatalf("a released hold was confirmed: %v", out)
	}
	st, out = e.Call(t, "GET", "/api/v1/holds/nope-1", e.Cashier, nil, "")
	e.Want(t, "GET", "/api/v1/holds/{order_id}", st, out, 404, "not_found", -1, 0)

	// The usable coupons of alice: c2 is free again, c1 is used.
	st, out = e.Call(t, "GET", "/api/v1/users/alice/coupons/usable?order_amount_cents=3000", e.App, nil, "")
	if st != 200 || len(out["coupons"].([]any)) != 1 || fmt.Sprint(out["best"]) != "["+c2+"]" {
		t.Fatalf("usable: %d %v", st, out)
	}
	e.Doc.CheckAnswer(t, "GET", "/api/v1/users/{user_id}/coupons/usable", 200, out)
	st, out = e.Call(t, "GET", "/api/v1/users/alice/coupons/usable?order_amount_cents=x", e.App, nil, "")
	if st != 400 || out["field"] != "order_amount_cents" {
		t.Fatalf("usable with a bad amount: %d %v", st, out)
	}
	st, _ = e.Call(t, "GET", "/api/v1/users/alice/coupons/usable?order_amount_cents=3000", "", map[string]string{testsupport.SessionHeader: "bob"}, "")
	if st != 403 {
		t.Fatalf("bob reads alice's usable coupons: %d", st)
	}
}

func TestCheckoutStackingOneStepAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	a := e.Template(t, 500, 0, models.StackingExclusive)
	b := e.Template(t, 300, 0, models.StackingExclusive)
	ca, cb := e.Claim(t, a, "alice"), e.Claim(t, b, "alice")

	st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":3000,"coupon_codes":["`+ca+`","`+cb+`"]}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "not_combinable", 0, 3000)
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"two-1","order_amount_cents":3000,"coupon_codes":["`+ca+`","`+cb+`"]}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 409, "not_combinable", -1, 0)

	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+ca+`","order_id":"till-9","order_amount_cents":3000}`)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 2500)
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+cb+`","order_id":"till-9","order_amount_cents":3000}`)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 409, "not_combinable", -1, 0)
	if s := e.CouponStatus(t, cb); s != models.CouponIssued {
		t.Fatalf("the refused coupon: %s", s)
	}
}

func TestCheckoutHoldExpiryLateConfirmAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	five := e.Template(t, 500, 1000, models.StackingExclusive)
	c1, c2 := e.Claim(t, five, "alice"), e.Claim(t, five, "alice")
	ctx := context.Background()

	st, out := e.Post(t, "/api/v1/holds", e.App, `{"order_id":"late-1","order_amount_cents":2000,"coupon_codes":["`+c1+`"],"ttl_seconds":5}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"late-2","order_amount_cents":2000,"coupon_codes":["`+c2+`"],"ttl_seconds":5}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	e.Clock.Advance(6 * time.Second)
	n, err := e.Env.Service.ExpireHolds(ctx)
	if err != nil || n != 2 {
		t.Fatalf("expire holds: %d %v, want 2", n, err)
	}
	st, out = e.Call(t, "GET", "/api/v1/holds/late-1", e.Cashier, nil, "")
	e.Want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 1500)
	if out["state"] != "expired" || e.CouponStatus(t, c1) != models.CouponIssued {
		t.Fatalf("expired hold: %v", out)
	}

	// c1 is still free: the late confirm takes it.
	st, out = e.Post(t, "/api/v1/holds/late-1/confirm", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "redeemed", 500, 1500)
	if out["late"] != true || e.CouponStatus(t, c1) != models.CouponUsed {
		t.Fatalf("late confirm: %v", out)
	}
	st, out = e.Post(t, "/api/v1/holds/late-1/confirm", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "duplicate", 500, 1500)

	// c2 was taken by another order meanwhile: hold_expired, nothing confirmed.
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"late-3","order_amount_cents":2000,"coupon_codes":["`+c2+`"]}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	st, out = e.Post(t, "/api/v1/holds/late-2/confirm", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 409, "hold_expired", -1, 0)
	var logs int64
	e.Backends.DB.Model(&models.UseLog{}).Where("order_id = ?", "late-2").Count(&logs)
	if logs != 0 || e.CouponStatus(t, c2) != models.CouponHeld {
		t.Fatalf("after hold_expired: %d use log rows, coupon %s", logs, e.CouponStatus(t, c2))
	}
	// Release after expiry is a duplicate.
	st, out = e.Post(t, "/api/v1/holds/late-2/release", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "duplicate", -1, 0)
}

func TestCheckoutPartialReturnAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	five := e.Template(t, 500, 1000, models.StackingExclusive)
	c1 := e.Claim(t, five, "alice")
	st, out := e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+c1+`","order_id":"ret-1","order_amount_cents":3000}`)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 2500)

	wantReturn := func(body string, status int, result string, kept, discountKept, clawback int64) {
		t.Helper()
		st, out := e.Post(t, "/api/v1/refunds", e.Cashier, body)
		if st != status || out["result"] != result || out["partial"] != true || out["kept_amount_cents"] != float64(kept) ||
			out["discount_kept_cents"] != float64(discountKept) || out["clawback_cents"] != float64(clawback) {
			t.Fatalf("return %s: %d %v, want %d %s kept %d discount %d clawback %d", body, st, out, status, result, kept,
				discountKept, clawback)
		}
		e.Doc.CheckAnswer(t, "POST", "/api/v1/refunds", status, out)
	}
	wantReturn(`{"order_id":"ret-1","return_id":"r1","returned_amount_cents":500}`, 200, "refunded", 2500, 500, 0)
	wantReturn(`{"order_id":"ret-1","return_id":"r1","returned_amount_cents":500}`, 200, "duplicate", 2500, 500, 0)
	// The kept amount falls below the minimum: the discount is clawed back.
	wantReturn(`{"order_id":"ret-1","return_id":"r2","returned_amount_cents":1600}`, 200, "refunded", 900, 0, 500)
	if s := e.CouponStatus(t, c1); s != models.CouponUsed {
		t.Fatalf("after partial returns: %s", s)
	}
	st, out = e.Post(t, "/api/v1/refunds", e.Cashier, `{"order_id":"ret-1","return_id":"r3","returned_amount_cents":901}`)
	e.Want(t, "POST", "/api/v1/refunds", st, out, 422, "return_exceeds_order", -1, 0)
	st, out = e.Post(t, "/api/v1/refunds", e.Cashier, `{"order_id":"ret-1","returned_amount_cents":100}`)
	if st != 400 || out["field"] != "return_id" {
		t.Fatalf("a return without return_id: %d %v", st, out)
	}
	st, out = e.Post(t, "/api/v1/refunds", e.Cashier, `{"order_id":"ret-1"}`)
	if st != 400 || out["field"] != "coupon_code" {
		t.Fatalf("a refund without coupon_code: %d %v", st, out)
	}
	// The return that completes the order is a full refund (restore).
	wantReturn(`{"order_id":"ret-1","return_id":"r4","returned_amount_cents":900}`, 200, "refunded", 0, 0, 0)
	if s := e.CouponStatus(t, c1); s != models.CouponIssued {
		t.Fatalf("after the completing return: %s", s)
	}
}
