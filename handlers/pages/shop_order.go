package pages

import (
	"net/http"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// orderHoldSeconds is how long the hold of a shopper's order lasts between
// the hold and its confirm: the demo shop pays at once, so a hold outlives
// its confirm only when the confirm failed, and then not for long.
const orderHoldSeconds = 300

// placeOrder applies the codes to the shopper's order: a hold of the cart
// with the codes for this shopper (a shared code claims its coupon inside
// it), then its confirm, as a shop's payment would (docs/checkout.md). The
// order's id comes from the form, made when the cart was shown, so that the
// order sent again (a double click, a reload of the answer) repeats it: the
// hold and the confirm answer their duplicate, and the page says the order
// was already placed, nothing used twice. A refusal is said beside the code
// field and changes nothing; a fault answers the page saying to try again.
func (p *Pages) placeOrder(c *gin.Context) {
	page := &checkoutPage{}
	p.postCheckout(c, page, func(in checkoutPost) error {
		ctx, f, pr := c.Request.Context(), *in.f, in.pr
		page.Form, page.Placed = f, true
		var done *checkout.CheckoutResult
		// No code and no automatic offer joining: nothing for the
		// coupon service to record, the order is paid at its price
		// (docs/pages.md, "Checkout").
		priced, err := p.shopCheckout(ctx, f, in.lines, in.codes, func() (*checkout.CheckoutResult, error) {
			held, err := p.checkout.Hold(ctx, checkout.CheckoutRequest{OrderID: f.OrderID, CouponCodes: in.codes,
				UserID: pr.UserID, Actor: pr.Name, Cart: in.cart, TTLSeconds: orderHoldSeconds, OwnOnly: true})
			if err != nil {
				return nil, err
			}
			done, err = p.checkout.Confirm(ctx, checkout.ConfirmRequest{OrderID: f.OrderID, Cart: in.cart, Cashier: pr.Name})
			if err != nil {
				if status, _ := web.StatusOf(err); status < http.StatusInternalServerError && !held.Duplicate {
					// A confirm refused gives the coupons back at once
					// rather than at the hold's expiry.
					if _, rerr := p.checkout.Release(ctx, pr.Name, f.OrderID); rerr != nil {
						return nil, rerr
					}
				}
				return nil, err
			}
			return done, nil
		})
		if err != nil {
			return err
		}
		page.Priced = priced
		if done == nil {
			p.renderCheckout(c, http.StatusOK, page)
			return nil
		}
		page.AlreadyPlaced = done.Duplicate
		page.Priced.OK = true
		// The coupons as they were used: a shared code's is its new
		// coupon, named by the code typed.
		for i := range page.Priced.Codes {
			page.Priced.Codes[i].Problem = ""
		}
		p.renderCheckout(c, http.StatusOK, page)
		return nil
	})
}
