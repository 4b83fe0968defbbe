package handlers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/claims"
	"couponsvc/services/testenv"
)

// holdAPI is a router over fresh backends whose service runs on a clock the
// test moves, with a campaign and app and cashier tokens.
type holdAPI struct {
	*apiEnv
	doc          *openAPIDoc
	clock        *testenv.Clock
	app, cashier string
	campaignID   int64
	seq          int
}

func newHoldAPI(t *testing.T) *holdAPI {
	t.Helper()
	clock := &testenv.Clock{}
	e := &holdAPI{apiEnv: &apiEnv{newFixture(t, withConfig(services.Config{Now: clock.Now}), withBootstrap(adminToken),
		withShopperHeader())}, clock: clock}
	e.doc = fetchOpenAPI(t, e.apiEnv)
	out := e.mustCall(t, 201, "POST", "/api/v1/campaigns", adminToken, `{"name":"Holds","budget_cents":1000000}`)
	e.campaignID = int64(out["campaign"].(map[string]any)["id"].(float64))
	e.app = e.appToken(t)
	e.cashier = e.mustCall(t, 201, "POST", "/api/v1/tokens", adminToken, `{"role":"cashier","name":"till-1"}`)["token"].(string)
	return e
}

// template creates a fixed-amount template: face cents off an order of at
// least minOrder, with that stacking.
func (e *holdAPI) template(t *testing.T, face, minOrder int64, stacking string) int64 {
	t.Helper()
	out := e.mustCall(t, 201, "POST", "/api/v1/templates", adminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"T%d",`+
		`"kind":"fixed","face_value_cents":%d,"min_order_cents":%d,"total_stock":20,"per_user_limit":10,"valid_days":30,`+
		`"stacking":%q}`, e.campaignID, face, face, minOrder, stacking))
	return int64(out["template"].(map[string]any)["id"].(float64))
}

// claim claims a coupon of the template for user and returns its code.
func (e *holdAPI) claim(t *testing.T, templateID int64, user string) string {
	t.Helper()
	e.seq++
	res, err := e.Env.Service.Claim(context.Background(), claims.ClaimRequest{TemplateID: templateID, UserID: user,
		IdempotencyKey: fmt.Sprintf("hold-claim-%d", e.seq)})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return res.Coupon.Code
}

// couponStatus is the coupon's effective status as the API shows it.
func (e *holdAPI) couponStatus(t *testing.T, code string) string {
	t.Helper()
	out := e.mustCall(t, 200, "GET", "/api/v1/coupons/"+code, e.cashier, "")
	return out["coupon"].(map[string]any)["status"].(string)
}

// want checks an answer's status, result and amounts, and that it matches
// the OpenAPI document of its route.
func (e *holdAPI) want(t *testing.T, method, route string, status int, out map[string]any, wantStatus int, result string,
	discount, payable int64) {
	t.Helper()
	if status != wantStatus || out["result"] != result {
		t.Fatalf("%s %s: %d %v, want %d %s", method, route, status, out, wantStatus, result)
	}
	if discount >= 0 && (out["discount_cents"] != float64(discount) || out["payable_cents"] != float64(payable)) {
		t.Fatalf("%s %s: %v, want discount %d payable %d", method, route, out, discount, payable)
	}
	e.doc.checkAnswer(t, method, route, status, out)
}

func TestCheckoutValidateHoldConfirmAPI(t *testing.T) {
	e := newHoldAPI(t)
	five := e.template(t, 500, 1000, models.StackingExclusive)
	c1 := e.claim(t, five, "alice")

	// Validate changes nothing and prices the cart.
	st, out := e.post(t, "/api/v1/checkout/validate", e.app, `{"order_amount_cents":3000,"coupon_codes":["`+c1+`"],"user_id":"alice"}`)
	e.want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 500, 2500)
	if cs := out["coupons"].([]any); len(cs) != 1 || cs[0].(map[string]any)["result"] != "ok" ||
		cs[0].(map[string]any)["discount_cents"] != float64(500) || cs[0].(map[string]any)["coupon_code"] != c1 {
		t.Fatalf("validate coupons: %v", cs)
	}
	st, out = e.post(t, "/api/v1/checkout/validate", e.app, `{"order_amount_cents":900,"coupon_codes":["`+c1+`"]}`)
	e.want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "below_minimum", 0, 900)
	// Another user's coupon is not_found, as a code no coupon has.
	st, out = e.post(t, "/api/v1/checkout/validate", e.app, `{"order_amount_cents":3000,"coupon_codes":["`+c1+`"],"user_id":"bob"}`)
	e.want(t, "POST", "/api/v1/checkout/validate", st, out, 404, "not_found", -1, 0)
	// A shopper validates as themself: bob's session cannot price alice's coupon.
	st, out = e.call(t, "POST", "/api/v1/checkout/validate", "", map[string]string{sessionHeader: "bob"},
		`{"order_amount_cents":3000,"coupon_codes":["`+c1+`"]}`)
	e.want(t, "POST", "/api/v1/checkout/validate", st, out, 404, "not_found", -1, 0)
	if s := e.couponStatus(t, c1); s != models.CouponIssued {
		t.Fatalf("validate changed the coupon: %s", s)
	}

	// Hold, then the same hold again.
	hold := `{"order_id":"web-1","order_amount_cents":3000,"coupon_codes":["` + c1 + `"],"user_id":"alice","ttl_seconds":600}`
	st, out = e.post(t, "/api/v1/holds", e.app, hold)
	e.want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 2500)
	expires := out["expires_at"]
	if expires == nil || out["state"] != "held" {
		t.Fatalf("hold: %v", out)
	}
	st, out = e.post(t, "/api/v1/holds", e.app, hold)
	e.want(t, "POST", "/api/v1/holds", st, out, 200, "duplicate", 500, 2500)
	if out["expires_at"] != expires {
		t.Fatalf("a duplicate hold moved expires_at: %v, first %v", out["expires_at"], expires)
	}
	st, out = e.post(t, "/api/v1/holds", e.app, `{"order_id":"web-1","order_amount_cents":4000,"coupon_codes":["`+c1+`"]}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 422, "idempotency_mismatch", -1, 0)
	// Another order cannot take the held coupon.
	st, out = e.post(t, "/api/v1/holds", e.cashier, `{"order_id":"web-2","order_amount_cents":3000,"coupon_codes":["`+c1+`"]}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 409, "held", -1, 0)
	if s := e.couponStatus(t, c1); s != models.CouponHeld {
		t.Fatalf("held coupon: %s", s)
	}
	st, out = e.call(t, "GET", "/api/v1/holds/web-1", e.cashier, nil, "")
	e.want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 2500)
	if out["state"] != "held" || out["expires_at"] != expires {
		t.Fatalf("hold state: %v", out)
	}

	// Confirm, then again; release after confirm is refused.
	st, out = e.post(t, "/api/v1/holds/web-1/confirm", e.app, `{"order_amount_cents":3000}`)
	e.want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "redeemed", 500, 2500)
	if out["late"] != false {
		t.Fatalf("confirm: %v", out)
	}
	st, out = e.post(t, "/api/v1/holds/web-1/confirm", e.app, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "duplicate", 500, 2500)
	st, out = e.post(t, "/api/v1/holds/web-1/release", e.app, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 409, "already_used", -1, 0)
	if s := e.couponStatus(t, c1); s != models.CouponUsed {
		t.Fatalf("confirmed coupon: %s", s)
	}
	var logs int64
	e.Backends.DB.Model(&models.UseLog{}).Where("order_id = ?", "web-1").Count(&logs)
	if logs != 1 {
		t.Fatalf("use log rows of web-1: %d, want 1", logs)
	}
	st, out = e.call(t, "GET", "/api/v1/holds/web-1", e.cashier, nil, "")
	e.want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 2500)
	if out["state"] != "confirmed" {
		t.Fatalf("confirmed hold state: %v", out)
	}

	// Release gives the coupon back; again is a duplicate.
	c2 := e.claim(t, five, "alice")
	st, out = e.post(t, "/api/v1/holds", e.cashier, `{"order_id":"web-3","order_amount_cents":2000,"coupon_codes":["`+c2+`"]}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	st, out = e.post(t, "/api/v1/holds/web-3/release", e.cashier, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "released", -1, 0)
	st, out = e.post(t, "/api/v1/holds/web-3/release", e.cashier, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "duplicate", -1, 0)
	if s := e.couponStatus(t, c2); s != models.CouponIssued {
		t.Fatalf("released coupon: %s", s)
	}
	st, out = e.post(t, "/api/v1/holds/web-3/confirm", e.cashier, "")
	if st == 200 {
		t.Fatalf("a released hold was confirmed: %v", out)
	}
	st, out = e.call(t, "GET", "/api/v1/holds/nope-1", e.cashier, nil, "")
	e.want(t, "GET", "/api/v1/holds/{order_id}", st, out, 404, "not_found", -1, 0)

	// The usable coupons of alice: c2 is free again, c1 is used.
	st, out = e.call(t, "GET", "/api/v1/users/alice/coupons/usable?order_amount_cents=3000", e.app, nil, "")
	if st != 200 || len(out["coupons"].([]any)) != 1 || fmt.Sprint(out["best"]) != "["+c2+"]" {
		t.Fatalf("usable: %d %v", st, out)
	}
	e.doc.checkAnswer(t, "GET", "/api/v1/users/{user_id}/coupons/usable", 200, out)
	st, out = e.call(t, "GET", "/api/v1/users/alice/coupons/usable?order_amount_cents=x", e.app, nil, "")
	if st != 400 || out["field"] != "order_amount_cents" {
		t.Fatalf("usable with a bad amount: %d %v", st, out)
	}
	st, _ = e.call(t, "GET", "/api/v1/users/alice/coupons/usable?order_amount_cents=3000", "", map[string]string{sessionHeader: "bob"}, "")
	if st != 403 {
		t.Fatalf("bob reads alice's usable coupons: %d", st)
	}
}

func TestCheckoutStackingOneStepAPI(t *testing.T) {
	e := newHoldAPI(t)
	a := e.template(t, 500, 0, models.StackingExclusive)
	b := e.template(t, 300, 0, models.StackingExclusive)
	ca, cb := e.claim(t, a, "alice"), e.claim(t, b, "alice")

	st, out := e.post(t, "/api/v1/checkout/validate", e.app, `{"order_amount_cents":3000,"coupon_codes":["`+ca+`","`+cb+`"]}`)
	e.want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "not_combinable", 0, 3000)
	st, out = e.post(t, "/api/v1/holds", e.app, `{"order_id":"two-1","order_amount_cents":3000,"coupon_codes":["`+ca+`","`+cb+`"]}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 409, "not_combinable", -1, 0)

	st, out = e.post(t, "/api/v1/redemptions", e.cashier, `{"coupon_code":"`+ca+`","order_id":"till-9","order_amount_cents":3000}`)
	e.want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 2500)
	st, out = e.post(t, "/api/v1/redemptions", e.cashier, `{"coupon_code":"`+cb+`","order_id":"till-9","order_amount_cents":3000}`)
	e.want(t, "POST", "/api/v1/redemptions", st, out, 409, "not_combinable", -1, 0)
	if s := e.couponStatus(t, cb); s != models.CouponIssued {
		t.Fatalf("the refused coupon: %s", s)
	}
}

func TestCheckoutHoldExpiryLateConfirmAPI(t *testing.T) {
	e := newHoldAPI(t)
	five := e.template(t, 500, 1000, models.StackingExclusive)
	c1, c2 := e.claim(t, five, "alice"), e.claim(t, five, "alice")
	ctx := context.Background()

	st, out := e.post(t, "/api/v1/holds", e.app, `{"order_id":"late-1","order_amount_cents":2000,"coupon_codes":["`+c1+`"],"ttl_seconds":5}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	st, out = e.post(t, "/api/v1/holds", e.app, `{"order_id":"late-2","order_amount_cents":2000,"coupon_codes":["`+c2+`"],"ttl_seconds":5}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	e.clock.Advance(6 * time.Second)
	n, err := e.Env.Service.ExpireHolds(ctx)
	if err != nil || n != 2 {
		t.Fatalf("expire holds: %d %v, want 2", n, err)
	}
	st, out = e.call(t, "GET", "/api/v1/holds/late-1", e.cashier, nil, "")
	e.want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 1500)
	if out["state"] != "expired" || e.couponStatus(t, c1) != models.CouponIssued {
		t.Fatalf("expired hold: %v", out)
	}

	// c1 is still free: the late confirm takes it.
	st, out = e.post(t, "/api/v1/holds/late-1/confirm", e.app, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "redeemed", 500, 1500)
	if out["late"] != true || e.couponStatus(t, c1) != models.CouponUsed {
		t.Fatalf("late confirm: %v", out)
	}
	st, out = e.post(t, "/api/v1/holds/late-1/confirm", e.app, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "duplicate", 500, 1500)

	// c2 was taken by another order meanwhile: hold_expired, nothing confirmed.
	st, out = e.post(t, "/api/v1/holds", e.app, `{"order_id":"late-3","order_amount_cents":2000,"coupon_codes":["`+c2+`"]}`)
	e.want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 1500)
	st, out = e.post(t, "/api/v1/holds/late-2/confirm", e.app, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 409, "hold_expired", -1, 0)
	var logs int64
	e.Backends.DB.Model(&models.UseLog{}).Where("order_id = ?", "late-2").Count(&logs)
	if logs != 0 || e.couponStatus(t, c2) != models.CouponHeld {
		t.Fatalf("after hold_expired: %d use log rows, coupon %s", logs, e.couponStatus(t, c2))
	}
	// Release after expiry is a duplicate.
	st, out = e.post(t, "/api/v1/holds/late-2/release", e.app, "")
	e.want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "duplicate", -1, 0)
}

func TestCheckoutPartialReturnAPI(t *testing.T) {
	e := newHoldAPI(t)
	five := e.template(t, 500, 1000, models.StackingExclusive)
	c1 := e.claim(t, five, "alice")
	st, out := e.post(t, "/api/v1/redemptions", e.cashier, `{"coupon_code":"`+c1+`","order_id":"ret-1","order_amount_cents":3000}`)
	e.want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 2500)

	wantReturn := func(body string, status int, result string, kept, discountKept, clawback int64) {
		t.Helper()
		st, out := e.post(t, "/api/v1/refunds", e.cashier, body)
		if st != status || out["result"] != result || out["partial"] != true || out["kept_amount_cents"] != float64(kept) ||
			out["discount_kept_cents"] != float64(discountKept) || out["clawback_cents"] != float64(clawback) {
			t.Fatalf("return %s: %d %v, want %d %s kept %d discount %d clawback %d", body, st, out, status, result, kept,
				discountKept, clawback)
		}
		e.doc.checkAnswer(t, "POST", "/api/v1/refunds", status, out)
	}
	wantReturn(`{"order_id":"ret-1","return_id":"r1","returned_amount_cents":500}`, 200, "refunded", 2500, 500, 0)
	wantReturn(`{"order_id":"ret-1","return_id":"r1","returned_amount_cents":500}`, 200, "duplicate", 2500, 500, 0)
	// The kept amount falls below the minimum: the discount is clawed back.
	wantReturn(`{"order_id":"ret-1","return_id":"r2","returned_amount_cents":1600}`, 200, "refunded", 900, 0, 500)
	if s := e.couponStatus(t, c1); s != models.CouponUsed {
		t.Fatalf("after partial returns: %s", s)
	}
	st, out = e.post(t, "/api/v1/refunds", e.cashier, `{"order_id":"ret-1","return_id":"r3","returned_amount_cents":901}`)
	e.want(t, "POST", "/api/v1/refunds", st, out, 422, "return_exceeds_order", -1, 0)
	st, out = e.post(t, "/api/v1/refunds", e.cashier, `{"order_id":"ret-1","returned_amount_cents":100}`)
	if st != 400 || out["field"] != "return_id" {
		t.Fatalf("a return without return_id: %d %v", st, out)
	}
	st, out = e.post(t, "/api/v1/refunds", e.cashier, `{"order_id":"ret-1"}`)
	if st != 400 || out["field"] != "coupon_code" {
		t.Fatalf("a refund without coupon_code: %d %v", st, out)
	}
	// The return that completes the order is a full refund (restore).
	wantReturn(`{"order_id":"ret-1","return_id":"r4","returned_amount_cents":900}`, 200, "refunded", 0, 0, 0)
	if s := e.couponStatus(t, c1); s != models.CouponIssued {
		t.Fatalf("after the completing return: %s", s)
	}
}

func (e *holdAPI) post(t *testing.T, path, token, body string) (int, map[string]any) {
	t.Helper()
	return e.call(t, "POST", path, token, nil, body)
}
