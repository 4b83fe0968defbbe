package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// sharedRefusals say, in a cashier's words, why a shared code cannot be
// used on the order now; the others are said as the service says them.
var sharedRefusals = map[models.Code]refusal{
	models.CodeSoldOut:         {"code", "This shared code is sold out: no coupon of it is left."},
	models.CodeBudgetExhausted: {"code", "The campaign behind this shared code has spent its budget: no coupon of it is left."},
	models.CodeNotClaimable:    {"code", "This shared code gives no coupons at the moment."},
	models.CodeNotCombinable:   {"code", "This order already has a coupon this shared code cannot be added to."},
	models.CodeHeld:            {"code", "This order holds a coupon of this shared code online: confirm or release that hold."},
	models.CodeNotFound:        {"code", msgNoCoupon},
	models.CodeBusy:            {"", msgBusy},
}

// tillShared reads a code typed at the till as a shared code when a live
// template has it (docs/shared-codes.md): then the form with the order
// and total read, the template, and true. The shopper is anonymous: the
// till asks for no user id, and the claim is nobody's. It answers false
// for any other code, which is read as a coupon code; a fault gets the
// error page and true.
func (p *Pages) tillShared(c *gin.Context, typed string) (f redeemForm, t *models.Template, amount int64, handled bool) {
	if typed == "" || !models.IsSharedCode(typed) || models.LooksLikeCouponCode(typed) {
		return f, nil, 0, false
	}
	t, err := p.checkout.LiveSharedCode(c.Request.Context(), typed)
	if err != nil {
		p.fail(c, err)
		return f, nil, 0, true
	}
	if t == nil {
		return f, nil, 0, false
	}
	f = redeemForm{Code: t.SharedCode, OrderID: strings.TrimSpace(c.PostForm("order_id")),
		Amount: strings.TrimSpace(c.PostForm("amount")), Errors: formErrors{}}
	checkOrderID(f.Errors, "order_id", f.OrderID)
	amount = readOrderAmount(f.Errors, f.Amount)
	return f, t, amount, true
}

// previewShared is the preview of a shared code (see previewRedemption):
// what an anonymous shopper's coupon of it would take off the order, or
// why it cannot be used now. Nothing is claimed until the cashier redeems.
func (p *Pages) previewShared(c *gin.Context, typed string) bool {
	f, t, amount, handled := p.tillShared(c, typed)
	if !handled || t == nil {
		return handled
	}
	page := &posPage{Redeem: f}
	if len(f.Errors) > 0 {
		p.renderPOS(c, http.StatusBadRequest, page)
		return true
	}
	chk, err := p.checkout.CheckShared(c.Request.Context(), typed, f.OrderID, amount)
	switch {
	case err != nil && !page.Redeem.Errors.fromRefusal(err, sharedRefusals, redeemFields):
		p.fail(c, err)
		return true
	case err != nil:
		p.renderPOS(c, http.StatusConflict, page)
		return true
	case chk == nil:
		return false // no longer a live shared code: read as a coupon code
	case chk.Refusal != nil:
		page.Redeem.Errors.fromRefusal(chk.Refusal, sharedRefusals, redeemFields)
		if models.IsCode(chk.Refusal, models.CodeBelowMinimum) {
			page.Redeem.Errors = formErrors{}
			page.Redeem.Errors.add("amount", "Below the minimum: this coupon needs an order of at least "+p.money.format(t.MinOrderCents)+".")
		}
		p.renderPOS(c, http.StatusConflict, page)
		return true
	}
	page.Redeem.Preview = &redeemPreview{Code: chk.Code, Template: chk.Template, AmountCents: amount,
		DiscountCents: chk.DiscountCents, PayableCents: chk.PayableCents, NameIsValue: p.restatesValue(chk.Template),
		Shared: true, Redeemed: chk.Redeemed != nil}
	if r := chk.Redeemed; r != nil {
		page.Redeem.Preview.AmountCents = r.OrderAmountCents
	}
	p.renderPOS(c, http.StatusOK, page)
	return true
}
