package pages

import (
	"context"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/gin-gonic/gin"
)

// setCampaignStatus pauses or resumes a campaign, then goes back to the page
// the button was on.
func (p *Pages) setCampaignStatus(c *gin.Context) {
	p.setStatus(c, statusButton{what: "campaign",
		statuses: []string{models.CampaignActive, models.CampaignPaused},
		choose:   "Choose to pause or to resume the campaign.",
		back:     "/admin/campaigns/%d",
		set: func(ctx context.Context, actor string, id int64, status string) (string, error) {
			out, err := p.admin.UpdateCampaign(ctx, actor, id, admin.CampaignPatch{Status: &status})
			if err != nil {
				return "", err
			}
			return out.Name, nil
		},
		done: map[string]string{
			models.CampaignPaused: "Paused the campaign “%s”: none of its coupons can be claimed until it is resumed.",
			models.CampaignActive: "Resumed the campaign “%s”: its templates that are not paused themselves take claims again.",
		},
	})
}
