package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// deleteTemplate deletes a template that never issued a coupon and goes to
// the console's list; a refusal (in_use: it issued one meanwhile, or a claim
// is under way) goes back to its page saying why (docs/flows.md#delete).
func (p *Pages) deleteTemplate(c *gin.Context) {
	id, ok := p.pathID(c, "template")
	if !ok {
		return
	}
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			ctx := c.Request.Context()
			t, err := p.core.GetTemplate(ctx, id)
			if err != nil {
				return outcome{}, err
			}
			return deleteOutcome(p.admin.DeleteTemplate(ctx, web.Principal(c).Name, id),
				fmt.Sprintf("Deleted the template “%s”: it never issued a coupon.", t.Name), fmt.Sprintf("/admin/templates/%d", id))
		},
		refused: notFoundOnly,
		show:    func(int) { p.notFound(c, "template") },
	})
}

// deleteCampaign deletes a campaign without templates and goes to the
// console's list; a refusal goes back to its page saying why.
func (p *Pages) deleteCampaign(c *gin.Context) {
	id, ok := p.pathID(c, "campaign")
	if !ok {
		return
	}
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			ctx := c.Request.Context()
			camp, err := p.core.GetCampaign(ctx, id)
			if err != nil {
				return outcome{}, err
			}
			return deleteOutcome(p.admin.DeleteCampaign(ctx, web.Principal(c).Name, id),
				fmt.Sprintf("Deleted the campaign “%s”.", camp.Name), fmt.Sprintf("/admin/campaigns/%d", id))
		},
		refused: notFoundOnly,
		show:    func(int) { p.notFound(c, "campaign") },
	})
}

// deleteOutcome is the outcome of a delete: to the list with msg, or back
// to the page with the refusal's own words; other errors pass on.
func deleteOutcome(err error, msg, back string) (outcome, error) {
	var e *models.Error
	if asError(err, &e) && e.Code == models.CodeInUse {
		return outcome{failed: "Not deleted: " + sentence(e.Message), to: back}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	return done(msg, "/admin"), nil
}
