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

// campaignErrors puts a service's error beside each field of a campaign
// form, in the form's words; a field with a message already keeps it. It
// reports whether err was one the form can show.
func campaignErrors(errs formErrors, err error) bool {
	fresh := formErrors{}
	if !fresh.fromError(err, campaignFields) {
		return false
	}
	if _, bad := fresh["budget"]; bad {
		fresh["budget"] = "Enter the budget, or leave it empty for no budget."
	}
	for field, msg := range fresh {
		errs.add(field, msg)
	}
	return true
}

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
	camp := models.Campaign{Name: f.Name, BudgetCents: budget}
	if len(f.Errors) > 0 {
		// Name every mistake in this one answer, not only the budget's.
		campaignErrors(f.Errors, camp.Validate())
		p.render(c, http.StatusBadRequest, "campaign_new", page)
		return
	}
	out, err := p.admin.CreateCampaign(c.Request.Context(), web.Principal(c).Name, camp)
	if err != nil {
		if !campaignErrors(f.Errors, err) {
			p.fail(c, err)
			return
		}
		status, _ := web.StatusOf(err)
		p.render(c, status, "campaign_new", page)
		return
	}
	p.flash(c, true, fmt.Sprintf("Created the campaign “%s”. Now add its first coupon template.", out.Name))
	redirect(c, fmt.Sprintf("/admin/templates/new?campaign=%d", out.ID))
}
