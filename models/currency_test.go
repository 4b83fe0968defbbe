package models

import (
	"errors"
	"testing"
)

func TestValidateCurrency(t *testing.T) {
	for _, code := range []string{"USD", "EUR", "JPY", "KWD"} {
		if err := ValidateCurrency("currency", code); err != nil {
			t.Errorf("%s: %v", code, err)
		}
	}
	for _, code := range []string{"", "usd", "US", "XYZ1", "ABC"} {
		err := ValidateCurrency("currency", code)
		var e *Error
		if !errors.As(err, &e) || e.Field != "currency" {
			t.Errorf("%q: %v, want an error naming currency", code, err)
		}
	}
	for code, want := range map[string]int{"USD": 2, "JPY": 0, "KWD": 3} {
		if got := CurrencyDigits(code); got != want {
			t.Errorf("CurrencyDigits(%s) = %d, want %d", code, got, want)
		}
	}
}
