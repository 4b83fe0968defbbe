package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// cartLines are three lines of 1,000: a boots in shoes, b sandals in sale
// and shoes, c socks in no category.
const cartLines = `"lines":[{"line_id":"a","sku":"boots","category_ids":["shoes"],"quantity":1,"unit_price_cents":1000},` +
	`{"line_id":"b","sku":"sandals","category_ids":["sale","shoes"],"quantity":1,"unit_price_cents":1000},` +
	`{"line_id":"c","sku":"socks","quantity":1,"unit_price_cents":1000}]`

// linedOrderAPI holds the cart of cartLines with the coupons and confirms
// it, over HTTP.
func linedOrderAPI(t *testing.T, e *testsupport.HoldAPI, order string, codes ...string) {
	t.Helper()
	list, _ := json.Marshal(codes)
	st, out := e.Post(t, "/api/v1/holds", e.App, `{"order_id":"`+order+`","coupon_codes":`+string(list)+`,`+cartLines+`}`)
	if st != 201 {
		t.Fatalf("hold: %d %v", st, out)
	}
	st, out = e.Post(t, "/api/v1/holds/"+order+"/confirm", e.App, `{}`)
	if st != 200 {
		t.Fatalf("confirm: %d %v", st, out)
	}
}

// Returns by line over HTTP: the answer, its replay, a mismatch, the
// fields named, an over-return; the order.returned event carries the lines.
func TestReturnByLineAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tp := e.Template(t, 1_000, 0, models.StackingCombinable)
	code := e.Claim(t, tp, "alice")
	linedOrderAPI(t, e, "cart-1", code)
	ret := func(body string) (int, map[string]any) { return e.Post(t, "/api/v1/refunds", e.Cashier, body) }

	st, out := ret(`{"order_id":"cart-1","return_id":"r1","lines":[{"line_id":"b","quantity":1}]}`)
	e.Doc.CheckAnswer(t, "POST", "/api/v1/refunds", st, out)
	lines, _ := out["lines"].([]any)
	if st != 200 || out["result"] != "refunded" || out["partial"] != true || out["refund_cents"] != float64(667) ||
		out["discount_returned_cents"] != float64(333) || out["full_refund"] != false || len(lines) != 1 ||
		fmt.Sprint(lines[0]) != "map[discount_cents:333 line_id:b quantity:1 refund_cents:667]" {
		t.Fatalf("return of line b: %d %v", st, out)
	}
	st, again := ret(`{"order_id":"cart-1","return_id":"r1","lines":[{"line_id":"b","quantity":1}]}`)
	if st != 200 || again["result"] != "duplicate" || fmt.Sprint(again["lines"]) != fmt.Sprint(out["lines"]) ||
		again["refund_cents"] != out["refund_cents"] {
		t.Fatalf("replay: %d %v", st, again)
	}
	for _, tc := range []struct {
		body   string
		status int
		result string
		field  string
	}{
		{`{"order_id":"cart-1","return_id":"r1","lines":[{"line_id":"a","quantity":1}]}`, 422, "idempotency_mismatch", "lines"},
		{`{"order_id":"cart-1","return_id":"r2","returned_amount_cents":100}`, 400, "invalid_request", "returned_amount_cents"},
		{`{"order_id":"cart-1","return_id":"r2","returned_amount_cents":100,"lines":[{"line_id":"a","quantity":1}]}`, 400, "invalid_request", "returned_amount_cents"},
		{`{"order_id":"cart-1","lines":[{"line_id":"a","quantity":1}]}`, 400, "invalid_request", "return_id"},
		{`{"order_id":"cart-1","return_id":"r2","lines":[]}`, 400, "invalid_request", "lines"},
		{`{"order_id":"cart-1","return_id":"r2","lines":[{"line_id":"zz","quantity":1}]}`, 400, "invalid_request", "lines[0].line_id"},
		{`{"order_id":"cart-1","return_id":"r2","lines":[{"line_id":"a","quantity":1},{"line_id":"a","quantity":1}]}`, 400, "invalid_request", "lines[1].line_id"},
		{`{"order_id":"cart-1","return_id":"r2","lines":[{"line_id":"a"}]}`, 400, "invalid_request", "lines[0].quantity"},
		{`{"order_id":"cart-1","return_id":"r2","lines":[{"line_id":"a","quantity":1},{"line_id":"b","quantity":1}]}`, 422, "return_exceeds_order", "lines[1].quantity"},
	} {
		st, out := ret(tc.body)
		e.Doc.CheckAnswer(t, "POST", "/api/v1/refunds", st, out)
		if st != tc.status || out["result"] != tc.result || out["field"] != tc.field {
			t.Fatalf("%s: %d %v, want %d %s naming %s", tc.body, st, out, tc.status, tc.result, tc.field)
		}
	}
	// The rest of the order: the coupon is refunded with it.
	st, out = ret(`{"order_id":"cart-1","return_id":"r3","lines":[{"line_id":"c","quantity":1},{"line_id":"a","quantity":1}]}`)
	e.Doc.CheckAnswer(t, "POST", "/api/v1/refunds", st, out)
	if st != 200 || out["full_refund"] != true || out["refund_cents"] != float64(1_333) || out["discount_returned_cents"] != float64(667) ||
		e.CouponStatus(t, code) != models.CouponIssued {
		t.Fatalf("completing return: %d %v, coupon %s", st, out, e.CouponStatus(t, code))
	}

	feed := e.MustCall(t, 200, "GET", "/api/v1/events?after=0&limit=1000", testsupport.AdminToken, "")
	var returned []map[string]any
	for _, ev := range feed["events"].([]any) {
		if m := ev.(map[string]any); m["type"] == models.EventOrderReturned {
			returned = append(returned, m["data"].(map[string]any))
		}
	}
	if len(returned) != 2 || fmt.Sprint(returned[0]["lines"]) != "[map[discount_cents:333 line_id:b quantity:1 refund_cents:667]]" ||
		returned[0]["refund_cents"] != float64(667) || returned[1]["full_refund"] != true ||
		fmt.Sprint(returned[1]["lines"]) != "[map[discount_cents:333 line_id:c quantity:1 refund_cents:667] map[discount_cents:334 line_id:a quantity:1 refund_cents:666]]" {
		t.Fatalf("order.returned events: %v", returned)
	}
}

// The discount report by SKU and category over HTTP, as JSON and CSV,
// before and after a return.
func TestDiscountReportAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tp := e.Template(t, 1_000, 0, models.StackingCombinable)
	linedOrderAPI(t, e, "cart-1", e.Claim(t, tp, "alice"))
	csv := func(query string) (int, string) {
		t.Helper()
		req := httptest.NewRequest("GET", "/api/v1/reports/discounts.csv?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+testsupport.AdminToken)
		rec := httptest.NewRecorder()
		e.Router.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	out := e.MustCall(t, 200, "GET", "/api/v1/reports/discounts?by=category", testsupport.AdminToken, "")
	e.Doc.CheckAnswer(t, "GET", "/api/v1/reports/discounts", 200, out)
	if out["by"] != "category" || fmt.Sprint(out["rows"]) != "[map[discount_cents:333 key:sale net_discount_cents:333 orders:1 returned_discount_cents:0 returned_units:0 units:1] "+
		"map[discount_cents:667 key:shoes net_discount_cents:667 orders:1 returned_discount_cents:0 returned_units:0 units:2]]" ||
		out["totals_by_line"].(map[string]any)["discount_cents"] != float64(1_000) {
		t.Fatalf("by category: %v", out)
	}
	st, body := csv("by=sku")
	want := "sku,orders,units,returned_units,discount_cents,returned_discount_cents,net_discount_cents\n" +
		"boots,1,1,0,334,0,334\nsandals,1,1,0,333,0,333\nsocks,1,1,0,333,0,333\n"
	if st != http.StatusOK || body != want {
		t.Fatalf("CSV by sku: %d\n%s\nwant\n%s", st, body, want)
	}
	if st, out := e.Post(t, "/api/v1/refunds", e.Cashier, `{"order_id":"cart-1","return_id":"r1","lines":[{"line_id":"b","quantity":1}]}`); st != 200 {
		t.Fatalf("return: %d %v", st, out)
	}
	st, body = csv(fmt.Sprintf("by=category&template_id=%d&campaign_id=%d", tp, e.CampaignID))
	want = "category,orders,units,returned_units,discount_cents,returned_discount_cents,net_discount_cents\n" +
		"sale,1,1,1,333,333,0\nshoes,1,2,1,667,333,334\n"
	if st != http.StatusOK || body != want {
		t.Fatalf("CSV by category after a return: %d\n%s\nwant\n%s", st, body, want)
	}
	st, out = e.Call(t, "GET", "/api/v1/reports/discounts?by=brand", testsupport.AdminToken, nil, "")
	if st != 400 || out["field"] != "by" {
		t.Fatalf("by=brand: %d %v", st, out)
	}
	st, out = e.Call(t, "GET", "/api/v1/reports/discounts.csv?template_id=x", testsupport.AdminToken, nil, "")
	if st != 400 || out["field"] != "template_id" {
		t.Fatalf("CSV template_id=x: %d %v", st, out)
	}
}
