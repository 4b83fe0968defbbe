package pages

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"github.com/gin-gonic/gin"
)

// formErrors holds a message per form field, shown beside it; "" is the
// form as a whole.
type formErrors map[string]string

// add keeps the first message of a field; the form as a whole ("") gathers
// each of its messages.
func (f formErrors) add(field, msg string) {
	have, ok := f[field]
	switch {
	case !ok:
		f[field] = msg
	case field == "" && msg != "" && !strings.Contains(have, msg):
		f[field] = have + " " + msg
	}
}

// fromError puts a service's error beside the field it names (through
// fields, which maps API field names to form field names), or on the form;
// an error naming several fields puts each beside its own. It reports
// whether err was a domain error that the form can show.
func (f formErrors) fromError(err error, fields map[string]string) bool {
	var e *models.Error
	if !asError(err, &e) || e.Code == models.CodeInternal || e.Code == models.CodeUnavailable {
		return false
	}
	named := models.FieldsOf(err)
	if len(named) == 0 {
		named = []models.FieldError{{Field: e.Field, Message: e.Message}}
	}
	for _, fe := range named {
		field, known := fields[fe.Field]
		switch {
		case known:
			f.add(field, fieldMessage(fe.Message))
		case fe.Field != "":
			// A field this form does not have: name it in the message.
			f.add("", sentence(strings.ReplaceAll(fe.Field, "_", " ")+" "+fe.Message))
		default:
			f.add("", fieldMessage(fe.Message))
		}
	}
	return true
}

// fieldMessage turns a service message written to follow a field's name ("must
// be between 1 and 100") into one that stands beside the field.
func fieldMessage(msg string) string {
	for _, start := range []string{"is ", "must ", "would ", "may ", "give "} {
		if strings.HasPrefix(msg, start) {
			if start == "give " {
				return sentence(msg)
			}
			return sentence("this " + msg)
		}
	}
	return sentence(msg)
}

// formInt reads a whole number field; a blank one is 0 unless required.
func formInt(errs formErrors, field, value string, required bool) int64 {
	value = strings.TrimSpace(strings.ReplaceAll(value, ",", ""))
	if value == "" {
		if required {
			errs.add(field, "Enter a number.")
		}
		return 0
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		errs.add(field, "Enter a whole number, such as 100.")
		return 0
	}
	return n
}

// formMoney reads an amount field as cents; a blank one is 0 unless required.
func formMoney(errs formErrors, field, value string, required bool) int64 {
	if strings.TrimSpace(value) == "" {
		if required {
			errs.add(field, "Enter an amount, such as 12.50.")
		}
		return 0
	}
	cents, ok := parseMoney(value)
	if !ok {
		errs.add(field, "Enter an amount, such as 12.50.")
		return 0
	}
	return cents
}

// formMoneyIn reads an amount field in the deployment currency's own minor
// units (12.50 dollars, 1250 yen: no decimals), bounded by
// models.MaxMoneyCents; a blank one is 0.
func (p *Pages) formMoneyIn(errs formErrors, field, value string) int64 {
	if strings.TrimSpace(value) == "" {
		return 0
	}
	cents, ok := parseMoneyDigits(value, p.money.digits)
	if !ok || cents < 0 || cents > models.MaxMoneyCents {
		errs.add(field, "Enter an amount, such as "+p.money.input(p.money.example())+".")
		return 0
	}
	return cents
}

// formTime reads a datetime-local field as a wall time of the deployment's
// zone (docs/time.md); blank is nil. A wall time the clocks skip that day
// (the hour of a spring change) is refused, not moved: the admin picks.
// A wall time that happens twice (the autumn change) is the first of them.
func (p *Pages) formTime(errs formErrors, field, value string) *time.Time {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	for _, layout := range []string{formTimeLayout, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		wall, err := time.Parse(layout, value)
		if err != nil {
			continue
		}
		t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, p.loc)
		if t.Format(time.DateTime) != wall.Format(time.DateTime) {
			errs.add(field, "The clocks skip this time on that day in "+p.loc.String()+": enter a time before or after the change.")
			return nil
		}
		t = firstOccurrence(t).UTC()
		return checkedFormTime(errs, field, t)
	}
	if t, err := time.Parse(time.RFC3339, value); err == nil {
		return checkedFormTime(errs, field, t.UTC())
	}
	errs.add(field, "Enter a date and time, such as 2026-03-01 09:00.")
	return nil
}

// checkedFormTime keeps t when models.CheckDate, the check of every date a
// request names, lets it through; else it says why beside the field.
func checkedFormTime(errs formErrors, field string, t time.Time) *time.Time {
	if models.CheckDate(field, t) != nil {
		errs.add(field, dateRangeMsg)
		return nil
	}
	return &t
}

// dateRangeMsg is the pages' sentence for a date that models.CheckDate refuses.
var dateRangeMsg = fmt.Sprintf("Enter a date within the years %d to %d.", models.MinYear, models.MaxYear)

// firstOccurrence returns the first instant that shows t's wall time in
// t's zone: when the clocks go back, a wall time happens twice.
func firstOccurrence(t time.Time) time.Time {
	_, off := t.Zone()
	for _, back := range []time.Duration{time.Hour, 30 * time.Minute, 2 * time.Hour} {
		e := t.Add(-back)
		if _, o := e.Zone(); o != off && e.Format(time.DateTime) == t.Format(time.DateTime) {
			return e
		}
	}
	return t
}

// checkOrderID checks an order id by the service's one rule
// (models.ValidateOrderID), so that the cashier hears of a typo at once.
func checkOrderID(errs formErrors, field, id string) {
	switch {
	case id == "":
		errs.add(field, "Enter the order number.")
	case len(id) > models.MaxOrderIDLen:
		errs.add(field, "An order number has at most 64 characters.")
	case models.ValidateOrderID(field, id) != nil:
		errs.add(field, "An order number has letters, digits and . _ : @ - only (no spaces or slashes), and not dots alone.")
	}
}

// Words of refusals a cashier reads beside a field.
const (
	msgNoCoupon = "No coupon has this code. Check it and try again."
	msgBusy     = "This coupon is being used at another checkout right now. Try again in a moment."
)

// refusal is how a page says one refusal of the service: msg beside field
// ("" for the whole form); an empty msg says the error's own message.
type refusal struct{ field, msg string }

// fromRefusal puts a refused request's reason beside its field: in the words
// refusals give its result code, or else beside the field the error names
// (fromError). It reports false for faults, which get the error page.
func (f formErrors) fromRefusal(err error, refusals map[models.Code]refusal, fields map[string]string) bool {
	r, ok := refusals[models.ErrorCode(err)]
	if !ok {
		return f.fromError(err, fields)
	}
	msg := r.msg
	if msg == "" {
		var e *models.Error
		if asError(err, &e) {
			msg = sentence(e.Message)
		}
	}
	f.add(r.field, msg)
	return true
}

// readCodeOrder reads the coupon code and the order id of a checkout form,
// with their errors in errs. code is the normalised code ("" when missing or
// malformed), shown the code as the form shows it back.
func readCodeOrder(c *gin.Context, errs formErrors, fields map[string]string) (code, shown, orderID string) {
	return checkCodeOrder(strings.TrimSpace(c.PostForm("code")), strings.TrimSpace(c.PostForm("order_id")), errs, fields)
}

// checkCodeOrder checks a typed code and order number, as readCodeOrder.
func checkCodeOrder(typed, orderID string, errs formErrors, fields map[string]string) (code, shown, order string) {
	shown = typed
	if shown == "" {
		errs.add("code", "Enter or scan the coupon code.")
	} else if parsed, err := models.ParseCouponCode("code", shown); err != nil {
		errs.fromError(err, fields)
	} else {
		code, shown = parsed, codeGroups(parsed)
	}
	checkOrderID(errs, "order_id", orderID)
	return code, shown, orderID
}

// pathID parses the :id of the address; for a malformed one it answers the
// not-found page of what ("template", "token") and reports false.
func (p *Pages) pathID(c *gin.Context, what string) (int64, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		p.notFound(c, what)
		return 0, false
	}
	return id, true
}

// notFound answers the page saying there is no such thing at this address.
func (p *Pages) notFound(c *gin.Context, what string) {
	p.renderError(c, http.StatusNotFound, "Not found", "There is no "+what+" at this address.")
}
