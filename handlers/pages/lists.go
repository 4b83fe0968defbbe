package pages

import (
	"html/template"
	"strconv"
)

// filterBar is the filter form above an admin list: a GET form of the list's
// address with one field per filter, as the "filterbar" partial of
// templates/partials.html writes it, each mistake beside its field.
type filterBar struct {
	// Action is the list's address; Clear links to it without a filter.
	Action string
	Clear  bool
	// Mark is an attribute the form is found by (data-report-form), if any.
	Mark   template.HTMLAttr
	Fields []filterField
	Submit string
	// Errors are the filters' mistakes by field name; "" is the form's.
	Errors formErrors
}

// filterField is one filter of a filterBar.
type filterField struct {
	// Name is the query parameter (and the key of its error), ID the
	// element's id.
	Name, ID string
	// Label names the field; Hint, when set, says what it takes.
	Label, Hint string
	// Type is an input's type ("text", "date"), or "select" for Options.
	Type        string
	Value       string
	Placeholder string
	Options     []filterOption
	// Verbatim fields are typed as they are (no autocomplete or spelling);
	// Code fields are coupon codes (and verbatim).
	Verbatim, Code bool
}

// filterOption is a choice of a select filter.
type filterOption struct{ Value, Label string }

// pager links the pages of a list shown newest first, a page at a time:
// Newest when the page is not the first, Older when older entries remain.
// The "pager" partial of templates/partials.html writes it.
type pager struct{ Newest, Older template.URL }

// newPager makes the links of the list at path (a page's own address
// when "") filtered by query, an encoded query string: the page shown
// starts before the id before (0: the newest) and older is the before-id of
// the next one (0: none).
func newPager(path string, query template.URL, before, older int64) pager {
	var pg pager
	base := path + "?" + string(query)
	if before != 0 {
		pg.Newest = template.URL(base)
	}
	if older > 0 {
		if query != "" {
			base += "&"
		}
		pg.Older = template.URL(base + "before=" + strconv.FormatInt(older, 10))
	}
	return pg
}
