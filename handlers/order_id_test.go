package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// badOrderIDs are order ids a path cannot carry as one segment: each is
// refused by name wherever an order id enters (docs/checkout.md, "Order ids").
var badOrderIDs = []string{"a/b", ".", ".."}

// TestOrderIDRefusedEverywhere: every API endpoint that takes an order id, in
// its body or its path (escaped as a client escapes it), answers 400
// invalid_request naming order_id for a/b, . and .., and changes nothing.
func TestOrderIDRefusedEverywhere(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tid := e.Template(t, 500, 0, models.StackingExclusive)
	code := e.Claim(t, tid, "alice")
	before := e.Counts(t)
	for _, id := range badOrderIDs {
		q := fmt.Sprintf("%q", id)
		path := "/api/v1/holds/" + url.PathEscape(id)
		for _, tc := range []struct{ method, path, body, field string }{
			{"POST", "/api/v1/holds", `{"order_id":` + q + `,"order_amount_cents":3000,"coupon_codes":["` + code + `"]}`, "order_id"},
			{"POST", "/api/v1/checkout/validate", `{"order_id":` + q + `,"order_amount_cents":3000,"coupon_codes":["` + code + `"]}`, "order_id"},
			{"POST", "/api/v1/redemptions", `{"order_id":` + q + `,"order_amount_cents":3000,"coupon_code":"` + code + `"}`, "order_id"},
			{"POST", "/api/v1/refunds", `{"order_id":` + q + `,"coupon_code":"` + code + `"}`, "order_id"},
			{"POST", "/api/v1/refunds", `{"order_id":` + q + `,"return_id":"r-1","returned_amount_cents":100}`, "order_id"},
			{"POST", "/api/v1/refunds", `{"order_id":"web-1","return_id":` + q + `,"returned_amount_cents":100}`, "return_id"},
			{"GET", path, "", "order_id"},
			{"POST", path + "/confirm", "", "order_id"},
			{"POST", path + "/confirm", `{"order_amount_cents":3000}`, "order_id"},
			{"POST", path + "/release", "", "order_id"},
		} {
			st, out := e.Call(t, tc.method, tc.path, e.Cashier, nil, tc.body)
			if st != http.StatusBadRequest || out["result"] != "invalid_request" || out["field"] != tc.field {
				t.Errorf("%s %s %s: %d %v, want 400 invalid_request naming %s", tc.method, tc.path, tc.body, st, out, tc.field)
			}
		}
	}
	if after := e.Counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("refused order ids changed rows: %v, before %v", after, before)
	}
	if s := e.CouponStatus(t, code); s != models.CouponIssued {
		t.Fatalf("the coupon is %s", s)
	}
}

// TestOrderIDAlphabetRoundTrip: order ids with every sign of the alphabet,
// a leading and a trailing dot, and the longest length are held, shown,
// confirmed or released through their escaped paths.
func TestOrderIDAlphabetRoundTrip(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	tid := e.Template(t, 500, 0, models.StackingExclusive)
	ids := []string{"Az09._:@-", ".hidden", "end.", "a..b", "_", "-", "@", ":", strings.Repeat("Z", 63) + "9"}
	for i, id := range ids {
		code := e.Claim(t, tid, "alice")
		st, out := e.Post(t, "/api/v1/holds", e.App, `{"order_id":`+fmt.Sprintf("%q", id)+`,"order_amount_cents":3000,"coupon_codes":["`+code+`"]}`)
		e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 2500)
		if out["order_id"] != id {
			t.Fatalf("hold of %q answers order %v", id, out["order_id"])
		}
		path := "/api/v1/holds/" + url.PathEscape(id)
		st, out = e.Call(t, "GET", path, e.Cashier, nil, "")
		e.Want(t, "GET", "/api/v1/holds/{order_id}", st, out, 200, "ok", 500, 2500)
		if out["state"] != "held" || out["order_id"] != id {
			t.Fatalf("GET %s: %v", path, out)
		}
		if i%2 == 0 {
			st, out = e.Post(t, path+"/confirm", e.App, "")
			e.Want(t, "POST", "/api/v1/holds/{order_id}/confirm", st, out, 200, "redeemed", 500, 2500)
			if s := e.CouponStatus(t, code); s != models.CouponUsed {
				t.Fatalf("coupon of %q after confirm is %s", id, s)
			}
		} else {
			st, out = e.Post(t, path+"/release", e.App, "")
			e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "released", -1, 0)
			if s := e.CouponStatus(t, code); s != models.CouponIssued {
				t.Fatalf("coupon of %q after release is %s", id, s)
			}
		}
	}
}

// TestPagesOrderIDRefused: the till's forms refuse a/b, . and .. beside
// their order field with 400, before the service is asked.
func TestPagesOrderIDRefused(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	c1 := e.ClaimFor(t, tpl.ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	const msg = "An order number has letters, digits and . _ : @ - only (no spaces or slashes), and not dots alone."
	for _, id := range badOrderIDs {
		for _, tc := range []struct {
			name, from, to string
			form           url.Values
			errorID        string
		}{
			{"Preview", "/pos", "/pos/preview", url.Values{"code": {c1.Code}, "order_id": {id}, "amount": {"30.00"}}, "order-error"},
			{"Redeem", "/pos", "/pos/redeem", url.Values{"code": {c1.Code}, "order_id": {id}, "amount": {"30.00"}}, "order-error"},
			{"Refund", "/pos", "/pos/refund", url.Values{"code": {c1.Code}, "order_id": {id}}, "refund-order-error"},
			{"Confirm", "/pos/hold", "/pos/hold/confirm", url.Values{"order_id": {id}}, "hold-order-error"},
			{"Release", "/pos/hold", "/pos/hold/release", url.Values{"order_id": {id}}, "hold-order-error"},
			{"Return", "/pos/hold", "/pos/return", url.Values{"order_id": {id}, "return_id": {"r-1"}, "amount": {"10.00"}}, "return-order-error"},
		} {
			p := cashier.Form(tc.from, tc.to, tc.form)
			if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `id="`+tc.errorID+`"`) || !strings.Contains(p.Text(), msg) {
				t.Errorf("%s with order %q: %v", tc.name, id, p)
			}
		}
		p := cashier.Get("/pos/hold?order_id=" + url.QueryEscape(id))
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `id="hold-order-error"`) || !strings.Contains(p.Text(), msg) {
			t.Errorf("hold lookup of %q: %v", id, p)
		}
	}
	if s := e.UserCoupons(t, "shopper")[0].Status; s != models.CouponIssued {
		t.Fatalf("refused forms changed the coupon: %s", s)
	}
}
