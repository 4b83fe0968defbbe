package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// returnRefusals say the refusals of a partial return beside their field.
var returnRefusals = map[models.Code]refusal{
	models.CodeNotRedeemed:        {"return_order_id", "No coupon was redeemed on this order."},
	models.CodeReturnExceedsOrder: {"amount", "This is more than is left of the order to return."},
	models.CodeBusy:               {"", msgBusy},
}

// readReturnForm reads and checks the partial return form.
func readReturnForm(c *gin.Context) returnForm {
	return returnForm{OrderID: strings.TrimSpace(c.PostForm("order_id")), ReturnID: strings.TrimSpace(c.PostForm("return_id")),
		Amount: strings.TrimSpace(c.PostForm("amount")), Errors: formErrors{}}
}

// checkReturn checks the return form's fields and reads its amount.
func checkReturn(f returnForm) int64 {
	checkOrderID(f.Errors, "return_order_id", f.OrderID)
	if f.ReturnID == "" {
		f.Errors.add("return_id", "Enter the return number.")
	}
	amount := formMoney(f.Errors, "amount", f.Amount, true)
	if _, bad := f.Errors["amount"]; !bad && (amount <= 0 || amount > models.MaxMoneyCents) {
		f.Errors.add("amount", "The returned amount must be more than zero.")
	}
	return amount
}

// previewReturn shows what a partial return would do (what the customer
// keeps, the discount kept and the discount taken back, or that it returns
// the whole order) with a button to record it; nothing changes until the
// cashier confirms (docs/pages.md).
func (p *Pages) previewReturn(c *gin.Context) {
	f := readReturnForm(c)
	page := &holdPage{Return: f, Errors: formErrors{}}
	handleForm(p, c, formPost[int64]{errs: f.Errors,
		read: func() int64 { return checkReturn(f) },
		act: func(amount int64) (outcome, error) {
			res, err := p.checkout.PreviewReturnPart(c.Request.Context(), f.OrderID, amount)
			if err != nil {
				return outcome{}, err
			}
			page.ReturnPreview = res
			p.renderHold(c, http.StatusOK, page)
			return outcome{}, nil
		},
		refused: func(_ int64, err error) bool { return f.Errors.fromRefusal(err, returnRefusals, returnFields) },
		show:    func(status int) { p.renderHold(c, status, page) },
	})
}

// returnPart records the return of part of an order: its coupons are priced
// again on what the customer keeps, and the return that leaves nothing
// refunds them.
func (p *Pages) returnPart(c *gin.Context) {
	f := readReturnForm(c)
	page := &holdPage{Return: f, Errors: formErrors{}}
	handleForm(p, c, formPost[int64]{errs: f.Errors,
		read: func() int64 { return checkReturn(f) },
		act: func(amount int64) (outcome, error) {
			res, err := p.checkout.ReturnPart(c.Request.Context(), web.Principal(c).Name, f.OrderID, f.ReturnID, amount)
			if err != nil {
				return outcome{}, err
			}
			msg := "Return " + f.ReturnID + " of order " + f.OrderID + " recorded: the customer keeps " +
				p.money.format(res.KeptAmountCents) + " with " + p.money.format(res.DiscountKeptCents) + " off; " +
				p.money.format(res.ClawbackCents) + " of discount taken back."
			if res.FullRefund {
				msg = "Return " + f.ReturnID + " of order " + f.OrderID + " recorded: the whole order is returned, so its coupons were refunded."
			}
			if res.Duplicate {
				msg = "Return " + f.ReturnID + " of order " + f.OrderID + " was already recorded (nothing changed): the customer keeps " +
					p.money.format(res.KeptAmountCents) + " with " + p.money.format(res.DiscountKeptCents) + " off."
			}
			return done(msg, "/pos/hold"), nil
		},
		refused: func(_ int64, err error) bool { return f.Errors.fromRefusal(err, returnRefusals, returnFields) },
		show:    func(status int) { p.renderHold(c, status, page) },
	})
}
