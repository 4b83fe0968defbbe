package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// saveCampaign renames a campaign and changes its budget (a post without the
// budget field leaves it as it is); on a mistake the form comes back as typed
// with the error beside the field.
func (p *Pages) saveCampaign(c *gin.Context) {
	id, ok := p.pathID(c, "campaign")
	if !ok {
		return
	}
	camp, err := p.core.GetCampaign(c.Request.Context(), id)
	if err != nil {
		p.fail(c, err)
		return
	}
	budget, withBudget := c.GetPostForm("budget")
	f := campaignForm{Name: c.PostForm("name"), Budget: budget, Errors: formErrors{}}
	handleForm(p, c, formPost[admin.CampaignPatch]{errs: f.Errors,
		read: func() admin.CampaignPatch {
			patch := admin.CampaignPatch{Name: &f.Name}
			if withBudget {
				cents := formMoneyDigits(f.Errors, "budget", f.Budget, false, p.campaignMoney(camp).digits)
				patch.BudgetCents = &cents
			}
			return patch
		},
		act: func(patch admin.CampaignPatch) (outcome, error) {
			out, err := p.admin.UpdateCampaign(c.Request.Context(), web.Principal(c).Name, id, patch)
			if err != nil {
				return outcome{}, err
			}
			return done(fmt.Sprintf("Saved the campaign “%s”.", out.Name), fmt.Sprintf("/admin/campaigns/%d", id)), nil
		},
		refused: func(_ admin.CampaignPatch, err error) bool { return campaignErrors(f.Errors, err) },
		show:    func(status int) { p.renderCampaign(c, status, &f) },
	})
}
