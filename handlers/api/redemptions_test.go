package api_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// checkoutAPI is a router over fresh backends with a campaign, a template
// (500 cents off, min order 1000, stock 10, limit 2) and tokens of each role.
// A request with the X-Test-Shopper header acts as that shopper's session.
type checkoutAPI struct {
	*testsupport.APIEnv
	doc                 *testsupport.OpenAPIDoc
	app, cashier, admin string
	campaignID          int64
}

func newCheckoutAPI(t *testing.T, refundPolicy string) *checkoutAPI {
	t.Helper()
	e := &checkoutAPI{APIEnv: &testsupport.APIEnv{Fixture: testsupport.NewFixture(t, testsupport.WithBootstrap(testsupport.AdminToken), testsupport.WithShopperHeader())}, admin: testsupport.AdminToken}
	e.doc = testsupport.FetchOpenAPI(t, e.APIEnv)
	out := e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Checkout","budget_cents":100000}`)
	e.doc.CheckAnswer(t, "POST", "/api/v1/campaigns", 201, out)
	e.campaignID = int64(out["campaign"].(map[string]any)["id"].(float64))
	out = e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Five off",`+
		`"kind":"fixed","face_value_cents":500,"min_order_cents":1000,"total_stock":10,"per_user_limit":2,"valid_days":30,`+
		`"refund_policy":%q}`, e.campaignID, refundPolicy))
	e.doc.CheckAnswer(t, "POST", "/api/v1/templates", 201, out)
	e.app = e.AppToken(t)
	e.cashier = e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"till-1"}`)["token"].(string)
	return e
}

// claim claims a coupon for user through the API and returns its code and id.
func (e *checkoutAPI) claim(t *testing.T, user string) (string, int64) {
	t.Helper()
	code, out := e.Call(t, "POST", "/api/v1/templates/1/claim", e.app, map[string]string{"Idempotency-Key": "k-" + user + strconv.Itoa(int(time.Now().UnixNano()))},
		`{"user_id":"`+user+`"}`)
	if code != 201 {
		t.Fatalf("claim for %s: %d %v", user, code, out)
	}
	e.doc.CheckAnswer(t, "POST", "/api/v1/templates/{id}/claim", 201, out)
	c := out["coupon"].(map[string]any)
	return c["code"].(string), int64(c["id"].(float64))
}

// state sums what a checkout request may change: coupon versions, use log
// rows (live and undone) and audit entries.
func (e *checkoutAPI) state(t *testing.T) string {
	t.Helper()
	var versions, logs, live, audits int64
	db := e.Backends.DB
	db.Model(&models.Coupon{}).Select("COALESCE(SUM(version), 0)").Scan(&versions)
	db.Model(&models.UseLog{}).Count(&logs)
	db.Model(&models.UseLog{}).Where("undo_flag = ?", false).Count(&live)
	db.Model(&models.AuditEntry{}).Count(&audits)
	return fmt.Sprintf("versions=%d logs=%d live=%d audits=%d", versions, logs, live, audits)
}

func (e *checkoutAPI) post(t *testing.T, path, token, body string) (int, map[string]any) {
	t.Helper()
	return e.Call(t, "POST", path, token, nil, body)
}

func wantAnswer(t *testing.T, status int, out map[string]any, wantStatus int, result string, code models.Code) {
	t.Helper()
	if status != wantStatus || out["result"] != result || out["code"] != float64(code) {
		t.Fatalf("answer %d %v, want %d %s (%d)", status, out, wantStatus, result, code)
	}
}

func TestRedemptionsAPI(t *testing.T) {
	e := newCheckoutAPI(t, models.RefundRestore)
	code, _ := e.claim(t, "alice")
	redeem := func(token, order string, amount int) (int, map[string]any) {
		return e.post(t, "/api/v1/redemptions", token, fmt.Sprintf(`{"coupon_code":%q,"order_id":%q,"order_amount_cents":%d}`, code, order, amount))
	}

	t.Run("OK", func(t *testing.T) {
		status, out := e.post(t, "/api/v1/redemptions", e.cashier, fmt.Sprintf(
			`{"coupon_code":%q,"order_id":"A-1","order_amount_cents":2500,"user_id":"alice"}`, strings.ToLower(code)))
		wantAnswer(t, status, out, 200, "redeemed", models.CodeOK)
		if out["discount_cents"] != 500.0 || out["payable_cents"] != 2000.0 || out["order_amount_cents"] != 2500.0 {
			t.Fatalf("amounts %v", out)
		}
		if c := out["coupon"].(map[string]any); c["status"] != "used" || c["order_id"] != "A-1" {
			t.Fatalf("coupon %v", c)
		}
		e.doc.CheckAnswer(t, "POST", "/api/v1/redemptions", 200, out)
		var lg models.UseLog
		e.Backends.DB.First(&lg)
		if lg.Cashier != "token:till-1" {
			t.Fatalf("cashier %q in the use log", lg.Cashier)
		}
	})
	t.Run("Duplicate", func(t *testing.T) {
		before := e.state(t)
		status, out := redeem(e.app, "A-1", 9999)
		wantAnswer(t, status, out, 200, "duplicate", models.CodeDuplicate)
		if out["discount_cents"] != 500.0 || out["payable_cents"] != 2000.0 {
			t.Fatalf("replay %v", out)
		}
		e.doc.CheckAnswer(t, "POST", "/api/v1/redemptions", 200, out)
		if after := e.state(t); after != before {
			t.Fatalf("the replay changed %s → %s", before, after)
		}
	})
	t.Run("ErrAlreadyUsed", func(t *testing.T) {
		status, out := redeem(e.cashier, "A-2", 2500)
		wantAnswer(t, status, out, 409, "already_used", models.CodeAlreadyUsed)
		if !strings.Contains(out["error"].(string), "A-1") {
			t.Fatalf("message %q", out["error"])
		}
		e.doc.CheckAnswer(t, "POST", "/api/v1/redemptions", 409, out)
	})
	t.Run("GetCoupon", func(t *testing.T) {
		for _, token := range []string{e.cashier, e.app, e.admin} {
			out := e.MustCall(t, 200, "GET", "/api/v1/coupons/"+code, token, "")
			if out["coupon"].(map[string]any)["status"] != "used" || out["template"].(map[string]any)["id"] != 1.0 {
				t.Fatalf("coupon %v", out)
			}
			e.doc.CheckAnswer(t, "GET", "/api/v1/coupons/{code}", 200, out)
		}
	})
	t.Run("Refund", func(t *testing.T) {
		body := fmt.Sprintf(`{"coupon_code":%q,"order_id":"A-2"}`, code)
		status, out := e.post(t, "/api/v1/refunds", e.cashier, body)
		wantAnswer(t, status, out, 409, "not_redeemed", models.CodeNotRedeemed)
		body = fmt.Sprintf(`{"coupon_code":%q,"order_id":"A-1"}`, code)
		status, out = e.post(t, "/api/v1/refunds", e.cashier, body)
		wantAnswer(t, status, out, 200, "refunded", models.CodeOK)
		if out["stock_returned"] != false || out["coupon"].(map[string]any)["status"] != "issued" {
			t.Fatalf("refund %v", out)
		}
		e.doc.CheckAnswer(t, "POST", "/api/v1/refunds", 200, out)
		status, out = e.post(t, "/api/v1/refunds", e.app, body)
		wantAnswer(t, status, out, 200, "duplicate", models.CodeDuplicate)
	})
	t.Run("ErrBelowMinimum", func(t *testing.T) {
		status, out := redeem(e.cashier, "A-3", 999)
		wantAnswer(t, status, out, 422, "below_minimum", models.CodeBelowMinimum)
		if out["field"] != "order_amount_cents" {
			t.Fatalf("field %v", out["field"])
		}
	})
	t.Run("ErrBusy", func(t *testing.T) {
		var id int64
		e.Backends.DB.Model(&models.Coupon{}).Where("code = ?", code).Select("id").Scan(&id)
		lock := fmt.Sprintf("%s{c%d}:lock:%d", e.Prefix, e.campaignID, id)
		if err := e.Backends.Redis.Set(context.Background(), lock, "someone-else", 5*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		before := e.state(t)
		req := httptest.NewRequest("POST", "/api/v1/redemptions", strings.NewReader(
			fmt.Sprintf(`{"coupon_code":%q,"order_id":"A-4","order_amount_cents":5000}`, code)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.cashier)
		rec := httptest.NewRecorder()
		e.Router.ServeHTTP(rec, req)
		if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), `"result":"busy"`) {
			t.Fatalf("held lock: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
		}
		if after := e.state(t); after != before {
			t.Fatalf("busy changed %s → %s", before, after)
		}
		e.Backends.Redis.Del(context.Background(), lock)
	})
	t.Run("Revoke", func(t *testing.T) {
		path := "/api/v1/coupons/" + code + "/revoke"
		status, out := e.post(t, path, e.cashier, `{"return_stock":true,"reason":"x"}`)
		wantAnswer(t, status, out, 403, "forbidden", models.CodeUnauthorized)
		status, out = e.post(t, path, e.admin, `{"return_stock":true}`)
		wantAnswer(t, status, out, 400, "invalid_request", models.CodeInvalidRequest)
		if out["field"] != "reason" {
			t.Fatalf("field %v", out["field"])
		}
		// A public reason not on the list: 400 naming it, nothing revoked.
		status, out = e.post(t, path, e.admin, `{"return_stock":true,"public_reason":"because","reason":"lost voucher"}`)
		wantAnswer(t, status, out, 400, "invalid_request", models.CodeInvalidRequest)
		if out["field"] != "public_reason" {
			t.Fatalf("field %v", out["field"])
		}
		status, out = e.post(t, path, e.admin, `{"return_stock":true,"public_reason":"issued_in_error","reason":"lost voucher"}`)
		wantAnswer(t, status, out, 200, "ok", models.CodeOK)
		if out["stock_returned"] != true || out["coupon"].(map[string]any)["status"] != "revoked" {
			t.Fatalf("revoke %v", out)
		}
		e.doc.CheckAnswer(t, "POST", "/api/v1/coupons/{code}/revoke", 200, out)
		// A second revoke is refused, saying when, by whom and why.
		status, out = e.post(t, path, e.admin, `{"return_stock":true,"reason":"lost voucher"}`)
		wantAnswer(t, status, out, 409, "revoked", models.CodeRevoked)
		status, out = redeem(e.cashier, "A-5", 5000)
		wantAnswer(t, status, out, 409, "revoked", models.CodeRevoked)
		status, out = e.post(t, "/api/v1/coupons/"+mistypeCode(code)+"/revoke", e.admin, `{"reason":"x"}`)
		wantAnswer(t, status, out, 400, "invalid_request", models.CodeInvalidRequest)
		if out["field"] != "code" {
			t.Fatalf("field %v", out["field"])
		}
	})
}

func TestUserCouponsAPI(t *testing.T) {
	e := newCheckoutAPI(t, models.RefundRecycle)
	code, _ := e.claim(t, "alice")
	e.claim(t, "alice")
	e.claim(t, "bob")
	e.MustCall(t, 200, "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o1","order_amount_cents":1000}`, code))

	for _, token := range []string{e.app, e.admin} {
		out := e.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", token, "")
		e.doc.CheckAnswer(t, "GET", "/api/v1/users/{user_id}/coupons", 200, out)
		list := out["coupons"].([]any)
		if len(list) != 2 {
			t.Fatalf("alice's coupons %v", list)
		}
		statuses := map[string]int{}
		for _, c := range list {
			statuses[c.(map[string]any)["status"].(string)]++
		}
		if statuses["used"] != 1 || statuses["issued"] != 1 {
			t.Fatalf("statuses %v", statuses)
		}
	}
	get := func(path, token, shopper string) (int, map[string]any) {
		h := map[string]string{}
		if shopper != "" {
			h["X-Test-Shopper"] = shopper
		}
		return e.Call(t, "GET", path, token, h, "")
	}
	if status, out := get("/api/v1/users/alice/coupons", "", "alice"); status != 200 || len(out["coupons"].([]any)) != 2 {
		t.Fatalf("alice's own: %d %v", status, out)
	}
	status, out := get("/api/v1/users/bob/coupons", "", "alice")
	wantAnswer(t, status, out, 403, "forbidden", models.CodeUnauthorized)
	status, out = get("/api/v1/users/alice/coupons", e.cashier, "")
	wantAnswer(t, status, out, 403, "forbidden", models.CodeUnauthorized)
	status, out = get("/api/v1/users/alice/coupons", "", "")
	wantAnswer(t, status, out, 401, "unauthorized", models.CodeUnauthorized)
	status, out = get("/api/v1/users/a%20b/coupons", e.app, "")
	wantAnswer(t, status, out, 400, "invalid_request", models.CodeInvalidRequest)
	if out["field"] != "user_id" {
		t.Fatalf("field %v", out["field"])
	}
	if status, out := get("/api/v1/users/nobody/coupons", e.app, ""); status != 200 || len(out["coupons"].([]any)) != 0 {
		t.Fatalf("nobody: %d %v", status, out)
	}
	// A shopper may not look coupons up by code.
	status, out = get("/api/v1/coupons/"+code, "", "alice")
	wantAnswer(t, status, out, 403, "forbidden", models.CodeUnauthorized)

	// Refund under recycle over HTTP: stock back.
	out = e.MustCall(t, 200, "POST", "/api/v1/refunds", e.app, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o1"}`, code))
	if out["stock_returned"] != true || out["coupon"].(map[string]any)["status"] != "revoked" {
		t.Fatalf("refund %v", out)
	}
	tpl := e.MustCall(t, 200, "GET", "/api/v1/templates/1", "", "")
	if tpl["remaining"] != 8.0 {
		t.Fatalf("remaining %v, want 8", tpl["remaining"])
	}
	e.doc.CheckAnswer(t, "GET", "/api/v1/templates/{id}", 200, tpl)
}

// TestCheckoutBadInput sends malformed requests to every endpoint of the
// checkout issue and checks each gets a clear 4xx naming the field or reason,
// never a 500, and that nothing changed.
func TestCheckoutBadInput(t *testing.T) {
	e := newCheckoutAPI(t, models.RefundRestore)
	code, _ := e.claim(t, "alice")
	used, _ := e.claim(t, "bob")
	e.MustCall(t, 200, "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"b1","order_amount_cents":1000}`, used))
	redemption := func(fields string) string { return "{" + fields + "}" }
	ok := fmt.Sprintf(`"coupon_code":%q,"order_id":"o1"`, code)
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		result, field                   string
	}{
		// POST /redemptions
		{"RedeemNoBody", "POST", "/api/v1/redemptions", e.cashier, "", 415, "invalid_request", "Content-Type"},
		{"RedeemNotJSON", "POST", "/api/v1/redemptions", e.cashier, `coupon_code=x`, 400, "invalid_request", "body"},
		{"RedeemArray", "POST", "/api/v1/redemptions", e.cashier, `[]`, 400, "invalid_request", "body"},
		{"RedeemUnknownField", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":1000,"discount":5`), 400, "invalid_request", "discount"},
		{"RedeemNoCode", "POST", "/api/v1/redemptions", e.cashier, `{"order_id":"o1","order_amount_cents":1000}`, 400, "invalid_request", "coupon_code"},
		{"RedeemNoOrder", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_amount_cents":1000}`, code), 400, "invalid_request", "order_id"},
		{"RedeemNoAmount", "POST", "/api/v1/redemptions", e.cashier, redemption(ok), 400, "invalid_request", "order_amount_cents"},
		{"RedeemAmountZero", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":0`), 400, "invalid_request", "order_amount_cents"},
		{"RedeemAmountNegative", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":-1`), 400, "invalid_request", "order_amount_cents"},
		{"RedeemAmountFraction", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":10.5`), 400, "invalid_request", "order_amount_cents"},
		{"RedeemAmountOverflow", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":99999999999999999999999`), 400, "invalid_request", "order_amount_cents"},
		{"RedeemAmountTooLarge", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":100000000001`), 400, "invalid_request", "order_amount_cents"},
		{"RedeemAmountString", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":"1000"`), 400, "invalid_request", "order_amount_cents"},
		{"RedeemMistypedCode", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o1","order_amount_cents":1000}`, mistypeCode(code)), 400, "invalid_request", "coupon_code"},
		{"RedeemCodeNumber", "POST", "/api/v1/redemptions", e.cashier, `{"coupon_code":12,"order_id":"o1","order_amount_cents":1000}`, 400, "invalid_request", "coupon_code"},
		{"RedeemUnknownCode", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o1","order_amount_cents":1000}`, models.NewCouponCode()), 404, "not_found", ""},
		{"RedeemSomeoneElses", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":1000,"user_id":"bob"`), 403, "forbidden", "user_id"},
		{"RedeemEmptyUser", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":1000,"user_id":""`), 400, "invalid_request", "user_id"},
		{"RedeemBadUser", "POST", "/api/v1/redemptions", e.cashier, redemption(ok + `,"order_amount_cents":1000,"user_id":"a|b"`), 400, "invalid_request", "user_id"},
		{"RedeemEmptyOrder", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"","order_amount_cents":1000}`, code), 400, "invalid_request", "order_id"},
		{"RedeemLongOrder", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":%q,"order_amount_cents":1000}`, code, strings.Repeat("7", 65)), 400, "invalid_request", "order_id"},
		{"RedeemHugeOrder", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":%q,"order_amount_cents":1000}`, code, strings.Repeat("7", 5000)), 400, "invalid_request", "order_id"},
		{"RedeemOrderSpaces", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"o 1","order_amount_cents":1000}`, code), 400, "invalid_request", "order_id"},
		{"RedeemOrderUnicode", "POST", "/api/v1/redemptions", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"订单","order_amount_cents":1000}`, code), 400, "invalid_request", "order_id"},
		{"RedeemAnonymous", "POST", "/api/v1/redemptions", "", redemption(ok + `,"order_amount_cents":1000`), 401, "unauthorized", ""},
		{"RedeemAdmin", "POST", "/api/v1/redemptions", e.admin, redemption(ok + `,"order_amount_cents":1000`), 403, "forbidden", ""},
		{"RedeemBadToken", "POST", "/api/v1/redemptions", "cps_nope", redemption(ok + `,"order_amount_cents":1000`), 401, "unauthorized", ""},
		// POST /refunds
		{"RefundNoOrder", "POST", "/api/v1/refunds", e.cashier, fmt.Sprintf(`{"coupon_code":%q}`, used), 400, "invalid_request", "order_id"},
		{"RefundNoCode", "POST", "/api/v1/refunds", e.cashier, `{"order_id":"b1"}`, 400, "invalid_request", "coupon_code"},
		{"RefundMistyped", "POST", "/api/v1/refunds", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"b1"}`, mistypeCode(used)), 400, "invalid_request", "coupon_code"},
		{"RefundLongOrder", "POST", "/api/v1/refunds", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":%q}`, used, strings.Repeat("b", 65)), 400, "invalid_request", "order_id"},
		{"RefundAmount", "POST", "/api/v1/refunds", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"b1","order_amount_cents":1}`, used), 400, "invalid_request", "order_amount_cents"},
		{"RefundOtherOrder", "POST", "/api/v1/refunds", e.cashier, fmt.Sprintf(`{"coupon_code":%q,"order_id":"b2"}`, used), 409, "not_redeemed", ""},
		{"RefundShopper", "POST", "/api/v1/refunds", "", "", 401, "unauthorized", ""},
		{"RefundAdmin", "POST", "/api/v1/refunds", e.admin, fmt.Sprintf(`{"coupon_code":%q,"order_id":"b1"}`, used), 403, "forbidden", ""},
		// POST /coupons/:code/revoke
		{"RevokeUsed", "POST", "/api/v1/coupons/" + used + "/revoke", e.admin, `{"return_stock":true,"reason":"x"}`, 409, "already_used", ""},
		{"RevokeNoReason", "POST", "/api/v1/coupons/" + code + "/revoke", e.admin, `{"return_stock":true}`, 400, "invalid_request", "reason"},
		{"RevokeBlankReason", "POST", "/api/v1/coupons/" + code + "/revoke", e.admin, `{"reason":"   "}`, 400, "invalid_request", "reason"},
		{"RevokeStockString", "POST", "/api/v1/coupons/" + code + "/revoke", e.admin, `{"return_stock":"yes","reason":"x"}`, 400, "invalid_request", "return_stock"},
		{"RevokeMistyped", "POST", "/api/v1/coupons/" + mistypeCode(code) + "/revoke", e.admin, `{"reason":"x"}`, 400, "invalid_request", "code"},
		{"RevokeUnknown", "POST", "/api/v1/coupons/" + models.NewCouponCode() + "/revoke", e.admin, `{"reason":"x"}`, 404, "not_found", ""},
		{"RevokeApp", "POST", "/api/v1/coupons/" + code + "/revoke", e.app, `{"reason":"x"}`, 403, "forbidden", ""},
		// GET /coupons/:code
		{"GetMistyped", "GET", "/api/v1/coupons/" + mistypeCode(code), e.cashier, "", 400, "invalid_request", "code"},
		{"GetGarbage", "GET", "/api/v1/coupons/%00%FF", e.cashier, "", 400, "invalid_request", "code"},
		{"GetTooLong", "GET", "/api/v1/coupons/" + strings.Repeat("A", 100), e.cashier, "", 400, "invalid_request", "code"},
		{"GetUnknown", "GET", "/api/v1/coupons/" + models.NewCouponCode(), e.cashier, "", 404, "not_found", ""},
		{"GetAnonymous", "GET", "/api/v1/coupons/" + code, "", "", 401, "unauthorized", ""},
		// GET /users/:user_id/coupons
		{"UserTooLong", "GET", "/api/v1/users/" + strings.Repeat("u", 65) + "/coupons", e.app, "", 400, "invalid_request", "user_id"},
		{"UserBadChars", "GET", "/api/v1/users/a;b/coupons", e.app, "", 400, "invalid_request", "user_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.state(t)
			status, out := e.Call(t, tc.method, tc.path, tc.token, nil, tc.body)
			if status != tc.status || out["result"] != tc.result {
				t.Fatalf("%d %v, want %d %s", status, out, tc.status, tc.result)
			}
			if tc.field != "" && out["field"] != tc.field {
				t.Fatalf("field %v, want %s (%v)", out["field"], tc.field, out)
			}
			if msg, _ := out["error"].(string); msg == "" {
				t.Fatalf("no message for people: %v", out)
			}
			if after := e.state(t); after != before {
				t.Fatalf("changed %s → %s", before, after)
			}
		})
	}
}

// mistypeCode changes one character of a code into another code character.
func mistypeCode(code string) string {
	b := []byte(code)
	if b[5] == 'Z' {
		b[5] = 'Y'
	} else {
		b[5] = 'Z'
	}
	return string(b)
}
