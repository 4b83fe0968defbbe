package pages

import (
	"fmt"
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// campaignForm is the create form of a campaign, as typed.
type campaignForm struct {
	Name, Budget string
	Errors       formErrors
}

// newCampaignPage is the data of campaign_new.html.
type newCampaignPage struct {
	basePage
	Form campaignForm
}

var campaignFields = map[string]string{"name": "name", "budget_cents": "budget"}

// showNewCampaign shows an empty campaign form.
func (p *Pages) showNewCampaign(c *gin.Context) {
	p.render(c, http.StatusOK, "campaign_new", &newCampaignPage{basePage: basePage{Title: "New campaign", Nav: "admin"},
		Form: campaignForm{Errors: formErrors{}}})
}

// createCampaign creates a campaign and goes on to its first template.
func (p *Pages) createCampaign(c *gin.Context) {
	f := campaignForm{Name: c.PostForm("name"), Budget: c.PostForm("budget"), Errors: formErrors{}}
	budget := formMoney(f.Errors, "budget", f.Budget, false)
	page := &newCampaignPage{basePage: basePage{Title: "New campaign", Nav: "admin"}, Form: f}
	if len(f.Errors) > 0 {
		p.render(c, http.StatusBadRequest, "campaign_new", page)
		return
	}
	out, err := p.svc.CreateCampaign(c.Request.Context(), web.Principal(c).Name, models.Campaign{Name: f.Name, BudgetCents: budget})
	if err != nil {
		if !f.Errors.fromError(err, campaignFields) {
			p.fail(c, err)
			return
		}
		if _, bad := f.Errors["budget"]; bad {
			f.Errors["budget"] = "Enter the budget, or leave it empty for no budget."
		}
		status, _ := web.StatusOf(err)
		p.render(c, status, "campaign_new", page)
		return
	}
	p.flash(c, true, fmt.Sprintf("Created the campaign “%s”. Now add its first coupon template.", out.Name))
	redirect(c, fmt.Sprintf("/admin/templates/new?campaign=%d", out.ID))
}
