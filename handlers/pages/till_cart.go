package pages

import (
	"fmt"
	"net/http"
	"strings"

	"couponsvc/models"
	"couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// cartPreview is several coupons priced together on one order: each one's
// discount, or why it does not apply, and the totals.
type cartPreview struct {
	Lines         []cartLine
	AmountCents   int64
	DiscountCents int64
	PayableCents  int64
	// Problem says why the coupons cannot go on the order together; "" when
	// they can.
	Problem string
	// Items is each item's discount, for an order given by its items.
	Items []itemLine
}

type cartLine struct {
	Code          string
	DiscountCents int64
	// Problem says why this coupon does not apply; "" when it does.
	Problem string
}

// cartFields maps the service's field names to the checkout form's.
var cartFields = map[string]string{"coupon_codes": "code", "order_id": "order_id", "order_amount_cents": "amount", "lines": "items"}

// cartRefusals say the refusals of a cart's pricing beside their field.
var cartRefusals = map[models.Code]refusal{models.CodeNotFound: {"code", ""}}

// cartWords say, in a cashier's words, why a coupon does not apply.
var cartWords = map[models.Code]string{
	models.CodeAlreadyUsed:      "Already used.",
	models.CodeNotValidNow:      "Not valid now (expired or not started).",
	models.CodeRevoked:          "Revoked: it can no longer be used.",
	models.CodeBelowMinimum:     "Below the minimum order for this coupon.",
	models.CodeHeld:             "Held for an online order.",
	models.CodeNotCombinable:    "These coupons cannot be used together on one order.",
	models.CodeUnauthorized:     "Not this customer's coupon.",
	models.CodeCurrencyMismatch: "This coupon is in another currency than the order.",
}

// splitCodes splits the code field on commas, semicolons and line breaks
// (spaces may be inside one code, as people type them).
func splitCodes(field string) []string {
	var out []string
	for _, s := range strings.FieldsFunc(field, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// inWords says a checkout answer's refusal in a cashier's words.
func inWords(code models.Code, msg string) string {
	if w, ok := cartWords[code]; ok {
		return w
	}
	return sentence(msg)
}

// previewCart prices several coupons together on one order (checkout.Validate,
// which changes nothing) and shows each one's discount, or why it does not
// apply, and the total.
func (p *Pages) previewCart(c *gin.Context, codes []string) {
	f := redeemForm{Code: strings.TrimSpace(c.PostForm("code")), OrderID: strings.TrimSpace(c.PostForm("order_id")),
		Amount: strings.TrimSpace(c.PostForm("amount")), Items: strings.TrimSpace(c.PostForm("items")), Errors: formErrors{}}
	page := &posPage{Redeem: f}
	var lines []checkout.Line
	handleForm(p, c, formPost[int64]{errs: f.Errors,
		read: func() int64 {
			if n := p.checkout.MaxCouponCodes(); len(codes) > n {
				f.Errors.add("code", fmt.Sprintf("Enter at most %d codes, separated by commas.", n))
			}
			checkOrderID(f.Errors, "order_id", f.OrderID)
			if f.Items != "" {
				// Items give the total; a total typed too must agree.
				lines = readItems(f.Errors, f.Items)
				if f.Amount == "" {
					return 0
				}
			}
			return readOrderAmount(f.Errors, f.Amount)
		},
		// Pricing changes nothing: its answer is the page.
		act: func(amount int64) (outcome, error) {
			res, err := p.checkout.Validate(c.Request.Context(), checkout.CheckoutRequest{OrderID: f.OrderID,
				OrderAmountCents: amount, CouponCodes: codes, Cart: checkout.Cart{Lines: lines}})
			if err != nil {
				return outcome{}, err
			}
			p.showCart(c, page, res)
			return outcome{}, nil
		},
		refused: func(_ int64, err error) bool {
			return itemRefusal(f.Errors, err) || f.Errors.fromRefusal(err, cartRefusals, cartFields)
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

// showCart shows the checkout with the pricing of several codes: each
// one's discount or why it does not apply, and the totals (409 when not
// every one applies).
func (p *Pages) showCart(c *gin.Context, page *posPage, res *checkout.CheckoutResult) {
	cart := &cartPreview{AmountCents: res.OrderAmountCents, DiscountCents: res.DiscountCents, PayableCents: res.PayableCents,
		Items: itemLines(res.Lines)}
	for _, cc := range res.Coupons {
		line := cartLine{Code: codeGroups(cc.CouponCode), DiscountCents: cc.DiscountCents}
		if cc.Code != models.CodeOK {
			line.Problem = inWords(cc.Code, cc.Message)
		}
		cart.Lines = append(cart.Lines, line)
	}
	status := http.StatusOK
	if res.Result != models.CodeOK.Word() {
		status = http.StatusConflict
		if res.Result == models.CodeNotCombinable.Word() {
			cart.Problem = cartWords[models.CodeNotCombinable]
		} else {
			cart.Problem = "Not every coupon applies: no discount until the ones marked are taken off."
		}
	}
	page.Redeem.Cart = cart
	p.renderPOS(c, status, page)
}
