package pages

import (
	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// refundRefusals say the refusals of a refund beside their field.
var refundRefusals = map[models.Code]refusal{
	models.CodeNotFound:    {"code", msgNoCoupon},
	models.CodeNotRedeemed: {"order_id", ""},
	models.CodeBusy:        {"", msgBusy},
}

// refundAtTill undoes the use of a coupon by a cancelled order. The coupon
// goes back to its holder, or back to the pool under the recycle policy.
func (p *Pages) refundAtTill(c *gin.Context) {
	f := refundForm{Errors: formErrors{}}
	code, shown, orderID := readCodeOrder(c, f.Errors, refundFields)
	f.Code, f.OrderID = shown, orderID
	page := &posPage{Refund: f}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			res, err := p.checkout.Refund(c.Request.Context(), checkout.RefundRequest{CouponCode: code, OrderID: f.OrderID,
				Cashier: web.Principal(c).Name})
			if err != nil {
				return outcome{}, err
			}
			where := "the coupon is back in the customer's wallet."
			if res.StockReturned {
				where = "the coupon went back to the pool, so someone else can claim it."
			}
			msg := "Refunded order " + f.OrderID + ": " + where
			if res.Duplicate {
				msg = "Order " + f.OrderID + " was already refunded (nothing changed): " + where
			}
			return done(msg, "/pos"), nil
		},
		refused: func(_ noInput, err error) bool { return f.Errors.fromRefusal(err, refundRefusals, refundFields) },
		show:    func(status int) { p.renderPOS(c, status, page) },
	})
}
