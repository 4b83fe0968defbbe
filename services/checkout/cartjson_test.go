package checkout

import (
	"encoding/json"
	"testing"

	"github.com/couponsvc/couponsvc/services/pricing"

	"pgregory.net/rapid"
)

// canonicalLine and reflectedCartJSON are the cart's canonical JSON as
// encoding/json writes it: what order rows hashed before the JSON was
// written out, and must hash to still.
type canonicalLine struct {
	ID           string   `json:"line_id"`
	SKU          string   `json:"sku"`
	ProductID    string   `json:"product_id"`
	CategoryIDs  []string `json:"category_ids"`
	Quantity     int64    `json:"quantity"`
	UnitPrice    int64    `json:"unit_price_cents"`
	Discountable bool     `json:"discountable"`
	CompareAt    int64    `json:"compare_at_price_cents,omitempty"`
}

func reflectedCartJSON(t *rapid.T, c *pricing.Cart) string {
	lines := make([]canonicalLine, len(c.Lines))
	for i, l := range c.Lines {
		cats := l.CategoryIDs
		if cats == nil {
			cats = []string{}
		}
		lines[i] = canonicalLine{ID: l.ID, SKU: l.SKU, ProductID: l.ProductID, CategoryIDs: cats,
			Quantity: l.Quantity, UnitPrice: l.UnitPriceCents, Discountable: !l.NotDiscountable, CompareAt: l.CompareAtPriceCents}
	}
	b, err := json.Marshal(struct {
		Currency string          `json:"currency"`
		Shipping int64           `json:"shipping_cents"`
		Lines    []canonicalLine `json:"lines"`
	}{c.Currency, c.ShippingCents, lines})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Any string, printable or not, HTML-sensitive or not: the written-out
// JSON of a cart and of a line's categories is encoding/json's, byte for
// byte, so an order's stored cart_hash and category_ids read the same.
func TestCartJSONIsEncodingJSON(t *testing.T) {
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[ -~]{0,12}`), rapid.SampledFrom([]string{"", `a"b`, `\`, "<&>", "é", "\u2028", "\x00", "\xff"}))
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 4).Draw(t, "lines")
		c := &pricing.Cart{Currency: str.Draw(t, "currency"), ShippingCents: rapid.Int64().Draw(t, "shipping")}
		if n > 0 || rapid.Bool().Draw(t, "empty lines") {
			c.Lines = make([]pricing.Line, n)
		}
		for i := range c.Lines {
			l := pricing.Line{ID: str.Draw(t, "id"), SKU: str.Draw(t, "sku"), ProductID: str.Draw(t, "product"),
				Quantity: rapid.Int64().Draw(t, "qty"), UnitPriceCents: rapid.Int64().Draw(t, "price"), NotDiscountable: rapid.Bool().Draw(t, "nd"),
				CompareAtPriceCents: rapid.SampledFrom([]int64{0, 1, -5, 1 << 40}).Draw(t, "compare")}
			if k := rapid.IntRange(-1, 3).Draw(t, "cats"); k >= 0 {
				l.CategoryIDs = make([]string, k)
				for j := range l.CategoryIDs {
					l.CategoryIDs[j] = str.Draw(t, "cat")
				}
			}
			c.Lines[i] = l
			want := "<nil>"
			if len(l.CategoryIDs) > 0 {
				b, _ := json.Marshal(l.CategoryIDs)
				want = string(b)
			}
			got := "<nil>"
			if p := categoriesJSON(l.CategoryIDs); p != nil {
				got = *p
			}
			if got != want {
				t.Fatalf("categories %q: %s, encoding/json %s", l.CategoryIDs, got, want)
			}
		}
		if got, want := string(canonicalCartJSON(c)), reflectedCartJSON(t, c); got != want {
			t.Fatalf("cart JSON\n got %s\nwant %s", got, want)
		}
	})
}
