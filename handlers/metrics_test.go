package handlers_test

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
)

// metricValue returns the value of one sample line of the Prometheus text.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` ([0-9.e+-]+)$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("parse %s: %v", series, err)
	}
	return v
}

func scrape(t *testing.T, e *apiEnv) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMetrics(t *testing.T) {
	e := newAPIEnv(t)
	e.mustCall(t, 201, "POST", "/api/v1/campaigns", adminToken, `{"name":"Spring"}`)
	e.mustCall(t, 201, "POST", "/api/v1/templates", adminToken,
		`{"campaign_id":1,"name":"One","kind":"fixed","face_value_cents":500,"total_stock":2,"per_user_limit":1,"valid_days":30}`)
	app := e.appToken(t)
	before := scrape(t, e)
	var annCode string
	for i, user := range []string{"ann", "ben", "cat"} {
		_, out := e.call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": "m" + strconv.Itoa(i)}, `{"user_id":"`+user+`"}`)
		if user == "ann" {
			annCode = out["coupon"].(map[string]any)["code"].(string)
		}
	}
	e.call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": "m0"}, `{"user_id":"ann"}`)
	// A redemption, its replay, and a refund.
	redeem := `{"coupon_code":"` + annCode + `","order_id":"o-1","order_amount_cents":2000}`
	e.mustCall(t, 200, "POST", "/api/v1/redemptions", app, redeem)
	e.mustCall(t, 200, "POST", "/api/v1/redemptions", app, redeem)
	e.mustCall(t, 200, "POST", "/api/v1/refunds", app, `{"coupon_code":"`+annCode+`","order_id":"o-1"}`)
	after := scrape(t, e)

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
		if got := metricValue(t, after, series) - metricValue(t, before, series); got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
}
