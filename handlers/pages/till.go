package pages

import (
	"net/http"
	"strings"

	"couponsvc/handlers/web"
	"couponsvc/models"
	"couponsvc/services"

	"github.com/gin-gonic/gin"
)

// posRecentCount is how many of the cashier's redemptions the checkout lists.
const posRecentCount = 10

// posPage is the data of pos.html.
type posPage struct {
	basePage
	Redeem redeemForm
	Refund refundForm
	Recent []posRecent
}

// redeemForm is the checkout form: as typed, its errors, and the preview of
// the discount once checked.
type redeemForm struct {
	Code, OrderID, Amount string
	Errors                formErrors
	Preview               *redeemPreview
	// Cart is the preview of several codes on one order.
	Cart *cartPreview
}

// redeemPreview is what the cashier confirms: the coupon, the discount and
// the amount to pay.
type redeemPreview struct {
	Code          string
	Template      models.Template
	Coupon        models.CouponView
	AmountCents   int64
	DiscountCents int64
	PayableCents  int64
}

type refundForm struct {
	Code, OrderID string
	Errors        formErrors
}

type posRecent struct {
	models.UseLog
	Code     string
	Template string
}

// redeemFields and refundFields map the service's field names to the forms'.
var (
	redeemFields = map[string]string{"coupon_code": "code", "code": "code", "order_id": "order_id",
		"order_amount_cents": "amount", "user_id": "code"}
	refundFields = map[string]string{"coupon_code": "code", "code": "code", "order_id": "order_id"}
)

// showPOS shows the checkout: the redeem form, the refund form and the
// cashier's last redemptions.
func (p *Pages) showPOS(c *gin.Context) {
	p.renderPOS(c, http.StatusOK, &posPage{})
}

// renderPOS fills the cashier's recent redemptions and shows the checkout.
func (p *Pages) renderPOS(c *gin.Context, status int, page *posPage) {
	ctx := c.Request.Context()
	page.basePage.Title, page.Nav = "Checkout", "pos"
	if page.Redeem.Errors == nil {
		page.Redeem.Errors = formErrors{}
	}
	if page.Refund.Errors == nil {
		page.Refund.Errors = formErrors{}
	}
	logs, err := p.svc.ListCashierRedemptions(ctx, web.Principal(c).Name, posRecentCount)
	if err != nil {
		p.fail(c, err)
		return
	}
	ids := make([]int64, len(logs))
	for i, l := range logs {
		ids[i] = l.CouponID
	}
	codes, err := p.svc.CouponCodes(ctx, ids)
	if err != nil {
		p.fail(c, err)
		return
	}
	names, err := p.templateNames(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	for _, l := range logs {
		page.Recent = append(page.Recent, posRecent{UseLog: l, Code: codes[l.CouponID], Template: names[l.TemplateID]})
	}
	p.render(c, status, "pos", page)
}

// templateNames maps template ids to names.
func (p *Pages) templateNames(c *gin.Context) (map[int64]string, error) {
	views, err := p.svc.ListTemplates(c.Request.Context(), false)
	return namesByID(views, func(v services.TemplateView) (int64, string) { return v.ID, v.Name }), err
}

// namesByID maps the ids of rows to their names.
func namesByID[T any](rows []T, idName func(T) (int64, string)) map[int64]string {
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		id, name := idName(r)
		out[id] = name
	}
	return out
}

// redeemForm reads the checkout form for a preview or a redemption; when it
// is not filled in right it shows it again with the errors (400) and reports
// false.
func (p *Pages) redeemForm(c *gin.Context) (page *posPage, code string, amount int64, ok bool) {
	f, code, amount := readRedeemForm(c)
	page = &posPage{Redeem: f}
	if len(f.Errors) > 0 {
		p.renderPOS(c, http.StatusBadRequest, page)
		return page, "", 0, false
	}
	return page, code, amount, true
}

// readRedeemForm reads and checks the checkout form; the code comes back
// normalised.
func readRedeemForm(c *gin.Context) (f redeemForm, code string, amount int64) {
	f = redeemForm{Amount: strings.TrimSpace(c.PostForm("amount")), Errors: formErrors{}}
	code, f.Code, f.OrderID = readCodeOrder(c, f.Errors, redeemFields)
	amount = readOrderAmount(f.Errors, f.Amount)
	return f, code, amount
}

// readOrderAmount reads the order total of a checkout form as cents.
func readOrderAmount(errs formErrors, value string) int64 {
	amount := formMoney(errs, "amount", value, true)
	if amount < 0 || amount > models.MaxMoneyCents {
		errs.add("amount", "Enter the order amount, such as 42.50.")
	} else if _, bad := errs["amount"]; !bad && amount == 0 {
		errs.add("amount", "The order amount must be more than zero.")
	}
	return amount
}

// redeemProblem says, in a cashier's words, why a coupon cannot be redeemed
// on this order, and beside which field; "" when it can.
func (p *Pages) redeemProblem(d *services.CouponDetail, orderID string, amount int64) (field, msg string) {
	cp, t := d.Coupon, d.Template
	switch cp.Status {
	case models.CouponUsed:
		if cp.OrderID != nil && *cp.OrderID == orderID {
			return "", ""
		}
		return "code", p.usedWords(cp)
	case models.CouponRevoked:
		return "code", "This coupon was revoked and cannot be used."
	case models.CouponExpired:
		return "code", "This coupon expired at " + p.untilTime(cp.ValidUntil) + "."
	}
	if p.now().Before(cp.ValidFrom) {
		return "code", "This coupon is not valid until " + p.dateTime(cp.ValidFrom) + "."
	}
	if amount < t.MinOrderCents {
		return "amount", "Below the minimum: this coupon needs an order of at least " + p.money.format(t.MinOrderCents) + "."
	}
	return "", ""
}

// usedWords says which order used a coupon, and when.
func (p *Pages) usedWords(cp models.CouponView) string {
	msg := "Already used"
	if cp.OrderID != nil {
		msg += " on order " + *cp.OrderID
	}
	if cp.UsedAt != nil {
		msg += " at " + p.dateTime(*cp.UsedAt)
	}
	return msg + "."
}
