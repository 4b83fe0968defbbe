package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestCurrencyOnEveryMoneyAnswer: every answer that carries an amount says
// its currency: the order's for the checkout, the redemption and the
// returns (an amount-only order's as given, else the deployment's), the
// template's for coupons, usable offers and stats, the campaign's for the
// budget drift, and each webhook event's data. A yen campaign shows that it
// is no constant; the deployment's (USD) shows where none is given.
func TestCurrencyOnEveryMoneyAnswer(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	admin := testsupport.AdminToken
	camp := e.MustCall(t, 201, "POST", "/api/v1/campaigns", admin, `{"name":"Yen","currency":"JPY","budget_cents":100000}`)
	cid := int64(camp["campaign"].(map[string]any)["id"].(float64))
	tpl := e.MustCall(t, 201, "POST", "/api/v1/templates", admin, fmt.Sprintf(`{"campaign_id":%d,"name":"500 yen off",`+
		`"kind":"fixed","face_value_cents":500,"total_stock":20,"per_user_limit":10,"valid_days":30,"currency":"JPY","stacking":"combinable"}`, cid))
	tid := int64(tpl["template"].(map[string]any)["id"].(float64))
	want := func(what string, out map[string]any, currency string) {
		t.Helper()
		if out["currency"] != currency {
			t.Fatalf("%s: currency %v, want %s: %v", what, out["currency"], currency, out)
		}
	}
	// Every answer and event is checked against the document as it is
	// sent (testsupport.CheckAnswers), currency required.
	call := func(want int, method, path, token, body string) map[string]any {
		t.Helper()
		return e.MustCall(t, want, method, path, token, body)
	}

	// Claims and coupon views: the template's.
	claim := func(key string, wantStatus int) map[string]any {
		t.Helper()
		st, out := e.Call(t, "POST", fmt.Sprintf("/api/v1/templates/%d/claim", tid), e.App, map[string]string{"Idempotency-Key": key}, `{"user_id":"yuki"}`)
		if st != wantStatus {
			t.Fatalf("claim %s: %d %v, want %d", key, st, out, wantStatus)
		}
		want("claim's coupon", out["coupon"].(map[string]any), "JPY")
		return out
	}
	code := claim("yen-1", 201)["coupon"].(map[string]any)["code"].(string)
	claim("yen-1", 200) // the replay, from the database
	code2 := claim("yen-2", 201)["coupon"].(map[string]any)["code"].(string)
	code3 := claim("yen-3", 201)["coupon"].(map[string]any)["code"].(string)
	usd := e.Claim(t, e.Template(t, 300, 0, models.StackingCombinable), "yuki")
	want("coupon view", call(200, "GET", "/api/v1/coupons/"+code, e.Cashier, "")["coupon"].(map[string]any), "JPY")
	want("coupon view", call(200, "GET", "/api/v1/coupons/"+usd, e.Cashier, "")["coupon"].(map[string]any), "USD")
	list := call(200, "GET", "/api/v1/users/yuki/coupons", e.App, "")["coupons"].([]any)
	byCode := map[string]string{}
	for _, c := range list {
		m := c.(map[string]any)
		byCode[m["code"].(string)] = m["currency"].(string)
	}
	if len(byCode) != 4 || byCode[code] != "JPY" || byCode[code2] != "JPY" || byCode[usd] != "USD" {
		t.Fatalf("the user's coupons' currencies: %v", byCode)
	}

	// Usable offers: the cart's, and only the coupons of its currency.
	usable := call(200, "POST", "/api/v1/users/yuki/coupons/usable", e.App, `{"order_amount_cents":2000,"currency":"JPY"}`)
	want("usable in yen", usable, "JPY")
	if n := len(usable["coupons"].([]any)); n != 3 {
		t.Fatalf("usable in yen: %d coupons, want the 3 yen ones: %v", n, usable)
	}
	want("usable by default", call(200, "GET", "/api/v1/users/yuki/coupons/usable?order_amount_cents=2000", e.App, ""), "USD")

	// Amount-only checkout in yen: validate, hold, read back, confirm.
	validated := call(200, "POST", "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+code+`"],"order_amount_cents":2000,"currency":"JPY"}`)
	want("validate", validated, "JPY")
	if validated["result"] != "ok" || validated["discount_cents"] != float64(500) {
		t.Fatalf("validate: %v", validated)
	}
	// No currency: the deployment's, where a yen coupon does not apply.
	st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+code+`"],"order_amount_cents":2000}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "currency_mismatch", 0, 2000)
	want("validate in the deployment's currency", out, "USD")
	held := call(201, "POST", "/api/v1/holds", e.Cashier, `{"order_id":"jp-1","coupon_codes":["`+code+`"],"order_amount_cents":2000,"currency":"JPY"}`)
	want("hold", held, "JPY")
	want("hold read back", call(200, "GET", "/api/v1/holds/jp-1", e.Cashier, ""), "JPY")
	confirmed := call(200, "POST", "/api/v1/holds/jp-1/confirm", e.Cashier, "")
	want("confirm", confirmed, "JPY")
	if confirmed["result"] != "redeemed" || confirmed["payable_cents"] != float64(1500) {
		t.Fatalf("confirm: %v", confirmed)
	}
	call(201, "POST", "/api/v1/holds", e.Cashier, `{"order_id":"jp-2","coupon_codes":["`+code2+`"],"order_amount_cents":900,"currency":"JPY"}`)
	released := call(200, "POST", "/api/v1/holds/jp-2/release", e.Cashier, "")
	want("release", released, "JPY")

	// The one-step redemption, a whole refund, a partial return.
	redeemed := call(200, "POST", "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+code2+`","order_id":"jp-3","order_amount_cents":3000,"currency":"JPY"}`)
	want("redemption", redeemed, "JPY")
	want("redemption's coupon", redeemed["coupon"].(map[string]any), "JPY")
	want("redemption replayed", call(200, "POST", "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+code2+`","order_id":"jp-3","order_amount_cents":3000,"currency":"JPY"}`), "JPY")
	want("USD redemption", call(200, "POST", "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+usd+`","order_id":"us-1","order_amount_cents":1000}`), "USD")
	refunded := call(200, "POST", "/api/v1/refunds", e.Cashier, `{"coupon_code":"`+code2+`","order_id":"jp-3"}`)
	want("refund", refunded, "JPY")
	call(200, "POST", "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+code3+`","order_id":"jp-4","order_amount_cents":3000,"currency":"JPY"}`)
	returned := call(200, "POST", "/api/v1/refunds", e.Cashier, `{"order_id":"jp-4","return_id":"r1","returned_amount_cents":1000}`)
	want("partial return", returned, "JPY")
	if returned["kept_amount_cents"] != float64(2000) {
		t.Fatalf("partial return: %v", returned)
	}
	want("partial return replayed", call(200, "POST", "/api/v1/refunds", e.Cashier, `{"order_id":"jp-4","return_id":"r1","returned_amount_cents":1000}`), "JPY")

	// Stats, the discount report, the budget drift: the template's, the
	// orders' asked for, the campaign's.
	want("stats", call(200, "GET", fmt.Sprintf("/api/v1/templates/%d/stats", tid), admin, "")["stats"].(map[string]any), "JPY")
	want("discounts in yen", call(200, "GET", "/api/v1/reports/discounts?currency=JPY", admin, ""), "JPY")
	want("discounts by default", call(200, "GET", "/api/v1/reports/discounts", admin, ""), "USD")
	if out := e.MustCall(t, 400, "GET", "/api/v1/reports/discounts?currency=yen", admin, ""); out["field"] != "currency" {
		t.Fatalf("discounts in an unknown currency: %v", out)
	}
	rec := call(200, "POST", "/api/v1/reconcile", admin, `{"repair":false}`)
	budgets := map[float64]string{}
	for _, c := range rec["campaigns"].([]any) {
		m := c.(map[string]any)
		budgets[m["campaign_id"].(float64)] = m["currency"].(string)
	}
	if budgets[float64(cid)] != "JPY" || budgets[float64(e.CampaignID)] != "USD" {
		t.Fatalf("budget drift currencies: %v", budgets)
	}

	// The events that carry money: the coupon's, the order's, the budget's.
	feed := call(200, "GET", "/api/v1/events?after=0&limit=1000", admin, "")["events"].([]any)
	seen := map[string]int{}
	for _, ev := range feed {
		m := ev.(map[string]any)
		data := m["data"].(map[string]any)
		typ := m["type"].(string)
		if _, ok := data["template_id"]; ok && typ != models.EventOrderReturned && len(typ) > 7 && typ[:7] == "coupon." {
			wantCur := "USD"
			if data["template_id"] == float64(tid) {
				wantCur = "JPY"
			}
			if data["currency"] != wantCur {
				t.Fatalf("%s event: currency %v, want %s: %v", typ, data["currency"], wantCur, data)
			}
			seen[typ]++
		}
		if typ == models.EventOrderReturned {
			want("order.returned", data, "JPY")
			seen[typ]++
		}
	}
	for typ, n := range map[string]int{models.EventCouponClaimed: 4, models.EventCouponHeld: 2, models.EventCouponRedeemed: 4,
		models.EventCouponReleased: 1, models.EventCouponRefunded: 1, models.EventOrderReturned: 1} {
		if seen[typ] != n {
			t.Errorf("%s events checked: %d, want %d (%v)", typ, seen[typ], n, seen)
		}
	}
}
