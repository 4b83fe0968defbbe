package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCallSeesRawAnswers: through the Go client with retries off,
// couponbench still sees each answer as it came: the status of a success
// (which the client does not return), an error answer's result word, a
// body without one, an answer that is not JSON, and a 503 answered once.
func TestCallSeesRawAnswers(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("order_id") + r.URL.Path {
		case "/api/v1/holds":
			w.WriteHeader(201)
			w.Write([]byte(`{"code":0,"result":"held","coupons":[{"coupon_code":"A","result":"ok","code":0}],"discount_cents":500}`))
		case "/api/v1/holds/sold/confirm":
			w.WriteHeader(409)
			w.Write([]byte(`{"code":4,"result":"sold_out","error":"no stock left"}`))
		case "/api/v1/holds/html/confirm":
			w.WriteHeader(200)
			w.Write([]byte(`<html>`))
		case "/api/v1/holds/bare/confirm":
			w.WriteHeader(500)
		case "/api/v1/holds/down/confirm":
			w.WriteHeader(503)
			w.Write([]byte(`{"code":9,"result":"unavailable","error":"down"}`))
		}
	}))
	defer srv.Close()
	c := newClient(srv.URL, "admin", 2)
	c.app = c.with(c.hc, "app")
	ctx := context.Background()

	a := c.hold(ctx, "o1", "A", "u1", 1000, 60)
	if a.err != nil || a.status != 201 || a.kind() != "held" || !a.consistent() || a.checkout == nil ||
		a.checkout.DiscountCents != 500 || a.heldCode() != "A" {
		t.Fatalf("hold: %+v", a)
	}
	a = c.settle(ctx, "sold", "confirm")
	if a.err != nil || a.status != 409 || a.kind() != "sold_out" || !a.consistent() || a.checkout != nil {
		t.Fatalf("sold out: %+v", a)
	}
	a = c.settle(ctx, "html", "confirm")
	if a.err == nil || a.kind() != "error" {
		t.Fatalf("a body that is not JSON passed: %+v", a)
	}
	a = c.settle(ctx, "bare", "confirm")
	if a.err != nil || a.status != 500 || a.kind() != "http_500" || a.consistent() {
		t.Fatalf("bare 500: %+v", a)
	}
	before := calls
	a = c.settle(ctx, "down", "confirm")
	if a.status != 503 || a.kind() != "unavailable" || calls != before+1 {
		t.Fatalf("503: %+v after %d calls, want 1", a, calls-before)
	}
}
