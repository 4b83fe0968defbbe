package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/reports"

	"github.com/gin-gonic/gin"
)

// reportColumns are the CSV's figure columns, after the grouping keys, and
// last the currency of every amount (docs/reports.md).
var reportColumns = []string{"redemptions", "discount_cents", "refunds", "refunded_discount_cents",
	"net_redemptions", "net_discount_cents", "currency"}

// redemptionsCSV streams the redemption report as CSV: a header row, then
// one row per group as the service reads it. Bad parameters answer 400
// naming the field before anything is written; a fault after the first row
// aborts the response, so that a client never takes a cut file for a
// whole one.
func (s *Server) redemptionsCSV(c *gin.Context) {
	req := reports.ReportRequest{From: c.Query("from"), To: c.Query("to"), GroupBy: c.Query("group_by"), Currency: c.Query("currency")}
	w := core.NewCSVWriter(c.Writer)
	var q reports.ReportQuery
	started := false
	err := s.reports.StreamRedemptionReport(c.Request.Context(), req, func(rq reports.ReportQuery) error {
		q, started = rq, true
		c.Header("Content-Type", "text/csv; charset=utf-8")
		c.Header("Content-Disposition", `attachment; filename="redemptions_`+rq.Currency+`_`+rq.From+`_`+rq.To+`.csv"`)
		c.Header("Cache-Control", "no-store")
		c.Set(web.ResultKey, "ok")
		c.Status(http.StatusOK)
		var head []string
		for _, g := range rq.GroupBy {
			head = append(head, g)
			if g == reports.GroupTemplate {
				head = append(head, "template_name")
			}
		}
		return w.Write(append(head, reportColumns...))
	}, func(r reports.ReportRow) error {
		var rec []string
		for _, g := range q.GroupBy {
			switch g {
			case reports.GroupDay:
				rec = append(rec, r.Day)
			case reports.GroupTemplate:
				rec = append(rec, strconv.FormatInt(r.TemplateID, 10), r.TemplateName)
			case reports.GroupCashier:
				rec = append(rec, r.Cashier)
			}
		}
		for _, n := range []int64{r.Redemptions, r.DiscountCents, r.Refunds, r.RefundedDiscountCents,
			r.NetRedemptions(), r.NetDiscountCents()} {
			rec = append(rec, strconv.FormatInt(n, 10))
		}
		rec = append(rec, q.Currency)
		if err := w.Write(rec); err != nil {
			return err
		}
		// A row at a time to the client: nothing is kept back.
		w.Flush()
		return w.Error()
	})
	if err == nil {
		w.Flush()
		err = w.Error()
	}
	if err == nil {
		return
	}
	if !started {
		web.RespondError(c, err)
		return
	}
	s.log.Warn("redemption report cut short", "err", err)
	panic(http.ErrAbortHandler)
}

// discountColumns are the discount CSV's columns (docs/reports.md).
var discountColumns = []string{"orders", "units", "returned_units", "discount_cents", "returned_discount_cents", "net_discount_cents"}

// discountsAnswer is the discount report by SKU or category.
type discountsAnswer struct {
	By         string                `json:"by" doc:"sku or category"`
	Currency   string                `json:"currency" schema:"currency" doc:"the currency of the orders counted and of every amount"`
	From       string                `json:"from" doc:"first day, YYYY-MM-DD in the deployment's zone"`
	To         string                `json:"to" doc:"last day, included"`
	CampaignID int64                 `json:"campaign_id,omitempty"`
	TemplateID int64                 `json:"template_id,omitempty"`
	Rows       []reports.DiscountRow `json:"rows"`
	Totals     reports.DiscountRow   `json:"totals" doc:"the rows summed (by category a line counts once per category it is in); orders counted once"`
	// TotalsByLine counts each line once, whatever its categories.
	TotalsByLine reports.DiscountRow `json:"totals_by_line" doc:"each line counted once, whatever its categories"`
	// Actions splits the same coupons' discount by template and action.
	Actions []reports.DiscountAction `json:"actions" doc:"the same coupons' discount on the lines and the shipping, by template and action (0: the template's own kind, then its actions in order)"`
}

// discountRequest reads the discount report's query.
func discountRequest(c *gin.Context) reports.DiscountRequest {
	return reports.DiscountRequest{From: c.Query("from"), To: c.Query("to"), By: c.Query("by"),
		CampaignID: c.Query("campaign_id"), TemplateID: c.Query("template_id"), Currency: c.Query("currency")}
}

// showDiscounts answers the discount report by SKU or category.
func (s *Server) showDiscounts(c *gin.Context) {
	r, err := s.reports.Discounts(c.Request.Context(), discountRequest(c))
	if err != nil {
		web.RespondError(c, err)
		return
	}
	q := r.Query
	rows := r.Rows
	if rows == nil {
		rows = []reports.DiscountRow{}
	}
	web.Respond(c, http.StatusOK, "ok", discountsAnswer{By: q.By, Currency: q.Currency, From: q.Range.From, To: q.Range.To,
		CampaignID: q.CampaignID, TemplateID: q.TemplateID, Rows: rows, Totals: r.Totals, TotalsByLine: r.TotalsByLine,
		Actions: r.Actions})
}

// discountsCSV answers the discount report as CSV: a header row, then a
// row per SKU or category. It is read whole before the first byte (a few
// rows per SKU), so a fault is an error answer, never a cut file.
func (s *Server) discountsCSV(c *gin.Context) {
	r, err := s.reports.Discounts(c.Request.Context(), discountRequest(c))
	if err != nil {
		web.RespondError(c, err)
		return
	}
	q := r.Query
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Header("Content-Disposition", `attachment; filename="discounts_by_`+q.By+`_`+q.Range.From+`_`+q.Range.To+`.csv"`)
	c.Header("Cache-Control", "no-store")
	c.Set(web.ResultKey, "ok")
	c.Status(http.StatusOK)
	w := core.NewCSVWriter(c.Writer)
	if err := w.Write(append([]string{q.By}, discountColumns...)); err != nil {
		panic(http.ErrAbortHandler)
	}
	for _, row := range r.Rows {
		rec := []string{row.Key}
		for _, n := range []int64{row.Orders, row.Units, row.ReturnedUnits, row.DiscountCents, row.ReturnedDiscountCents, row.NetDiscountCents} {
			rec = append(rec, strconv.FormatInt(n, 10))
		}
		if err := w.Write(rec); err != nil {
			break
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		s.log.Warn("discount report cut short", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// discountsDescription says what the discount report counts (docs/reports.md).
const discountsDescription = "Over the lines of orders redeemed with a cart whose coupons were used within the range (days " +
	"of COUPON_TIMEZONE) and are still used by the order: per SKU or category id, the orders, the units bought and " +
	"returned, the lines' stored discount, the part of it returned with units, and the net discount. A line in two " +
	"categories counts in both. campaign_id and template_id keep the coupons of that campaign or template; " +
	"currency the orders of that currency (the deployment's by default)."

// discountParams are the discount report's query parameters.
func discountParams() []web.Param {
	return []web.Param{
		{Name: "from", Description: "first day, YYYY-MM-DD in the deployment's zone (default: 29 days before to)",
			Schema: web.DateSchema()},
		{Name: "to", Description: fmt.Sprintf("last day, included (default: today); at most %d days from from", reports.MaxReportDays),
			Schema: web.DateSchema()},
		{Name: "by", Description: "sku (default) or category",
			Schema: map[string]any{"type": "string", "enum": []string{reports.BySKU, reports.ByCategory}}},
		{Name: "campaign_id", Description: "only the coupons of this campaign", Schema: map[string]any{"type": "integer", "minimum": 1}},
		{Name: "template_id", Description: "only the coupons of this template", Schema: map[string]any{"type": "integer", "minimum": 1}},
		{Name: "currency", Description: "the orders of this currency (default: the deployment's): a report sums one currency",
			Schema: map[string]any{"type": "string", "minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$"}},
	}
}

// groupByPattern is the redemption report's group_by: a comma list of the
// groupings, each at most once, in any order.
func groupByPattern() string {
	groups := []string{reports.GroupDay, reports.GroupTemplate, reports.GroupCashier}
	var lists []string
	var grow func(list []string)
	grow = func(list []string) {
		if len(list) > 0 {
			lists = append(lists, strings.Join(list, ","))
		}
		for _, g := range groups {
			if !slices.Contains(list, g) {
				grow(append(slices.Clone(list), g))
			}
		}
	}
	grow(nil)
	return "^(" + strings.Join(lists, "|") + ")$"
}
