package pages

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// holdPage is the data of pos_hold.html: an online order's hold looked up by
// its order number, and the partial return form.
type holdPage struct {
	basePage
	OrderID string
	Errors  formErrors
	Hold    *checkout.CheckoutResult
	Return  returnForm
	// ReturnPreview is what the return typed would do, shown for the
	// cashier to confirm before anything is recorded.
	ReturnPreview *checkout.ReturnResult
	// Focus is the id of the element the page's script focuses (see
	// holdFocus).
	Focus string
}

// returnForm is the partial return form as typed, with its errors.
type returnForm struct {
	OrderID, ReturnID, Amount string
	Errors                    formErrors
}

// holdFields and returnFields map the service's field names to the forms'.
var (
	holdFields   = map[string]string{"order_id": "order_id", "order_amount_cents": ""}
	returnFields = map[string]string{"order_id": "return_order_id", "return_id": "return_id",
		"returned_amount_cents": "amount"}
)

// holdRefusals say the refusals of a hold's lookup, confirm and release.
var holdRefusals = map[models.Code]refusal{
	models.CodeNotFound:    {"order_id", "No online order with this number has a hold."},
	models.CodeHoldExpired: {"", ""},
	models.CodeAlreadyUsed: {"", "This order's hold was confirmed: refund it instead."},
	models.CodeBusy:        {"", msgBusy},
}

// holdPath is the lookup page of an order's hold.
func holdPath(orderID string) string {
	if orderID == "" {
		return "/pos/hold"
	}
	return "/pos/hold?order_id=" + url.QueryEscape(orderID)
}

// showHold looks up the hold of the online order named by order_id (when
// given): its state, coupons, expiry and amounts, with buttons to confirm or
// release it.
func (p *Pages) showHold(c *gin.Context) {
	page := &holdPage{OrderID: strings.TrimSpace(c.Query("order_id")), Errors: formErrors{}}
	if page.OrderID == "" {
		p.renderHold(c, http.StatusOK, page)
		return
	}
	if checkOrderID(page.Errors, "order_id", page.OrderID); len(page.Errors) > 0 {
		p.renderHold(c, http.StatusBadRequest, page)
		return
	}
	res, err := p.checkout.GetHold(c.Request.Context(), page.OrderID)
	if err != nil {
		p.holdRefused(c, page, err)
		return
	}
	page.Hold = res
	p.renderHold(c, http.StatusOK, page)
}

// holdRefused shows a refusal on the hold page, or the error page for a
// fault.
func (p *Pages) holdRefused(c *gin.Context, page *holdPage, err error) {
	if !page.Errors.fromRefusal(err, holdRefusals, holdFields) {
		p.fail(c, err)
		return
	}
	status, _ := web.StatusOf(err)
	p.renderHold(c, status, page)
}

// renderHold shows the hold page.
func (p *Pages) renderHold(c *gin.Context, status int, page *holdPage) {
	page.basePage.Title, page.Nav = "Online orders", "pos"
	if page.Errors == nil {
		page.Errors = formErrors{}
	}
	if page.Return.Errors == nil {
		page.Return.Errors = formErrors{}
	}
	if page.Return.OrderID == "" {
		page.Return.OrderID = page.OrderID
	}
	page.Focus = holdFocus(page)
	p.render(c, status, "pos_hold", page)
}

// returnFocus is the return form's field order, for the focus after an error.
var returnFocus = []focusField{{"return_order_id", "return-order"}, {"return_id", "return-id"}, {"amount", "return-amount"}}

// holdFocus says where the keyboard goes on the online orders page: the first
// wrong field of the return form after its error, the Confirm button of a
// hold that can be confirmed (Enter confirms, Tab then Enter releases), and
// else the order number, selected so that the next scan replaces it.
func holdFocus(page *holdPage) string {
	switch {
	case len(page.Return.Errors) > 0:
		return firstWrong(page.Return.Errors, returnFocus)
	case page.ReturnPreview != nil:
		return "return-confirm"
	case len(page.Errors) == 0 && page.Hold != nil &&
		(page.Hold.State == checkout.HoldHeld || page.Hold.State == checkout.HoldExpired):
		return "hold-confirm"
	}
	return "hold-order"
}

// postHold is a confirm or release post: it reads the order number and acts
// on its hold, or shows the page again with the reason it could not.
func (p *Pages) postHold(c *gin.Context, act func(page *holdPage) (outcome, error)) {
	page := &holdPage{OrderID: strings.TrimSpace(c.PostForm("order_id")), Errors: formErrors{}}
	handleForm(p, c, formPost[noInput]{errs: page.Errors,
		read: func() noInput {
			checkOrderID(page.Errors, "order_id", page.OrderID)
			return noInput{}
		},
		act:     func(noInput) (outcome, error) { return act(page) },
		refused: func(_ noInput, err error) bool { return page.Errors.fromRefusal(err, holdRefusals, holdFields) },
		show:    func(status int) { p.renderHold(c, status, page) },
	})
}

// couponCount says how many coupons, in words.
func couponCount(n int) string {
	return fmt.Sprintf("%d %s", n, plural(int64(n), "coupon", "coupons"))
}
