package pages

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// checkoutPage is the data of checkout.html: the shopper's cart with its
// "Have a code?" field (docs/pages.md, "Checkout").
type checkoutPage struct {
	basePage
	Form checkoutForm
	// Priced is the cart priced with the codes (a check, or the order
	// placed); nil before the first check.
	Priced *pricedCart
	// Placed is set on the answer of a placed order.
	Placed bool
	// AlreadyPlaced marks the repeat of an order placed before (a double
	// submit or a reload): nothing more was used or paid.
	AlreadyPlaced bool
}

// checkoutForm is what the shopper typed: the cart's rows, the codes and
// the order's id, made when the page was first shown.
type checkoutForm struct {
	Rows    []cartRow
	Codes   string
	OrderID string
	// OrderSig signs OrderID for the session (shop_order_id.go).
	OrderSig string
	Errors   formErrors
	// BadRow is the 1-based row the "items" error is about (0: none).
	BadRow int
	// Shipping is the shipping as typed, ShippingCents as read.
	Shipping      string
	ShippingCents int64
}

// pricedCart is the answer of a check: the rows with their discount, each
// code's part, and the totals.
type pricedCart struct {
	Rows []cartRow
	// ShippingCents is the order's shipping, ShippingDiscountCents what
	// the codes take off it.
	ShippingCents         int64
	ShippingDiscountCents int64
	Codes                 []cartLine
	// Offers are the live automatic offers, those the service applied
	// to the cart with what they take off, the others not applied; and
	// OfferHint why none joins, when the service said it.
	Offers        []offerLine
	OfferHint     string
	AmountCents   int64
	DiscountCents int64
	PayableCents  int64
	OK            bool
}

// cartRowsShown is how many rows the cart form has at least: the rows
// typed, then empty ones to fill.
const cartRowsShown = 4

// exampleCart fills the cart of a fresh checkout: the demo shop has no
// catalogue, so the shopper starts from an example and edits it.
// Its unit prices are in hundredths of the currency's unit, written in
// the deployment's currency (exampleRows).
var exampleCart = []cartRow{
	{SKU: "TSHIRT-M", Category: "clothing", Quantity: "2", AmountCents: 1500},
	{SKU: "MUG-01", Category: "home", Quantity: "1", AmountCents: 850},
	{SKU: "SOCKS-3", Category: "clothing", Quantity: "3", AmountCents: 400},
}

// exampleRows is the example cart with its prices written in the
// deployment currency's own minor units (15.00 dollars, 15 yen).
func (p *Pages) exampleRows() []cartRow {
	rows := make([]cartRow, len(exampleCart))
	for i, r := range exampleCart {
		rows[i] = cartRow{SKU: r.SKU, Category: r.Category, Quantity: r.Quantity,
			Unit: p.money.input(r.AmountCents * pow10(p.money.digits) / 100)}
	}
	return rows
}

// MaxRows is the most items a cart holds (the API's bound).
func (checkoutPage) MaxRows() int { return checkout.MaxCartLines }

// newOrderID is the id of a new web order: "W-" and 10 hex digits. The
// page makes it once, when the cart is shown, and every check and the
// order carry it, so that placing the order twice is one order
// (docs/pages.md, "Checkout").
func newOrderID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return "W-" + strings.ToUpper(hex.EncodeToString(b))
}

// showCheckout shows the shopper's cart, prefilled with an example, and the
// "Have a code?" field.
func (p *Pages) showCheckout(c *gin.Context) {
	f := checkoutForm{Rows: padRows(p.exampleRows()), OrderID: newOrderID(), Errors: formErrors{}}
	if code := strings.TrimSpace(c.Query("code")); code != "" && len(code) <= 64 {
		f.Codes = code
	}
	p.renderCheckout(c, http.StatusOK, &checkoutPage{Form: f})
}

// renderCheckout writes the checkout page.
func (p *Pages) renderCheckout(c *gin.Context, status int, page *checkoutPage) {
	page.basePage = basePage{Title: "Checkout", Nav: "checkout"}
	page.Form.OrderSig = p.orderSig(c, page.Form.OrderID)
	if page.Placed {
		page.Title = "Order placed"
	}
	p.render(c, status, "checkout", page)
}

// padRows numbers the rows and adds empty ones up to cartRowsShown.
func padRows(rows []cartRow) []cartRow { return padRowsTo(rows, cartRowsShown) }

// readCheckoutForm reads the cart, the codes and the order id. Rows left
// empty are dropped (the form is shown again without the gaps, so that a
// row's number is its line's in the cart); a mistake goes beside the
// items, naming the row, or beside the code field.
func (p *Pages) readCheckoutForm(c *gin.Context) (checkoutForm, []checkout.Line, []string) {
	f := checkoutForm{Codes: strings.TrimSpace(c.PostForm("codes")), OrderID: strings.TrimSpace(c.PostForm("order_id")),
		Errors: formErrors{}}
	var lines []checkout.Line
	f.Rows, lines, f.BadRow = p.readCartRows(c, f.Errors)
	f.Shipping = strings.TrimSpace(c.PostForm("shipping"))
	f.ShippingCents = p.formMoneyIn(f.Errors, "shipping", f.Shipping)
	if len(f.Rows) == 0 {
		f.Errors.add("items", "Add at least one item to the cart.")
		f.BadRow = 1
	}
	f.Rows = padRows(f.Rows)
	codes := splitCodes(f.Codes)
	p.checkCodeCount(f.Errors, "codes", codes)
	if f.OrderID == "" || models.ValidateOrderID("order_id", f.OrderID) != nil {
		// The page made it: a missing or broken one is a form from
		// elsewhere. A new one starts a new order.
		f.Errors.add("", "This checkout form is out of date: check the cart again.")
		f.OrderID = newOrderID()
	}
	return f, lines, codes
}

// checkoutFields maps the service's field names to the checkout form's.
var checkoutFields = map[string]string{"coupon_codes": "codes", "user_id": "codes", "lines": "items", "order_amount_cents": "items"}

// checkoutRefused puts a refusal of the checkout's services beside its
// field: a line's beside the items, naming the row; a code's, in the
// shopper's words, beside the code field. It reports false for a fault.
func checkoutRefused(f *checkoutForm, err error) bool {
	if itemRefusal(f.Errors, err) {
		var e *models.Error
		if asError(err, &e) {
			if i, ok := lineIndex(e.Field); ok {
				f.BadRow = i + 1
			}
		}
		return true
	}
	var e *models.Error
	if !asError(err, &e) || e.Code == models.CodeInternal || e.Code == models.CodeUnavailable {
		return false
	}
	if e.Code == models.CodeInvalidRequest || e.Code == models.CodeIdempotencyMismatch {
		if e.Code == models.CodeIdempotencyMismatch {
			f.Errors.add("codes", "This order was already placed with another cart or other codes. Start a new order to use them.")
			return true
		}
		return f.Errors.fromError(err, checkoutFields)
	}
	f.Errors.add("codes", shopperWords(e.Code, e.Message))
	return true
}

// shopperReasons say the true reasons of pricing refusals
// (checkout.RefusalReason) in a shopper's words.
var shopperReasons = map[string]string{
	checkout.ReasonNotForItems: "Not for the items in your cart.",
	checkout.ReasonNoShipping:  "Your order has no shipping for this code to take off.",
	checkout.ReasonCurrency:    "This code is in another currency than your cart.",
}

// shopperWords says why a code does not apply, in a shopper's words.
func shopperWords(code models.Code, msg string) string {
	switch code {
	case models.CodeSoldOut:
		return "Sold out: none of these are left."
	case models.CodeUserLimitReached:
		return "You already have as many of these as you may."
	case models.CodeCampaignLimit:
		return "You already have as many coupons of this campaign as you may."
	case models.CodeBudgetExhausted:
		return "This offer has ended: its budget is spent."
	case models.CodeHeld:
		return "Reserved for another order of yours."
	case models.CodeRateLimited:
		return "Too many codes checked in a short time. Wait a minute, then try again."
	}
	return inWords(code, msg)
}

// checkoutPost is what a post of the checkout form acts on: the form as
// read, its cart lines and codes, the cart, and the shopper.
type checkoutPost struct {
	f     *checkoutForm
	lines []checkout.Line
	codes []string
	cart  checkout.Cart
	pr    *models.Principal
}

// postCheckout runs a post of the checkout form (a check or an order): the
// form read and its order id checked (checkOrderID), the codes taken from
// the check budgets (admitCheck), then act, which answers the page. Placing
// an order checks its codes as a check does: from the same budgets, and
// only the shopper's own coupons and shared codes (docs/pages.md,
// "Checkout"). A refusal goes beside its field (checkoutRefused) on the
// cart as typed.
func (p *Pages) postCheckout(c *gin.Context, page *checkoutPage, act func(in checkoutPost) error) {
	f, lines, codes := p.readCheckoutForm(c)
	p.checkOrderID(c, &f)
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			pr := web.Principal(c)
			if len(codes) > 0 {
				if err := p.admitCheck(c, pr, len(codes)); err != nil {
					return outcome{}, err
				}
			}
			cart := checkout.Cart{Lines: lines, ShippingCents: f.ShippingCents, Channel: checkout.ChannelWeb}
			return outcome{}, act(checkoutPost{f: &f, lines: lines, codes: codes, cart: cart, pr: pr})
		},
		refused: func(_ noInput, err error) bool { return checkoutRefused(&f, err) },
		show: func(status int) {
			page.Form, page.Placed = f, false
			p.renderCheckout(c, status, page)
		},
	})
}

// checkCart prices the cart with the typed codes for this shopper
// (checkout.Validate, which changes nothing): the discount per item and the
// total to pay, or why a code does not apply, beside the code field.
func (p *Pages) checkCart(c *gin.Context) {
	page := &checkoutPage{}
	p.postCheckout(c, page, func(in checkoutPost) error {
		ctx, f := c.Request.Context(), in.f
		res, err := p.shopCheckout(ctx, *f, in.lines, in.codes, func() (*checkout.CheckoutResult, error) {
			return p.checkout.Validate(ctx, checkout.CheckoutRequest{OrderID: f.OrderID, CouponCodes: in.codes,
				UserID: in.pr.UserID, Actor: in.pr.Name, Cart: in.cart, OwnOnly: true})
		})
		if err != nil {
			return err
		}
		for _, cl := range res.Codes {
			if cl.Problem != "" {
				f.Errors.add("codes", cl.Code+": "+cl.Problem)
			}
		}
		page.Form, page.Priced = *f, res
		status := http.StatusOK
		if !res.OK {
			status = http.StatusConflict
		}
		p.renderCheckout(c, status, page)
		return nil
	})
}

// admitCheck takes the n codes of a check from the validate budgets of the
// session's user, as the API counts a page session's validations
// (docs/checkout.md, "Validate"): checking codes on the page is no way
// around the bound on guessing them. Over a budget: rate_limited, said
// beside the code field; Redis unreachable: the fault page.
func (p *Pages) admitCheck(c *gin.Context, pr *models.Principal, n int) error {
	if p.validates == nil {
		return nil
	}
	if err := p.validates.AllowCaller(c.Request.Context(), "session:"+pr.Name, n); err != nil {
		return err
	}
	return p.validates.AllowUser(c.Request.Context(), pr.UserID, n)
}

// codeLabel is how a coupon of a checkout answer is named to the shopper:
// the shared code typed, or the coupon's code.
func codeLabel(cc checkout.CheckoutCoupon) string {
	if cc.SharedCode != "" {
		return cc.SharedCode
	}
	return codeGroups(cc.CouponCode)
}

// priceRows is the cart without codes: each row's amount, nothing off.
func (p *Pages) priceRows(f checkoutForm, lines []checkout.Line) *pricedCart {
	out := &pricedCart{OK: true, ShippingCents: f.ShippingCents, AmountCents: f.ShippingCents}
	for i, l := range lines {
		r := f.Rows[i]
		r.AmountCents = l.Quantity * l.UnitPriceCents
		r.Pays = r.AmountCents
		out.Rows = append(out.Rows, r)
		out.AmountCents += r.AmountCents
	}
	out.PayableCents = out.AmountCents
	return out
}

// shopCheckout prices the shopper's cart through ask (a validation or the
// order's hold and confirm) and lists the automatic offers on it
// (offerLines). With no code typed the service is asked only while an
// offer is live; when it answers that no offer joins the cart, or refuses
// the only offer's claim, the cart is priced as it is and that refusal is
// the offers' hint (docs/automatic-offers.md).
func (p *Pages) shopCheckout(ctx context.Context, f checkoutForm, lines []checkout.Line, codes []string,
	ask func() (*checkout.CheckoutResult, error)) (*pricedCart, error) {
	offers, err := p.offerLines(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(codes) == 0 && len(offers) == 0 {
		return p.priceRows(f, lines), nil
	}
	res, err := ask()
	if err != nil {
		if len(codes) > 0 || !noOfferJoins(err) && !checkout.ClaimRefused(err) {
			return nil, err
		}
		out := p.priceRows(f, lines)
		// A claim's refusal is said once, under the offers (OfferHint);
		// any other refusal carries each offer's reason for its line.
		var left []checkout.OfferNotApplied
		if !checkout.ClaimRefused(err) {
			left = checkout.NotAppliedOf(err)
		}
		var lerr error
		if out.Offers, lerr = p.offerLines(ctx, nil, left); lerr != nil {
			return nil, lerr
		}
		if checkout.ClaimRefused(err) {
			var e *models.Error
			asError(err, &e)
			out.OfferHint = shopperWords(e.Code, e.Message)
		}
		return out, nil
	}
	if offers, err = p.offerLines(ctx, res, nil); err != nil {
		return nil, err
	}
	return p.pricedFrom(f, lines, res, offers), nil
}

// pricedFrom is the cart priced by a checkout answer: each row with its
// discount and each code's part of it (itemLines), the automatic offers in
// words (offers, offerLines), and the totals.
func (p *Pages) pricedFrom(f checkoutForm, lines []checkout.Line, res *checkout.CheckoutResult, offers []offerLine) *pricedCart {
	out := p.priceRows(f, lines)
	if res.ShippingDiscountCents != nil {
		out.ShippingDiscountCents = *res.ShippingDiscountCents
	}
	out.OK = res.Result == models.CodeOK.Word()
	out.Offers = offers
	labels := offerLabels(offers, res)
	for _, cc := range res.Coupons {
		if _, ok := offerOf(offers, cc); ok {
			continue
		}
		line := cartLine{Code: codeLabel(cc), DiscountCents: cc.DiscountCents}
		if cc.Code != models.CodeOK {
			line.Problem = refusalWords(cc, shopperReasons, shopperWords)
		}
		labels[codeGroups(cc.CouponCode)] = line.Code
		out.Codes = append(out.Codes, line)
	}
	for i, it := range itemLines(res.Lines) {
		if i >= len(out.Rows) {
			break
		}
		r := &out.Rows[i]
		r.DiscountCents, r.Pays = it.DiscountCents, r.AmountCents-it.DiscountCents
		for _, part := range it.Parts {
			if l, ok := labels[part.Code]; ok {
				part.Code = l
			}
			r.Parts = append(r.Parts, part)
		}
	}
	out.DiscountCents, out.PayableCents = res.DiscountCents, res.PayableCents
	if res.OrderAmountCents != 0 {
		out.AmountCents = res.OrderAmountCents
	}
	return out
}
