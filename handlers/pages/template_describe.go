package pages

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// describeFields are the fields of the template form its sentence is made
// of: while one of them cannot be read, the form has no sentence to show.
var describeFields = []string{"kind", "face_value", "percent_off", "max_discount", "buy_quantity", "get_quantity",
	"get_percent", "max_applications", "tiers", "min_order", "min_quantity", "currency",
	"target_skus", "target_product_ids", "target_category_ids",
	"target_exclude_skus", "target_exclude_product_ids", "target_exclude_category_ids"}

// describeTemplate says in words the coupon the new template form
// describes (models.DescribeTemplate, through valueText), creating
// nothing. Asked by the form's script as the merchant types (Accept:
// text/plain) it answers the sentence alone, "" while a field of it cannot
// be read; asked by the form's "Say it in words" button (no script) it
// answers the form again, as typed, with the sentence (docs/pages.md).
func (p *Pages) describeTemplate(c *gin.Context) {
	f := readTemplateForm(c)
	t := f.template(p, p.campaignCurrency(c, f.CampaignID))
	words := p.valueText(t)
	for _, name := range describeFields {
		if f.Errors[name] != "" {
			words = ""
		}
	}
	if strings.Contains(c.GetHeader("Accept"), "text/plain") {
		c.Header("Cache-Control", "no-store")
		c.String(http.StatusOK, words)
		return
	}
	// A preview is not a send: the form's mistakes are said when it is sent.
	f.Errors, f.Words = formErrors{}, words
	p.renderNewTemplate(c, http.StatusOK, f)
}
