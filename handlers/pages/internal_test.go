package pages

import (
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/services/reports"
)

func TestParseMoney(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"12", 1200, true}, {"12.5", 1250, true}, {"12.50", 1250, true}, {"0.07", 7, true},
		{"$1,234.50", 123450, true}, {"1 234,50", 123450, true}, {"12,50", 1250, true}, {"1,234", 123400, true},
		{"€ 9.99", 999, true}, {" 42 ", 4200, true},
		{"", 0, false}, {"abc", 0, false}, {"12.345", 0, false}, {"-5", 0, false}, {"1e3", 0, false},
		{".5", 0, false}, {"5.", 0, false}, {"1.2.3", 0, false}, {"9999999999999", 0, false},
	} {
		got, ok := parseMoney(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMoney(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestParseMoneyDigits: amounts are read with the currency's digits: none
// for yen, three for dinars.
func TestParseMoneyDigits(t *testing.T) {
	for _, tc := range []struct {
		in     string
		digits int
		want   int64
		ok     bool
	}{
		{"1500", 0, 1500, true}, {"1,500", 0, 1500, true}, {"¥ 1,500", 0, 1500, true}, {"15.5", 0, 0, false},
		{"1.250", 3, 1250, true}, {"1.25", 3, 1250, true}, {"1", 3, 1000, true}, {"1.2345", 3, 0, false},
		{"12,50", 2, 1250, true}, {"12.50", 2, 1250, true},
	} {
		got, ok := parseMoneyDigits(tc.in, tc.digits)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMoneyDigits(%q, %d) = %d, %v; want %d, %v", tc.in, tc.digits, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		code  string
		cents int64
		want  string
	}{{"USD", 1250, "12.50"}, {"JPY", 1250, "1250"}, {"KWD", 1250, "1.250"}, {"USD", 0, ""}} {
		if got := newMoneyFormat(tc.code).input(tc.cents); got != tc.want {
			t.Errorf("input(%s, %d) = %q, want %q", tc.code, tc.cents, got, tc.want)
		}
	}
}

func TestMoneyFormat(t *testing.T) {
	for _, tc := range []struct {
		code  string
		cents int64
		want  string
	}{
		{"", 0, "$0.00"}, {"USD", 5, "$0.05"}, {"usd", 123456789, "$1,234,567.89"}, {"EUR", 1000, "€10.00"},
		{"CHF", 250050, "CHF\u00a02,500.50"}, {"GBP", -150, "−£1.50"},
		{"JPY", 1500, "¥1,500"}, {"KWD", 1234500, "KWD\u00a01,234.500"}, {"BHD", 5, "BHD\u00a00.005"},
	} {
		if got := newMoneyFormat(tc.code).format(tc.cents); got != tc.want {
			t.Errorf("format(%q, %d) = %q, want %q", tc.code, tc.cents, got, tc.want)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/wallet": "/wallet", "/admin/templates/3?hours=72": "/admin/templates/3?hours=72",
		"": "", "//evil.example/x": "", "/\\evil.example": "", "https://evil.example": "", "wallet": "",
		"/login?next=/x": "", "/logout": "", "/x\r\nSet-Cookie: a=b": "",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQRSVG(t *testing.T) {
	svg := string(qrSVG("ABCDEFGHJKLMN"))
	// 13 alphanumeric characters at level M fit version 1 (21 modules) with a
	// quiet zone of 4 on each side.
	if !strings.HasPrefix(svg, `<svg class="qr" viewBox="0 0 29 29"`) || !strings.Contains(svg, `<path fill="#000" d="M`) {
		t.Fatalf("qrSVG = %.200s", svg)
	}
	if strings.Count(svg, "<") != 4 { // <svg>, <rect>, <path>, </svg>: nothing else
		t.Fatalf("unexpected markup in %.200s", svg)
	}
}

func TestChart(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	hours := make([]reports.HourCount, 24)
	for i := range hours {
		hours[i].Hour = start.Add(time.Duration(i) * time.Hour)
	}
	hours[5].Claims, hours[5].Redemptions, hours[23].Claims = 37, 12, 3
	c := newChart(hours, time.UTC)
	if len(c.Bars) != 48 || c.Total != [2]int64{40, 12} || c.Empty {
		t.Fatalf("chart: %d bars, totals %v, empty %v", len(c.Bars), c.Total, c.Empty)
	}
	top := c.YTicks[len(c.YTicks)-1].Label
	if top != "40" {
		t.Errorf("the top tick is %s, want 40 (round, above 37)", top)
	}
	tallest := c.Bars[10] // hour 5's claims
	if tallest.H <= c.Bars[11].H || tallest.Y < float64(c.PlotTop) || !strings.Contains(tallest.Title, "37 claims") {
		t.Errorf("hour 5: %+v", tallest)
	}
	if last := c.XTicks[len(c.XTicks)-1]; last.Label != "23:00" {
		t.Errorf("the last hour label is %s, want the current hour", last.Label)
	}
	if empty := newChart(make([]reports.HourCount, 24), time.UTC); !empty.Empty || len(empty.YTicks) != 5 {
		t.Errorf("an empty chart: %+v", empty)
	}
	for top, want := range map[int64]int64{0: 1, 3: 1, 5: 2, 9: 5, 37: 10, 101: 50, 999: 500, 1000: 500, 12345: 5000} {
		if got := niceStep(top); got != want {
			t.Errorf("niceStep(%d) = %d, want %d", top, got, want)
		}
	}
}

// TestChartDaysAndEdges: over 3 and 7 days the time labels carry the date,
// none crosses the edges of the chart, and a count of 1 among 1,000 still
// draws a bar.
func TestChartDaysAndEdges(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{24, 72, 168} {
		hours := make([]reports.HourCount, n)
		for i := range hours {
			hours[i].Hour = start.Add(time.Duration(i) * time.Hour)
		}
		hours[0].Claims, hours[n-1].Redemptions = 1000, 1
		c := newChart(hours, time.UTC)
		last := c.XTicks[len(c.XTicks)-1]
		wantLast := hours[n-1].Hour.Format("15:04")
		if n > 24 {
			wantLast = hours[n-1].Hour.Format("2 Jan 15:04")
		}
		if last.Label != wantLast {
			t.Errorf("%d hours: last label %q, want %q", n, last.Label, wantLast)
		}
		for _, x := range c.XTicks {
			half := float64(len(x.Label)) * axisCharWidth / 2
			left, right := x.Pos-half, x.Pos+half
			switch x.Anchor {
			case "end":
				left, right = x.Pos-2*half, x.Pos
			case "start":
				left, right = x.Pos, x.Pos+2*half
			}
			if left < float64(c.AxisWidth) || right > float64(c.Width) {
				t.Errorf("%d hours: label %q spans %.0f..%.0f, outside the plot %d..%d", n, x.Label, left, right, c.AxisWidth, c.Width)
			}
		}
		small := c.Bars[len(c.Bars)-1] // the last hour's redemptions: 1
		if small.H < minBarHeight || small.Y+small.H != float64(c.PlotBottom) {
			t.Errorf("%d hours: the bar of 1 among 1000 is %+v, want at least %v high on the baseline", n, small, minBarHeight)
		}
		if zero := c.Bars[1]; zero.H != 0 { // the first hour's redemptions: 0
			t.Errorf("%d hours: a bar of 0 is %v high", n, zero.H)
		}
	}
}

// TestEveryAuditActionHasAName holds the audit filter's words to the
// actions the audit page can show: an action added without a name would
// show its key in the filter (docs/pages.md).
func TestEveryAuditActionHasAName(t *testing.T) {
	for a := range auditVerbs {
		if _, ok := auditActionNames[a]; !ok {
			t.Errorf("the audit action %q has no name in auditActionNames", a)
		}
	}
	if got := auditActionName("template.delete"); got != "template deleted" {
		t.Errorf("template.delete is named %q", got)
	}
}

func TestCouponCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 coupons", 1: "1 coupon", 2: "2 coupons", 12: "12 coupons"} {
		if got := couponCount(n); got != want {
			t.Errorf("couponCount(%d) = %q, want %q", n, got, want)
		}
	}
}
