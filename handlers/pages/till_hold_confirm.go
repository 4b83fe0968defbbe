package pages

import (
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// confirmHold confirms an online order's hold once its payment went
// through: the held coupons are redeemed on the order.
func (p *Pages) confirmHold(c *gin.Context) {
	p.postHold(c, func(page *holdPage) (outcome, error) {
		res, err := p.checkout.Confirm(c.Request.Context(), checkout.ConfirmRequest{OrderID: page.OrderID,
			Cashier: web.Principal(c).Name})
		if err != nil {
			return outcome{}, err
		}
		msg := "Confirmed order " + page.OrderID + ": " + couponCount(len(res.Coupons)) + " redeemed, " +
			p.money.format(res.DiscountCents) + " off, " + p.money.format(res.PayableCents) + " to pay."
		switch {
		case res.Duplicate:
			msg = "Order " + page.OrderID + " was already confirmed (nothing changed): " +
				p.money.format(res.DiscountCents) + " off, " + p.money.format(res.PayableCents) + " to pay."
		case res.Late:
			msg = "Confirmed order " + page.OrderID + " after its hold ran out: the coupons were still free, " +
				couponCount(len(res.Coupons)) + " redeemed, " + p.money.format(res.DiscountCents) + " off."
		}
		return done(msg, holdPath(page.OrderID)), nil
	})
}
