package pages

import (
	"fmt"

	"couponsvc/handlers/web"
	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// deleteWebhook removes an endpoint with its deliveries and their log, and
// goes back to the list.
func (p *Pages) deleteWebhook(c *gin.Context) {
	id, ok := p.pathID(c, "webhook")
	if !ok {
		return
	}
	err := p.events.DeleteWebhook(c.Request.Context(), web.Principal(c).Name, id)
	if models.ErrorCode(err) == models.CodeNotFound {
		p.notFound(c, "webhook")
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	p.flash(c, true, fmt.Sprintf("Deleted the webhook %d: nothing more is sent to it.", id))
	redirect(c, "/admin/webhooks")
}
