package api_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// The HTTP answers of an order's one amount: combinable coupons redeemed one
// step at a time never discount more than the order, another amount is 422,
// and a return_id names one return; each return is an order.returned event.
func TestOrderOneAmountAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	a := e.Template(t, 500, 0, models.StackingCombinable)
	b := e.Template(t, 500, 0, models.StackingCombinable)
	c := e.Template(t, 500, 0, models.StackingCombinable)
	ca, cb, cc := e.Claim(t, a, "alice"), e.Claim(t, b, "alice"), e.Claim(t, c, "alice")
	redeem := func(code string, amount string) (int, map[string]any) {
		return e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+code+`","order_id":"till-600","order_amount_cents":`+amount+`}`)
	}

	st, out := redeem(ca, "600")
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 100)
	st, out = redeem(cb, "700")
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 422, "idempotency_mismatch", -1, 0)
	if out["field"] != "order_amount_cents" || e.CouponStatus(t, cb) != models.CouponIssued {
		t.Fatalf("another amount: %v, coupon %s", out, e.CouponStatus(t, cb))
	}
	// 100 left of 600: the second 500 off gives 100, and the order pays 0.
	st, out = redeem(cb, "600")
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 100, 0)
	st, out = redeem(cc, "600")
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 409, "not_combinable", -1, 0)
	if e.CouponStatus(t, cc) != models.CouponIssued {
		t.Fatalf("the refused coupon: %s", e.CouponStatus(t, cc))
	}

	ret := func(id, amount string) (int, map[string]any) {
		return e.Post(t, "/api/v1/refunds", e.Cashier, `{"order_id":"till-600","return_id":"`+id+`","returned_amount_cents":`+amount+`}`)
	}
	st, out = ret("r1", "100")
	if st != 200 || out["result"] != "refunded" || out["kept_amount_cents"] != float64(500) {
		t.Fatalf("return: %d %v", st, out)
	}
	e.Doc.CheckAnswer(t, "POST", "/api/v1/refunds", st, out)
	st, out = ret("r1", "100")
	if st != 200 || out["result"] != "duplicate" {
		t.Fatalf("the same return again: %d %v", st, out)
	}
	st, out = ret("r1", "200")
	e.Want(t, "POST", "/api/v1/refunds", st, out, 422, "idempotency_mismatch", -1, 0)
	if out["field"] != "returned_amount_cents" {
		t.Fatalf("field: %v", out)
	}

	feed := e.MustCall(t, 200, "GET", "/api/v1/events?after=0&limit=1000", testsupport.AdminToken, "")
	var returned []map[string]any
	for _, ev := range feed["events"].([]any) {
		if m := ev.(map[string]any); m["type"] == models.EventOrderReturned {
			returned = append(returned, m["data"].(map[string]any))
		}
	}
	if len(returned) != 1 || returned[0]["order_id"] != "till-600" || returned[0]["return_id"] != "r1" ||
		returned[0]["returned_amount_cents"] != float64(100) || returned[0]["kept_amount_cents"] != float64(500) ||
		returned[0]["returned_total_cents"] != float64(100) {
		t.Fatalf("order.returned events: %v", returned)
	}
}
