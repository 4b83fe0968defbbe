package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// threeLinesJSON is a cart of three lines of 1,000.
const threeLinesJSON = `"lines":[{"line_id":"a","sku":"A","quantity":1,"unit_price_cents":1000},` +
	`{"line_id":"b","sku":"B","quantity":1,"unit_price_cents":1000,"category_ids":["c1"]},` +
	`{"line_id":"c","sku":"C","product_id":"p","quantity":1,"unit_price_cents":1000,"discountable":true}]`

// wantLines checks an answer's lines: each line's discount, and the coupon's
// part of it.
func wantLines(t *testing.T, out map[string]any, code string, cents ...int64) {
	t.Helper()
	ls, _ := out["lines"].([]any)
	if len(ls) != len(cents) || out["currency"] != "USD" || out["shipping_discount_cents"] != float64(0) {
		t.Fatalf("lines of %v, want %v", out, cents)
	}
	for i, l := range ls {
		m := l.(map[string]any)
		cs := m["coupons"].([]any)
		if m["discount_cents"] != float64(cents[i]) || len(cs) != 1 || cs[0].(map[string]any)["coupon_code"] != code ||
			cs[0].(map[string]any)["discount_cents"] != float64(cents[i]) {
			t.Fatalf("line %d of %v, want %d", i, ls, cents[i])
		}
	}
}

// A cart with lines through the API: validate, hold, its state and confirm
// answer the split per line (334 / 333 / 333); amount-only answers have no
// lines; a confirm of another cart is refused naming lines.
func TestCartsAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tpl := e.Template(t, 1000, 0, models.StackingExclusive)
	c1 := e.Claim(t, tpl, "alice")

	st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+c1+`"],`+threeLinesJSON+`}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 1000, 2000)
	wantLines(t, out, c1, 334, 333, 333)
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+c1+`"],"order_amount_cents":3000}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 1000, 2000)
	if _, ok := out["lines"]; ok {
		t.Fatalf("an amount-only answer with lines: %v", out)
	}

	hold := `{"order_id":"cart-1","coupon_codes":["` + c1 + `"],"order_amount_cents":3000,` + threeLinesJSON + `}`
	st, out = e.Post(t, "/api/v1/holds", e.App, hold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 1000, 2000)
	wantLines(t, out, c1, 334, 333, 333)
	st, out = e.Call(t, "GET", "/api/v1/holds/cart-1", e.Cashier, nil, "")
	e.Want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 1000, 2000)
	wantLines(t, out, c1, 334, 333, 333)

	changed := `{"lines":[{"line_id":"a","sku":"A","quantity":2,"unit_price_cents":1000}]}`
	st, out = e.Post(t, "/api/v1/holds/cart-1/confirm", e.App, changed)
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 422, "idempotency_mismatch", -1, 0)
	if out["field"] != "lines" || e.CouponStatus(t, c1) != models.CouponHeld {
		t.Fatalf("confirm of another cart: %v", out)
	}
	st, out = e.Post(t, "/api/v1/holds/cart-1/confirm", e.App, `{`+threeLinesJSON+`}`)
	e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "redeemed", 1000, 2000)
	wantLines(t, out, c1, 334, 333, 333)

	// The one-step redemption with lines.
	c2 := e.Claim(t, tpl, "bob")
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+c2+`","order_id":"cart-2",`+threeLinesJSON+`}`)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 1000, 2000)
	wantLines(t, out, c2, 334, 333, 333)
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"`+c2+`","order_id":"cart-2",`+threeLinesJSON+`}`)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "duplicate", 1000, 2000)
	wantLines(t, out, c2, 334, 333, 333)

	// Usable for a cart, in the body.
	e.Claim(t, tpl, "carol")
	st, out = e.Post(t, "/api/v1/users/carol/coupons/usable", e.App, `{`+threeLinesJSON+`}`)
	if st != 200 || out["best_discount_cents"] != float64(1000) || len(out["coupons"].([]any)) != 1 {
		t.Fatalf("usable for a cart: %d %v", st, out)
	}
	e.Doc.CheckAnswer(t, "POST", "/api/v1/users/{user_id}/coupons/usable", st, out)
}

// Bad carts are 400 naming the field; an amount that is not the cart's
// total is 400; without lines the amount is required.
func TestCartsAPIRefusals(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	c1 := e.Claim(t, e.Template(t, 1000, 0, models.StackingExclusive), "alice")
	line := func(fields string) string { return `"lines":[` + fields + `]` }
	for _, tc := range []struct{ body, field string }{
		{line(`{"line_id":"a","sku":"A","quantity":0,"unit_price_cents":1}`), "lines[0].quantity"},
		{line(`{"line_id":"a","sku":"A","quantity":1,"unit_price_cents":1},{"line_id":"b","sku":"B","quantity":1}`), "lines[1].unit_price_cents"},
		{line(`{"sku":"A","quantity":1,"unit_price_cents":1}`), "lines[0].line_id"},
		{line(`{"line_id":"a","sku":"A","quantity":1,"unit_price_cents":1},{"line_id":"a","sku":"B","quantity":1,"unit_price_cents":1}`), "lines[1].line_id"},
		{line(``), "lines"},
		{threeLinesJSON + `,"order_amount_cents":2999`, "order_amount_cents"},
		{threeLinesJSON + `,"currency":"usd"`, "currency"},
		{threeLinesJSON + `,"shipping_cents":-1`, "shipping_cents"},
		{`"shipping_cents":100,"order_amount_cents":1000`, "shipping_cents"},
		{`"currency":"USD"`, "order_amount_cents"},
	} {
		st, out := e.Post(t, "/api/v1/holds", e.App, `{"order_id":"bad","coupon_codes":["`+c1+`"],`+tc.body+`}`)
		e.Want(t, "POST", "/api/v1/holds", st, out, 400, "invalid_request", -1, 0)
		if out["field"] != tc.field {
			t.Errorf("%s: field %v, want %s", tc.body, out["field"], tc.field)
		}
	}
	// A coupon of another currency than the cart: every template has its
	// currency (the deployment's, USD, when created without one).
	st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+c1+`"],"currency":"EUR",`+threeLinesJSON+`}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "currency_mismatch", 0, 3000)
	if out["currency"] != "EUR" {
		t.Fatalf("a template of the deployment's currency in a EUR cart: %v", out)
	}
	tpl := e.Template(t, 700, 0, models.StackingExclusive)
	e.Backends.DB.Exec(`UPDATE templates SET currency = 'GBP' WHERE id = ?`, tpl)
	e.MustCall(t, 200, "GET", fmt.Sprintf("/api/v1/templates/%d", tpl), testsupport.AdminToken, "") // read afresh into the cache
	c2 := e.Claim(t, tpl, "bob")
	st, out = e.Post(t, "/api/v1/holds", e.App, fmt.Sprintf(`{"order_id":"gbp","coupon_codes":["%s"],%s}`, c2, threeLinesJSON))
	e.Want(t, "POST", "/api/v1/holds", st, out, 422, "currency_mismatch", -1, 0)
}

// A template for full-price items only and the lines' compare-at prices
// through the API: validate and hold skip the marked-down line (docs/pricing.md,
// "Full-price items only"); a negative compare-at price is 400 naming it.
func TestCartsAPIFullPriceOnly(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Full",`+
		`"kind":"percent","percent_off_bp":2000,"max_discount_cents":100000,"full_price_only":true,"total_stock":20,"per_user_limit":10,"valid_days":30}`, e.CampaignID))
	c := e.Claim(t, int64(out["template"].(map[string]any)["id"].(float64)), "alice")
	lines := `"lines":[{"line_id":"shirt","sku":"S","quantity":1,"unit_price_cents":3000,"compare_at_price_cents":4000},` +
		`{"line_id":"trousers","sku":"T","quantity":1,"unit_price_cents":5000,"compare_at_price_cents":5000},` +
		`{"line_id":"socks","sku":"K","quantity":2,"unit_price_cents":500}]`
	st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+c+`"],`+lines+`}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 1200, 7800)
	ls := out["lines"].([]any)
	if len(ls) != 3 || ls[0].(map[string]any)["discount_cents"] != float64(0) || ls[1].(map[string]any)["discount_cents"] != float64(1000) ||
		ls[2].(map[string]any)["discount_cents"] != float64(200) {
		t.Fatalf("lines %v, want 0 / 1000 / 200", ls)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"full-1","coupon_codes":["`+c+`"],`+lines+`}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 1200, 7800)
	bad := `"lines":[{"line_id":"a","sku":"A","quantity":1,"unit_price_cents":1000,"compare_at_price_cents":-1}]`
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"coupon_codes":["`+c+`"],`+bad+`}`)
	if st != 400 || out["field"] != "lines[0].compare_at_price_cents" {
		t.Fatalf("negative compare-at: %d %v", st, out)
	}
}
