package models

import "github.com/bojanz/currency"

// DefaultCurrency is the deployment's currency when COUPON_CURRENCY is not set.
const DefaultCurrency = "USD"

// ValidateCurrency checks an ISO 4217 currency code (upper case, as
// "USD"), naming field when it is not one.
func ValidateCurrency(field, code string) error {
	if code == "" || !currency.IsValid(code) {
		return Invalid(field, "must be an ISO 4217 currency code such as USD, EUR or JPY")
	}
	return nil
}

// CurrencyDigits is the number of minor-unit digits of a valid currency
// (2 for USD, 0 for JPY, 3 for KWD).
func CurrencyDigits(code string) int {
	d, ok := currency.GetDigits(code)
	if !ok {
		return 2
	}
	return int(d)
}
