package pages

import (
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// redeemAtTill uses the coupon on the order, as previewed. On success the
// checkout shows the discount and the amount to pay (after a redirect); on
// refusal the form comes back with the reason beside the field.
func (p *Pages) redeemAtTill(c *gin.Context) { p.redeemCode(c, strings.TrimSpace(c.PostForm("code"))) }

// redeemCode redeems the coupon typed on the order and total of the form.
func (p *Pages) redeemCode(c *gin.Context, typed string) {
	f, code, amount := readRedeemFormCode(c, typed)
	words := redeemRefusals
	// A shared code is redeemed for an anonymous shopper: no user id, the
	// claim is nobody's (docs/shared-codes.md).
	if sf, t, sAmount, handled := p.tillShared(c, typed); handled && t == nil {
		return // a fault, answered
	} else if handled {
		f, code, amount, words = sf, t.SharedCode, sAmount, sharedRefusals
	}
	page := &posPage{Redeem: f}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			ctx := c.Request.Context()
			res, err := p.checkout.Redeem(ctx, checkout.RedeemRequest{
				CouponCode: code, OrderID: f.OrderID, OrderAmountCents: amount, Cashier: web.Principal(c).Name, Audited: true,
			})
			if err != nil {
				return outcome{}, err
			}
			msg := "Redeemed on order " + f.OrderID + ": " + p.money.format(res.DiscountCents) + " off, the customer pays " +
				p.money.format(res.PayableCents) + "."
			if res.Duplicate {
				msg = "Already redeemed on order " + f.OrderID + " (nothing changed): " + p.money.format(res.DiscountCents) +
					" off, the customer pays " + p.money.format(res.PayableCents) + "."
			}
			// The sale keeps its number (and total) until "Next customer".
			return done(msg, "/pos?"+saleQuery(f).Encode()), nil
		},
		refused: func(_ noInput, err error) bool {
			if words[models.CodeSoldOut].msg != "" {
				return f.Errors.fromRefusal(err, words, redeemFields)
			}
			return p.redeemRefusal(c, err, code, f.OrderID, f.Errors)
		},
		show: func(status int) { p.renderPOS(c, status, page) },
	})
}

// redeemRefusals say the refusals of a redemption beside their field, when
// the coupon's own figures have nothing better to say.
var redeemRefusals = map[models.Code]refusal{
	models.CodeNotFound: {"code", msgNoCoupon},
	models.CodeBusy:     {"", msgBusy},
}

// redeemRefusal puts the reason a redemption was refused beside its field, in
// a cashier's words. It reports false for faults, which get the error page.
func (p *Pages) redeemRefusal(c *gin.Context, err error, code, orderID string, errs formErrors) bool {
	switch models.ErrorCode(err) {
	case models.CodeAlreadyUsed, models.CodeRevoked, models.CodeNotValidNow, models.CodeBelowMinimum, models.CodeHeld:
		// Say it with the coupon's own figures (order, time, minimum, hold).
		if d, derr := p.core.GetCoupon(c.Request.Context(), code); derr == nil {
			if field, msg := p.refusedWords(models.ErrorCode(err), d, orderID); msg != "" {
				errs.add(field, msg)
				return true
			}
		}
	}
	return errs.fromRefusal(err, redeemRefusals, redeemFields)
}
