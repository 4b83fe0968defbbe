package pages_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestBrowserReports: an admin opens the report from the console's
// navigation, asks for three days of New York across the autumn change by
// day and cashier, and sees the chart drawn (a pair of visible bars a day,
// axis labels in money) and the table with its totals; no script error and
// no CSP violation on the way (the tab fails the test on either).
func TestBrowserReports(t *testing.T) {
	e := testsupport.NewZonedEnv(t, "2026-10-25T12:00:00Z")
	five := e.Template(t, "$5 off")
	e.RedeemAt(t, five, 1, "2026-11-01T03:30:00Z", "ann", 2000, "")                     // 31 Oct 23:30 EDT
	e.RedeemAt(t, five, 2, "2026-11-01T05:30:00Z", "ann", 2000, "")                     // 1 Nov 01:30 EDT
	e.RedeemAt(t, five, 3, "2026-11-01T06:30:00Z", "bob", 2000, "2026-11-02T15:00:00Z") // 1 Nov 01:30 EST, refunded 2 Nov
	e.Clock.Set(testsupport.MustTime(t, "2026-11-03T12:00:00Z"))

	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.run("open the reports", chromedp.Click(chromedp.CSS(`nav a[href="/admin/reports"]`)),
		chromedp.WaitVisible(chromedp.CSS("form[data-report-form]")))
	admin.run("choose the days and the grouping",
		chromedp.SetValue(chromedp.CSS("#report-from"), "2026-10-31"),
		chromedp.SetValue(chromedp.CSS("#report-to"), "2026-11-02"),
		chromedp.SetValue(chromedp.CSS("#report-group"), "day,cashier"))
	admin.submit(`form[data-report-form] button[type="submit"]`)
	if loc := admin.location(); loc != "/admin/reports?from=2026-10-31&to=2026-11-02&group_by=day%2Ccashier&campaign_id=&template_id=" {
		t.Errorf("the form went to %s", loc)
	}

	// The chart: 3 days, 2 bars each; the days with money have bars of
	// height, drawn by the browser.
	if n := eval[int](admin, `document.querySelectorAll("[data-report-chart] .chart rect").length`); n != 6 {
		t.Fatalf("%d bars, want 6", n)
	}
	tall := eval[int](admin, `Array.from(document.querySelectorAll("[data-report-chart] .chart rect")).filter(function (r) { return r.getBoundingClientRect().height > 10; }).length`)
	if tall != 3 { // given on 31 Oct and 1 Nov, refunded on 2 Nov
		t.Errorf("%d bars drawn with a height, want 3", tall)
	}
	if w := eval[float64](admin, `document.querySelector("[data-report-chart] .chart").getBoundingClientRect().width`); w < 300 {
		t.Errorf("the chart is %v px wide", w)
	}
	admin.waitText("[data-report-chart] .chart", "$10.00")
	admin.waitText("[data-report-chart] .legend", "Given ($15.00) Refunded ($5.00)")

	// The table: one row per day and cashier with activity, then the totals.
	rows := eval[[]string](admin, `Array.from(document.querySelectorAll("[data-report-table] tbody tr")).map(function (r) { return r.innerText.replace(/\s+/g, " ").trim(); })`)
	want := []string{
		"2026-10-31 ann 1 $5.00 0 $0.00 $5.00",
		"2026-11-01 ann 1 $5.00 0 $0.00 $5.00",
		"2026-11-01 bob 1 $5.00 0 $0.00 $5.00",
		"2026-11-02 bob 0 $0.00 1 $5.00 −$5.00",
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("table rows\n got %q\nwant %q", rows, want)
	}
	admin.waitText("[data-report-totals]", "Total 3 $15.00 1 $5.00 $10.00")
	if href := eval[string](admin, `document.querySelector("[data-report-csv]").getAttribute("href")`); href !=
		"/api/v1/reports/redemptions.csv?from=2026-10-31&group_by=day%2Ccashier&to=2026-11-02" {
		t.Errorf("the CSV link is %s", href)
	}
	admin.screenshot("reports")
}
