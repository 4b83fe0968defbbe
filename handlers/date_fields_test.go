package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestDateFieldsInRange: every date or time field of the JSON API and the
// pages outside the years 2000 to 2100 is answered 400 naming it, the same
// way on every backend (MariaDB cannot hold year 0 or 10000), and changes
// nothing; an export never answers an empty 200 (docs/time.md).
func TestDateFieldsInRange(t *testing.T) {
	const inRange = "must be within the years 2000 to 2100"
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, testsupport.ValidTemplate)
	id := int64(out["template"].(map[string]any)["id"].(float64))
	const tpl = `{"campaign_id":1,"name":"Dated","kind":"fixed","face_value_cents":500,"total_stock":10,"per_user_limit":2`
	before := e.Counts(t)
	for _, c := range []struct{ method, path, body, field string }{
		{"GET", "/api/v1/reports/redemptions.csv?from=9999-12-31&to=9999-12-31", "", "to"},
		{"GET", "/api/v1/reports/redemptions.csv?from=1999-12-31&to=2000-01-01", "", "from"},
		{"GET", "/api/v1/reports/redemptions.csv?from=2100-12-31&to=2101-01-01", "", "to"},
		{"GET", fmt.Sprintf("/api/v1/templates/%d/coupons.csv?from=0000-01-01T00:00:00Z", id), "", "from"},
		{"GET", fmt.Sprintf("/api/v1/templates/%d/coupons.csv?to=9999-12-31T23:00:00-05:00", id), "", "to"},
		{"GET", fmt.Sprintf("/api/v1/templates/%d/coupons.csv?from=2026-01-01T00:00:00Z&to=2101-01-01T00:00:00Z", id), "", "to"},
		{"POST", "/api/v1/templates", tpl + `,"valid_from":"0000-01-01T00:00:00Z","valid_until":"2026-02-01T00:00:00Z"}`, "valid_from"},
		{"POST", "/api/v1/templates", tpl + `,"valid_from":"2026-01-01T00:00:00Z","valid_until":"9999-12-31T23:59:59-01:00"}`, "valid_until"},
		{"POST", "/api/v1/templates", tpl + `,"valid_days":30,"claim_starts_at":"1999-12-31T23:59:59Z"}`, "claim_starts_at"},
		{"POST", "/api/v1/templates", tpl + `,"valid_days":30,"claim_ends_at":"9999-12-31T23:59:59Z"}`, "claim_ends_at"},
		{"PATCH", fmt.Sprintf("/api/v1/templates/%d", id), `{"claim_ends_at":"0000-01-01T00:00:00Z"}`, "claim_ends_at"},
		{"PATCH", fmt.Sprintf("/api/v1/templates/%d", id), `{"claim_starts_at":"2101-01-01T00:00:00Z"}`, "claim_starts_at"},
	} {
		code, out := e.Call(t, c.method, c.path, testsupport.AdminToken, nil, c.body)
		if code != http.StatusBadRequest || out["result"] != "invalid_request" || out["field"] != c.field ||
			out["error"] != c.field+": "+inRange {
			t.Errorf("%s %s %s: %d %v, want 400 naming %s", c.method, c.path, c.body, code, out, c.field)
		}
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("dates out of range changed the database: %v -> %v", before, after)
	}

	p := testsupport.NewPageEnv(t)
	admin := p.Client(t)
	admin.Login("admin")
	page := admin.Get("/admin/reports?from=9999-12-31&to=9999-12-31")
	if page.Status != http.StatusBadRequest || testsupport.FieldErrorOf(page.Body, "report-to") != inRange {
		t.Errorf("the report page of year 9999: %d %q", page.Status, testsupport.FieldErrorOf(page.Body, "report-to"))
	}
	page = admin.Get("/admin/audit?from=0000-01-01")
	if page.Status != http.StatusBadRequest ||
		!strings.Contains(page.Body, `id="f-from-error" role="alert">Enter a date within the years 2000 to 2100.</p>`) {
		t.Errorf("the audit page from year 0: %d", page.Status)
	}
	n := p.CountTemplates(t)
	form := url.Values{"campaign_id": {fmt.Sprint(p.Demo.Campaign.ID)}, "name": {"Far"}, "kind": {"fixed"},
		"face_value": {"1.00"}, "total_stock": {"5"}, "per_user_limit": {"1"}, "validity": {"days"}, "valid_days": {"2"},
		"refund_policy": {"restore"}, "claim_starts_at": {"9999-12-31T00:00"}}
	page = admin.Form("/admin/templates/new", "/admin/templates", form)
	if page.Status != http.StatusBadRequest || testsupport.FieldErrorOf(page.Body, "claim_starts_at") != "Enter a date within the years 2000 to 2100." {
		t.Errorf("a template form opening claims in 9999: %d %q", page.Status, testsupport.FieldErrorOf(page.Body, "claim_starts_at"))
	}
	if p.CountTemplates(t) != n {
		t.Errorf("the template form out of range made a template")
	}
}
