package pages

import (
	"github.com/couponsvc/couponsvc/handlers/web"

	"github.com/gin-gonic/gin"
)

// releaseHold ends an online order's hold without a sale: its coupons go
// back to their holders' wallets.
func (p *Pages) releaseHold(c *gin.Context) {
	p.postHold(c, func(page *holdPage) (outcome, error) {
		res, err := p.checkout.Release(c.Request.Context(), web.Principal(c).Name, page.OrderID)
		if err != nil {
			return outcome{}, err
		}
		msg := "Released order " + page.OrderID + ": its coupons are back in the customers' wallets."
		if res.Duplicate {
			msg = "Order " + page.OrderID + " was already released or its hold ran out (nothing changed)."
		}
		return done(msg, holdPath(page.OrderID)), nil
	})
}
