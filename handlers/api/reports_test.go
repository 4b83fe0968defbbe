package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/claims"
)

// TestRedemptionsCSV: the CSV's header and rows, exactly, for days of New
// York across the spring change, by day and by template and cashier; bad
// parameters answer 400 naming the field, with no CSV.
func TestRedemptionsCSV(t *testing.T) {
	e := testsupport.NewZonedEnv(t, "2026-03-01T12:00:00Z")
	five := e.Template(t, "$5 off")
	e.RedeemAt(t, five, 1, "2026-03-08T04:59:59Z", "ann", 2000, "")                     // 7 Mar 23:59:59 EST
	e.RedeemAt(t, five, 2, "2026-03-08T05:00:00Z", "bob", 2000, "2026-03-09T04:00:00Z") // 8 Mar 00:00 EST, refunded 9 Mar 00:00 EDT
	e.RedeemAt(t, five, 3, "2026-03-09T03:59:59Z", "ann", 2000, "")                     // 8 Mar 23:59:59 EDT
	e.Clock.Set(testsupport.MustTime(t, "2026-03-10T12:00:00Z"))
	admin := e.Client(t)
	admin.Login("admin")

	p := admin.API("GET", "/api/v1/reports/redemptions.csv?from=2026-03-07&to=2026-03-09", "", nil)
	if p.Status != http.StatusOK || p.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("CSV: %v %v", p, p.Header)
	}
	want := "day,redemptions,discount_cents,refunds,refunded_discount_cents,net_redemptions,net_discount_cents,currency\n" +
		"2026-03-07,1,500,0,0,1,500,USD\n" +
		"2026-03-08,2,1000,0,0,2,1000,USD\n" +
		"2026-03-09,0,0,1,500,-1,-500,USD\n"
	if p.Body != want {
		t.Fatalf("CSV\n%s\nwant\n%s", p.Body, want)
	}
	if cd := p.Header.Get("Content-Disposition"); cd != `attachment; filename="redemptions_USD_2026-03-07_2026-03-09.csv"` {
		t.Errorf("Content-Disposition %q", cd)
	}

	p = admin.API("GET", "/api/v1/reports/redemptions.csv?from=2026-03-07&to=2026-03-09&group_by=cashier,template", "", nil)
	want = "template,template_name,cashier,redemptions,discount_cents,refunds,refunded_discount_cents,net_redemptions,net_discount_cents,currency\n" +
		fmt.Sprintf("%d,%s,ann,2,1000,0,0,2,1000,USD\n", five.ID, five.Name) +
		fmt.Sprintf("%d,%s,bob,1,500,1,500,0,0,USD\n", five.ID, five.Name)
	if p.Status != http.StatusOK || p.Body != want {
		t.Fatalf("CSV by template and cashier: %d\n%s\nwant\n%s", p.Status, p.Body, want)
	}

	// Nothing in the range: the header alone.
	p = admin.API("GET", "/api/v1/reports/redemptions.csv?from=2026-01-01&to=2026-01-31&group_by=day,cashier", "", nil)
	if p.Status != http.StatusOK || p.Body != "day,cashier,redemptions,discount_cents,refunds,refunded_discount_cents,net_redemptions,net_discount_cents,currency\n" {
		t.Fatalf("empty CSV: %v", p)
	}

	for _, c := range []struct{ query, field string }{
		{"from=2026-02-30", "from"},
		{"from=03/07/2026", "from"},
		{"to=tomorrow", "to"},
		{"from=2026-03-09&to=2026-03-08", "to"},
		{"from=2025-01-01&to=2026-01-02", "to"},
		{"group_by=week", "group_by"},
		{"group_by=day,day", "group_by"},
		{"currency=usd", "currency"},
		{"currency=DOLLARS", "currency"},
	} {
		p := admin.API("GET", "/api/v1/reports/redemptions.csv?"+c.query, "", nil)
		var out map[string]any
		if err := json.Unmarshal([]byte(p.Body), &out); err != nil || p.Status != http.StatusBadRequest ||
			out["result"] != "invalid_request" || out["field"] != c.field {
			t.Errorf("%s: %v, want 400 invalid_request naming %s", c.query, p, c.field)
		}
	}
}

// TestReportsPage: the console's report shows the CSV's figures with
// their totals (days without any, as in the CSV, have no row; the chart
// has every day), and a bad date beside its field.
func TestReportsPage(t *testing.T) {
	e := testsupport.NewZonedEnv(t, "2026-10-25T12:00:00Z")
	five := e.Template(t, "$5 off")
	e.RedeemAt(t, five, 1, "2026-11-01T05:30:00Z", "ann", 2000, "")                     // 1 Nov 01:30 EDT
	e.RedeemAt(t, five, 2, "2026-11-01T06:30:00Z", "ann", 2000, "")                     // 1 Nov 01:30 EST
	e.RedeemAt(t, five, 3, "2026-11-02T04:30:00Z", "bob", 2000, "2026-11-02T05:30:00Z") // 1 Nov 23:30 EST, refunded 2 Nov
	e.Clock.Set(testsupport.MustTime(t, "2026-11-03T12:00:00Z"))
	admin := e.Client(t)
	admin.Login("admin")

	p := admin.Get("/admin/reports?from=2026-10-31&to=2026-11-02&group_by=day")
	text := p.Text()
	for _, want := range []string{
		"Days are days in America/New_York",
		"Net discount 2026-11-01 3 $15.00 0 $0.00 $15.00",
		"2026-11-02 0 $0.00 1 $5.00 −$5.00",
		"Total 3 $15.00 1 $5.00 $10.00",
	} {
		if p.Status != http.StatusOK || !strings.Contains(text, want) {
			t.Fatalf("the report does not show %q: %d %s", want, p.Status, text)
		}
	}
	if !strings.Contains(p.Body, `href="/api/v1/reports/redemptions.csv?from=2026-10-31&amp;group_by=day&amp;to=2026-11-02"`) {
		t.Errorf("no CSV link of the same report")
	}
	if strings.Count(p.Body, `class="bar-discount"`) != 3 || strings.Count(p.Body, `class="bar-refunded"`) != 3 {
		t.Errorf("the chart has not a pair of bars for each of the 3 days")
	}

	p = admin.Get("/admin/reports?from=2026-11-31")
	if p.Status != http.StatusBadRequest || !strings.Contains(testsupport.FieldErrorOf(p.Body, "report-from"), "must be a date") {
		t.Fatalf("bad from: %d %q", p.Status, testsupport.FieldErrorOf(p.Body, "report-from"))
	}
}

// TestTemplateFormInZone: the new template form reads its times as wall
// times of the deployment's zone, and the details page and the edit form
// show the same wall times; a time the spring change skips is refused
// beside its field, and the autumn change's repeated hour is its first.
func TestTemplateFormInZone(t *testing.T) {
	e := testsupport.NewZonedEnv(t, "2026-03-01T12:00:00Z")
	admin := e.Client(t)
	admin.Login("admin")
	form := func(starts, ends string) url.Values {
		return url.Values{"campaign_id": {fmt.Sprint(e.Demo.Campaign.ID)}, "name": {"Zoned"}, "kind": {"fixed"},
			"face_value": {"1.00"}, "total_stock": {"5"}, "per_user_limit": {"1"}, "validity": {"days"}, "valid_days": {"2"},
			"refund_policy": {"restore"}, "claim_starts_at": {starts}, "claim_ends_at": {ends}}
	}

	p := admin.Form("/admin/templates/new", "/admin/templates", form("2026-03-08T02:30", ""))
	if p.Status != http.StatusBadRequest || !strings.Contains(testsupport.FieldErrorOf(p.Body, "claim_starts_at"), "clocks skip this time") {
		t.Fatalf("a skipped time: %d %q", p.Status, testsupport.FieldErrorOf(p.Body, "claim_starts_at"))
	}

	p = admin.Form("/admin/templates/new", "/admin/templates", form("2026-03-08T03:30", "2026-11-01T01:30"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: %v", p)
	}
	var tp models.Template
	if err := e.Backends.DB.Where("name = ?", "Zoned").First(&tp).Error; err != nil {
		t.Fatal(err)
	}
	// 03:30 EDT is 07:30 UTC; the first 01:30 of 1 November is EDT, 05:30 UTC.
	if !tp.ClaimStartsAt.Equal(testsupport.MustTime(t, "2026-03-08T07:30:00Z")) || tp.ClaimEndsAt == nil ||
		!tp.ClaimEndsAt.Equal(testsupport.MustTime(t, "2026-11-01T05:30:00Z")) {
		t.Fatalf("stored %v..%v", tp.ClaimStartsAt, tp.ClaimEndsAt)
	}
	p = admin.Get(fmt.Sprintf("/admin/templates/%d", tp.ID))
	text := p.Text()
	for _, want := range []string{"Claims open 8 Mar 2026, 03:30:00 EDT", "Claims close 1 Nov 2026, 01:30:00 EDT",
		"Claims open (America/New_York)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the details page does not show %q: %s", want, text)
		}
	}
	for _, want := range []string{`id="edit-starts" name="claim_starts_at" type="datetime-local" step="1" value="2026-03-08T03:30"`,
		`id="edit-ends" name="claim_ends_at" type="datetime-local" step="1" value="2026-11-01T01:30"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the edit form has not %s", want)
		}
	}
	// Saving the edit form unchanged keeps the instants.
	p = admin.Form(fmt.Sprintf("/admin/templates/%d", tp.ID), fmt.Sprintf("/admin/templates/%d", tp.ID),
		url.Values{"name": {"Zoned"}, "claim_starts_at": {"2026-03-08T03:30"}, "claim_ends_at": {"2026-11-01T01:30"}})
	var after models.Template
	e.Backends.DB.First(&after, tp.ID)
	if p.Status != http.StatusSeeOther || !after.ClaimStartsAt.Equal(tp.ClaimStartsAt) || !after.ClaimEndsAt.Equal(*tp.ClaimEndsAt) {
		t.Fatalf("save unchanged: %d, %v..%v", p.Status, after.ClaimStartsAt, after.ClaimEndsAt)
	}

	// A coupon of it claimed at 23:00 EDT on 8 March (03:00 UTC on the 9th)
	// is valid 2 days: to the end of 10 March there.
	e.Clock.Set(testsupport.MustTime(t, "2026-03-09T03:00:00Z"))
	res, err := e.Service.Claim(context.Background(), claims.ClaimRequest{TemplateID: tp.ID, UserID: "zoned", IdempotencyKey: "z1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Coupon.ValidUntil.Equal(testsupport.MustTime(t, "2026-03-11T04:00:00Z")) {
		t.Fatalf("valid until %v", res.Coupon.ValidUntil)
	}
	p = admin.Get("/admin/coupons?code=" + res.Coupon.Code)
	if !strings.Contains(p.Text(), "Valid until the end of 10 Mar 2026 (midnight EDT)") {
		t.Errorf("the coupon page does not show the end of 10 March: %s", p.Text())
	}
}

// TestReportBudget: a report or an export that runs out of its time budget
// ends with 503 unavailable saying so (no Retry-After: the same request would
// run out again), never with a hang nor an empty 200 (docs/reports.md).
func TestReportBudget(t *testing.T) {
	e := testsupport.NewPageEnvWith(t, services.Config{CodesConfig: services.CodesConfig{ExportBudget: time.Nanosecond}, ReportsConfig: services.ReportsConfig{ReportBudget: time.Nanosecond}})
	five := e.Template(t, "$5 off")
	admin := e.Client(t)
	admin.Login("admin")
	for _, c := range []struct{ path, want string }{
		{"/api/v1/reports/redemptions.csv", `{"code":15,"result":"unavailable","error":"the report took longer than its time budget of 1ns: ask for a shorter range"}`},
		{fmt.Sprintf("/api/v1/templates/%d/coupons.csv", five.ID), `{"code":15,"result":"unavailable","error":"the export took longer than its time budget of 1ns: ask for a shorter range"}`},
	} {
		p := admin.API("GET", c.path, "", nil)
		if p.Status != http.StatusServiceUnavailable || p.Body != c.want || p.Header.Get("Retry-After") != "" {
			t.Errorf("%s: %v (Retry-After %q), want 503 %s", c.path, p, p.Header.Get("Retry-After"), c.want)
		}
	}
	p := admin.Get("/admin/reports")
	if msg := testsupport.FieldErrorOf(p.Body, "report-to"); p.Status != http.StatusServiceUnavailable ||
		msg != "the report took longer than its time budget of 1ns: ask for a shorter range" {
		t.Errorf("the report page: %d %q", p.Status, msg)
	}
}
