package pages

import (
	"net/http"

	"couponsvc/models"

	"github.com/gin-gonic/gin"
)

// previewRedemption checks a coupon against an order and shows the discount
// and the amount to pay, with a button to confirm; or says, beside the field,
// why the coupon cannot be used. Nothing changes until the cashier confirms.
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
	d, err := p.svc.GetCoupon(c.Request.Context(), code)
	if models.IsCode(err, models.CodeNotFound) {
		page.Redeem.Errors.add("code", msgNoCoupon)
		p.renderPOS(c, http.StatusNotFound, page)
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	if field, msg := p.redeemProblem(d, f.OrderID, amount); msg != "" {
		page.Redeem.Errors.add(field, msg)
		p.renderPOS(c, http.StatusConflict, page)
		return
	}
	discount := d.Template.Discount(amount)
	page.Redeem.Code = code
	page.Redeem.Preview = &redeemPreview{Code: code, Template: d.Template, Coupon: d.Coupon,
		AmountCents: amount, DiscountCents: discount, PayableCents: amount - discount}
	p.renderPOS(c, http.StatusOK, page)
}
