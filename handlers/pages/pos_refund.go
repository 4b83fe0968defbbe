package pages

import (
	"net/http"
	"strings"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// refundCoupon undoes the use of a coupon by a cancelled order. The coupon
// goes back to its holder, or back to the pool under the recycle policy.
func (p *Pages) refundCoupon(c *gin.Context) {
	f := refundForm{Code: strings.TrimSpace(c.PostForm("code")), OrderID: strings.TrimSpace(c.PostForm("order_id")),
		Errors: formErrors{}}
	var code string
	if f.Code == "" {
		f.Errors.add("code", "Enter or scan the coupon code.")
	} else if parsed, err := models.ParseCouponCode("code", f.Code); err != nil {
		f.Errors.fromError(err, refundFields)
	} else {
		code, f.Code = parsed, codeGroups(parsed)
	}
	checkOrderID(f.Errors, "order_id", f.OrderID)
	page := &posPage{Refund: f}
	if len(f.Errors) > 0 {
		p.renderPOS(c, http.StatusBadRequest, page)
		return
	}
	res, err := p.svc.Refund(c.Request.Context(), services.RefundRequest{CouponCode: code, OrderID: f.OrderID,
		Cashier: web.Principal(c).Name})
	if err != nil {
		status, _ := web.StatusOf(err)
		switch models.ErrorCode(err) {
		case models.CodeNotFound:
			f.Errors.add("code", "No coupon has this code. Check it and try again.")
		case models.CodeNotRedeemed:
			var e *models.Error
			asError(err, &e)
			f.Errors.add("order_id", sentence(e.Message))
		case models.CodeBusy:
			f.Errors.add("", "This coupon is being used at another checkout right now. Try again in a moment.")
		default:
			if !f.Errors.fromError(err, refundFields) {
				p.fail(c, err)
				return
			}
		}
		p.renderPOS(c, status, page)
		return
	}
	where := "the coupon is back in the customer's wallet."
	if res.StockReturned {
		where = "the coupon went back to the pool, so someone else can claim it."
	}
	msg := "Refunded order " + f.OrderID + ": " + where
	if res.Duplicate {
		msg = "Order " + f.OrderID + " was already refunded (nothing changed): " + where
	}
	p.flash(c, true, msg)
	redirect(c, "/pos")
}
