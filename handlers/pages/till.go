package pages

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"

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
	// Focus is the id of the element the page's script focuses (and, for a
	// text field, selects, so that the next scan replaces it): the empty
	// code field after a preview, the first wrong field after an error, in
	// the form that was sent (see posFocus).
	Focus string
	// Notice says what the till took from a post that needs nothing more
	// than the code ("Order total $62.50: scan the coupon.").
	Notice string
	// RefundOffer is the redemption a scanned, already used coupon can be
	// refunded from, a Tab and Enter away.
	RefundOffer *refundForm
}

// redeemForm is the checkout form: as typed, its errors, and the preview of
// the discount once checked.
type redeemForm struct {
	Code, OrderID, Amount string
	// Rows are the sale's items as typed (readCartRows), Shipping its
	// shipping; a sale given by its total has none.
	Rows     []cartRow
	Shipping string
	// BadRow is the 1-based row the "items" error is about (0: none).
	BadRow  int
	Errors  formErrors
	Preview *redeemPreview
	// Sale is the preview of a sale of items or of several codes; when
	// every code applies, SaleCodes are its codes and SaleKey what it
	// priced (saleKey), which Enter on the empty code field redeems.
	Sale               *salePreview
	SaleCodes, SaleKey string
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
	// UncappedCents is a percent coupon's discount before its cap, set only
	// when the cap cut it, so that the preview can say so.
	UncappedCents int64
	// Redeemed says the coupon was already redeemed on this order: the
	// amounts are that redemption's, and there is nothing to confirm.
	Redeemed bool
	// NameIsValue is set when the template's name says the value: it is then
	// the value line, said once (see restatesValue).
	NameIsValue bool
	// Shared says Code is a shared code: the redemption claims a coupon of
	// it for an anonymous shopper (docs/shared-codes.md); Coupon is empty.
	Shared bool
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
// cashier's last redemptions. The order number and total may come in the
// address (the preview's Cancel keeps them), so that only the coupon is
// scanned again.
func (p *Pages) showPOS(c *gin.Context) {
	page := &posPage{}
	page.Redeem.OrderID = truncate(strings.TrimSpace(c.Query("order_id")), 64)
	page.Redeem.Amount = truncate(strings.TrimSpace(c.Query("amount")), 20)
	if page.Redeem.OrderID == "" {
		page.Redeem.OrderID = newTillOrderID()
	}
	saleFromQuery(c, &page.Redeem)
	p.renderPOS(c, http.StatusOK, page)
}

// saleQuery is a sale in the till's address: its number, total, shipping
// and rows, which showPOS reads back. A redemption goes back to it, so
// that the sale keeps its number and items until "Next customer".
func saleQuery(f redeemForm) url.Values {
	q := url.Values{"order_id": {f.OrderID}}
	if f.Amount != "" {
		q.Set("amount", f.Amount)
	}
	if f.Shipping != "" {
		q.Set("shipping", f.Shipping)
	}
	for _, r := range f.Rows {
		if r.SKU+r.Quantity+r.Unit+r.Category == "" {
			continue
		}
		q.Add("sku", r.SKU)
		q.Add("quantity", r.Quantity)
		q.Add("unit_price", r.Unit)
		q.Add("category", r.Category)
	}
	return q
}

// saleFromQuery reads the rows and shipping of a sale kept in the till's
// address (saleQuery).
func saleFromQuery(c *gin.Context, f *redeemForm) {
	f.Shipping = truncate(strings.TrimSpace(c.Query("shipping")), 20)
	skus, cats := c.QueryArray("sku"), c.QueryArray("category")
	qtys, units := c.QueryArray("quantity"), c.QueryArray("unit_price")
	var rows []cartRow
	for i := range min(len(skus), checkout.MaxCartLines) {
		rows = append(rows, cartRow{SKU: truncate(skus[i], 64), Category: truncate(at(cats, i), 64),
			Quantity: truncate(at(qtys, i), 8), Unit: truncate(at(units, i), 20)})
	}
	f.Rows = padRowsTo(rows, saleRows)
}

// newTillOrderID numbers a sale at the till, so that a cashier with nothing
// but a total and a coupon types no order number (docs/pages.md): "T-" and
// 40 random bits, which no other sale will draw. The cashier may type
// the shop's own number over it.
func newTillOrderID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "T-" + strings.ToUpper(hex.EncodeToString(b))
}

// truncate cuts s to at most n bytes (dropping a character cut in two): a
// value from the address shown back in a form field need not be longer than
// the field takes.
func truncate(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "")
	}
	return s
}

// Field order of the checkout's forms, for the focus after an error.
var (
	redeemFocus = []focusField{{"code", "code"}, {"amount", "amount"}, {"order_id", "order_id"}}
	refundFocus = []focusField{{"code", "refund-code"}, {"order_id", "refund-order"}}
)

// focusField is a form field: its name in formErrors and its element's id.
type focusField struct{ name, id string }

// firstWrong is the id of the first field of fields with an error; first when
// only the form as a whole has one (or none has).
func firstWrong(errs formErrors, fields []focusField) string {
	for _, f := range fields {
		if _, bad := errs[f.name]; bad {
			return f.id
		}
	}
	return fields[0].id
}

// posFocus says where the keyboard goes on the checkout: the next-customer
// link after a coupon already redeemed on this order, the first wrong field
// of the form that was sent after an error (the refund form's own, not the
// redeem form's), and else the empty code field, ready for the next scan:
// after a preview too, where Enter there redeems what is previewed and a
// scan checks another coupon instead.
func posFocus(page *posPage) string {
	switch {
	case page.Redeem.Preview != nil && page.Redeem.Preview.Redeemed:
		return "pos-next"
	case len(page.Refund.Errors) > 0:
		return firstWrong(page.Refund.Errors, refundFocus)
	}
	return firstWrong(page.Redeem.Errors, redeemFocus)
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
	if page.Focus == "" {
		page.Focus = posFocus(page)
	}
	logs, err := p.core.ListCashierRedemptions(ctx, web.Principal(c).Name, posRecentCount)
	if err != nil {
		p.fail(c, err)
		return
	}
	ids := make([]int64, len(logs))
	for i, l := range logs {
		ids[i] = l.CouponID
	}
	codes, err := p.checkout.CouponCodes(ctx, ids)
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
	views, err := p.core.ListTemplates(c.Request.Context(), false)
	return namesByID(views, func(v core.TemplateView) (int64, string) { return v.ID, v.Name }), err
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

// readRedeemFormCode reads and checks the checkout form with typed as its
// code; the code comes back normalised.
func readRedeemFormCode(c *gin.Context, typed string) (f redeemForm, code string, amount int64) {
	f = redeemForm{Amount: strings.TrimSpace(c.PostForm("amount")), Errors: formErrors{}}
	code, f.Code, f.OrderID = checkCodeOrder(typed, strings.TrimSpace(c.PostForm("order_id")), f.Errors, redeemFields)
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

// refusedWords says, in a cashier's words and with the coupon's own
// figures (its order, times and minimum), the refusal the service answered
// for it (code, from Validate or Redeem), and beside which field. The page
// never decides whether a coupon may be used: it only words the answer.
func (p *Pages) refusedWords(code models.Code, d *core.CouponDetail, orderID string) (field, msg string) {
	cp, t := d.Coupon, d.Template
	switch code {
	case models.CodeAlreadyUsed:
		return "code", p.usedWords(cp)
	case models.CodeRevoked:
		return "code", "This coupon was revoked and cannot be used."
	case models.CodeNotValidNow:
		if p.now().Before(cp.ValidFrom) {
			return "code", "This coupon is not valid until " + p.dateTime(cp.ValidFrom) + "."
		}
		return "code", "This coupon expired at " + p.untilTime(cp.ValidUntil) + "."
	case models.CodeHeld:
		return "code", p.heldWords(cp, orderID)
	case models.CodeBelowMinimum:
		return "amount", "Below the minimum: this coupon needs an order of at least " + p.moneyIn(t.Currency, t.MinOrderCents) + "."
	}
	return "", ""
}

// heldWords says that a coupon is held for an online order, and until when,
// in the deployment's zone and in words ("in 14 minutes"): it is not free to
// use at the till until that order is confirmed or released (docs/checkout.md).
func (p *Pages) heldWords(cp models.CouponView, orderID string) string {
	order := "an online order"
	if cp.OrderID != nil {
		order = "online order " + *cp.OrderID
		if *cp.OrderID == orderID {
			order = "this order (" + orderID + ")"
		}
	}
	msg := "Held for " + order
	if cp.HoldExpiresAt != nil {
		msg += " until " + p.dateTime(*cp.HoldExpiresAt) + " (" + timeLeft(p.now(), *cp.HoldExpiresAt) + ")"
	}
	return msg + ": confirm or release it under online orders; it cannot be redeemed here while it is held."
}

// timeLeft says in words how long until t: "in 14 minutes", "in 3 hours",
// "in 2 days".
func timeLeft(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("in %d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("in %d hours", int(d/time.Hour))
	case d >= 2*time.Minute:
		return fmt.Sprintf("in %d minutes", int(d/time.Minute))
	case d > 0:
		return "in a minute"
	}
	return "now"
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
