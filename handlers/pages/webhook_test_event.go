package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// sendTestEvent sends a webhook.test event to one endpoint (docs/events.md)
// and goes back to its delivery log, where the try shows with the answer.
func (p *Pages) sendTestEvent(c *gin.Context) {
	id, ok := p.pathID(c, "webhook")
	if !ok {
		return
	}
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			d, err := p.events.SendTestEvent(c.Request.Context(), web.Principal(c).Name, id)
			if err != nil {
				return outcome{}, err
			}
			return done(fmt.Sprintf("Sent a test event (number %d): its try shows below within seconds, with the answer.", d.EventID),
				fmt.Sprintf("/admin/webhooks/%d", id)), nil
		},
		refused: notFoundOnly,
		show:    func(int) { p.notFound(c, "webhook") },
	})
}
