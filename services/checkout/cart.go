package checkout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// Bounds of a cart (docs/checkout.md, "Carts").
const (
	MaxCartLines      = 500
	MaxLineQuantity   = 10_000
	MaxCartIDLen      = 64
	MaxLineCategories = 20
)

// Line is one line of a request's cart (pricing.Line: its id, sku,
// product, categories, quantity, unit price and whether it may be
// discounted).
type Line = pricing.Line

// Cart is the cart a request carries: its currency, lines and shipping.
// Lines nil is an amount-only request (order_amount_cents alone), priced as
// the one-line cart pricing.OneLine.
type Cart struct {
	// Currency is an ISO 4217 code; empty means the deployment's currency.
	Currency      string
	Lines         []pricing.Line
	ShippingCents int64
	// Customer and Channel are what the shop says of who buys and where
	// (nil and "" when it says nothing), for the templates' eligibility
	// rules (docs/eligibility.md).
	Customer *Customer
	Channel  string
}

// Lined says the request gave lines.
func (c *Cart) Lined() bool { return c.Lines != nil }

// currency is the deployment's currency: a cart without one is in it, and
// a template without one applies to it.
func (s *Checkout) currency() string {
	if s.Cfg.Currency != "" {
		return s.Cfg.Currency
	}
	return models.DefaultCurrency
}

// orderCurrency is the currency of an order's amounts: the one its first
// hold or redemption gave, or the deployment's for a row written before
// amount-only orders kept theirs.
func (s *Checkout) orderCurrency(o *CheckoutOrder) string {
	if o.Currency != "" {
		return o.Currency
	}
	return s.currency()
}

// parseCart checks a request's cart and amount and returns the cart it is
// priced as: the lines given (the amount, when given too, must be their
// total), or the one-line cart of the amount. Every bound is answered 400
// naming its field, as lines[3].quantity.
func (s *Checkout) parseCart(in Cart, amount int64) (pricing.Cart, error) {
	if err := checkShopper(in.Customer, in.Channel); err != nil {
		return pricing.Cart{}, err
	}
	cur := in.Currency
	if cur == "" {
		cur = s.currency()
	} else if err := models.ValidateCurrency("currency", cur); err != nil {
		return pricing.Cart{}, err
	}
	if !in.Lined() {
		if amount < 1 || amount > models.MaxMoneyCents {
			return pricing.Cart{}, models.Invalid("order_amount_cents", "must be between 1 and %d (or give lines)", int64(models.MaxMoneyCents))
		}
		if in.ShippingCents != 0 {
			return pricing.Cart{}, models.Invalid("shipping_cents", "needs lines: an order given as one amount has no shipping of its own")
		}
		return pricing.OneLine(cur, amount), nil
	}
	if len(in.Lines) < 1 || len(in.Lines) > MaxCartLines {
		return pricing.Cart{}, models.Invalid("lines", "must hold 1 to %d lines", MaxCartLines)
	}
	if in.ShippingCents < 0 || in.ShippingCents > models.MaxMoneyCents {
		return pricing.Cart{}, models.Invalid("shipping_cents", "must be between 0 and %d", int64(models.MaxMoneyCents))
	}
	seen := make(map[string]int, len(in.Lines))
	total := in.ShippingCents
	for i := range in.Lines {
		l := &in.Lines[i]
		// The field's name is only written for an error: a valid cart of
		// many lines formats nothing.
		at := func(f string) string { return fmt.Sprintf("lines[%d].%s", i, f) }
		if !cartIDOK(l.ID, 1) {
			return pricing.Cart{}, badCartID(at("line_id"), 1)
		}
		if j, dup := seen[l.ID]; dup {
			return pricing.Cart{}, models.Invalid(at("line_id"), "is the line_id of lines[%d]: a line_id names one line of the cart", j)
		}
		seen[l.ID] = i
		if !cartIDOK(l.SKU, 1) {
			return pricing.Cart{}, badCartID(at("sku"), 1)
		}
		if !cartIDOK(l.ProductID, 0) {
			return pricing.Cart{}, badCartID(at("product_id"), 0)
		}
		if len(l.CategoryIDs) > MaxLineCategories {
			return pricing.Cart{}, models.Invalid(at("category_ids"), "must hold at most %d ids", MaxLineCategories)
		}
		for k, c := range l.CategoryIDs {
			if !cartIDOK(c, 1) {
				return pricing.Cart{}, badCartID(fmt.Sprintf("lines[%d].category_ids[%d]", i, k), 1)
			}
		}
		if l.Quantity < 1 || l.Quantity > MaxLineQuantity {
			return pricing.Cart{}, models.Invalid(at("quantity"), "must be between 1 and %d", MaxLineQuantity)
		}
		if l.UnitPriceCents < 0 || l.UnitPriceCents > models.MaxMoneyCents {
			return pricing.Cart{}, models.Invalid(at("unit_price_cents"), "must be between 0 and %d", int64(models.MaxMoneyCents))
		}
		if l.CompareAtPriceCents < 0 || l.CompareAtPriceCents > models.MaxMoneyCents {
			return pricing.Cart{}, models.Invalid(at("compare_at_price_cents"), "must be between 0 and %d", int64(models.MaxMoneyCents))
		}
		// Both factors are bounded, so the product and the sum stay far
		// from overflow before the total is checked.
		total += l.Quantity * l.UnitPriceCents
		if total > models.MaxMoneyCents {
			return pricing.Cart{}, models.Invalid("lines", "make a total over %d", int64(models.MaxMoneyCents))
		}
	}
	if total < 1 {
		return pricing.Cart{}, models.Invalid("lines", "make a total of 0: an order is at least 1")
	}
	if amount != 0 && amount != total {
		return pricing.Cart{}, models.Invalid("order_amount_cents", "is %d but the cart's total (lines and shipping) is %d: give one, or both equal", amount, total)
	}
	return pricing.Cart{Currency: cur, Lines: in.Lines, ShippingCents: in.ShippingCents}, nil
}

// cartIDOK says v is a valid id of a cart: minLen to 64 printable
// characters.
func cartIDOK(v string, minLen int) bool {
	n := utf8.RuneCountInString(v)
	if n < minLen || n > MaxCartIDLen || !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// badCartID is the answer to an id of a cart that cartIDOK refuses, naming
// its field.
func badCartID(field string, minLen int) error {
	return models.Invalid(field, "must be %d to %d printable characters", minLen, MaxCartIDLen)
}

// cartHash is the hex SHA-256 of the canonical cart (canonicalCartJSON):
// its currency, its shipping and its lines in order with every field. Two
// carts are the same order's exactly when their hashes are equal
// (docs/checkout.md, "Carts").
func cartHash(c *pricing.Cart) string {
	sum := sha256.Sum256(canonicalCartJSON(c))
	return hex.EncodeToString(sum[:])
}

// orderCart is what an order's row keeps of its cart; an amount-only order
// keeps only its currency (no hash, no shipping, no lines).
type orderCart struct {
	hash     string
	currency string
	shipping int64
	cart     *pricing.Cart
}

// orderCartOf is the orderCart of a request's priced cart: its currency
// alone when the request gave no lines.
func orderCartOf(in Cart, c *pricing.Cart) orderCart {
	if !in.Lined() {
		return orderCart{currency: c.Currency}
	}
	return orderCart{hash: cartHash(c), currency: c.Currency, shipping: c.ShippingCents, cart: c}
}

// hashArg is the cart_hash to write: NULL for an amount-only order.
func (oc orderCart) hashArg() any {
	if oc.hash == "" {
		return nil
	}
	return oc.hash
}

// lined says the order has lines.
func (oc orderCart) lined() bool { return oc.hash != "" }

// cartMismatch answers a request whose cart is not its order's.
func cartMismatch(orderID string) error {
	return &models.Error{Code: models.CodeIdempotencyMismatch, Field: "lines",
		Message: fmt.Sprintf("order %s has another cart (lines, quantities, prices, shipping or currency): every hold, confirm and redemption of an order carries its one cart", orderID)}
}
