package pages

import (
	"fmt"
	"net/http"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// setCampaignStatus pauses or resumes a campaign, then goes back to the page
// the button was on.
func (p *Pages) setCampaignStatus(c *gin.Context) {
	id, ok := p.pathID(c, "campaign")
	if !ok {
		return
	}
	status := c.PostForm("status")
	if status != models.CampaignActive && status != models.CampaignPaused {
		p.renderError(c, http.StatusBadRequest, "That did not work", "Choose to pause or to resume the campaign.")
		return
	}
	back := firstNonEmpty(safeNext(c.PostForm("return")), fmt.Sprintf("/admin/campaigns/%d", id))
	out, err := p.admin.UpdateCampaign(c.Request.Context(), web.Principal(c).Name, id, admin.CampaignPatch{Status: &status})
	if err != nil {
		p.fail(c, err)
		return
	}
	msg := fmt.Sprintf("Paused the campaign “%s”: none of its coupons can be claimed until it is resumed.", out.Name)
	if status == models.CampaignActive {
		msg = fmt.Sprintf("Resumed the campaign “%s”: its templates that are not paused themselves take claims again.", out.Name)
	}
	p.flash(c, true, msg)
	redirect(c, back)
}
