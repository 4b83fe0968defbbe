package pages

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	"github.com/gin-gonic/gin"
)

// itemsReturnPage is the data of pos_return.html: an order's items, with
// the units to return ticked, the preview of that return and its return id
// (docs/pages.md, "Returns by item").
type itemsReturnPage struct {
	basePage
	OrderID string
	// ReturnID is made when the page is shown and carried through the
	// preview to the record, so that a second click records nothing more.
	ReturnID string
	Items    *checkout.OrderItems
	// Returning is the units typed per line, by line id.
	Returning map[string]string
	Preview   *checkout.ReturnResult
	Errors    formErrors
	Focus     string
}

// returnItemsFields map the service's field names to the form's.
var returnItemsFields = map[string]string{"order_id": "order_id", "lines": "items", "return_id": "order_id"}

// returnItemsRefusals say the refusals of a return by item beside their field.
var returnItemsRefusals = map[models.Code]refusal{
	models.CodeNotRedeemed:        {"order_id", "No coupon was redeemed on this order."},
	models.CodeReturnExceedsOrder: {"items", "That is more units than are left to return of this item."},
	models.CodeBusy:               {"", msgBusy},
}

// newReturnID is the id of a return made at the till: "R-" and 10 hex
// digits, as newTillOrderID.
func newReturnID() string { return "R" + newTillOrderID()[1:] }

// showReturnItems shows an order's items to return, by number (typed, from
// the cashier's list or the order a scanned coupon was used on).
func (p *Pages) showReturnItems(c *gin.Context) {
	page := &itemsReturnPage{OrderID: truncate(strings.TrimSpace(c.Query("order_id")), 64), ReturnID: newReturnID(),
		Errors: formErrors{}}
	if page.OrderID == "" {
		page.Focus = "return-items-order"
		p.renderReturnItems(c, http.StatusOK, page)
		return
	}
	status := http.StatusOK
	if ok, err := p.loadReturnItems(c, page); err != nil {
		p.fail(c, err)
		return
	} else if !ok {
		status = http.StatusNotFound
	}
	p.renderReturnItems(c, status, page)
}

// loadReturnItems reads the order's items into the page; false (with the
// reason beside the order number) for an order the service refused.
func (p *Pages) loadReturnItems(c *gin.Context, page *itemsReturnPage) (bool, error) {
	items, err := p.checkout.OrderItems(c.Request.Context(), page.OrderID)
	if err != nil {
		if page.Errors.fromRefusal(err, returnItemsRefusals, returnItemsFields) {
			return false, nil
		}
		return false, err
	}
	page.Items = items
	return true, nil
}

// readReturnItems reads the units ticked per line ("qty" fields named by
// line id in "line_id"), leaving out the lines with none.
func readReturnItems(c *gin.Context, errs formErrors) (map[string]string, []checkout.ReturnLine) {
	ids, qtys := c.PostFormArray("line_id"), c.PostFormArray("return_qty")
	typed := map[string]string{}
	var lines []checkout.ReturnLine
	for i, id := range ids {
		q := strings.TrimSpace(at(qtys, i))
		typed[id] = q
		if q == "" || q == "0" {
			continue
		}
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n < 1 || n > checkout.MaxLineQuantity {
			errs.add("items", fmt.Sprintf("Item %d: enter how many units come back, a whole number.", i+1))
			continue
		}
		lines = append(lines, checkout.ReturnLine{LineID: id, Quantity: n})
	}
	if len(lines) == 0 && len(errs) == 0 {
		errs.add("items", "Enter how many units of each item come back.")
	}
	return typed, lines
}

// previewReturnItems shows what a return of the units ticked would hand
// back and take back (checkout.PreviewReturnLines, which changes nothing),
// with Record the return to confirm it.
func (p *Pages) previewReturnItems(c *gin.Context) { p.returnItems(c, false) }

// recordReturnItems records the return of the units ticked under the page's
// return id (checkout.ReturnLines): the same id again records nothing more.
func (p *Pages) recordReturnItems(c *gin.Context) { p.returnItems(c, true) }

// returnItems previews or records a return by item.
func (p *Pages) returnItems(c *gin.Context, record bool) {
	page := &itemsReturnPage{OrderID: strings.TrimSpace(c.PostForm("order_id")), ReturnID: strings.TrimSpace(c.PostForm("return_id")),
		Errors: formErrors{}}
	if page.ReturnID == "" || len(page.ReturnID) > 64 {
		page.ReturnID = newReturnID()
	}
	var lines []checkout.ReturnLine
	page.Returning, lines = readReturnItems(c, page.Errors)
	if ok, err := p.loadReturnItems(c, page); err != nil {
		p.fail(c, err)
		return
	} else if !ok {
		p.renderReturnItems(c, http.StatusNotFound, page)
		return
	}
	handleForm(p, c, formPost[noInput]{errs: page.Errors, read: readNothing,
		act: func(noInput) (outcome, error) {
			ctx := c.Request.Context()
			if !record {
				res, err := p.checkout.PreviewReturnLines(ctx, page.OrderID, lines)
				if err != nil {
					return outcome{}, err
				}
				page.Preview, page.Focus = res, "return-items-record"
				p.renderReturnItems(c, http.StatusOK, page)
				return outcome{}, nil
			}
			res, err := p.checkout.ReturnLines(ctx, web.Principal(c).Name, page.OrderID, page.ReturnID, lines)
			if err != nil {
				return outcome{}, err
			}
			m := p.moneyOf(res.Currency)
			msg := fmt.Sprintf("Return %s of order %s recorded: hand back %s; %s of discount taken back.", page.ReturnID,
				page.OrderID, m.format(res.RefundCents), m.format(res.DiscountReturnedCents))
			if res.Duplicate {
				msg = fmt.Sprintf("Return %s of order %s was already recorded (nothing changed): %s handed back.", page.ReturnID,
					page.OrderID, m.format(res.RefundCents))
			}
			return done(msg, "/pos/return?"+url.Values{"order_id": {page.OrderID}}.Encode()), nil
		},
		refused: func(_ noInput, err error) bool {
			return itemRefusal(page.Errors, err) || page.Errors.fromRefusal(err, returnItemsRefusals, returnItemsFields)
		},
		show: func(status int) { p.renderReturnItems(c, status, page) },
	})
}

// renderReturnItems writes the return-by-item page.
func (p *Pages) renderReturnItems(c *gin.Context, status int, page *itemsReturnPage) {
	page.basePage.Title, page.Nav = "Return items", "pos"
	if page.Focus == "" {
		page.Focus = "return-items-order"
		if page.Items != nil && page.Items.Lined && len(page.Items.Items) > 0 {
			page.Focus = "return-qty-" + page.Items.Items[0].LineID
		}
	}
	p.render(c, status, "pos_return", page)
}

// ReturningOf is the units typed for a line, for the form.
func (pg *itemsReturnPage) ReturningOf(lineID string) string { return pg.Returning[lineID] }

// RefundOf is the preview's line of lineID, nil when it returns none.
func (pg *itemsReturnPage) RefundOf(lineID string) *models.ReturnedLine {
	if pg.Preview == nil {
		return nil
	}
	for i := range pg.Preview.Lines {
		if pg.Preview.Lines[i].LineID == lineID {
			return &pg.Preview.Lines[i]
		}
	}
	return nil
}
