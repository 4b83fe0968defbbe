package services_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/reports"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// reportEvent is a redemption at a wall-clock instant (UTC), and, when
// refundAt is set, its refund then.
type reportEvent struct {
	at, refundAt string
	template     int // 0 or 1
	cashier      string
	amount       int64
}

// reportFixture redeems the events' coupons at their instants in a
// service whose days are those of loc.
type reportFixture struct {
	*testenv.Fixture
	templates [2]*models.Template
}

func newReportFixture(t *testing.T, loc *time.Location, events []reportEvent) *reportFixture {
	t.Helper()
	f := &reportFixture{Fixture: testenv.NewFixtureAt(t, services.Config{CoreConfig: services.CoreConfig{Location: loc}}, mustUTC(t, "2026-01-01T00:00:00Z"))}
	camp := f.CreateCampaign(models.Campaign{Name: "reports"})
	f.templates[0] = f.Template(models.Template{CampaignID: camp.ID, Name: "Five off", FaceValueCents: 500,
		TotalStock: 100, PerUserLimit: 100, ValidDays: 3650})
	f.templates[1] = f.Template(models.Template{CampaignID: camp.ID, Name: "Ten percent", Kind: models.KindPercent,
		PercentOff: 10, MaxDiscountCents: 10_000, TotalStock: 100, PerUserLimit: 100, ValidDays: 3650})
	type refund struct {
		at    time.Time
		code  string
		order string
	}
	var refunds []refund
	for i, e := range events {
		res := f.MustClaim(f.templates[e.template].ID, "shopper", fmt.Sprint("claim-", i))
		f.Clock.Set(mustUTC(t, e.at))
		order := fmt.Sprint("order-", i)
		if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: res.Coupon.Code, OrderID: order,
			OrderAmountCents: e.amount, Cashier: e.cashier}); err != nil {
			t.Fatalf("redeem %d: %v", i, err)
		}
		if e.refundAt != "" {
			refunds = append(refunds, refund{mustUTC(t, e.refundAt), res.Coupon.Code, order})
		}
		f.Clock.Set(mustUTC(t, "2026-01-01T00:00:00Z"))
	}
	for _, r := range refunds {
		f.Clock.Set(r.at)
		if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: r.code, OrderID: r.order, Cashier: "x"}); err != nil {
			t.Fatalf("refund %s: %v", r.order, err)
		}
	}
	f.Clock.Set(mustUTC(t, "2026-12-01T12:00:00Z"))
	return f
}

func mustUTC(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// ledgerByDay sums the use log as read row by row, each row on its local
// day in loc: the figures a report grouped by day must equal.
func (f *reportFixture) ledgerByDay(loc *time.Location, from, to string) map[string]reports.ReportRow {
	f.T.Helper()
	var logs []models.UseLog
	if err := f.Backends.DB.Find(&logs).Error; err != nil {
		f.T.Fatal(err)
	}
	out := map[string]reports.ReportRow{}
	in := func(d string) bool { return d >= from && d <= to }
	for _, lg := range logs {
		if d := lg.UsedAt.In(loc).Format(time.DateOnly); in(d) {
			r := out[d]
			r.Day = d
			r.Redemptions++
			r.DiscountCents += lg.DiscountCents
			out[d] = r
		}
		if lg.UndoFlag && lg.UndoneAt != nil {
			if d := lg.UndoneAt.In(loc).Format(time.DateOnly); in(d) {
				r := out[d]
				r.Day = d
				r.Refunds++
				r.RefundedDiscountCents += lg.DiscountCents
				out[d] = r
			}
		}
	}
	return out
}

func (f *reportFixture) stream(req reports.ReportRequest) []reports.ReportRow {
	f.T.Helper()
	var rows []reports.ReportRow
	started := 0
	err := f.Reports.StreamRedemptionReport(f.Ctx, req, func(reports.ReportQuery) error { started++; return nil },
		func(r reports.ReportRow) error {
			if started != 1 {
				f.T.Fatalf("a row before the start")
			}
			rows = append(rows, r)
			return nil
		})
	if err != nil {
		f.T.Fatal(err)
	}
	return rows
}

// The report's days are days of the deployment's zone: redemptions just
// before and after local midnight, on the 23-hour day of the spring change
// and the 25-hour day of the autumn change in New York, land on the day a
// clock there showed, and the totals equal the use log's.
func TestRedemptionReportDaysInZone(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	events := []reportEvent{
		{at: "2026-03-08T04:59:59.5Z", template: 0, cashier: "ann", amount: 2000},                                 // 7 Mar 23:59:59.5 EST
		{at: "2026-03-08T05:00:00Z", template: 0, cashier: "ann", amount: 2000},                                   // 8 Mar 00:00 EST
		{at: "2026-03-08T06:59:59Z", template: 1, cashier: "bob", amount: 3000},                                   // 8 Mar 01:59:59 EST
		{at: "2026-03-08T07:00:00Z", template: 1, cashier: "bob", amount: 4000, refundAt: "2026-03-09T04:30:00Z"}, // 8 Mar 03:00 EDT; refunded 9 Mar 00:30 EDT
		{at: "2026-03-09T03:59:59Z", template: 0, cashier: "bob", amount: 2000},                                   // 8 Mar 23:59:59 EDT
		{at: "2026-03-09T04:30:00Z", template: 0, cashier: "ann", amount: 2000},                                   // 9 Mar 00:30 EDT
		{at: "2026-11-01T03:30:00Z", template: 0, cashier: "ann", amount: 2000},                                   // 31 Oct 23:30 EDT
		{at: "2026-11-01T04:30:00Z", template: 1, cashier: "ann", amount: 5000},                                   // 1 Nov 00:30 EDT
		{at: "2026-11-01T05:30:00Z", template: 1, cashier: "bob", amount: 6000, refundAt: "2026-11-02T04:59:00Z"}, // 1 Nov 01:30 EDT; refunded 1 Nov 23:59 EST
		{at: "2026-11-01T06:30:00Z", template: 0, cashier: "bob", amount: 2000},                                   // 1 Nov 01:30 EST (again)
		{at: "2026-11-02T04:30:00Z", template: 0, cashier: "ann", amount: 2000},                                   // 1 Nov 23:30 EST
		{at: "2026-11-02T05:00:00Z", template: 0, cashier: "ann", amount: 2000},                                   // 2 Nov 00:00 EST
		{at: "2026-02-28T04:59:59Z", template: 0, cashier: "ann", amount: 2000},                                   // 27 Feb: before the range
		{at: "2026-12-01T05:00:00Z", template: 0, cashier: "ann", amount: 2000},                                   // 1 Dec: after it
	}
	f := newReportFixture(t, ny, events)
	const from, to = "2026-02-28", "2026-11-30"
	rows := f.stream(reports.ReportRequest{From: from, To: to, GroupBy: "day"})

	// Exactly these days, with these figures (five off: 500; ten percent:
	// 10% of the amount).
	want := []reports.ReportRow{
		{Day: "2026-03-07", Redemptions: 1, DiscountCents: 500},
		{Day: "2026-03-08", Redemptions: 4, DiscountCents: 500 + 300 + 400 + 500},
		{Day: "2026-03-09", Redemptions: 1, DiscountCents: 500, Refunds: 1, RefundedDiscountCents: 400},
		{Day: "2026-10-31", Redemptions: 1, DiscountCents: 500},
		{Day: "2026-11-01", Redemptions: 4, DiscountCents: 500 + 600 + 500 + 500, Refunds: 1, RefundedDiscountCents: 600},
		{Day: "2026-11-02", Redemptions: 1, DiscountCents: 500},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %+v\nwant %+v", rows, want)
	}
	ledger := f.ledgerByDay(ny, from, to)
	if len(ledger) != len(rows) {
		t.Fatalf("%d days in the use log, %d in the report", len(ledger), len(rows))
	}
	for _, r := range rows {
		if ledger[r.Day] != r {
			t.Errorf("day %s: report %+v, use log %+v", r.Day, r, ledger[r.Day])
		}
	}

	t.Run("ByTemplateAndCashier", func(t *testing.T) {
		rows := f.stream(reports.ReportRequest{From: "2026-03-08", To: "2026-03-09", GroupBy: "cashier,template"})
		a, b := f.templates[0], f.templates[1]
		want := []reports.ReportRow{
			{TemplateID: a.ID, TemplateName: "Five off", Cashier: "ann", Redemptions: 2, DiscountCents: 1000},
			{TemplateID: a.ID, TemplateName: "Five off", Cashier: "bob", Redemptions: 1, DiscountCents: 500},
			{TemplateID: b.ID, TemplateName: "Ten percent", Cashier: "bob", Redemptions: 2, DiscountCents: 700,
				Refunds: 1, RefundedDiscountCents: 400},
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Fatalf("rows\n got %+v\nwant %+v", rows, want)
		}
	})
	t.Run("DayTemplateCashier", func(t *testing.T) {
		rows := f.stream(reports.ReportRequest{From: "2026-11-01", To: "2026-11-01", GroupBy: "day,template,cashier"})
		a, b := f.templates[0], f.templates[1]
		want := []reports.ReportRow{
			{Day: "2026-11-01", TemplateID: a.ID, TemplateName: "Five off", Cashier: "ann", Redemptions: 1, DiscountCents: 500},
			{Day: "2026-11-01", TemplateID: a.ID, TemplateName: "Five off", Cashier: "bob", Redemptions: 1, DiscountCents: 500},
			{Day: "2026-11-01", TemplateID: b.ID, TemplateName: "Ten percent", Cashier: "ann", Redemptions: 1, DiscountCents: 500},
			{Day: "2026-11-01", TemplateID: b.ID, TemplateName: "Ten percent", Cashier: "bob", Redemptions: 1, DiscountCents: 600,
				Refunds: 1, RefundedDiscountCents: 600},
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Fatalf("rows\n got %+v\nwant %+v", rows, want)
		}
	})
	t.Run("Summary", func(t *testing.T) {
		sum, err := f.Reports.RedemptionReport(f.Ctx, reports.ReportRequest{From: "2026-03-06", To: "2026-03-10", GroupBy: "template"})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Days) != 5 || sum.Days[0].Day != "2026-03-06" || sum.Days[0].Redemptions != 0 ||
			sum.Days[2] != rows[1] || sum.Days[3] != rows[2] {
			t.Fatalf("days %+v", sum.Days)
		}
		if len(sum.Rows) != 2 || sum.Rows[0].TemplateID != f.templates[0].ID || sum.Rows[0].Redemptions != 4 ||
			sum.Rows[1].Redemptions != 2 || sum.Rows[1].Refunds != 1 {
			t.Fatalf("rows %+v", sum.Rows)
		}
		if tot := sum.Totals; tot.Redemptions != 6 || tot.DiscountCents != 2700 || tot.Refunds != 1 ||
			tot.RefundedDiscountCents != 400 || tot.NetDiscountCents() != 2300 || tot.NetRedemptions() != 5 {
			t.Fatalf("totals %+v", tot)
		}
	})
}

// In Tokyo (UTC+9, no summer time) a day starts at 15:00 UTC the day before.
func TestRedemptionReportTokyoMidnight(t *testing.T) {
	tokyo := mustZone(t, "Asia/Tokyo")
	f := newReportFixture(t, tokyo, []reportEvent{
		{at: "2026-03-01T14:59:59Z", cashier: "ann", amount: 1000}, // 1 Mar 23:59:59 JST
		{at: "2026-03-01T15:00:00Z", cashier: "ann", amount: 1000}, // 2 Mar 00:00 JST
		{at: "2026-03-02T00:00:00Z", cashier: "ann", amount: 1000, refundAt: "2026-03-02T15:00:00Z"},
	})
	rows := f.stream(reports.ReportRequest{From: "2026-03-01", To: "2026-03-03"})
	want := []reports.ReportRow{
		{Day: "2026-03-01", Redemptions: 1, DiscountCents: 500},
		{Day: "2026-03-02", Redemptions: 2, DiscountCents: 1000},
		{Day: "2026-03-03", Refunds: 1, RefundedDiscountCents: 500},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows\n got %+v\nwant %+v", rows, want)
	}
	ledger := f.ledgerByDay(tokyo, "2026-03-01", "2026-03-03")
	for _, r := range rows {
		if ledger[r.Day] != r {
			t.Errorf("day %s: report %+v, use log %+v", r.Day, r, ledger[r.Day])
		}
	}
}

func TestRedemptionReportBadRequest(t *testing.T) {
	f := testenv.NewFixtureAt(t, services.Config{CoreConfig: services.CoreConfig{Location: mustZone(t, "Asia/Tokyo")}}, mustUTC(t, "2026-03-10T16:00:00Z"))
	cases := []struct {
		name  string
		req   reports.ReportRequest
		field string
	}{
		{"FromNotADate", reports.ReportRequest{From: "yesterday"}, "from"},
		{"FromNoSuchDay", reports.ReportRequest{From: "2026-02-30"}, "from"},
		{"ToNotADate", reports.ReportRequest{To: "2026/03/01"}, "to"},
		{"ToBeforeFrom", reports.ReportRequest{From: "2026-03-02", To: "2026-03-01"}, "to"},
		{"TooLong", reports.ReportRequest{From: "2025-01-01", To: "2026-01-02"}, "to"},
		{"GroupByUnknown", reports.ReportRequest{GroupBy: "week"}, "group_by"},
		{"GroupByTwice", reports.ReportRequest{GroupBy: "day,day"}, "group_by"},
		// Dates are within the years 2000 to 2100 (models.CheckDate).
		{"Year9999", reports.ReportRequest{From: "9999-12-31", To: "9999-12-31"}, "to"},
		{"FromYear9999", reports.ReportRequest{From: "9999-12-31", To: "2026-01-01"}, "from"},
		{"ToYear0000", reports.ReportRequest{From: "2026-01-01", To: "0000-01-01"}, "to"},
		{"FromBefore2000", reports.ReportRequest{From: "1999-12-31", To: "2000-01-02"}, "from"},
		{"ToAfter2100", reports.ReportRequest{From: "2100-12-31", To: "2101-01-01"}, "to"},
		{"DefaultFromBefore2000", reports.ReportRequest{To: "2000-01-05"}, "from"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := false
			err := f.Reports.StreamRedemptionReport(f.Ctx, c.req, func(reports.ReportQuery) error { called = true; return nil },
				func(reports.ReportRow) error { return nil })
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field != c.field || called {
				t.Fatalf("err %v (started %t), want invalid_request on %s", err, called, c.field)
			}
		})
	}
	t.Run("Defaults", func(t *testing.T) {
		// 16:00 UTC on 10 March is 01:00 on 11 March in Tokyo.
		q, err := f.Reports.CheckReport(reports.ReportRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if q.From != "2026-02-10" || q.To != "2026-03-11" || fmt.Sprint(q.GroupBy) != "[day]" ||
			!q.Start.Equal(mustUTC(t, "2026-02-09T15:00:00Z")) || !q.End.Equal(mustUTC(t, "2026-03-11T15:00:00Z")) {
			t.Fatalf("query %+v", q)
		}
		if q, err := f.Reports.CheckReport(reports.ReportRequest{From: "2025-01-01", To: "2026-01-01"}); err != nil || len(q.Days()) != 366 {
			t.Fatalf("366 days: %v", err)
		}
	})
}

// TestRedemptionReportBounds: the widest ranges allowed are answered, and the
// work of a report is bounded by its budget: past it the report ends with
// unavailable saying so, before anything is written.
func TestRedemptionReportBounds(t *testing.T) {
	f := testenv.NewFixtureAt(t, services.Config{}, mustUTC(t, "2026-03-10T16:00:00Z"))
	for _, r := range [][2]string{{"2000-01-01", "2000-12-31"}, {"2099-12-31", "2100-12-31"}} {
		q, err := f.Reports.CheckReport(reports.ReportRequest{From: r[0], To: r[1]})
		if err != nil || len(q.Days()) != 366 || q.Days()[365] != r[1] {
			t.Fatalf("%v: %v, %d days", r, err, len(q.Days()))
		}
	}
	slow := testenv.NewFixtureAt(t, services.Config{ReportsConfig: services.ReportsConfig{ReportBudget: time.Nanosecond}}, mustUTC(t, "2026-03-10T16:00:00Z"))
	started := false
	err := slow.Svc.StreamRedemptionReport(slow.Ctx, reports.ReportRequest{}, func(reports.ReportQuery) error {
		started = true
		return nil
	}, func(reports.ReportRow) error { return nil })
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeUnavailable || e.RetryAfterSeconds != 0 ||
		e.Message != "the report took longer than its time budget of 1ns: ask for a shorter range" || started {
		t.Fatalf("over budget: %v (started %t)", err, started)
	}
	if _, err := slow.Svc.RedemptionReport(slow.Ctx, reports.ReportRequest{}); models.ErrorCode(err) != models.CodeUnavailable {
		t.Fatalf("summary over budget: %v", err)
	}
}

// TestRedemptionReportOneCurrency: the redemption report sums the coupons
// of one currency (the deployment's unless asked), never two; a bad
// currency is refused naming the field.
func TestRedemptionReportOneCurrency(t *testing.T) {
	f := testenv.NewFixtureAt(t, services.Config{}, mustUTC(t, "2026-05-01T00:00:00Z"))
	camp := f.CreateCampaign(models.Campaign{Name: "dollars"})
	euros := f.CreateCampaign(models.Campaign{Name: "euros", Currency: "EUR"})
	usd := f.Template(models.Template{CampaignID: camp.ID, Name: "Five dollars", FaceValueCents: 500,
		TotalStock: 10, PerUserLimit: 10, ValidDays: 30})
	eur := f.Template(models.Template{CampaignID: euros.ID, Name: "Seven euros", FaceValueCents: 700, Currency: "EUR",
		TotalStock: 10, PerUserLimit: 10, ValidDays: 30})
	redeem := func(tp *models.Template, n int, currency string) {
		t.Helper()
		res := f.MustClaim(tp.ID, "shopper", fmt.Sprint("k-", n))
		if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: res.Coupon.Code, OrderID: fmt.Sprint("o-", n),
			OrderAmountCents: 3000, Cashier: "till", Cart: checkout.Cart{Currency: currency}}); err != nil {
			t.Fatalf("redeem %d: %v", n, err)
		}
	}
	redeem(usd, 1, "")
	redeem(eur, 2, "EUR")
	redeem(eur, 3, "EUR")
	day := "2026-05-01"
	for _, c := range []struct {
		currency, want string
		n, cents       int64
	}{{"", "USD", 1, 500}, {"USD", "USD", 1, 500}, {"EUR", "EUR", 2, 1400}, {"JPY", "JPY", 0, 0}} {
		var got reports.ReportRow
		var q reports.ReportQuery
		err := f.Reports.StreamRedemptionReport(f.Ctx, reports.ReportRequest{From: day, To: day, Currency: c.currency},
			func(rq reports.ReportQuery) error { q = rq; return nil },
			func(r reports.ReportRow) error { got.Add(r); return nil })
		if err != nil || q.Currency != c.want || got.Redemptions != c.n || got.DiscountCents != c.cents {
			t.Errorf("currency %q: %s %d redemptions %d cents, %v; want %s %d %d", c.currency, q.Currency,
				got.Redemptions, got.DiscountCents, err, c.want, c.n, c.cents)
		}
	}
	err := f.Reports.StreamRedemptionReport(f.Ctx, reports.ReportRequest{From: day, To: day, Currency: "eur"},
		func(reports.ReportQuery) error { return nil }, func(reports.ReportRow) error { return nil })
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeInvalidRequest || e.Field != "currency" {
		t.Fatalf("currency eur: %v, want invalid_request naming currency", err)
	}
}
