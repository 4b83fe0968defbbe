package pages

import (
	"strings"
	"testing"
	"time"

	"couponsvc/services"
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

func TestMoneyFormat(t *testing.T) {
	for _, tc := range []struct {
		code  string
		cents int64
		want  string
	}{
		{"", 0, "$0.00"}, {"USD", 5, "$0.05"}, {"usd", 123456789, "$1,234,567.89"}, {"EUR", 1000, "€10.00"},
		{"CHF", 250050, "2,500.50 CHF"}, {"GBP", -150, "−£1.50"},
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
	hours := make([]services.HourCount, 24)
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
	if empty := newChart(make([]services.HourCount, 24), time.UTC); !empty.Empty || len(empty.YTicks) != 5 {
		t.Errorf("an empty chart: %+v", empty)
	}
	for top, want := range map[int64]int64{0: 1, 3: 1, 5: 2, 9: 5, 37: 10, 101: 50, 999: 500, 1000: 500, 12345: 5000} {
		if got := niceStep(top); got != want {
			t.Errorf("niceStep(%d) = %d, want %d", top, got, want)
		}
	}
}
