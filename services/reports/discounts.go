package reports

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// The keys of the discount report (docs/reports.md).
const (
	BySKU      = "sku"
	ByCategory = "category"
)

// DiscountRequest asks for the discount report as a person or a program
// types it: the days as the redemption report takes them (From, To), By
// (sku, the default, or category), and optional CampaignID and TemplateID
// (decimal ids; empty for all), and Currency (the orders counted: one
// currency per report, so that its sums are money; empty for the
// deployment's).
type DiscountRequest struct {
	From, To, By           string
	CampaignID, TemplateID string
	Currency               string
}

// DiscountQuery is a checked DiscountRequest.
type DiscountQuery struct {
	// Range holds the days (From, To, Start, End, Location); its GroupBy
	// is not used.
	Range ReportQuery
	By    string
	// CampaignID and TemplateID filter the coupons counted; 0 for all.
	CampaignID, TemplateID int64
	// Currency is that of the orders counted and of every amount.
	Currency string
}

// DiscountRow is one SKU's or one category's discount (docs/reports.md):
// over the lines that carry a discount of a coupon the order still uses,
// redeemed within the range. DiscountCents is their stored discount,
// ReturnedDiscountCents the part of it returned with units, Units and
// ReturnedUnits their units bought and returned, Orders the orders they
// are on.
type DiscountRow struct {
	Key                   string `json:"key" doc:"the SKU, or the category id"`
	Orders                int64  `json:"orders"`
	Units                 int64  `json:"units"`
	ReturnedUnits         int64  `json:"returned_units"`
	DiscountCents         int64  `json:"discount_cents"`
	ReturnedDiscountCents int64  `json:"returned_discount_cents"`
	NetDiscountCents      int64  `json:"net_discount_cents" doc:"discount_cents − returned_discount_cents"`
}

// DiscountReport is the discount report: its rows by key, and their
// totals.
type DiscountReport struct {
	Query DiscountQuery
	Rows  []DiscountRow
	// Totals sums the rows' figures: by category a line counts once per
	// category it is in (and not at all when it has none), so they may
	// differ from the discount given. TotalsByLine counts each line once,
	// whatever its categories (by SKU the two are equal). Both count each
	// order once.
	Totals, TotalsByLine DiscountRow
	// Actions splits the discount of the same coupons (on the lines and
	// on the shipping) by template and action.
	Actions []DiscountAction
}

// CheckDiscounts checks a discount report request. Errors:
// CodeInvalidRequest naming from, to, by, campaign_id or template_id.
func (s *Reports) CheckDiscounts(req DiscountRequest) (DiscountQuery, error) {
	var q DiscountQuery
	r, err := s.CheckReport(ReportRequest{From: req.From, To: req.To})
	if err != nil {
		return q, err
	}
	q.Range = r
	switch by := strings.TrimSpace(req.By); by {
	case "", BySKU:
		q.By = BySKU
	case ByCategory:
		q.By = ByCategory
	default:
		return q, models.Invalid("by", "must be sku or category, not %q", req.By)
	}
	if q.Currency, err = s.reportCurrency(req.Currency); err != nil {
		return q, err
	}
	for _, f := range []struct {
		name, v string
		out     *int64
	}{{"campaign_id", req.CampaignID, &q.CampaignID}, {"template_id", req.TemplateID, &q.TemplateID}} {
		v := strings.TrimSpace(f.v)
		if v == "" {
			continue
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return q, models.Invalid(f.name, "must be a positive id, not %q", f.v)
		}
		*f.out = id
	}
	return q, nil
}

// discountLine is one discounted line of an order as the report reads it:
// its discounts of the counted coupons summed.
type discountLine struct {
	OrderID               string
	LineNo                int
	SKU                   string
	CategoryIDs           *string
	Quantity              int64
	ReturnedQuantity      int64
	DiscountCents         int64
	ReturnedDiscountCents int64
}

// Discounts returns the discount report of req: per SKU or category, the
// discount of the lines of orders whose coupons (those of the campaign or
// template asked, still used by the order: live use log rows) were
// redeemed within the range, net of the units returned. A line in two
// categories counts in both. Rows are ordered by key. The work is bounded
// by Config.ReportBudget (CodeUnavailable past it).
// Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Reports) Discounts(ctx context.Context, req DiscountRequest) (*DiscountReport, error) {
	q, err := s.CheckDiscounts(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := core.WithBudget(ctx, s.cfg.ReportBudget)
	defer cancel()
	out, err := s.discounts(ctx, q)
	return out, core.BudgetError(ctx, err, "report", s.cfg.ReportBudget)
}

func (s *Reports) discounts(ctx context.Context, q DiscountQuery) (*DiscountReport, error) {
	// Every piece of the statement is a constant of this file; the values
	// are parameters.
	stmt := `SELECT ol.order_id, ol.line_no, ol.sku, ol.category_ids, ol.quantity, ol.returned_quantity,
			SUM(d.discount_cents) AS discount_cents, SUM(d.returned_discount_cents) AS returned_discount_cents
		FROM order_line_discounts d
		JOIN coupon_use_log l ON l.coupon_id = d.coupon_id AND l.order_id = d.order_id AND l.undo_flag = ?
		JOIN order_lines ol ON ol.order_id = d.order_id AND ol.line_no = d.line_no
		JOIN templates t ON t.id = d.template_id
		JOIN checkout_orders o ON o.order_id = d.order_id
		WHERE d.line_no >= 0 AND l.used_at >= ? AND l.used_at < ? AND o.currency = ?`
	args := []any{false, q.Range.Start, q.Range.End, q.Currency}
	stmt, args = q.narrow(stmt, args)
	stmt += ` GROUP BY ol.order_id, ol.line_no, ol.sku, ol.category_ids, ol.quantity, ol.returned_quantity`
	rows, err := s.DB.WithContext(ctx).Raw(stmt, args...).Rows()
	if err != nil {
		return nil, core.DBError("order lines", err)
	}
	defer rows.Close()
	out := &DiscountReport{Query: q}
	byKey := map[string]*DiscountRow{}
	orders := map[string]map[string]struct{}{}
	all := map[string]struct{}{}
	add := func(r *DiscountRow, l *discountLine) {
		r.Units += l.Quantity
		r.ReturnedUnits += l.ReturnedQuantity
		r.DiscountCents += l.DiscountCents
		r.ReturnedDiscountCents += l.ReturnedDiscountCents
		r.NetDiscountCents += l.DiscountCents - l.ReturnedDiscountCents
	}
	for rows.Next() {
		var l discountLine
		if err := rows.Scan(&l.OrderID, &l.LineNo, &l.SKU, &l.CategoryIDs, &l.Quantity, &l.ReturnedQuantity,
			&l.DiscountCents, &l.ReturnedDiscountCents); err != nil {
			return nil, core.DBError("order lines", err)
		}
		keys := []string{l.SKU}
		if q.By == ByCategory {
			keys = nil
			if l.CategoryIDs != nil && *l.CategoryIDs != "" {
				if err := json.Unmarshal([]byte(*l.CategoryIDs), &keys); err != nil {
					return nil, core.DBError("order lines", err)
				}
			}
			slices.Sort(keys)
			keys = slices.Compact(keys)
		}
		add(&out.TotalsByLine, &l)
		all[l.OrderID] = struct{}{}
		for _, k := range keys {
			r := byKey[k]
			if r == nil {
				r = &DiscountRow{Key: k}
				byKey[k], orders[k] = r, map[string]struct{}{}
			}
			add(r, &l)
			orders[k][l.OrderID] = struct{}{}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, core.DBError("order lines", err)
	}
	for k, r := range byKey {
		r.Orders = int64(len(orders[k]))
		out.Rows = append(out.Rows, *r)
		out.Totals.Units += r.Units
		out.Totals.ReturnedUnits += r.ReturnedUnits
		out.Totals.DiscountCents += r.DiscountCents
		out.Totals.ReturnedDiscountCents += r.ReturnedDiscountCents
		out.Totals.NetDiscountCents += r.NetDiscountCents
	}
	out.Totals.Orders, out.TotalsByLine.Orders = int64(len(all)), int64(len(all))
	slices.SortFunc(out.Rows, func(a, b DiscountRow) int { return cmp.Compare(a.Key, b.Key) })
	if out.Actions, err = s.discountActions(ctx, q); err != nil {
		return nil, err
	}
	return out, nil
}

// narrow adds the query's campaign and template to a statement over
// order_line_discounts d and templates t.
func (q *DiscountQuery) narrow(stmt string, args []any) (string, []any) {
	if q.CampaignID != 0 {
		stmt += ` AND t.campaign_id = ?`
		args = append(args, q.CampaignID)
	}
	if q.TemplateID != 0 {
		stmt += ` AND t.id = ?`
		args = append(args, q.TemplateID)
	}
	return stmt, args
}
