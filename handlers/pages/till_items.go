package pages

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
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
