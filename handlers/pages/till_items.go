package pages

import (
	"fmt"
	"strconv"
	"strings"

	"couponsvc/models"
	"couponsvc/services/checkout"
)

// itemLine is one item of a cart preview: what the coupons take off it.
type itemLine struct {
	LineID        string
	DiscountCents int64
	// Parts says each coupon's part ("ABCD-EFGH-JKLMN −$3.34").
	Parts []itemPart
}

type itemPart struct {
	Code          string
	DiscountCents int64
}

// readItems reads the checkout form's items, one a line of text:
// "item id, sku, quantity, unit price" and then its categories, each after
// a comma. A mistake is put beside the items field naming the line. None
// given is an amount-only order (nil).
func readItems(errs formErrors, value string) []checkout.Line {
	var out []checkout.Line
	n := 0
	for raw := range strings.SplitSeq(value, "\n") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		n++
		fields := strings.Split(raw, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if len(fields) < 4 {
			errs.add("items", fmt.Sprintf("Item line %d: give the item id, SKU, quantity and unit price, separated by commas.", n))
			return nil
		}
		qty, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || qty < 1 || qty > checkout.MaxLineQuantity {
			errs.add("items", fmt.Sprintf("Item line %d: the quantity must be a whole number from 1 to %d.", n, checkout.MaxLineQuantity))
			return nil
		}
		price, ok := parseMoney(fields[3])
		if !ok || price < 0 {
			errs.add("items", fmt.Sprintf("Item line %d: enter the unit price, such as 12.50.", n))
			return nil
		}
		var cats []string
		for _, c := range fields[4:] {
			if c != "" {
				cats = append(cats, c)
			}
		}
		out = append(out, checkout.Line{ID: fields[0], SKU: fields[1], Quantity: qty, UnitPriceCents: price, CategoryIDs: cats})
	}
	return out
}

// itemRefusal puts a refusal of the cart's lines beside the items field,
// naming the item line ("lines[2].quantity" is item line 3); false for
// another refusal.
func itemRefusal(errs formErrors, err error) bool {
	var e *models.Error
	if !asError(err, &e) || e.Code != models.CodeInvalidRequest || !strings.HasPrefix(e.Field, "lines") {
		return false
	}
	where := "Items"
	if i, ok := lineIndex(e.Field); ok {
		where = fmt.Sprintf("Item line %d", i+1)
	}
	name := e.Field[strings.LastIndex(e.Field, ".")+1:]
	errs.add("items", where+": "+name+" "+strings.TrimSuffix(e.Message, ".")+".")
	return true
}

// lineIndex reads the index of a field such as lines[2].quantity.
func lineIndex(field string) (int, bool) {
	rest, ok := strings.CutPrefix(field, "lines[")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "]")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(num)
	return i, err == nil
}

// itemLines are the lines of a checkout answer with lines, for the page.
func itemLines(ls []checkout.LineDiscount) []itemLine {
	out := make([]itemLine, len(ls))
	for i, l := range ls {
		out[i] = itemLine{LineID: l.LineID, DiscountCents: l.DiscountCents}
		for _, c := range l.Coupons {
			out[i].Parts = append(out[i].Parts, itemPart{Code: codeGroups(c.CouponCode), DiscountCents: c.DiscountCents})
		}
	}
	return out
}
