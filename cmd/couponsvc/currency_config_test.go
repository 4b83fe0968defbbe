package main

import (
	"strings"
	"testing"
)

// TestLoadCurrency: COUPON_CURRENCY is an ISO 4217 code in upper case, USD
// when not set; anything else stops the service naming the variable.
func TestLoadCurrency(t *testing.T) {
	get := func(v string) func(string) string {
		return func(k string) string {
			if k == "COUPON_CURRENCY" {
				return v
			}
			return ""
		}
	}
	for env, want := range map[string]string{"": "USD", "EUR": "EUR", "JPY": "JPY", "KWD": "KWD"} {
		if c, err := loadConfig(get(env)); err != nil || c.Currency != want {
			t.Errorf("%q: %q, %v; want %s", env, c.Currency, err, want)
		}
	}
	for _, bad := range []string{"usd", "XYZ", "EURO", " EUR", "€"} {
		if _, err := loadConfig(get(bad)); err == nil || !strings.Contains(err.Error(), "COUPON_CURRENCY must be an ISO 4217 code") {
			t.Errorf("%q: %v, want COUPON_CURRENCY refused", bad, err)
		}
	}
}
