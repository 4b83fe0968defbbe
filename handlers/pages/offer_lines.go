package pages

import (
	"context"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// offerLine is a live automatic offer on a priced cart, in words: its
// name, its sentence (models.DescribeTemplate) and what it takes off this
// cart, or that it is not applied (docs/automatic-offers.md).
type offerLine struct {
	TemplateID    int64
	Name, Words   string
	Applied       bool
	DiscountCents int64
	// Hint is why the service left the offer out, in the shopper's words
	// ("" when it gave no reason).
	Hint string
}

// offerLines are the automatic offers of a checkout answer (nil: no answer,
// the cart priced without the service) in words: each offer on res applied
// with the discount res gives it, then every other live offer of the
// cart's currency not applied, with why when the service said it (left:
// the answer's automatic_not_applied, or a refusal's). The page decides
// nothing: which offers joined, what they take off and why the others do
// not is the service's answer.
func (p *Pages) offerLines(ctx context.Context, res *checkout.CheckoutResult, left []checkout.OfferNotApplied) ([]offerLine, error) {
	var out []offerLine
	on := map[int64]bool{}
	currency := p.money.code
	if res != nil {
		left = res.AutomaticNotApplied
		if res.Currency != "" {
			currency = res.Currency
		}
		for _, cc := range res.Coupons {
			if cc.TemplateID == 0 {
				continue // a code no coupon has
			}
			// A confirmed order's coupons are read back without the
			// flag: an automatic template's coupon is its offer's.
			t, err := p.core.GetTemplate(ctx, cc.TemplateID)
			if err != nil {
				return nil, err
			}
			if !cc.Automatic && t.CodeMode != models.CodeModeAutomatic {
				continue
			}
			on[t.ID] = true
			out = append(out, offerLine{TemplateID: t.ID, Name: t.Name, Words: p.valueText(*t), Applied: cc.Code == models.CodeOK,
				DiscountCents: cc.DiscountCents})
		}
	}
	live, err := p.checkout.LiveOffers(ctx, currency)
	if err != nil {
		return nil, err
	}
	hints := map[int64]string{}
	for _, o := range left {
		hints[o.TemplateID] = offerHint(o)
	}
	for _, t := range live {
		if on[t.ID] {
			continue
		}
		out = append(out, offerLine{TemplateID: t.ID, Name: t.Name, Words: p.valueText(t), Hint: hints[t.ID]})
	}
	return out, nil
}

// offerHint is the service's reason an offer is not applied in the
// shopper's words: its claim's refusal as the shop says it elsewhere
// (shopperWords), any other reason its message ("needs 2 items of
// category trousers, the cart has 1").
func offerHint(o checkout.OfferNotApplied) string {
	for _, code := range []models.Code{models.CodeSoldOut, models.CodeBudgetExhausted, models.CodeUserLimitReached,
		models.CodeCampaignLimit} {
		if o.Reason == code.Word() {
			return shopperWords(code, o.Message)
		}
	}
	return o.Message
}

// offerLabels maps the codes of a checkout answer's automatic offers (as
// the lines' parts name them, codeGroups) to the offer's name, so that an
// item's discount says which offer took it.
func offerLabels(offers []offerLine, res *checkout.CheckoutResult) map[string]string {
	out := map[string]string{}
	for _, cc := range res.Coupons {
		if name, ok := offerOf(offers, cc); ok {
			out[codeGroups(cc.CouponCode)] = name
		}
	}
	return out
}

// offerOf says whether coupon cc of a checkout answer is one of its
// automatic offers (listed applied by offerLines), and names it.
func offerOf(offers []offerLine, cc checkout.CheckoutCoupon) (string, bool) {
	for _, o := range offers {
		if o.Applied && o.TemplateID == cc.TemplateID {
			return o.Name, true
		}
	}
	return "", false
}

// offersSaid is the automatic offers applied to a sale, for the receipt
// after it: " (Autumn sale −$5.00)", or "" when none was.
func (p *Pages) offersSaid(offers []offerLine) string {
	var parts []string
	for _, o := range offers {
		if o.Applied {
			parts = append(parts, "automatic offer "+o.Name+" −"+p.money.format(o.DiscountCents))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// noOfferJoins says err is a checkout's refusal of a request with no code
// because no automatic offer joins its cart (coupon_codes): the cart is
// then priced as it is, its offers not applied.
func noOfferJoins(err error) bool {
	var e *models.Error
	return asError(err, &e) && e.Code == models.CodeInvalidRequest && e.Field == "coupon_codes"
}

// AppliedOffers are the offers the service applied to the cart: what a
// placed order shows.
func (c *pricedCart) AppliedOffers() []offerLine {
	var out []offerLine
	for _, o := range c.Offers {
		if o.Applied {
			out = append(out, o)
		}
	}
	return out
}
