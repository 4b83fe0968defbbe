package web

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

// A number of the wrong type inside an array is named with its index, as
// the request's schema names it, not with encoding/json's "lines.quantity".
func TestDecodeNamesArrayIndex(t *testing.T) {
	type line struct {
		LineID   string `json:"line_id"`
		Quantity int64  `json:"quantity"`
	}
	type nested struct {
		Groups []struct {
			Lines []line `json:"lines"`
		} `json:"groups"`
	}
	type request struct {
		OrderID string  `json:"order_id"`
		Lines   []line  `json:"lines"`
		Nested  *nested `json:"nested,omitempty"`
		Amount  int64   `json:"amount"`
	}
	for _, tc := range []struct {
		body, field string
	}{
		{`{"lines":[{"line_id":"a","quantity":"2"}]}`, "lines[0].quantity"},
		{`{"lines":[{"line_id":"a","quantity":1},{"line_id":"b","quantity":1.5}]}`, "lines[1].quantity"},
		{`{"lines":[{"line_id":"a","quantity":1},{"quantity":1,"line_id":"b"},{"line_id":"c","quantity":99999999999999999999}]}`, "lines[2].quantity"},
		{`{"order_id":"o","lines":[{"line_id":7}]}`, "lines[0].line_id"},
		{`{"nested":{"groups":[{"lines":[]},{"lines":[{"quantity":1},{"quantity":{}}]}]}}`, "nested.groups[1].lines[1].quantity"},
		{`{"amount":"12"}`, "amount"},
		{`{"lines":{"line_id":"a"}}`, "lines"},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		var dst request
		err := DecodeJSON(r, &dst)
		e, ok := err.(*models.Error)
		if !ok || e.Code != models.CodeInvalidRequest || e.Field != tc.field {
			t.Errorf("%s: %v, want invalid_request naming %s", tc.body, err, tc.field)
		}
	}
}
