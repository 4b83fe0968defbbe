package web_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestHungUpCallerCountedAs499: a caller that hangs up before a list is
// read (its context cancelled, so the database call ends with it) is logged
// as a hang-up with status 499, and counted under status 499, never 503;
// the same request from a caller that waits is a 200.
func TestHungUpCallerCountedAs499(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	var logs strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/api/v1/campaigns", nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+testsupport.AdminToken)
	e.Router.ServeHTTP(httptest.NewRecorder(), req)
	if got := logs.String(); strings.Contains(got, "WARN") || !strings.Contains(got, `level=INFO msg="the caller hung up"`) ||
		!strings.Contains(got, "status=499") {
		t.Fatalf("log of a hang-up: %q, want one INFO line with status=499", got)
	}
	e.MustCall(t, 200, "GET", "/api/v1/campaigns", testsupport.AdminToken, "")
	counts := map[string]float64{}
	for s, v := range requestSeries(t, testsupport.Scrape(t, e)) {
		if l := labels(s); l["route"] == "/api/v1/campaigns" {
			counts[l["status"]] += v
		}
	}
	if len(counts) != 2 || counts["499"] != 1 || counts["200"] != 1 {
		t.Fatalf("requests of /api/v1/campaigns by status: %v, want one 499 and one 200", counts)
	}
}
