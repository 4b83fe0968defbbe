package api

import (
	"net/http"
	"strconv"

	"couponsvc/handlers/web"
	"couponsvc/services/core"
	"couponsvc/services/reports"

	"github.com/gin-gonic/gin"
)

// reportColumns are the CSV's figure columns, after the grouping keys
// (docs/reports.md).
var reportColumns = []string{"redemptions", "discount_cents", "refunds", "refunded_discount_cents",
	"net_redemptions", "net_discount_cents"}

// redemptionsCSV streams the redemption report as CSV: a header row, then
// one row per group as the service reads it. Bad parameters answer 400
// naming the field before anything is written; a fault after the first row
// aborts the response, so that a client never takes a cut file for a
// whole one.
func (s *Server) redemptionsCSV(c *gin.Context) {
	req := reports.ReportRequest{From: c.Query("from"), To: c.Query("to"), GroupBy: c.Query("group_by")}
	w := core.NewCSVWriter(c.Writer)
	var q reports.ReportQuery
	started := false
	err := s.reports.StreamRedemptionReport(c.Request.Context(), req, func(rq reports.ReportQuery) error {
		q, started = rq, true
		c.Header("Content-Type", "text/csv; charset=utf-8")
		c.Header("Content-Disposition", `attachment; filename="redemptions_`+rq.From+`_`+rq.To+`.csv"`)
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
