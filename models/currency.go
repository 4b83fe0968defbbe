package models

import (
	"strconv"
	"strings"

	"github.com/bojanz/currency"
)

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

// moneyFormatter writes amounts as a shopper reads them in English: the
// currency's symbol where English has one ("$", "€", "¥", "CN¥"), its code
// otherwise ("KWD 1,234.500", a no-break space after the code), with the currency's own digits. One table,
// the library's (CLDR), for every page and every generated name.
var moneyFormatter, moneyFormatterShort = func() (full, short *currency.Formatter) {
	full = currency.NewFormatter(currency.NewLocale("en"))
	short = currency.NewFormatter(currency.NewLocale("en"))
	short.MinDigits = 0
	return full, short
}()

// FormatMoney writes minor units of a currency code as "$1,234.50",
// "¥1,500" or "KWD 1,234.500"; an unknown code is written "1234 XYZ".
func FormatMoney(minor int64, code string) string {
	return formatMoney(moneyFormatter, minor, code)
}

// FormatMoneyShort is FormatMoney without needless decimals: "$5",
// "€12.50", for names and sentences.
func FormatMoneyShort(minor int64, code string) string {
	return formatMoney(moneyFormatterShort, minor, code)
}

func formatMoney(f *currency.Formatter, minor int64, code string) string {
	a, err := currency.NewAmountFromInt64(minor, code)
	if err != nil {
		return strconv.FormatInt(minor, 10) + " " + code
	}
	if s := f.Format(a); minor < 0 {
		return "−" + strings.TrimPrefix(s, "-") // the minus sign, not a hyphen
	} else {
		return s
	}
}
