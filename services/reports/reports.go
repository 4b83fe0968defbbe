package reports

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// The groupings of the redemption report (docs/reports.md).
const (
	GroupDay      = "day"
	GroupTemplate = "template"
	GroupCashier  = "cashier"
)

// MaxReportDays bounds a report's range: a leap year.
const MaxReportDays = 366

// DefaultReportDays is the range of a report that names no dates: the last
// 30 days, today included.
const DefaultReportDays = 30

// ReportRequest asks for the redemption report as a person or a program
// types it: From and To are dates (YYYY-MM-DD) of the deployment's time
// zone, both included (To defaults to today, From to 29 days before To);
// GroupBy is a comma list of day, template and cashier ("day" when empty).
type ReportRequest struct {
	From, To, GroupBy string
	// Currency is that of the coupons counted (their template's): one
	// currency per report, so that its sums are money; empty for the
	// deployment's.
	Currency string
}

// ReportQuery is a checked ReportRequest.
type ReportQuery struct {
	// From and To are the first and the last day, as dates (YYYY-MM-DD).
	From, To string
	// Start and End are the instants the range covers: the first instant of
	// From and of the day after To in the deployment's zone, in UTC.
	Start, End time.Time
	// GroupBy lists the groupings in the report's column order: day,
	// template, cashier.
	GroupBy []string
	// Location is the zone the days are days of.
	Location *time.Location
	// Currency is that of the redemptions counted and of every amount.
	Currency string
}

// Has reports whether the report groups by g.
func (q ReportQuery) Has(g string) bool { return slices.Contains(q.GroupBy, g) }

// Days returns the dates of the range, oldest first. Their number is that of
// the checked range (at most MaxReportDays), whatever the dates.
func (q ReportQuery) Days() []string {
	from, err1 := time.Parse(time.DateOnly, q.From)
	to, err2 := time.Parse(time.DateOnly, q.To)
	if err1 != nil || err2 != nil {
		return nil
	}
	n := min(int(to.Sub(from).Hours()/24)+1, MaxReportDays)
	out := make([]string, 0, max(n, 0))
	for i := range n {
		out = append(out, from.AddDate(0, 0, i).Format(time.DateOnly))
	}
	return out
}

// ReportRow is one group of the redemption report (docs/reports.md): the
// redemptions used within the group's day (or the range) and their
// discount as it stands (a partial return lowers it), and the refunds made
// within it with the discount they took back. Keys the report does not
// group by are zero.
type ReportRow struct {
	Day          string `json:"day,omitempty" format:"date"`
	TemplateID   int64  `json:"template_id,omitempty"`
	TemplateName string `json:"template_name,omitempty"`
	Cashier      string `json:"cashier,omitempty"`
	// Redemptions counts use log rows by their use time.
	Redemptions   int64 `json:"redemptions"`
	DiscountCents int64 `json:"discount_cents"`
	// Refunds counts refunded use log rows by their refund time, whenever
	// they were used; RefundedDiscountCents is their discount.
	Refunds               int64 `json:"refunds"`
	RefundedDiscountCents int64 `json:"refunded_discount_cents"`
}

// NetRedemptions is redemptions less refunds.
func (r ReportRow) NetRedemptions() int64 { return r.Redemptions - r.Refunds }

// NetDiscountCents is the discount given less the discount refunded.
func (r ReportRow) NetDiscountCents() int64 { return r.DiscountCents - r.RefundedDiscountCents }

// Add adds o's figures to r (its keys stay r's).
func (r *ReportRow) Add(o ReportRow) {
	r.Redemptions += o.Redemptions
	r.DiscountCents += o.DiscountCents
	r.Refunds += o.Refunds
	r.RefundedDiscountCents += o.RefundedDiscountCents
}

// CheckReport checks a report request against the deployment's zone and
// today. Errors: CodeInvalidRequest naming from, to or group_by.
func (s *Reports) CheckReport(req ReportRequest) (ReportQuery, error) {
	loc := s.Cfg.Location
	q := ReportQuery{Location: loc}
	today := s.Clock().In(loc)
	to := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	if v := strings.TrimSpace(req.To); v != "" {
		d, err := models.ParseDate("to", v)
		if err != nil {
			return q, err
		}
		to = d
	}
	from := to.AddDate(0, 0, -(DefaultReportDays - 1))
	if v := strings.TrimSpace(req.From); v != "" {
		d, err := models.ParseDate("from", v)
		if err != nil {
			return q, err
		}
		from = d
	}
	if err := models.CheckDate("from", from); err != nil {
		return q, err // from left out, 29 days before a to early in MinYear
	}
	if to.Before(from) {
		return q, models.Invalid("to", "must be on or after from (%s)", from.Format(time.DateOnly))
	}
	if days := int(to.Sub(from).Hours()/24) + 1; days > MaxReportDays {
		return q, models.Invalid("to", "must be at most %d days after from, both included (this range has %d)", MaxReportDays, days)
	}
	q.From, q.To = from.Format(time.DateOnly), to.Format(time.DateOnly)
	q.Start = models.StartOfDay(from.Year(), from.Month(), from.Day(), loc)
	q.End = models.StartOfDay(to.Year(), to.Month(), to.Day()+1, loc)
	groups := strings.TrimSpace(req.GroupBy)
	if groups == "" {
		groups = GroupDay
	}
	seen := map[string]bool{}
	for _, g := range strings.Split(groups, ",") {
		g = strings.TrimSpace(g)
		if g != GroupDay && g != GroupTemplate && g != GroupCashier {
			return q, models.Invalid("group_by", "must be a comma list of day, template and cashier, not %q", req.GroupBy)
		}
		if seen[g] {
			return q, models.Invalid("group_by", "names %s twice", g)
		}
		seen[g] = true
	}
	for _, g := range []string{GroupDay, GroupTemplate, GroupCashier} {
		if seen[g] {
			q.GroupBy = append(q.GroupBy, g)
		}
	}
	cur, err := s.reportCurrency(req.Currency)
	if err != nil {
		return q, err
	}
	q.Currency = cur
	return q, nil
}

// reportCurrency checks the currency a report asks for: the deployment's
// when left out. Errors: CodeInvalidRequest naming currency.
func (s *Reports) reportCurrency(asked string) (string, error) {
	cur := strings.TrimSpace(asked)
	if cur == "" {
		if s.Cfg.Currency != "" {
			return s.Cfg.Currency, nil
		}
		return models.DefaultCurrency, nil
	}
	if err := models.ValidateCurrency("currency", cur); err != nil {
		return "", err
	}
	return cur, nil
}

// StreamRedemptionReport checks req (as CheckReport), reads the report's
// groups from the use log (docs/reports.md) ordered by day, template id
// and cashier, calls start once the database has answered, then each for
// every group as it is read. An error from start or each stops it and is
// returned as it is. On MySQL the groups are written as the database hands
// them over; SQLite has one connection, which the service must not hold
// while a slow client reads, so there the groups (at most a year of days
// times templates times cashiers) are read first. The whole takes at most
// Config.ReportBudget: past it, CodeUnavailable saying so (budgetError).
// Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Reports) StreamRedemptionReport(ctx context.Context, req ReportRequest, start func(ReportQuery) error, each func(ReportRow) error) error {
	q, err := s.CheckReport(req)
	if err != nil {
		return err
	}
	ctx, cancel := core.WithBudget(ctx, s.cfg.ReportBudget)
	defer cancel()
	return core.BudgetError(ctx, s.streamReport(ctx, q, start, each), "report", s.cfg.ReportBudget)
}

// streamReport is StreamRedemptionReport of a checked query.
func (s *Reports) streamReport(ctx context.Context, q ReportQuery, start func(ReportQuery) error, each func(ReportRow) error) error {
	names, err := s.templateNames(ctx, q)
	if err != nil {
		return err
	}
	rows, err := s.reportRows(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	if s.Dialect == core.DialectSQLite {
		var all []ReportRow
		for rows.Next() {
			r, err := scanReportRow(rows, q, names)
			if err != nil {
				return core.DBError("use log", err)
			}
			all = append(all, r)
		}
		if err := rows.Err(); err != nil {
			return core.DBError("use log", err)
		}
		rows.Close()
		if err := start(q); err != nil {
			return err
		}
		for _, r := range all {
			if err := each(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := start(q); err != nil {
		return err
	}
	for rows.Next() {
		r, err := scanReportRow(rows, q, names)
		if err != nil {
			return core.DBError("use log", err)
		}
		if err := each(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return core.DBError("use log", err)
	}
	return nil
}

// reportRows runs the report's query: the use log's rows used within the
// range, by the day of their use, and those refunded within it, by the day
// of their refund, summed by the groupings; only the coupons of templates
// of the report's currency count (a coupon is redeemed in its template's
// currency), so that no sum adds two currencies.
func (s *Reports) reportRows(ctx context.Context, q ReportQuery) (*sql.Rows, error) {
	usedDay, usedArgs := s.localDayExpr("used_at", q)
	undoneDay, undoneArgs := s.localDayExpr("undone_at", q)
	var keys []string
	for _, g := range q.GroupBy {
		keys = append(keys, map[string]string{GroupDay: "d", GroupTemplate: "template_id", GroupCashier: "cashier"}[g])
	}
	cols := strings.Join(keys, ", ")
	// Every piece of the statement is a constant of this file or a number;
	// the bounds are parameters.
	stmt := `SELECT ` + cols + `, SUM(r) AS redemptions, SUM(rd) AS discount, SUM(f) AS refunds, SUM(fd) AS refunded
		FROM (
			SELECT ` + usedDay + ` AS d, template_id, cashier, 1 AS r, discount_cents AS rd, 0 AS f, 0 AS fd
				FROM coupon_use_log WHERE used_at >= ? AND used_at < ?
				AND template_id IN (SELECT id FROM templates WHERE currency = ?)
			UNION ALL
			SELECT ` + undoneDay + ` AS d, template_id, cashier, 0 AS r, 0 AS rd, 1 AS f, discount_cents AS fd
				FROM coupon_use_log WHERE undo_flag = ? AND undone_at >= ? AND undone_at < ?
				AND template_id IN (SELECT id FROM templates WHERE currency = ?)
		) x
		GROUP BY ` + cols + ` ORDER BY ` + cols
	args := append(usedArgs, q.Start, q.End, q.Currency)
	args = append(args, undoneArgs...)
	args = append(args, true, q.Start, q.End, q.Currency)
	rows, err := s.DB.WithContext(ctx).Raw(stmt, args...).Rows()
	if err != nil {
		return nil, core.DBError("use log", err)
	}
	return rows, nil
}

// scanReportRow reads one group of the report's query.
func scanReportRow(rows *sql.Rows, q ReportQuery, names map[int64]string) (ReportRow, error) {
	var r ReportRow
	var day int64
	var dest []any
	for _, g := range q.GroupBy {
		switch g {
		case GroupDay:
			dest = append(dest, &day)
		case GroupTemplate:
			dest = append(dest, &r.TemplateID)
		case GroupCashier:
			dest = append(dest, &r.Cashier)
		}
	}
	dest = append(dest, &r.Redemptions, &r.DiscountCents, &r.Refunds, &r.RefundedDiscountCents)
	if err := rows.Scan(dest...); err != nil {
		return r, err
	}
	if q.Has(GroupDay) {
		r.Day = time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
	}
	if q.Has(GroupTemplate) {
		r.TemplateName = names[r.TemplateID]
	}
	return r, nil
}

// templateNames returns every template's name when the report groups by
// template (there are few templates; a join would repeat them per group).
func (s *Reports) templateNames(ctx context.Context, q ReportQuery) (map[int64]string, error) {
	if !q.Has(GroupTemplate) {
		return nil, nil
	}
	var ts []struct {
		ID   int64
		Name string
	}
	if err := s.DB.WithContext(ctx).Raw(`SELECT id, name FROM templates`).Scan(&ts).Error; err != nil {
		return nil, core.DBError("templates", err)
	}
	out := make(map[int64]string, len(ts))
	for _, t := range ts {
		out[t.ID] = t.Name
	}
	return out, nil
}

// localDayExpr returns the SQL of the local day of a time column, as days
// since 1970-01-01 in the report's zone, and its parameters. The local day
// of an instant is floor((unix seconds + the zone's offset then) / 86400);
// the offset changes only at the zone's transitions, which are computed
// here, so that no database needs its own time zone tables and a day of 23
// or 25 hours is counted right. column is a constant of this file.
func (s *Reports) localDayExpr(column string, q ReportQuery) (string, []any) {
	epoch := "TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', " + column + ")"
	if s.Dialect == core.DialectSQLite {
		epoch = "CAST(strftime('%s', " + column + ") AS INTEGER)"
	}
	bounds, offsets := zoneOffsets(q.Location, q.Start, q.End)
	offset := strconv.Itoa(offsets[0])
	var args []any
	if len(bounds) > 0 {
		var b strings.Builder
		b.WriteString("CASE")
		for i, at := range bounds {
			fmt.Fprintf(&b, " WHEN %s < ? THEN %d", column, offsets[i])
			args = append(args, at)
		}
		fmt.Fprintf(&b, " ELSE %d END", offsets[len(offsets)-1])
		offset = b.String()
	}
	div := " DIV 86400"
	if s.Dialect == core.DialectSQLite {
		div = " / 86400"
	}
	return "((" + epoch + " + " + offset + ")" + div + ")", args
}

// zoneOffsets returns the instants in [start, end) where loc's offset from
// UTC changes, and the offsets (in seconds) before the first, between
// them, and after the last: len(offsets) == len(bounds)+1.
func zoneOffsets(loc *time.Location, start, end time.Time) (bounds []time.Time, offsets []int) {
	offsetAt := func(t time.Time) int { _, o := t.In(loc).Zone(); return o }
	cur := offsetAt(start)
	offsets = []int{cur}
	const step = 6 * time.Hour // zones change their offset at most a few times a year
	for t := start; t.Before(end); {
		next := t.Add(step)
		if o := offsetAt(next); o == cur {
			t = next
			continue
		}
		// The first second in (t, next] with another offset.
		lo, hi := t.Unix(), next.Unix()
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if offsetAt(time.Unix(mid, 0)) == cur {
				lo = mid
			} else {
				hi = mid
			}
		}
		at := time.Unix(hi, 0).UTC()
		if !at.Before(end) {
			break
		}
		cur = offsetAt(at)
		bounds, offsets = append(bounds, at), append(offsets, cur)
		t = at
	}
	return bounds, offsets
}
