package reports

import (
	"cmp"
	"context"
	"slices"
)

// RedemptionSummary is the redemption report as the console shows it: the
// groups asked for, every day of the range with its totals (for the chart,
// days without redemptions included) and the range's totals. Its figures
// are the CSV's (StreamRedemptionReport), summed.
type RedemptionSummary struct {
	Query  ReportQuery
	Rows   []ReportRow
	Days   []ReportRow
	Totals ReportRow
}

// RedemptionReport returns the redemption report of req with the daily
// totals of its range, read in one query grouped by day as well.
// Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Reports) RedemptionReport(ctx context.Context, req ReportRequest) (*RedemptionSummary, error) {
	asked, err := s.CheckReport(req)
	if err != nil {
		return nil, err
	}
	withDay := req
	if !asked.Has(GroupDay) {
		withDay.GroupBy = GroupDay + "," + req.GroupBy
	}
	out := &RedemptionSummary{Query: asked}
	byDay := map[string]*ReportRow{}
	for _, d := range asked.Days() {
		out.Days = append(out.Days, ReportRow{Day: d})
	}
	for i := range out.Days {
		byDay[out.Days[i].Day] = &out.Days[i]
	}
	type key struct {
		cashier  string
		template int64
	}
	groups := map[key]*ReportRow{}
	err = s.StreamRedemptionReport(ctx, withDay, func(ReportQuery) error { return nil }, func(r ReportRow) error {
		if d := byDay[r.Day]; d != nil {
			d.Add(r)
		}
		out.Totals.Add(r)
		if asked.Has(GroupDay) {
			out.Rows = append(out.Rows, r)
			return nil
		}
		k := key{cashier: r.Cashier, template: r.TemplateID}
		g := groups[k]
		if g == nil {
			g = &ReportRow{TemplateID: r.TemplateID, TemplateName: r.TemplateName, Cashier: r.Cashier}
			groups[k] = g
		}
		g.Add(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !asked.Has(GroupDay) {
		for _, g := range groups {
			out.Rows = append(out.Rows, *g)
		}
		slices.SortFunc(out.Rows, func(a, b ReportRow) int {
			return cmp.Or(cmp.Compare(a.TemplateID, b.TemplateID), cmp.Compare(a.Cashier, b.Cashier))
		})
	}
	return out, nil
}
