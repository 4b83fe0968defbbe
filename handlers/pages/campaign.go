package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// campaignPage is the data of campaign.html: a campaign, its edit form, its
// pause button and its templates.
type campaignPage struct {
	basePage
	Campaign  models.Campaign
	Templates []campaignTemplate
	Form      campaignForm
}

type campaignTemplate struct {
	core.TemplateView
	State string
}

// showCampaign shows a campaign with its edit form.
func (p *Pages) showCampaign(c *gin.Context) {
	p.renderCampaign(c, http.StatusOK, nil)
}

// renderCampaign shows a campaign's page; form, when given, is the edit form
// sent back with its errors.
func (p *Pages) renderCampaign(c *gin.Context, status int, form *campaignForm) {
	id, ok := p.pathID(c, "campaign")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	camp, err := p.core.GetCampaign(ctx, id)
	if err != nil {
		p.fail(c, err)
		return
	}
	views, err := p.admin.ListCampaignTemplates(ctx, id)
	if err != nil {
		p.fail(c, err)
		return
	}
	page := &campaignPage{basePage: basePage{Title: camp.Name, Nav: "admin"}, Campaign: *camp,
		Form: campaignForm{Name: camp.Name, Budget: p.campaignMoney(camp).input(camp.BudgetCents), Errors: formErrors{}}}
	if form != nil {
		page.Form = *form
	}
	now := p.now()
	for _, v := range views {
		page.Templates = append(page.Templates, campaignTemplate{TemplateView: v, State: templateState(v, camp, now)})
	}
	p.render(c, status, "campaign", page)
}

// campaignMoney is the money format of a campaign's amounts: its currency's,
// or the deployment's when it names none.
func (p *Pages) campaignMoney(camp *models.Campaign) moneyFormat {
	if camp.Currency == "" {
		return p.money
	}
	return newMoneyFormat(camp.Currency)
}
