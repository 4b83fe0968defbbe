package pages

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// deleteWebhook removes an endpoint with its deliveries and their log, and
// goes back to the list.
func (p *Pages) deleteWebhook(c *gin.Context) {
	id, ok := p.pathID(c, "webhook")
	if !ok {
		return
	}
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			err := p.events.DeleteWebhook(c.Request.Context(), web.Principal(c).Name, id)
			return done(fmt.Sprintf("Deleted the webhook %d: nothing more is sent to it.", id), "/admin/webhooks"), err
		},
		refused: notFoundOnly,
		show:    func(int) { p.notFound(c, "webhook") },
	})
}
