package pages

import (
	"net/http"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// previewRedemption checks a coupon against an order and shows the discount
// and the amount to pay, with a button to confirm; or says, beside the field,
// why the coupon cannot be used. A coupon already redeemed on this very order
// is shown as such, with that redemption's amounts and no Redeem button.
// Nothing changes until the cashier confirms.
func (p *Pages) previewRedemption(c *gin.Context) {
	if codes := splitCodes(c.PostForm("code")); len(codes) > 1 {
		p.previewCart(c, codes)
		return
	}
	page, code, amount, ok := p.redeemForm(c)
	if !ok {
		return
	}
	f := page.Redeem
	chk, err := p.checkout.CheckRedemption(c.Request.Context(), code, f.OrderID, amount)
	if models.IsCode(err, models.CodeNotFound) {
		page.Redeem.Errors.add("code", msgNoCoupon)
		p.renderPOS(c, http.StatusNotFound, page)
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	if chk.Redeemed == nil {
		if field, msg := p.redeemProblem(&chk.CouponDetail, f.OrderID, amount); msg != "" {
			page.Redeem.Errors.add(field, msg)
			p.renderPOS(c, http.StatusConflict, page)
			return
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
}
