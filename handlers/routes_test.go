package handlers_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestRouteWrongMethodAndMediaType checks that a wrong method (405) and a body
// that is not JSON (415) are answered by the one error writer like every other
// error: the error body, and the result word the metrics count requests by.
func TestRouteWrongMethodAndMediaType(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	before := e.Counts(t)
	cases := []struct {
		name, method, path string
		headers            map[string]string
		body               string
		status             int
		field              string
	}{
		{"WrongMethod", "DELETE", "/api/v1/campaigns", nil, "", 405, ""},
		{"WrongMethodOfPage", "PUT", "/login", nil, "", 405, ""},
		{"TextBody", "POST", "/api/v1/campaigns", map[string]string{"Content-Type": "text/plain"}, `{"name":"a"}`, 415, "Content-Type"},
		{"FormBody", "POST", "/api/v1/reconcile", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `repair=true`, 415, "Content-Type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := e.Call(t, tc.method, tc.path, testsupport.AdminToken, tc.headers, tc.body)
			if status != tc.status || out["result"] != models.CodeInvalidRequest.Word() ||
				out["code"] != float64(models.CodeInvalidRequest) || out["error"] == "" {
				t.Fatalf("%s %s: %d %v, want %d invalid_request", tc.method, tc.path, status, out, tc.status)
			}
			if field, _ := out["field"].(string); field != tc.field {
				t.Fatalf("field %q, want %q", field, tc.field)
			}
		})
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("refused requests changed the database: %v -> %v", before, after)
	}
	metrics := testsupport.Scrape(t, e)
	for status, want := range map[string]int{"405": 2, "415": 2} {
		series := regexp.MustCompile(`(?m)^couponsvc_http_requests_total\{[^}]*\} [0-9]+$`).FindAllString(metrics, -1)
		got := 0
		for _, s := range series {
			if strings.Contains(s, `status="`+status+`"`) && strings.Contains(s, `result="invalid_request"`) {
				got += int(testsupport.MetricValue(t, s, s[:strings.LastIndex(s, " ")]))
			}
		}
		if got != want {
			t.Errorf("%d requests counted with status %s and result invalid_request, want %d:\n%s", got, status, want,
				strings.Join(series, "\n"))
		}
	}
}
