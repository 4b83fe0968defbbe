package web_test

import (
	"strconv"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

func TestMetrics(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken,
		`{"campaign_id":1,"name":"One","kind":"fixed","face_value_cents":500,"total_stock":2,"per_user_limit":1,"valid_days":30}`)
	app := e.AppToken(t)
	before := testsupport.Scrape(t, e)
	var annCode string
	for i, user := range []string{"ann", "ben", "cat"} {
		_, out := e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": "m" + strconv.Itoa(i)}, `{"user_id":"`+user+`"}`)
		if user == "ann" {
			annCode = out["coupon"].(map[string]any)["code"].(string)
		}
	}
	e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": "m0"}, `{"user_id":"ann"}`)
	// A redemption, its replay, and a refund.
	redeem := `{"coupon_code":"` + annCode + `","order_id":"o-1","order_amount_cents":2000}`
	e.MustCall(t, 200, "POST", "/api/v1/redemptions", app, redeem)
	e.MustCall(t, 200, "POST", "/api/v1/redemptions", app, redeem)
	e.MustCall(t, 200, "POST", "/api/v1/refunds", app, `{"coupon_code":"`+annCode+`","order_id":"o-1"}`)
	after := testsupport.Scrape(t, e)

	for series, want := range map[string]float64{
		`couponsvc_claims_total{result="claimed"}`:   2,
		`couponsvc_claims_total{result="sold_out"}`:  1,
		`couponsvc_claims_total{result="duplicate"}`: 1,
		`couponsvc_http_requests_total{method="POST",result="claimed",route="/api/v1/templates/:id/claim",status="201"}`:   2,
		`couponsvc_http_requests_total{method="POST",result="sold_out",route="/api/v1/templates/:id/claim",status="409"}`:  1,
		`couponsvc_http_requests_total{method="POST",result="duplicate",route="/api/v1/templates/:id/claim",status="200"}`: 1,
		`couponsvc_redis_script_duration_seconds_count{script="deduct"}`:                                                   4,
		`couponsvc_redis_script_duration_seconds_count{script="confirm"}`:                                                  2,
		`couponsvc_db_duration_seconds_count{step="insert_coupon"}`:                                                        2,
		`couponsvc_http_request_duration_seconds_count{route="/api/v1/templates/:id/claim"}`:                               4,
		`couponsvc_reservations_pending`: 0,
		`couponsvc_http_requests_total{method="POST",result="redeemed",route="/api/v1/redemptions",status="200"}`:  1,
		`couponsvc_http_requests_total{method="POST",result="duplicate",route="/api/v1/redemptions",status="200"}`: 1,
		`couponsvc_http_requests_total{method="POST",result="refunded",route="/api/v1/refunds",status="200"}`:      1,
		`couponsvc_lock_wait_seconds_count`:                                          3,
		`couponsvc_db_duration_seconds_count{step="redeem"}`:                         1,
		`couponsvc_db_duration_seconds_count{step="refund"}`:                         1,
		`couponsvc_http_request_duration_seconds_count{route="/api/v1/redemptions"}`: 2,
	} {
		if got := testsupport.MetricValue(t, after, series) - testsupport.MetricValue(t, before, series); got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
}
