package pages

import (
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// previewRedemption checks a coupon against an order and shows the discount
// and the amount to pay, with a button to confirm; or says, beside the field,
// why the coupon cannot be used. A coupon already redeemed on this very order
// is shown as such, with that redemption's amounts and no Redeem button.
// Nothing changes until the cashier confirms.
//
// The scanner's flow (docs/pages.md): the code field keeps the keyboard
// after every answer. Enter on it, empty, with a preview open redeems
// exactly the coupon, order and total previewed (kept in the form's
// preview_* fields); a total or order changed since is checked again
// first. A code scanned while a preview is open replaces the preview and
// redeems nothing. A total sent without a code is kept for the code to come.
func (p *Pages) previewRedemption(c *gin.Context) {
	typed := strings.TrimSpace(c.PostForm("code"))
	if codes := splitCodes(typed); hasSale(c, codes) {
		p.previewSale(c, codes)
		return
	}
	if typed == "" {
		previewed := strings.TrimSpace(c.PostForm("preview_code"))
		orderID, amount := strings.TrimSpace(c.PostForm("order_id")), strings.TrimSpace(c.PostForm("amount"))
		switch {
		case previewed != "" && orderID == c.PostForm("preview_order") && amount == c.PostForm("preview_amount"):
			p.redeemCode(c, previewed)
			return
		case previewed != "":
			typed = previewed
		case amount != "":
			if p.keepTotal(c, orderID, amount) {
				return
			}
		}
	}
	// A shared code is previewed for an anonymous shopper (till_shared.go).
	if p.previewShared(c, typed) {
		return
	}
	f, code, amount := readRedeemFormCode(c, typed)
	page := &posPage{Redeem: f}
	if p.couponProblemFirst(c, page, code) {
		return
	}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		// A preview changes nothing: its answer is the page, with the
		// discount to confirm or why the coupon cannot be used.
		act: func(noInput) (outcome, error) {
			chk, err := p.checkout.CheckRedemption(c.Request.Context(), code, f.OrderID, amount)
			if err != nil {
				return outcome{}, err
			}
			if chk.Redeemed == nil {
				if field, msg, err := p.tillAnswer(c, &chk.CouponDetail, code, f.OrderID, amount); err != nil {
					return outcome{}, err
				} else if msg != "" {
					page.Redeem.Errors.add(field, msg)
					page.RefundOffer = refundOffer(chk.Coupon)
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

// keepTotal answers a total sent before the code: kept, with the order
// number, for the code to come, the keyboard back on the code field. It
// reports false for a total that is no amount, which the form's own checks
// then name.
func (p *Pages) keepTotal(c *gin.Context, orderID, amount string) bool {
	errs := formErrors{}
	cents := readOrderAmount(errs, amount)
	checkOrderID(errs, "order_id", orderID)
	if len(errs) > 0 {
		return false
	}
	page := &posPage{Redeem: redeemForm{OrderID: orderID, Amount: amount},
		Notice: "Order " + orderID + ", total " + p.money.format(cents) + ": scan the coupon."}
	p.renderPOS(c, http.StatusOK, page)
	return true
}

// refundOffer is the refund of a used coupon's redemption, offered beside
// the code when a scanned coupon was already used on another order; nil for
// any other coupon.
func refundOffer(cp models.CouponView) *refundForm {
	if cp.Status != models.CouponUsed || cp.OrderID == nil {
		return nil
	}
	return &refundForm{Code: cp.Code, OrderID: *cp.OrderID}
}

// couponProblemFirst answers a code scanned without a total with what is
// wrong with the coupon itself (used, with its refund a Tab away; revoked;
// held; expired), rather than asking for a total it could not take: the
// refund of a scanned coupon needs no total (docs/pages.md). It reports
// false, changing nothing, when the total is all that is missing.
func (p *Pages) couponProblemFirst(c *gin.Context, page *posPage, code string) bool {
	errs := page.Redeem.Errors
	if _, bad := errs["amount"]; !bad || len(errs) != 1 || code == "" {
		return false
	}
	d, err := p.core.GetCoupon(c.Request.Context(), code)
	if err != nil {
		return false // the preview with a total says what is wrong
	}
	// Asked on the largest total, the service's answer is about the
	// coupon itself, never its minimum.
	field, msg, err := p.tillAnswer(c, d, code, page.Redeem.OrderID, models.MaxMoneyCents)
	if err != nil || field != "code" {
		return false
	}
	page.Redeem.Errors = formErrors{}
	page.Redeem.Errors.add("code", msg)
	page.RefundOffer = refundOffer(d.Coupon)
	p.renderPOS(c, http.StatusConflict, page)
	return true
}

// tillAnswer asks the service whether the coupon can be used on the order
// and total (checkout.PreviewSale, which changes nothing) and words its
// refusal with the coupon's figures (refusedWords); "" when it applies.
func (p *Pages) tillAnswer(c *gin.Context, d *core.CouponDetail, code, orderID string, amount int64) (field, msg string, err error) {
	res, err := p.checkout.PreviewSale(c.Request.Context(), checkout.CheckoutRequest{OrderID: orderID,
		OrderAmountCents: amount, CouponCodes: []string{code}})
	if err != nil {
		if models.IsCode(err, models.CodeInvalidRequest) {
			return "", "", nil // the redemption names the field
		}
		return "", "", err
	}
	if len(res.Coupons) != 1 || res.Coupons[0].Code == models.CodeOK {
		return "", "", nil
	}
	cc := res.Coupons[0]
	if field, msg = p.refusedWords(cc.Code, d, orderID); msg == "" {
		field, msg = "code", p.cashierRefusal(cc, &d.Template)
	}
	return field, msg, nil
}
