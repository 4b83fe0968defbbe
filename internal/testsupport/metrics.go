package testsupport

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
)

// MetricValue returns the value of one sample line of the Prometheus text.
func MetricValue(t *testing.T, text, series string) float64 {
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

// Scrape reads the /metrics page.
func Scrape(t *testing.T, e *APIEnv) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.Router.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}
