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
	out, err := p.admin.UpdateCampaign(c.Request.Context(), web.Principal(c).Name, id, admin.CampaignPatch{Name: &f.Name})
	if err != nil {
		if !campaignErrors(f.Errors, err) {
			p.fail(c, err)
			return
		}
		status, _ := web.StatusOf(err)
		p.renderCampaign(c, status, &f)
		return
	}
	p.flash(c, true, fmt.Sprintf("Saved the campaign “%s”.", out.Name))
	redirect(c, fmt.Sprintf("/admin/campaigns/%d", id))
}
