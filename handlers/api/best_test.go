package api_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// Validate and usable with choose best (docs/checkout.md, "Choosing the
// best coupons"), through the API, on the backends of the environment.

// percentTemplate creates a percent template: pct off the order, with that
// stacking.
func percentTemplate(t *testing.T, e *testsupport.HoldAPI, pct int, stacking string) int64 {
	t.Helper()
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"P%d",`+
		`"kind":"percent","percent_off":%d,"max_discount_cents":100000,"total_stock":20,"per_user_limit":10,"valid_days":30,`+
		`"stacking":%q}`, e.CampaignID, pct, pct, stacking))
	return int64(out["template"].(map[string]any)["id"].(float64))
}

// leftOut is a left-out coupon of an answer: code, reason, message, and
// discount alone.
type leftOut struct {
	code, reason, message string
	discount              int64
}

// wantLeftOut checks an answer's left_out, in order.
func wantLeftOut(t *testing.T, out map[string]any, want []leftOut) {
	t.Helper()
	got, _ := out["left_out"].([]any)
	if len(got) != len(want) {
		t.Fatalf("left_out %v, want %d coupons", out["left_out"], len(want))
	}
	for i, w := range want {
		g := got[i].(map[string]any)
		if g["coupon_code"] != w.code || g["reason"] != w.reason || g["message"] != w.message || g["discount_cents"] != float64(w.discount) {
			t.Errorf("left_out[%d] = %v, want %+v", i, g, w)
		}
	}
}

// chosenCodes is the codes of an answer's coupons, each with its discount.
func chosenCodes(out map[string]any) map[string]float64 {
	m := map[string]float64{}
	for _, c := range out["coupons"].([]any) {
		cc := c.(map[string]any)
		m[cc["coupon_code"].(string)] = cc["discount_cents"].(float64)
	}
	return m
}

// Of the shopper's exclusive 30% and the typed combinable 10% and 5%
// (1000 + 450 together), best chooses the 30% alone and says why the two
// are left out; without choose the typed codes are priced together, as
// before; usable chooses the same.
func TestValidateBestPicksExclusiveOverCombinable(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	c10 := e.Claim(t, percentTemplate(t, e, 10, models.StackingCombinable), "u1")
	c5 := e.Claim(t, percentTemplate(t, e, 5, models.StackingCombinable), "u1")
	c30 := e.Claim(t, percentTemplate(t, e, 30, models.StackingExclusive), "u1")
	body := func(choose string) string {
		return fmt.Sprintf(`{"order_amount_cents":10000,"user_id":"u1","coupon_codes":[%q,%q]%s}`, c10, c5, choose)
	}

	status, out := e.Post(t, "/api/v1/checkout/validate", e.App, body(""))
	e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, "ok", 1450, 8550)
	if _, ok := out["left_out"]; ok || len(out["coupons"].([]any)) != 2 {
		t.Fatalf("without choose: %v", out)
	}

	status, out = e.Post(t, "/api/v1/checkout/validate", e.App, body(`,"choose":"best"`))
	e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, "ok", 3000, 7000)
	if got := chosenCodes(out); !reflect.DeepEqual(got, map[string]float64{c30: 3000}) {
		t.Fatalf("chose %v, want %s for 3000", got, c30)
	}
	why := "exclusive " + c30 + " gives more alone"
	wantLeftOut(t, out, []leftOut{{c10, models.LeftOutNotCombinable, why, 1000}, {c5, models.LeftOutNotCombinable, why, 500}})

	out = e.MustCall(t, 200, "GET", "/api/v1/users/u1/coupons/usable?order_amount_cents=10000&choose=best", e.App, "")
	if !reflect.DeepEqual(out["best"], []any{c30}) || out["best_discount_cents"] != float64(3000) {
		t.Fatalf("usable best: %v", out)
	}
	wantLeftOut(t, out, []leftOut{{c10, models.LeftOutNotCombinable, why, 1000}, {c5, models.LeftOutNotCombinable, why, 500}})
	e.Doc.CheckAnswer(t, "GET", "/api/v1/users/{user_id}/coupons/usable", 200, out)
	out = e.MustCall(t, 200, "POST", "/api/v1/users/u1/coupons/usable", e.App, `{"order_amount_cents":10000,"choose":"best"}`)
	if !reflect.DeepEqual(out["best"], []any{c30}) || out["best_discount_cents"] != float64(3000) {
		t.Fatalf("usable best of a cart: %v", out)
	}

	// A choose that is neither is refused naming the field; nothing changes.
	for _, path := range []string{"/api/v1/checkout/validate"} {
		status, out := e.Post(t, path, e.App, body(`,"choose":"most"`))
		if status != 400 || out["field"] != "choose" {
			t.Fatalf("choose most: %d %v", status, out)
		}
	}
	if status, out := e.Call(t, "GET", "/api/v1/users/u1/coupons/usable?order_amount_cents=10000&choose=most", e.App, nil, ""); status != 400 || out["field"] != "choose" {
		t.Fatalf("usable choose most: %d %v", status, out)
	}
	for _, code := range []string{c10, c5, c30} {
		if st := e.CouponStatus(t, code); st != models.CouponIssued {
			t.Fatalf("%s is %s after validations", code, st)
		}
	}
}

// Ties go to fewer coupons, then to the earlier code: two exclusive 5.00
// coupons, the first typed wins, every time; an exclusive 10.00 beats two
// combinable 5.00 coupons.
func TestValidateBestTiesAreDeterministic(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	a := e.Claim(t, e.Template(t, 500, 0, models.StackingExclusive), "u1")
	b := e.Claim(t, e.Template(t, 500, 0, models.StackingExclusive), "u1")
	for _, order := range [][2]string{{a, b}, {b, a}} {
		for range 2 {
			status, out := e.Post(t, "/api/v1/checkout/validate", e.App,
				fmt.Sprintf(`{"order_amount_cents":10000,"coupon_codes":[%q,%q],"choose":"best"}`, order[0], order[1]))
			e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, "ok", 500, 9500)
			if got := chosenCodes(out); !reflect.DeepEqual(got, map[string]float64{order[0]: 500}) {
				t.Fatalf("codes %v: chose %v", order, got)
			}
			wantLeftOut(t, out, []leftOut{{order[1], models.LeftOutNotCombinable, "exclusive " + order[0] + " gives more alone", 500}})
		}
	}

	x := e.Claim(t, e.Template(t, 500, 0, models.StackingCombinable), "u2")
	y := e.Claim(t, e.Template(t, 500, 0, models.StackingCombinable), "u2")
	one := e.Claim(t, e.Template(t, 1000, 0, models.StackingExclusive), "u2")
	status, out := e.Post(t, "/api/v1/checkout/validate", e.App,
		fmt.Sprintf(`{"order_amount_cents":10000,"user_id":"u2","coupon_codes":[%q,%q],"choose":"best"}`, x, y))
	e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, "ok", 1000, 9000)
	if got := chosenCodes(out); !reflect.DeepEqual(got, map[string]float64{one: 1000}) {
		t.Fatalf("chose %v, want %s alone", got, one)
	}
}

// A hold of the codes validate(best) chose, on the same order and cart,
// takes exactly what validate said: the discount, the payable and every
// line's parts. A code no coupon has, and one below its minimum, are left
// out refused with their own words.
func TestHoldAfterValidateBestTakesWhatItSaid(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	c30 := e.Claim(t, percentTemplate(t, e, 30, models.StackingExclusive), "u1")
	c10 := e.Claim(t, percentTemplate(t, e, 10, models.StackingCombinable), "u1")
	f500 := e.Claim(t, e.Template(t, 500, 0, models.StackingCombinable), "u1")
	high := e.Claim(t, e.Template(t, 4000, 50_000, models.StackingCombinable), "u1")
	lines := `"lines":[{"line_id":"a","sku":"s1","quantity":2,"unit_price_cents":2501},{"line_id":"b","sku":"s2","quantity":1,"unit_price_cents":4998}],"shipping_cents":500`
	missing := models.NewCouponCode()
	status, out := e.Post(t, "/api/v1/checkout/validate", e.App,
		fmt.Sprintf(`{"order_id":"best-1","user_id":"u1","coupon_codes":[%q,%q],"choose":"best",%s}`, f500, missing, lines))
	// 30% of 10000 alone beats 500 then 10% of 9500 (1450).
	e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, "ok", 3000, 7500)
	if got := chosenCodes(out); !reflect.DeepEqual(got, map[string]float64{c30: 3000}) {
		t.Fatalf("chose %v, want %s", got, c30)
	}
	why := "exclusive " + c30 + " gives more alone"
	got := out["left_out"].([]any)
	if len(got) != 4 {
		t.Fatalf("left_out %v, want 4", got)
	}
	wantRefused := func(i int, code, refusal string) {
		t.Helper()
		g := got[i].(map[string]any)
		if g["coupon_code"] != code || g["reason"] != models.LeftOutRefused || g["refusal"] != refusal || g["discount_cents"] != float64(0) {
			t.Errorf("left_out[%d] = %v, want %s refused %s", i, g, code, refusal)
		}
	}
	wantLeftOut(t, map[string]any{"left_out": []any{got[0], got[2]}}, []leftOut{
		{f500, models.LeftOutNotCombinable, why, 500}, {c10, models.LeftOutNotCombinable, why, 1000}})
	wantRefused(1, missing, "not_found")
	wantRefused(3, high, "below_minimum")

	status, held := e.Post(t, "/api/v1/holds", e.App, fmt.Sprintf(`{"order_id":"best-1","user_id":"u1","coupon_codes":[%q],%s}`, c30, lines))
	e.Want(t, "POST", "/api/v1/holds", status, held, 201, "held", 3000, 7500)
	if !reflect.DeepEqual(held["lines"], out["lines"]) || !reflect.DeepEqual(held["shipping_discount_cents"], out["shipping_discount_cents"]) ||
		!reflect.DeepEqual(chosenCodes(held), chosenCodes(out)) {
		t.Fatalf("hold %v, validate said %v", held, out)
	}
	if st := e.CouponStatus(t, c30); st != models.CouponHeld {
		t.Fatalf("%s is %s", c30, st)
	}

	// Confirmed and returned by line, the chosen coupon gives back what it
	// took of each line, and the items' refunds sum to what the items were
	// paid (10,000 less 3,000; the shipping is the shop's to refund).
	status, done := e.Post(t, "/api/v1/holds/best-1/confirm", e.App, `{}`)
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", status, done, 200, "redeemed", 3000, 7500)
	ret := func(id, lines string, refund, returned int64) {
		t.Helper()
		status, out := e.Post(t, "/api/v1/refunds", e.Cashier, `{"order_id":"best-1","return_id":"`+id+`","lines":[`+lines+`]}`)
		if status != 200 || out["refund_cents"] != float64(refund) || out["discount_returned_cents"] != float64(returned) {
			t.Fatalf("return %s: %d %v, want refund %d, discount back %d", id, status, out, refund, returned)
		}
	}
	// 30% of line b (4,998) is 1,499 of the 3,000; line a's 5,002 carry 1,501.
	ret("r1", `{"line_id":"b","quantity":1}`, 4998-1499, 1499)
	ret("r2", `{"line_id":"a","quantity":2}`, 5002-1501, 1501)
	if st := e.CouponStatus(t, c30); st != models.CouponIssued {
		t.Fatalf("%s is %s after the whole order came back, want issued again", c30, st)
	}
}

// On an order that already carries a coupon (redeemed one step at a time),
// best chooses among what the order has room for, priced on what that
// coupon left: the exclusive coupon is refused on its own (not_combinable,
// as its hold would be), the combinable 10% takes 10% of 9,500, and a
// redemption of it then takes that.
func TestValidateBestOnAnOrderWithACoupon(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	c5 := e.Claim(t, percentTemplate(t, e, 5, models.StackingCombinable), "u1")
	c10 := e.Claim(t, percentTemplate(t, e, 10, models.StackingCombinable), "u1")
	c30 := e.Claim(t, percentTemplate(t, e, 30, models.StackingExclusive), "u1")
	lines := `"lines":[{"line_id":"a","sku":"s1","quantity":4,"unit_price_cents":2500}]`
	redeem := func(code string, discount, payable int64) {
		t.Helper()
		status, out := e.Post(t, "/api/v1/redemptions", e.App, fmt.Sprintf(`{"order_id":"best-2","user_id":"u1","coupon_code":%q,%s}`, code, lines))
		e.Want(t, "POST", "/api/v1/redemptions", status, out, 200, "redeemed", discount, payable)
	}
	redeem(c5, 500, 9500)

	status, out := e.Post(t, "/api/v1/checkout/validate", e.App,
		fmt.Sprintf(`{"order_id":"best-2","user_id":"u1","coupon_codes":[%q],"choose":"best",%s}`, c30, lines))
	e.Want(t, "POST", "/api/v1/checkout/validate", status, out, 200, "ok", 950, 8550)
	if got := chosenCodes(out); !reflect.DeepEqual(got, map[string]float64{c10: 950}) {
		t.Fatalf("chose %v, want %s", got, c10)
	}
	got := out["left_out"].([]any)
	if len(got) != 1 {
		t.Fatalf("left_out %v, want the exclusive coupon only", got)
	}
	if g := got[0].(map[string]any); g["coupon_code"] != c30 || g["reason"] != models.LeftOutRefused || g["refusal"] != "not_combinable" {
		t.Fatalf("left_out %v", g)
	}
	redeem(c10, 950, 8550)
}
