package api

import (
	"fmt"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// cartFields are the fields of a request's cart (docs/checkout.md,
// "Carts"), as the requests of validate, hold, confirm, the one-step
// redemption and usable carry them (currency, lines, shipping_cents):
// embedded in the requests that describe them alike, stated again by
// confirm, whose lines are the held cart's.
type cartFields struct {
	Currency      *string    `json:"currency" schema:"currency" doc:"the cart's currency (ISO 4217); default the deployment's; a coupon of another currency is refused currency_mismatch"`
	Lines         []cartLine `json:"lines" schema:"cart_lines" doc:"the order's lines, 1 to 500 (docs/checkout.md, Carts); without lines, order_amount_cents is a cart of one line \"order\"; with both, order_amount_cents must be the cart's total (lines and shipping)"`
	ShippingCents *int64     `json:"shipping_cents" schema:"shipping" doc:"the shipping amount of a cart with lines (default 0)"`
	// Customer and Channel are what templates' eligibility rules read
	// (docs/eligibility.md).
	Customer *customerFields `json:"customer" doc:"what the shop knows of the customer, for the templates' eligibility rules (docs/eligibility.md); left out: a customer with no orders and no tags"`
	Channel  *string         `json:"channel" schema:"channel" doc:"where the order is placed, for the templates' eligibility rules: web, till or api; left out: none"`
}

// customerFields is what the shop knows of the customer: an unnamed
// struct, so that the document describes it in place, with its limits.
type customerFields = struct {
	OrdersCount *int64   `json:"orders_count" schema:"orders_count" doc:"the customer's orders before this one (0: a first order)"`
	Tags        []string `json:"tags" schema:"customer_tags" doc:"the shop's tags of the customer (segments), each once or more, as the shop names them"`
}

// cartLine is one line of a request's cart.
type cartLine struct {
	LineID         *string  `json:"line_id" binding:"required" schema:"cart_id" doc:"the line's id, unique in the cart"`
	SKU            *string  `json:"sku" binding:"required" schema:"cart_id"`
	ProductID      *string  `json:"product_id" schema:"product_id"`
	CategoryIDs    []string `json:"category_ids" schema:"category_ids"`
	Quantity       *int64   `json:"quantity" binding:"required" schema:"line_quantity"`
	UnitPriceCents *int64   `json:"unit_price_cents" binding:"required" schema:"unit_price" doc:"one unit's price; the line's amount is quantity × unit_price_cents"`
	Discountable   *bool    `json:"discountable" doc:"false: no coupon discounts this line (default true)"`
	// CompareAtPriceCents is the unit's price before the shop's markdown.
	CompareAtPriceCents *int64 `json:"compare_at_price_cents" schema:"unit_price" doc:"one unit's price before the shop's own markdown (0 or left out: none); above unit_price_cents, the line is marked down and coupons for full-price items only skip it"`
}

// cart turns the request's cart fields into the service's cart: Lines nil
// when none were given. A line's required field left out is 400 naming it
// (lines[2].unit_price_cents); the service checks every bound.
func (f *cartFields) cart() (checkout.Cart, error) {
	var out checkout.Cart
	if f.Currency != nil {
		if *f.Currency == "" {
			return out, models.Invalid("currency", "must be an ISO 4217 currency code (or left out)")
		}
		out.Currency = *f.Currency
	}
	if f.ShippingCents != nil {
		out.ShippingCents = *f.ShippingCents
	}
	if f.Channel != nil {
		if *f.Channel == "" {
			return out, models.Invalid("channel", "must be web, till or api (or left out)")
		}
		out.Channel = *f.Channel
	}
	if f.Customer != nil {
		out.Customer = &checkout.Customer{Tags: f.Customer.Tags}
		if f.Customer.OrdersCount != nil {
			out.Customer.OrdersCount = *f.Customer.OrdersCount
		}
	}
	if f.Lines == nil {
		return out, nil
	}
	out.Lines = make([]checkout.Line, len(f.Lines))
	for i, l := range f.Lines {
		at := func(name string) string { return fmt.Sprintf("lines[%d].%s", i, name) }
		switch {
		case l.LineID == nil:
			return out, models.Invalid(at("line_id"), "is required")
		case l.SKU == nil:
			return out, models.Invalid(at("sku"), "is required")
		case l.Quantity == nil:
			return out, models.Invalid(at("quantity"), "is required")
		case l.UnitPriceCents == nil:
			return out, models.Invalid(at("unit_price_cents"), "is required")
		}
		pl := checkout.Line{ID: *l.LineID, SKU: *l.SKU, CategoryIDs: l.CategoryIDs, Quantity: *l.Quantity, UnitPriceCents: *l.UnitPriceCents}
		if l.ProductID != nil {
			pl.ProductID = *l.ProductID
		}
		if l.Discountable != nil {
			pl.NotDiscountable = !*l.Discountable
		}
		if l.CompareAtPriceCents != nil {
			pl.CompareAtPriceCents = *l.CompareAtPriceCents
		}
		out.Lines[i] = pl
	}
	return out, nil
}

// orderAmount reads an optional order_amount_cents: 0 when left out (then
// the lines give it).
func orderAmount(p *int64) (int64, error) {
	if p == nil {
		return 0, nil
	}
	if *p < 1 || *p > models.MaxMoneyCents {
		return 0, models.Invalid("order_amount_cents", "must be between 1 and %d (or left out with lines)", int64(models.MaxMoneyCents))
	}
	return *p, nil
}

// orderBody is a request that carries an order: its amount field and its
// cart fields.
type orderBody interface {
	orderFields() (*int64, *cartFields)
}

func (r *usableRequest) orderFields() (*int64, *cartFields) { return r.OrderAmountCents, &r.cartFields }
func (r *redeemRequest) orderFields() (*int64, *cartFields) { return r.OrderAmountCents, &r.cartFields }

// bindOrder binds the body into a new request and reads the order's amount
// and cart from it: ok false when it answered the error instead.
func bindOrder[T any, P interface {
	*T
	orderBody
}](c *gin.Context) (req P, amount int64, cart checkout.Cart, ok bool) {
	req = new(T)
	if !web.BindJSON(c, req) {
		return nil, 0, cart, false
	}
	amount, cart, err := cartRequest(req.orderFields())
	if err != nil {
		web.RespondError(c, err)
		return nil, 0, cart, false
	}
	return req, amount, cart, true
}

// cartRequest reads the amount and the cart of a request.
func cartRequest(amount *int64, f *cartFields) (int64, checkout.Cart, error) {
	a, err := orderAmount(amount)
	if err != nil {
		return 0, checkout.Cart{}, err
	}
	c, err := f.cart()
	return a, c, err
}

// cartAnswer is the order's currency, which every answer on an order
// carries, and what an answer with lines adds (left out for an amount-only
// request).
type cartAnswer struct {
	Currency              string                  `json:"currency" schema:"currency" doc:"the currency of every amount of the answer: the order's (its cart's; an amount-only order's as given, by default the deployment's)"`
	Lines                 []checkout.LineDiscount `json:"lines,omitempty" doc:"a cart with lines: each line's discount and each coupon's part of it, in the cart's order; they add up to discount_cents with shipping_discount_cents"`
	ShippingDiscountCents *int64                  `json:"shipping_discount_cents,omitempty" doc:"a cart with lines: the discount on the shipping"`
}
