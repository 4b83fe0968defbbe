package pages

import (
	"net/http"
	"net/url"
	"strings"

	"couponsvc/models"
	"couponsvc/services/core"
	"couponsvc/services/reports"

	"github.com/gin-gonic/gin"
)

// reportsPage is the data of reports.html.
type reportsPage struct {
	basePage
	// From, To and GroupBy are the form's values as typed.
	From, To, GroupBy string
	Bar               filterBar
	Summary           *reports.RedemptionSummary
	Chart             chart
	// CSV is the link to the same report as CSV.
	CSV    string
	Errors formErrors
}

// reportGroupings are the groupings the page offers (the CSV takes any).
var reportGroupings = []filterOption{
	{"day", "Day"}, {"template", "Template"}, {"cashier", "Cashier"},
	{"day,template", "Day and template"}, {"day,cashier", "Day and cashier"},
	{"template,cashier", "Template and cashier"},
}

// showReports shows the redemption report (docs/reports.md): discount
// given and refunded per day as a chart, and the groups asked for as a
// table with a link to the same figures as CSV.
func (p *Pages) showReports(c *gin.Context) {
	req := reports.ReportRequest{From: c.Query("from"), To: c.Query("to"), GroupBy: c.Query("group_by")}
	page := &reportsPage{basePage: basePage{Title: "Reports", Nav: "reports"}, From: req.From, To: req.To,
		GroupBy: req.GroupBy, Errors: formErrors{}}
	show := func(status int) {
		page.Bar = page.bar(p.loc.String())
		p.render(c, status, "reports", page)
	}
	sum, err := p.reports.RedemptionReport(c.Request.Context(), req)
	if err != nil {
		if e, ok := err.(*models.Error); ok && e.Code == models.CodeInvalidRequest && e.Field != "" {
			page.Errors.add(e.Field, e.Message)
			show(http.StatusBadRequest)
			return
		}
		if e, ok := err.(*models.Error); ok && core.OverBudget(err) {
			// Said beside the range, the thing to shorten (docs/reports.md).
			page.Errors.add("to", e.Message)
			show(http.StatusServiceUnavailable)
			return
		}
		p.fail(c, err)
		return
	}
	q := sum.Query
	page.Summary, page.From, page.To = sum, q.From, q.To
	page.GroupBy = strings.Join(q.GroupBy, ",")
	page.Chart = p.newReportChart(sum.Days, sum.Totals)
	page.CSV = "/api/v1/reports/redemptions.csv?" + url.Values{"from": {q.From}, "to": {q.To}, "group_by": {page.GroupBy}}.Encode()
	show(http.StatusOK)
}

// bar is the report's filter bar: the days (in zone) and the grouping.
func (page *reportsPage) bar(zone string) filterBar {
	return filterBar{Action: "/admin/reports", Mark: "data-report-form", Submit: "Show", Errors: page.Errors, Fields: []filterField{
		{Name: "from", ID: "report-from", Label: "From (" + zone + ")", Type: "date", Value: page.From},
		{Name: "to", ID: "report-to", Label: "To, included", Type: "date", Value: page.To},
		{Name: "group_by", ID: "report-group", Label: "Group by", Type: "select", Value: page.GroupBy, Options: reportGroupings},
	}}
}
