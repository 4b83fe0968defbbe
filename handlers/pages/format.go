package pages

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// moneyFormat shows integer minor units as an amount of one currency, with
// the currency's digits (2 for USD, 0 for JPY, 3 for KWD).
type moneyFormat struct {
	code   string
	digits int
}

func newMoneyFormat(code string) moneyFormat {
	code = strings.ToUpper(strings.TrimSpace(code))
	if code == "" {
		code = models.DefaultCurrency
	}
	return moneyFormat{code: code, digits: models.CurrencyDigits(code)}
}

// pow10 is 10^n for the digits of a currency (0..4).
func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// format writes minor units as "$1,234.50", "¥1,235", "KWD 1,234.500"
// (models.FormatMoney).
func (m moneyFormat) format(cents int64) string { return models.FormatMoney(cents, m.code) }

// input writes minor units as a form value: "12.50" ("1250" in yen), ""
// for zero.
func (m moneyFormat) input(cents int64) string {
	if cents == 0 {
		return ""
	}
	if m.digits == 0 {
		return strconv.FormatInt(cents, 10)
	}
	unit := pow10(m.digits)
	return fmt.Sprintf("%d.%0*d", cents/unit, m.digits, cents%unit)
}

// example is an amount to show in a hint: 12.50 in a currency with minor
// units, 1250 in one without.
func (m moneyFormat) example() int64 {
	if m.digits == 0 {
		return 1250
	}
	return 1250 * pow10(m.digits) / 100
}

// moneyInput writes cents as a form value: "12.50", "" for zero.
func moneyInput(cents int64) string { return newMoneyFormat("USD").input(cents) }

// parseMoney reads an amount with two decimals typed by a person ("12",
// "12.5", "1,234.50", "12,50", "$12") as cents.
func parseMoney(s string) (int64, bool) { return parseMoneyDigits(s, 2) }

// parseMoneyDigits reads an amount typed by a person in a currency of
// digits minor digits as minor units: at most digits decimals; a comma
// followed by at most digits figures is a decimal comma.
func parseMoneyDigits(s string, digits int) (int64, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "$€£¥₹₩ ")
	s = strings.NewReplacer(" ", "", "\u00a0", "", "_", "").Replace(s)
	if strings.Contains(s, ".") {
		s = strings.ReplaceAll(s, ",", "")
	} else if i := strings.LastIndex(s, ","); i >= 0 {
		if digits > 0 && strings.Count(s, ",") == 1 && len(s)-i-1 <= min(digits, 2) {
			s = s[:i] + "." + s[i+1:] // a decimal comma
		} else {
			s = strings.ReplaceAll(s, ",", "")
		}
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || (hasFrac && (len(frac) < 1 || len(frac) > digits)) {
		return 0, false
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return 0, false
			}
		}
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, false
	}
	var f int64
	if hasFrac {
		frac += strings.Repeat("0", digits-len(frac))
		f, _ = strconv.ParseInt(frac, 10, 64)
	}
	return w*pow10(digits) + f, true
}

// Times are read and shown in the deployment's time zone (Options.Location,
// docs/time.md), on the server: a form and the details beside it show the
// same wall time, whatever the reader's browser thinks.
const (
	dateTimeLayout = "2 Jan 2006, 15:04:05 MST" // MST: the zone's abbreviation, or its offset
	dateLayout     = "2 Jan 2006"
	formTimeLayout = "2006-01-02T15:04" // <input type="datetime-local">
)

// dateTime writes an instant as the deployment's wall time with seconds and
// the zone's abbreviation: "8 Mar 2026, 03:00:00 EDT".
func (p *Pages) dateTime(t time.Time) string { return t.In(p.loc).Format(dateTimeLayout) }

// formValue writes an instant as a datetime-local value in the deployment's
// zone, with its seconds when it has some, so that saving the form
// unchanged keeps the instant.
func (p *Pages) formValue(t time.Time) string {
	l := t.In(p.loc)
	if l.Second() != 0 {
		return l.Format("2006-01-02T15:04:05")
	}
	return l.Format(formTimeLayout)
}

// untilTime writes the end of a validity: a local midnight is the end of
// the day before ("the end of 8 Mar 2026 (midnight EDT)"), so that a coupon
// valid until midnight does not read as valid on the day that starts then.
func (p *Pages) untilTime(t time.Time) string {
	l := t.In(p.loc)
	if before := l.Add(-time.Nanosecond); before.Day() != l.Day() {
		return "the end of " + before.Format(dateLayout) + " (midnight " + l.Format("MST") + ")"
	}
	return p.dateTime(t)
}

// funcs are the template functions of the pages.
func (p *Pages) funcs() template.FuncMap {
	return template.FuncMap{
		"money":      p.money.format,
		"jobKind":    jobKind,
		"jobVerb":    jobVerb,
		"moneyInput": moneyInput,
		"dateTime":   p.dateTime,
		// dateTimeSec is for records (audit, histories), where events a few
		// seconds apart must read in order: dateTime shows the seconds.
		"dateTimeSec": p.dateTime,
		"untilTime":   p.untilTime,
		"date":        func(t time.Time) string { return t.In(p.loc).Format(dateLayout) },
		"isoTime":     func(t time.Time) string { return t.In(p.loc).Format(time.RFC3339) },
		"zone":        func() string { return p.loc.String() },
		"formTime": func(t *time.Time) string {
			if t == nil || t.IsZero() {
				return ""
			}
			return p.formValue(*t)
		},
		"codeGroups": codeGroups,
		"statusWord": statusWord,
		"qr":         qrSVG,
		"valueText":  p.valueText,
		"moneyIn":    p.moneyIn,
		"targetText": targetText,
		"conditions": p.conditions,
		"validity":   p.validityText,
		"deref":      deref,
		"percent": func(part, whole int64) int64 {
			if whole <= 0 {
				return 0
			}
			return min(max(part*100/whole, 0), 100)
		},
		"add":        func(a, b int64) int64 { return a + b },
		"sub":        func(a, b int64) int64 { return a - b },
		"plural":     plural,
		"title":      sentence,
		"targetLink": targetLink,
		"codeField":  newFormField,
		"nameField":  newFormField,
		"kindNumber": func(id, label, hint, kind, maxValue, value, placeholder, err string) kindNumber {
			return kindNumber{ID: id, Label: label, Hint: hint, Kind: kind, Max: maxValue, Value: value, Placeholder: placeholder, Error: err}
		},
		"deleteForm": func(action, what, because, title, csrf string) deleteForm {
			return deleteForm{Action: action, What: what, Because: because, Title: title, CSRFToken: csrf}
		},
		"int64": func(n int) int64 { return int64(n) },
		"fe":    func(id, msg string) fieldErr { return fieldErr{ID: id, Msg: msg} },
		// maxRule bounds the eligibility rule's fields (docs/eligibility.md).
		"maxRule": func() int { return models.MaxEligibilityRunes },
	}
}

// fieldErr is a form field's id and its error ("" for none), for the
// partials "invalid" and "ferror" (partials.html).
type fieldErr struct{ ID, Msg string }

// formField is a text field of a form, its id, value and error ("" for
// none), for the partials "codefield" and "namefield" (partials.html).
type formField struct{ ID, Value, Error string }

// kindNumber is a whole-number field of the new template form that one kind
// of coupon requires (1 to Max), for the partial "kindnumber"
// (partials.html): Hint, when given, follows the label.
type kindNumber struct{ ID, Label, Hint, Kind, Max, Value, Placeholder, Error string }

// deleteForm is the Delete button of a page of one object, for the partial
// "deleteform" (partials.html): What names the object, Because says why it
// may go for good, Title when the button is there.
type deleteForm struct{ Action, What, Because, Title, CSRFToken string }

func newFormField(id, value, err string) formField {
	return formField{ID: id, Value: value, Error: err}
}

// targetLink is the console page of an audit entry's object, when it has one.
func targetLink(target string) string {
	if id, ok := strings.CutPrefix(target, "template:"); ok {
		if _, err := strconv.ParseInt(id, 10, 64); err == nil {
			return "/admin/templates/" + id
		}
	}
	if id, ok := strings.CutPrefix(target, "token:"); ok {
		if _, err := strconv.ParseInt(id, 10, 64); err == nil {
			return "/admin/tokens#token-" + id
		}
	}
	return ""
}

// codeGroups writes a coupon code in groups that are easy to read out:
// "ABCD-EFGH-JKLMN".
func codeGroups(code string) string {
	if len(code) != models.CodeBodyLen+1 {
		return code
	}
	return code[:4] + "-" + code[4:8] + "-" + code[8:]
}

// moneyOf is the format of a template's or campaign's currency: the
// deployment's when code is empty.
func (p *Pages) moneyOf(code string) moneyFormat {
	if code == "" || code == p.money.code {
		return p.money
	}
	return newMoneyFormat(code)
}

// moneyIn writes minor units of the currency code ("" for the deployment's).
func (p *Pages) moneyIn(code string, cents int64) string { return p.moneyOf(code).format(cents) }

// valueText says what a coupon does, in its template's currency, with
// models.DescribeTemplate ("$5 off shoes", "20% off shirts, up to $15"):
// every page says a coupon with it (docs/pages.md, "Every coupon in
// words").
func (p *Pages) valueText(t models.Template) string {
	return models.DescribeTemplate(&t, p.moneyOf(t.Currency).short)
}

// short writes minor units as format does, without zero minor units
// ("$25", "$2.50").
func (m moneyFormat) short(cents int64) string {
	s := m.format(cents)
	if m.digits > 0 && cents%pow10(m.digits) == 0 {
		s = strings.Replace(s, "."+strings.Repeat("0", m.digits), "", 1)
	}
	return s
}

// conditions lists a template's conditions in words.
func (p *Pages) conditions(t models.Template) []string {
	var out []string
	if t.MinOrderCents > 0 {
		out = append(out, "On orders of "+p.moneyIn(t.Currency, t.MinOrderCents)+" or more")
	} else {
		out = append(out, "On any order")
	}
	if t.MinQuantity > 0 {
		out = append(out, fmt.Sprintf("With %d or more items", t.MinQuantity))
	}
	if t.PerUserLimit == 1 {
		out = append(out, "One per person")
	} else {
		out = append(out, fmt.Sprintf("Up to %d per person", t.PerUserLimit))
	}
	return out
}

// targetText says which lines an items template applies to, one phrase
// per list: "SKUs: A, B", "not in categories: sale".
func targetText(tt models.TemplateTarget) []string {
	var out []string
	for _, l := range []struct {
		words string
		list  []string
	}{
		{"SKUs", tt.SKUs}, {"products", tt.ProductIDs}, {"categories", tt.CategoryIDs},
		{"not SKUs", tt.ExcludeSKUs}, {"not products", tt.ExcludeProductIDs}, {"not in categories", tt.ExcludeCategoryIDs},
	} {
		if len(l.list) > 0 {
			out = append(out, l.words+": "+strings.Join(l.list, ", "))
		}
	}
	return out
}

// validityText says how long a template's coupons are valid: N days after
// the day of the claim, to midnight of the deployment's zone (docs/time.md).
func (p *Pages) validityText(t models.Template) string {
	if t.ValidDays > 0 {
		if t.ValidDays == 1 {
			return "Valid for the day you claim it and 1 more day, until midnight (" + p.loc.String() + ")"
		}
		return fmt.Sprintf("Valid for the day you claim it and %d more days, until midnight (%s)", t.ValidDays, p.loc.String())
	}
	if t.ValidFrom != nil && t.ValidUntil != nil {
		return "Valid " + p.dateTime(*t.ValidFrom) + " to " + p.untilTime(*t.ValidUntil)
	}
	return ""
}

// jobKind names a job's kind for people.
func jobKind(kind string) string {
	switch kind {
	case models.JobGenerate:
		return "make codes"
	case models.JobImport:
		return "import codes"
	case models.JobIssue:
		return "issue to a list"
	}
	return kind
}

// jobVerb says what a job does to a row that is not refused, for its
// summary ("5 imported, 1 refused").
func jobVerb(kind string) string {
	switch kind {
	case models.JobGenerate:
		return "made"
	case models.JobImport:
		return "imported"
	case models.JobIssue:
		return "issued"
	}
	return "done"
}
