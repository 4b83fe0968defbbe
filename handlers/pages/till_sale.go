package pages

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// salePreview is a till sale's cart priced with its codes
// (checkout.PreviewSale): each code in words with its discount or why it
// does not apply, each item with what comes off it and what the customer
// pays for it, the shipping and the totals.
type salePreview struct {
	Codes []saleCode
	// Offers are the live automatic offers, those the service applied to
	// the sale with what they take off, the others not applied
	// (offerLines).
	Offers                []offerLine
	Items                 []cartRow
	ShippingCents         int64
	ShippingDiscountCents int64
	AmountCents           int64
	DiscountCents         int64
	PayableCents          int64
	// Problem says why the codes cannot go on the sale together; "" when
	// they can, and Enter on the empty code field redeems them.
	Problem string
}

// saleCode is one code of a sale's preview.
type saleCode struct {
	Code string
	// Words is the coupon in words (models.DescribeTemplate).
	Words         string
	DiscountCents int64
	// Problem says why this code does not apply; "" when it does.
	Problem string
}

// saleRows is how many item rows the till shows at least.
const saleRows = 3

// hasSale says whether a checkout post is a sale of items: rows or a
// shipping typed, a sale previewed, or several codes.
func hasSale(c *gin.Context, codes []string) bool {
	if len(codes) > 1 || strings.TrimSpace(c.PostForm("shipping")) != "" || c.PostForm("preview_sale") != "" {
		return true
	}
	for _, name := range []string{"sku", "quantity", "unit_price"} {
		for _, v := range c.PostFormArray(name) {
			if strings.TrimSpace(v) != "" {
				return true
			}
		}
	}
	return false
}

// readSaleForm reads a till sale: its rows (as the shop's checkout reads
// them, readCartRows), shipping, order number and total (optional: the
// items give it; a total typed too must agree).
func (p *Pages) readSaleForm(c *gin.Context) (redeemForm, checkout.Cart, int64) {
	f := redeemForm{Code: strings.TrimSpace(c.PostForm("code")), OrderID: strings.TrimSpace(c.PostForm("order_id")),
		Amount: strings.TrimSpace(c.PostForm("amount")), Shipping: strings.TrimSpace(c.PostForm("shipping")), Errors: formErrors{}}
	rows, lines, bad := p.readCartRows(c, f.Errors)
	f.Rows, f.BadRow = padRowsTo(rows, saleRows), bad
	checkOrderID(f.Errors, "order_id", f.OrderID)
	cart := checkout.Cart{Lines: lines}
	if len(lines) == 0 {
		cart.Lines = nil
	}
	if f.Shipping != "" {
		cart.ShippingCents = p.formMoneyIn(f.Errors, "shipping", f.Shipping)
	}
	var amount int64
	if f.Amount != "" || cart.Lines == nil {
		amount = readOrderAmount(f.Errors, f.Amount)
	}
	return f, cart, amount
}

// saleKey is what a sale's preview priced: its order, cart, total and
// codes. Enter on the empty code field redeems the codes previewed only
// while the form still says the same sale.
func saleKey(f redeemForm, codes string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s", f.OrderID, f.Amount, f.Shipping, codes)
	for _, r := range f.Rows {
		if r.SKU+r.Quantity+r.Unit+r.Category != "" {
			fmt.Fprintf(&b, "|%s,%s,%s,%s", r.SKU, r.Quantity, r.Unit, r.Category)
		}
	}
	return b.String()
}

// previewSale prices a till sale of items with its codes through the
// service (checkout.PreviewSale, which changes nothing) and shows per item
// what comes off and what the customer pays. Enter on the empty code field
// with the same sale redeems exactly what was previewed (redeemSale); with
// a sale changed since, the codes previewed are priced again.
func (p *Pages) previewSale(c *gin.Context, codes []string) {
	f, cart, amount := p.readSaleForm(c)
	if len(codes) == 0 {
		// A sale previewed with no code (its automatic offers alone) has
		// an empty preview_code and its key.
		prev := strings.TrimSpace(c.PostForm("preview_code"))
		if key := c.PostForm("preview_sale"); key != "" && saleKey(f, prev) == key && len(f.Errors) == 0 {
			p.redeemSale(c, f, cart, amount, splitCodes(prev))
			return
		}
		codes = splitCodes(prev)
	}
	p.checkCodeCount(f.Errors, "code", codes)
	page := &posPage{Redeem: f}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			res, err := p.checkout.PreviewSale(c.Request.Context(), checkout.CheckoutRequest{OrderID: f.OrderID,
				OrderAmountCents: amount, CouponCodes: codes, Cart: cart})
			if err != nil {
				return outcome{}, err
			}
			return outcome{}, p.showSale(c, page, res, cart, codes)
		},
		refused: func(_ noInput, err error) bool {
			if len(codes) == 0 && noOfferJoins(err) {
				// No code, and no automatic offer joins the sale.
				page.Redeem.Errors.add("code", "Enter or scan the coupon code.")
				return true
			}
			return p.saleRefused(&page.Redeem, err)
		},
		status: func(err error) int {
			if models.IsCode(err, models.CodeNotFound) {
				return http.StatusNotFound
			}
			return http.StatusBadRequest
		},
		show: func(status int) { p.renderPOS(c, status, page) },
	})
}

// saleFields maps the service's field names to the till's sale form.
var saleFields = map[string]string{"coupon_codes": "code", "coupon_code": "code", "order_id": "order_id",
	"order_amount_cents": "amount", "lines": "items", "shipping_cents": "shipping"}

// saleRefused puts a refusal of a sale beside its field: an item's beside
// the items naming the row, a code's beside the code in words. It reports
// false for a fault.
func (p *Pages) saleRefused(f *redeemForm, err error) bool {
	var e *models.Error
	if !asError(err, &e) || e.Code == models.CodeInternal || e.Code == models.CodeUnavailable {
		return false
	}
	if itemRefusal(f.Errors, err) {
		if i, ok := lineIndex(e.Field); ok {
			f.BadRow = i + 1
		}
		return true
	}
	switch e.Code {
	case models.CodeNotFound:
		f.Errors.add("code", msgNoCoupon)
	case models.CodeInvalidRequest:
		return f.Errors.fromError(err, saleFields)
	case models.CodeIdempotencyMismatch:
		f.Errors.add("code", "This sale already took its codes with another cart or total, or several codes at once: "+
			"add further codes one at a time, or start the next customer.")
	default:
		f.Errors.add("code", inWords(e.Code, e.Message))
	}
	return true
}

// showSale shows the till with a sale priced: each code in words and its
// discount or why it does not apply (409 when one does not), each item's
// discount and what is left to pay for it, and the totals.
func (p *Pages) showSale(c *gin.Context, page *posPage, res *checkout.CheckoutResult, cart checkout.Cart, codes []string) error {
	sp := &salePreview{ShippingCents: cart.ShippingCents, AmountCents: res.OrderAmountCents,
		DiscountCents: res.DiscountCents, PayableCents: res.PayableCents}
	if res.ShippingDiscountCents != nil {
		sp.ShippingDiscountCents = *res.ShippingDiscountCents
	}
	offers, err := p.offerLines(c.Request.Context(), res, nil)
	if err != nil {
		return err
	}
	sp.Offers = offers
	for _, cc := range res.Coupons {
		if _, ok := offerOf(offers, cc); ok {
			continue
		}
		sc := saleCode{Code: codeGroups(cc.CouponCode), DiscountCents: cc.DiscountCents}
		t, err := p.core.GetTemplate(c.Request.Context(), cc.TemplateID)
		if err != nil {
			return err
		}
		sc.Words = p.valueText(*t)
		if cc.Code != models.CodeOK {
			sc.Problem = p.cashierRefusal(cc, t)
		}
		sp.Codes = append(sp.Codes, sc)
	}
	sp.Items = pricedRows(page.Redeem.Rows, cart.Lines, res.Lines, offerLabels(offers, res))
	status := http.StatusOK
	if res.Result != models.CodeOK.Word() {
		status = http.StatusConflict
		sp.Problem = "Not every coupon applies: no discount until the ones marked are taken off."
		if res.Result == models.CodeNotCombinable.Word() {
			sp.Problem = cartWords[models.CodeNotCombinable]
		}
	} else {
		page.Redeem.SaleCodes = strings.Join(codes, ",")
		page.Redeem.SaleKey = saleKey(page.Redeem, page.Redeem.SaleCodes)
	}
	page.Redeem.Code = ""
	page.Redeem.Sale = sp
	p.renderPOS(c, status, page)
	return nil
}

// pricedRows are the rows of a sale with each line's amount, discount (and
// each code's part, an automatic offer's named by labels) and what is left
// to pay for it.
func pricedRows(rows []cartRow, lines []checkout.Line, ds []checkout.LineDiscount, labels map[string]string) []cartRow {
	var out []cartRow
	for i, l := range lines {
		r := rows[i]
		r.AmountCents = l.Quantity * l.UnitPriceCents
		if i < len(ds) {
			r.DiscountCents = ds[i].DiscountCents
			for _, c := range ds[i].Coupons {
				part := itemPart{Code: codeGroups(c.CouponCode), DiscountCents: c.DiscountCents}
				if l, ok := labels[part.Code]; ok {
					part.Code = l
				}
				r.Parts = append(r.Parts, part)
			}
		}
		r.Pays = r.AmountCents - r.DiscountCents
		out = append(out, r)
	}
	return out
}

// cashierRefusal says in a cashier's words the true reason the service
// gave for a code that does not apply (refusalWords): not for these items,
// no shipping, below this coupon's minimum, another currency.
func (p *Pages) cashierRefusal(cc checkout.CheckoutCoupon, t *models.Template) string {
	return refusalWords(cc, map[string]string{
		checkout.ReasonNotForItems: "Not for these items: none of them is one this coupon applies to.",
		checkout.ReasonNoShipping:  "This sale has no shipping for this coupon to take off.",
		checkout.ReasonMinimum:     "Below the minimum of this coupon (" + p.moneyIn(t.Currency, t.MinOrderCents) + ").",
		checkout.ReasonCurrency:    "This coupon is in " + t.Currency + ", the sale in another currency.",
	}, inWords)
}

// redeemSale redeems the codes previewed on the sale (checkout.RedeemSale)
// and goes back to the till with the same sale, its number and items kept,
// so that further codes go on it until "Next customer".
func (p *Pages) redeemSale(c *gin.Context, f redeemForm, cart checkout.Cart, amount int64, codes []string) {
	page := &posPage{Redeem: f}
	handleForm(p, c, formPost[noInput]{errs: f.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			res, err := p.checkout.RedeemSale(c.Request.Context(), checkout.CheckoutRequest{OrderID: f.OrderID,
				OrderAmountCents: amount, CouponCodes: codes, Cart: cart}, web.Principal(c).Name)
			if err != nil {
				return outcome{}, err
			}
			what := "Redeemed on sale "
			if res.Duplicate {
				what = "Already redeemed on sale "
			}
			offers, err := p.offerLines(c.Request.Context(), res, nil)
			if err != nil {
				return outcome{}, err
			}
			msg := fmt.Sprintf("%s%s: %s off%s, the customer pays %s. Further codes go on the same sale; "+
				"Next customer starts a new one.", what, f.OrderID, p.money.format(res.DiscountCents), p.offersSaid(offers),
				p.money.format(res.PayableCents))
			return done(msg, "/pos?"+saleQuery(f).Encode()), nil
		},
		refused: func(_ noInput, err error) bool { return p.saleRefused(&page.Redeem, err) },
		show:    func(status int) { p.renderPOS(c, status, page) },
	})
}
