package models

import (
	"crypto/rand"
	"strings"
)

// CodeAlphabet is the alphabet of coupon codes: digits and capitals without the
// look-alikes 0/O and 1/I, so that a code read aloud or typed from paper is
// unambiguous.
const CodeAlphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// CodeBodyLen is the number of random characters in a code (60 bits); one
// check character follows them.
const CodeBodyLen = 12

var codeIndex = func() [256]int8 {
	var idx [256]int8
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < len(CodeAlphabet); i++ {
		idx[CodeAlphabet[i]] = int8(i)
	}
	return idx
}()

// checkChar computes the Luhn mod N check character of body, which catches
// every single mistyped character and every swap of two neighbours.
func checkChar(body string) byte {
	const n = len(CodeAlphabet)
	factor, sum := 2, 0
	for i := len(body) - 1; i >= 0; i-- {
		addend := factor * int(codeIndex[body[i]])
		factor = 3 - factor
		sum += addend/n + addend%n
	}
	return CodeAlphabet[(n-sum%n)%n]
}

// NewCouponCode returns a fresh random code with its check character.
func NewCouponCode() string {
	var raw [CodeBodyLen]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported systems
	}
	var b strings.Builder
	b.Grow(CodeBodyLen + 1)
	for _, r := range raw {
		b.WriteByte(CodeAlphabet[int(r)%len(CodeAlphabet)]) // 256 is a multiple of 32: no bias
	}
	body := b.String()
	return body + string(checkChar(body))
}

// ParseCouponCode normalises a code as a person may type it (lower case,
// spaces and dashes) and verifies its check character, so that a mistyped code
// is refused before any lookup. The field name is used in the error.
func ParseCouponCode(field, s string) (string, error) {
	if len(s) > 64 {
		return "", Invalid(field, "is not a coupon code (too long)")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		if codeIndex[c] < 0 {
			return "", Invalid(field, "is not a coupon code: %q is not a code character", rune(s[i]))
		}
		b.WriteByte(c)
	}
	code := b.String()
	if len(code) != CodeBodyLen+1 {
		return "", Invalid(field, "is not a coupon code: it has %d characters, a code has %d", len(code), CodeBodyLen+1)
	}
	if checkChar(code[:CodeBodyLen]) != code[CodeBodyLen] {
		return "", Invalid(field, "is not a valid coupon code: a character is mistyped")
	}
	return code, nil
}
