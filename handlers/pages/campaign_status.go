package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// setCampaignStatus pauses or resumes a campaign, then goes back to the page
// the button was on.
func (p *Pages) setCampaignStatus(c *gin.Context) {
	id, ok := p.pathID(c, "campaign")
	if !ok {
		return
	}
	errs := formErrors{}
	handleForm(p, c, formPost[string]{errs: errs,
		read: func() string {
			status := c.PostForm("status")
			if status != models.CampaignActive && status != models.CampaignPaused {
				errs.add("", "Choose to pause or to resume the campaign.")
			}
			return status
		},
		act: func(status string) (outcome, error) {
			back := firstNonEmpty(safeNext(c.PostForm("return")), fmt.Sprintf("/admin/campaigns/%d", id))
			out, err := p.admin.UpdateCampaign(c.Request.Context(), web.Principal(c).Name, id, admin.CampaignPatch{Status: &status})
			if err != nil {
				return outcome{}, err
			}
			msg := fmt.Sprintf("Paused the campaign “%s”: none of its coupons can be claimed until it is resumed.", out.Name)
			if status == models.CampaignActive {
				msg = fmt.Sprintf("Resumed the campaign “%s”: its templates that are not paused themselves take claims again.", out.Name)
			}
			return done(msg, back), nil
		},
		// A button, not a form to correct: the mistake gets a page of its own.
		show: func(status int) { p.renderError(c, status, "That did not work", errs[""]) },
	})
}
