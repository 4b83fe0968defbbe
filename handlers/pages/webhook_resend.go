package pages

import (
	"fmt"
	"strconv"

	"github.com/couponsvc/couponsvc/handlers/web"

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
	handleForm(p, c, formPost[noInput]{read: readNothing,
		act: func(noInput) (outcome, error) {
			d, err := p.events.ResendDelivery(c.Request.Context(), web.Principal(c).Name, id, did)
			if err != nil {
				return outcome{}, err
			}
			return done(fmt.Sprintf("Event %d will be sent again within a second.", d.EventID), fmt.Sprintf("/admin/webhooks/%d", id)), nil
		},
		refused: notFoundOnly,
		show:    func(int) { p.notFound(c, "delivery") },
	})
}
