package pages

import (
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// cartLine is one code of a priced cart: its discount, or why it does not
// apply.
type cartLine struct {
	Code          string
	DiscountCents int64
	// Problem says why this coupon does not apply; "" when it does.
	Problem string
}

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

// refusalWords says why a code does not apply to a cart in one audience's
// words: the true reason of a pricing refusal (checkout.RefusalReason) from
// reasons, any other refusal in other's words.
func refusalWords(cc checkout.CheckoutCoupon, reasons map[string]string, other func(models.Code, string) string) string {
	if w, ok := reasons[checkout.RefusalReason(cc)]; ok {
		return w
	}
	return other(cc.Code, cc.Message)
}

// checkCodeCount refuses more codes than one checkout takes
// (MaxCouponCodes), beside field.
func (p *Pages) checkCodeCount(errs formErrors, field string, codes []string) {
	if n := p.checkout.MaxCouponCodes(); len(codes) > n {
		errs.add(field, fmt.Sprintf("Enter at most %d codes, separated by commas.", n))
	}
}

// inWords says a checkout answer's refusal in a cashier's words.
func inWords(code models.Code, msg string) string {
	if w, ok := cartWords[code]; ok {
		return w
	}
	return sentence(msg)
}
