package pages

import (
	"fmt"

	"couponsvc/handlers/web"
	"couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// saveCampaign renames a campaign; on a mistake the form comes back as typed
// with the error beside the field.
func (p *Pages) saveCampaign(c *gin.Context) {
	id, ok := p.pathID(c, "campaign")
	if !ok {
		return
	}
	f := campaignForm{Name: c.PostForm("name"), Errors: formErrors{}}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			out, err := p.admin.UpdateCampaign(c.Request.Context(), web.Principal(c).Name, id, admin.CampaignPatch{Name: &f.Name})
			if err != nil {
				return outcome{}, err
			}
			return done(fmt.Sprintf("Saved the campaign “%s”.", out.Name), fmt.Sprintf("/admin/campaigns/%d", id)), nil
		},
		refused: func(_ noInput, err error) bool { return campaignErrors(f.Errors, err) },
		show:    func(status int) { p.renderCampaign(c, status, &f) },
	})
}
