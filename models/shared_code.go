package models

// Bounds of a shared code (docs/shared-codes.md).
const (
	MinSharedCodeLen = 4
	MaxSharedCodeLen = 32
)

// ParseSharedCode reads a shared code as a person may type it and returns
// its normal form, the one form stored and looked up (docs/shared-codes.md):
// letters in upper case, dashes and spaces dropped, as a coupon code is read
// (ParseCouponCode). The normal form is 4-32 letters and digits, so
// "summer-8931", "SUMMER 8931" and "SUMMER8931" are one code. A code that
// reads as a coupon code (LooksLikeCouponCode) is refused: at checkout a
// code is first read as a coupon code, and a poster code must never name
// someone's coupon. The field name is used in the error.
func ParseSharedCode(field, s string) (string, error) {
	if len(s) > maxTypedCodeLen {
		return "", Invalid(field, "must be %d to %d letters and digits (dashes and spaces are dropped)", MinSharedCodeLen, MaxSharedCodeLen)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c, keep := typedCodeByte(s[i])
		if !keep {
			continue
		}
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "", Invalid(field, "must be letters, digits, dashes and spaces: %q is none of them", rune(c))
		}
		b = append(b, c)
	}
	if len(b) < MinSharedCodeLen || len(b) > MaxSharedCodeLen {
		return "", Invalid(field, "must be %d to %d letters and digits (dashes and spaces are dropped)", MinSharedCodeLen, MaxSharedCodeLen)
	}
	code := string(b)
	if LooksLikeCouponCode(code) {
		return "", Invalid(field, "reads as a coupon code (%d characters of the code alphabet once dashes are dropped): choose another", CodeBodyLen+1)
	}
	return code, nil
}

// LooksLikeCouponCode reports whether s has the shape of a coupon code as a
// person may type it: CodeBodyLen+1 characters of CodeAlphabet once spaces
// and dashes are dropped, in either case, whatever its check character. A
// checkout reads such a code as a coupon code (a mistyped one is refused
// as mistyped) and anything else of the right shape as a shared code.
func LooksLikeCouponCode(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		c, keep := typedCodeByte(s[i])
		if !keep {
			continue
		}
		if codeIndex[c] < 0 {
			return false
		}
		n++
	}
	return n == CodeBodyLen+1
}

// IsSharedCode reports whether s is a well-formed shared code.
func IsSharedCode(s string) bool {
	_, err := ParseSharedCode("code", s)
	return err == nil
}
