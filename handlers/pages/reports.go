package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/reports"

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
	// CampaignID and TemplateID filter the discount by SKU and category
	// (as typed); Discounts are those two reports.
	CampaignID, TemplateID string
	Discounts              []discountTable
}

// discountTable is one discount report of the page: by SKU or category.
type discountTable struct {
	R *reports.DiscountReport
	// Title heads the card, Key the key column; CSV links the same
	// figures as CSV; Mark is sku or category.
	Title, Key, CSV, Mark string
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
		GroupBy: req.GroupBy, Errors: formErrors{}, CampaignID: c.Query("campaign_id"), TemplateID: c.Query("template_id")}
	show := func(status int) {
		page.Bar = page.bar(p.loc.String())
		p.render(c, status, "reports", page)
	}
	sum, err := p.reports.RedemptionReport(c.Request.Context(), req)
	if err == nil {
		err = p.discountReports(c, page, req)
	}
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

// discountReports reads the discount by SKU and by category of the page's
// days, campaign and template (docs/reports.md).
func (p *Pages) discountReports(c *gin.Context, page *reportsPage, req reports.ReportRequest) error {
	dr := reports.DiscountRequest{From: req.From, To: req.To, CampaignID: page.CampaignID, TemplateID: page.TemplateID}
	for _, by := range []string{reports.BySKU, reports.ByCategory} {
		dr.By = by
		r, err := p.reports.Discounts(c.Request.Context(), dr)
		if err != nil {
			return err
		}
		v := url.Values{"from": {r.Query.Range.From}, "to": {r.Query.Range.To}, "by": {by}}
		if page.CampaignID != "" {
			v.Set("campaign_id", page.CampaignID)
		}
		if page.TemplateID != "" {
			v.Set("template_id", page.TemplateID)
		}
		tb := discountTable{R: r, Title: "Discount by SKU", Key: "SKU", CSV: "/api/v1/reports/discounts.csv?" + v.Encode(), Mark: by}
		if by == reports.ByCategory {
			tb.Title, tb.Key = "Discount by category", "Category"
		}
		page.Discounts = append(page.Discounts, tb)
	}
	return nil
}

// bar is the report's filter bar: the days (in zone) and the grouping.
func (page *reportsPage) bar(zone string) filterBar {
	return filterBar{Action: "/admin/reports", Mark: "data-report-form", Submit: "Show", Errors: page.Errors, Fields: []filterField{
		{Name: "from", ID: "report-from", Label: "From (" + zone + ")", Type: "date", Value: page.From},
		{Name: "to", ID: "report-to", Label: "To, included", Type: "date", Value: page.To},
		{Name: "group_by", ID: "report-group", Label: "Group by", Type: "select", Value: page.GroupBy, Options: reportGroupings},
		{Name: "campaign_id", ID: "report-campaign", Label: "Campaign id", Hint: "discount by SKU and category only",
			Type: "text", Value: page.CampaignID, Verbatim: true},
		{Name: "template_id", ID: "report-template", Label: "Template id", Hint: "discount by SKU and category only",
			Type: "text", Value: page.TemplateID, Verbatim: true},
	}}
}
