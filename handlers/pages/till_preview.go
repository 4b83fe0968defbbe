package pages

import (
	"net/http"
	"strings"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// previewRedemption checks a coupon against an order and shows the discount
// and the amount to pay, with a button to confirm; or says, beside the field,
// why the coupon cannot be used. A coupon already redeemed on this very order
// is shown as such, with that redemption's amounts and no Redeem button.
// Nothing changes until the cashier confirms.
func (p *Pages) previewRedemption(c *gin.Context) {
	if codes := splitCodes(c.PostForm("code")); len(codes) > 1 || strings.TrimSpace(c.PostForm("items")) != "" {
		p.previewCart(c, codes)
		return
	}
	f, code, amount := readRedeemForm(c)
	page := &posPage{Redeem: f}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		// A preview changes nothing: its answer is the page, with the
		// discount to confirm or why the coupon cannot be used.
		act: func(noInput) (outcome, error) {
			chk, err := p.checkout.CheckRedemption(c.Request.Context(), code, f.OrderID, amount)
			if err != nil {
				return outcome{}, err
			}
			if chk.Redeemed == nil {
				if field, msg := p.redeemProblem(&chk.CouponDetail, f.OrderID, amount); msg != "" {
					page.Redeem.Errors.add(field, msg)
					p.renderPOS(c, http.StatusConflict, page)
					return outcome{}, nil
				}
			}
			page.Redeem.Code = code
			page.Redeem.Preview = &redeemPreview{Code: code, Template: chk.Template, Coupon: chk.Coupon,
				AmountCents: amount, DiscountCents: chk.DiscountCents, PayableCents: chk.PayableCents,
				NameIsValue: p.restatesValue(chk.Template)}
			if chk.UncappedCents > chk.DiscountCents {
				page.Redeem.Preview.UncappedCents = chk.UncappedCents
			}
			if r := chk.Redeemed; r != nil {
				page.Redeem.Preview.Redeemed = true
				page.Redeem.Preview.AmountCents, page.Redeem.Preview.DiscountCents = r.OrderAmountCents, r.DiscountCents
				page.Redeem.Preview.PayableCents = r.OrderAmountCents - r.DiscountCents
				page.Redeem.Preview.UncappedCents = 0
			}
			p.renderPOS(c, http.StatusOK, page)
			return outcome{}, nil
		},
		refused: func(_ noInput, err error) bool {
			if !models.IsCode(err, models.CodeNotFound) {
				return false
			}
			page.Redeem.Errors.add("code", msgNoCoupon)
			return true
		},
		status: func(error) int { return http.StatusNotFound },
		show:   func(status int) { p.renderPOS(c, status, page) },
	})
}
