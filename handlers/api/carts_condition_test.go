package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// "Buy 2 trousers, get 10% off jackets" through the API: a condition
// without a number of items or an amount is refused 400 naming it; the
// template answers its condition; a cart of 1 trousers is refused
// condition_not_met (200 in validate, 422 on hold) saying what is missing,
// a cart of 2 takes 1,200 off the jacket.
func TestCartsAPICondition(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	body := func(cond string) string {
		return fmt.Sprintf(`{"campaign_id":%d,"name":"Jackets","kind":"percent","percent_off":10,"max_discount_cents":100000,`+
			`"applies_to":"items","target":{"category_ids":["jackets"]},"condition":%s,"total_stock":20,"per_user_limit":10,"valid_days":30}`, e.CampaignID, cond)
	}
	st, out := e.Post(t, "/api/v1/templates", testsupport.AdminToken, body(`{"target":{"category_ids":["trousers"]}}`))
	if st != 400 || out["result"] != "invalid_request" || out["field"] != "condition.min_quantity" {
		t.Fatalf("a condition without a minimum: %d %v", st, out)
	}
	out = e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, body(`{"target":{"category_ids":["trousers"]},"min_quantity":2}`))
	tp := out["template"].(map[string]any)
	if cond, _ := tp["condition"].(map[string]any); cond == nil || cond["min_quantity"] != float64(2) ||
		fmt.Sprint(cond["target"]) != "map[category_ids:[trousers]]" {
		t.Fatalf("the template answers %v", tp)
	}
	c := e.Claim(t, int64(tp["id"].(float64)), "alice")
	cart := func(n int) string {
		return fmt.Sprintf(`"lines":[{"line_id":"t","sku":"T","category_ids":["trousers"],"quantity":%d,"unit_price_cents":4000},`+
			`{"line_id":"j","sku":"J","category_ids":["jackets"],"quantity":1,"unit_price_cents":12000}]`, n)
	}
	want := "coupon " + c + " needs 2 items of category trousers, the cart has 1"
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+c+`"],`+cart(1)+`}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "condition_not_met", 0, 16000)
	if cs := out["coupons"].([]any); len(cs) != 1 || cs[0].(map[string]any)["result"] != "condition_not_met" || cs[0].(map[string]any)["message"] != want {
		t.Fatalf("validate's coupon line %v, want %q", cs, want)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"cond-1","coupon_codes":["`+c+`"],`+cart(1)+`}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 422, "condition_not_met", -1, 0)
	if out["field"] != "lines" || out["error"] != "lines: "+want || e.CouponStatus(t, c) != models.CouponIssued {
		t.Fatalf("hold of 1 trousers: %v", out)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"cond-2","coupon_codes":["`+c+`"],`+cart(2)+`}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 1200, 20000-1200)
}
