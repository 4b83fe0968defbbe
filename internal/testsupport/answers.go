package testsupport

import (
	"strconv"
	"testing"

	"github.com/couponsvc/couponsvc/models"

	dto "github.com/prometheus/client_model/go"
)

// WantRateLimited checks a 429 rate_limited answer with a Retry-After.
func WantRateLimited(t *testing.T, a Answer, what string) {
	t.Helper()
	if a.Status != 429 || a.Code() != int(models.CodeRateLimited) || a.Body["result"] != "rate_limited" {
		t.Fatalf("%s: %v, want 429 rate_limited", what, a)
	}
	if s, err := strconv.Atoi(a.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("%s: Retry-After %q, want 1 to 60 seconds", what, a.Header.Get("Retry-After"))
	}
}

// WantStatus checks an answer's status.
func WantStatus(t *testing.T, a Answer, status int, what string) {
	t.Helper()
	if a.Status != status {
		t.Fatalf("%s: %v, want %d", what, a, status)
	}
}

// CounterValue reads a Prometheus counter.
func CounterValue(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
