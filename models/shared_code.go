package models

import "strings"

// Bounds of a shared code (docs/shared-codes.md).
const (
	MinSharedCodeLen = 4
	MaxSharedCodeLen = 32
)

// ParseSharedCode normalises a shared code as a person may type it: 4-32
// letters, digits and dashes, compared without case, so it is returned in
// upper case. A code that reads as a coupon code (ParseCouponCode accepts
// it) is refused: at checkout a code is first read as a coupon code, and a
// poster code must never name someone's coupon. The field name is used in
// the error.
func ParseSharedCode(field, s string) (string, error) {
	if len(s) < MinSharedCodeLen || len(s) > MaxSharedCodeLen {
		return "", Invalid(field, "must be %d to %d letters, digits and dashes", MinSharedCodeLen, MaxSharedCodeLen)
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - ('a' - 'A')
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
		default:
			return "", Invalid(field, "must be letters, digits and dashes: %q is none of them", rune(c))
		}
	}
	code := string(b)
	if strings.Trim(code, "-") == "" {
		return "", Invalid(field, "must hold a letter or a digit")
	}
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
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
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
