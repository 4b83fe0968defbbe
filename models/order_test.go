package models

import (
	"strings"
	"testing"
)

func TestValidateOrderID(t *testing.T) {
	for _, ok := range []string{"o1", "A", "Az09._:@-", ".a", "a..", "...a", "web-1", strings.Repeat("z", 64)} {
		if err := ValidateOrderID("order_id", ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "...", "a/b", "/", "a\\b", "a b", "a?b", "a#b", "a%2Fb", "a+b", "a&b", "a=b",
		"a~b", "ordré", "订单", "a\x00", "a\tb", strings.Repeat("z", 65)} {
		err := ValidateOrderID("return_id", bad)
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalidRequest || e.Field != "return_id" {
			t.Errorf("%q: %v, want invalid_request naming return_id", bad, err)
		}
	}
}
