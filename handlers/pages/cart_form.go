package pages

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// The cart form: rows of sku, category, quantity and unit price, as the
// shop's checkout and the till's sale read them.

// cartRow is one row of the cart form, as typed.
type cartRow struct {
	N                   int
	SKU, Category       string
	Quantity, Unit      string
	AmountCents         int64
	DiscountCents, Pays int64
	Parts               []itemPart
}

// padRowsTo numbers the rows and adds empty ones up to n, and always one
// empty row to type the next item in.
func padRowsTo(rows []cartRow, n int) []cartRow {
	n = max(n, len(rows)+1)
	for len(rows) < n {
		rows = append(rows, cartRow{})
	}
	for i := range rows {
		rows[i].N = i + 1
	}
	return rows
}

// readCartRows reads the rows of a cart form (fields sku, category,
// quantity, unit_price; the shop's checkout and the till's sale) as cart
// lines, at most checkout.MaxCartLines. Rows left empty are dropped (the
// form is shown again without the gaps, so that a row's number is its
// line's in the cart); the first mistake goes beside the items, naming
// its row (bad, 1-based; 0 for none).
func (p *Pages) readCartRows(c *gin.Context, errs formErrors) (rows []cartRow, lines []checkout.Line, bad int) {
	skus, cats := c.PostFormArray("sku"), c.PostFormArray("category")
	qtys, units := c.PostFormArray("quantity"), c.PostFormArray("unit_price")
	n := max(len(skus), len(qtys), len(units))
	for i := range n {
		r := cartRow{SKU: at(skus, i), Category: at(cats, i), Quantity: at(qtys, i), Unit: at(units, i)}
		if r.SKU == "" && r.Category == "" && r.Quantity == "" && r.Unit == "" {
			continue
		}
		if len(rows) == checkout.MaxCartLines {
			errs.add("items", fmt.Sprintf("A cart holds at most %d items.", checkout.MaxCartLines))
			return rows, nil, len(rows)
		}
		rows = append(rows, r)
		if bad != 0 {
			continue
		}
		line, msg := p.readCartRow(r, len(rows))
		if msg != "" {
			errs.add("items", msg)
			bad = len(rows)
			continue
		}
		lines = append(lines, line)
	}
	if bad == 0 {
		lines = capCart(errs, lines, &bad)
	}
	return rows, lines, bad
}

// capCart refuses a cart whose total is over the API's bound on an amount
// (models.MaxMoneyCents), naming the row that takes it over, so that no
// sum on the page wraps.
func capCart(errs formErrors, lines []checkout.Line, bad *int) []checkout.Line {
	var total int64
	for i, l := range lines {
		total += l.Quantity * l.UnitPriceCents // each factor is bounded: no wrap
		if total > models.MaxMoneyCents {
			errs.add("items", fmt.Sprintf("Item %d: the cart's total would be over the most an order may be.", i+1))
			*bad = i + 1
			return nil
		}
	}
	return lines
}

// readCartRow reads one typed row as a cart line, its price in the
// deployment currency's own minor units; the line's id is its row number.
// msg says what is wrong with it.
func (p *Pages) readCartRow(r cartRow, n int) (checkout.Line, string) {
	if r.SKU == "" {
		return checkout.Line{}, fmt.Sprintf("Item %d: enter the item (its SKU, such as TSHIRT-M).", n)
	}
	qty, err := strconv.ParseInt(r.Quantity, 10, 64)
	if err != nil || qty < 1 || qty > checkout.MaxLineQuantity {
		return checkout.Line{}, fmt.Sprintf("Item %d: the quantity must be a whole number from 1 to %d.", n, checkout.MaxLineQuantity)
	}
	price, ok := parseMoneyDigits(r.Unit, p.money.digits)
	if !ok || price < 0 || price > models.MaxMoneyCents {
		return checkout.Line{}, fmt.Sprintf("Item %d: enter the unit price, such as %s.", n, p.money.input(p.money.example()))
	}
	l := checkout.Line{ID: strconv.Itoa(n), SKU: r.SKU, Quantity: qty, UnitPriceCents: price}
	if r.Category != "" {
		l.CategoryIDs = []string{r.Category}
	}
	return l, ""
}

// at is s[i] trimmed, or "" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return strings.TrimSpace(s[i])
	}
	return ""
}
