package pages

import (
	"fmt"
	"strconv"

	"couponsvc/handlers/web"
	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// resendDelivery sends a delivery of an endpoint again (the same event, the
// same id) and goes back to the endpoint's log.
func (p *Pages) resendDelivery(c *gin.Context) {
	id, ok := p.pathID(c, "webhook")
	if !ok {
		return
	}
	did, err := strconv.ParseInt(c.Param("delivery"), 10, 64)
	if err != nil || did <= 0 {
		p.notFound(c, "delivery")
		return
	}
	d, err := p.events.ResendDelivery(c.Request.Context(), web.Principal(c).Name, id, did)
	if models.ErrorCode(err) == models.CodeNotFound {
		p.notFound(c, "delivery")
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	p.flash(c, true, fmt.Sprintf("Event %d will be sent again within a second.", d.EventID))
	redirect(c, fmt.Sprintf("/admin/webhooks/%d", id))
}
