package checkout

import (
	"encoding/json"
	"strconv"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// The JSON a cart is kept and hashed as (docs/statements.md, "What a
// request costs the service"), written out without encoding/json's
// reflection: byte for byte what json.Marshal gives for the same values,
// which TestCartJSONIsEncodingJSON holds it to.

// appendJSONString appends s as a JSON string, as json.Marshal writes it:
// a string of printable ASCII but the few characters it escapes (", \ and
// the HTML-sensitive <, > and &) is written as it is; any other goes
// through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// appendJSONStrings appends list as a JSON array of strings ("null" for a
// nil list, as json.Marshal).
func appendJSONStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// categoriesJSON is the category_ids column of a line: its ids as a JSON
// array, NULL (nil) for a line without any.
func categoriesJSON(ids []string) *string {
	if len(ids) == 0 {
		return nil
	}
	s := string(appendJSONStrings(make([]byte, 0, 8+len(ids)*12), ids))
	return &s
}

// canonicalCartJSON is the cart as its hash reads it: its currency, its
// shipping and its lines in order with every field, in a fixed order
// (currency, shipping_cents, lines; line_id, sku, product_id,
// category_ids, quantity, unit_price_cents, discountable,
// compare_at_price_cents when not 0), category_ids [] when a line has none.
func canonicalCartJSON(c *pricing.Cart) []byte {
	b := make([]byte, 0, 64+len(c.Lines)*160)
	b = append(b, `{"currency":`...)
	b = appendJSONString(b, c.Currency)
	b = append(b, `,"shipping_cents":`...)
	b = strconv.AppendInt(b, c.ShippingCents, 10)
	b = append(b, `,"lines":[`...)
	for i := range c.Lines {
		l := &c.Lines[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"line_id":`...)
		b = appendJSONString(b, l.ID)
		b = append(b, `,"sku":`...)
		b = appendJSONString(b, l.SKU)
		b = append(b, `,"product_id":`...)
		b = appendJSONString(b, l.ProductID)
		b = append(b, `,"category_ids":`...)
		if l.CategoryIDs == nil {
			b = append(b, "[]"...)
		} else {
			b = appendJSONStrings(b, l.CategoryIDs)
		}
		b = append(b, `,"quantity":`...)
		b = strconv.AppendInt(b, l.Quantity, 10)
		b = append(b, `,"unit_price_cents":`...)
		b = strconv.AppendInt(b, l.UnitPriceCents, 10)
		b = append(b, `,"discountable":`...)
		b = strconv.AppendBool(b, !l.NotDiscountable)
		// Left out when 0, so that a cart without compare-at prices keeps
		// the hash it had before they existed.
		if l.CompareAtPriceCents != 0 {
			b = append(b, `,"compare_at_price_cents":`...)
			b = strconv.AppendInt(b, l.CompareAtPriceCents, 10)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
