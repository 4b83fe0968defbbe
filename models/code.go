package models

import (
	"crypto/rand"
	"strings"
	"unicode/utf8"
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

// checkChar computes the check character of body: the value that makes
// sum(c_i * 2^(n-i)) vanish in GF(32) (Damm's scheme over the quasigroup
// x*y = 2x+y, which is totally anti-symmetric). It catches every single
// mistyped character and every swap of two characters, neighbours or not. (A
// Luhn mod 32 check misses the swap of the first and last character of the
// alphabet, "2Z" read as "Z2".)
func checkChar(body string) byte {
	var acc byte
	for i := 0; i < len(body); i++ {
		// Fixed text of a pattern may hold characters outside the alphabet
		// (0, 1, I, O); they carry no check value.
		if v := codeIndex[body[i]]; v >= 0 {
			acc = gfDouble(acc) ^ byte(v)
		}
	}
	return CodeAlphabet[gfDouble(acc)]
}

// gfDouble multiplies x by 2 in GF(32), built on the primitive polynomial
// x^5 + x^2 + 1.
func gfDouble(x byte) byte {
	x <<= 1
	if x&0x20 != 0 {
		x ^= 0x25
	}
	return x
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

// maxTypedCodeLen bounds a code as typed, separators included.
const maxTypedCodeLen = 96

// typedCodeByte reads one byte of a code as a person may type it, coupon
// code or shared code alike: a dash or a space is dropped (keep false), a
// lower-case letter is read in upper case, any other byte is returned as
// it is for the caller to judge.
func typedCodeByte(c byte) (byte, bool) {
	switch {
	case c == '-' || c == ' ':
		return c, false
	case c >= 'a' && c <= 'z':
		return c - ('a' - 'A'), true
	}
	return c, true
}

// MinCodeLen is the shortest code ParseCouponCode accepts (an imported code).
const MinCodeLen = 4

// ParseCouponCode normalises a code as a person may type it (lower case,
// spaces and dashes). A code of the service's own random form (13 characters)
// must be made of the alphabet and have a valid check character, so that a
// mistyped code is refused before any lookup. Codes of any other length (4 to
// 64 letters and digits) are codes made from a pattern or imported from
// another system (docs/jobs.md): they are looked up as typed, since an
// imported code has no check character to verify. The field name is used in
// the error.
func ParseCouponCode(field, s string) (string, error) {
	if len(s) > maxTypedCodeLen {
		return "", Invalid(field, "is not a coupon code (too long)")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c, keep := typedCodeByte(s[i])
		if !keep {
			continue
		}
		if !isCodeText(c) {
			return "", Invalid(field, "is not a coupon code: %q is not a code character", charAt(s, i))
		}
		b.WriteByte(c)
	}
	code := b.String()
	if len(code) != CodeBodyLen+1 {
		if len(code) < MinCodeLen || len(code) > MaxCodeLen || nearRandomForm(code) {
			return "", Invalid(field, "is not a coupon code: it has %d characters, a code has %d (or %d to %d for imported and patterned codes)",
				len(code), CodeBodyLen+1, MinCodeLen, MaxCodeLen)
		}
		return code, nil
	}
	for i := 0; i < len(code); i++ {
		if codeIndex[code[i]] < 0 {
			return "", Invalid(field, "is not a coupon code: %q is not a code character", rune(code[i]))
		}
	}
	if checkChar(code[:CodeBodyLen]) != code[CodeBodyLen] {
		return "", Invalid(field, "is not a valid coupon code: a character is mistyped")
	}
	return code, nil
}

// charAt returns the character that starts at byte i of s, so a message names
// "É" rather than the first byte of its UTF-8 form.
func charAt(s string, i int) rune {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// nearRandomForm reports a code one character shorter or longer than the
// random form and made only of its alphabet: more likely a random code with
// a character dropped or doubled than a code of its own, so it is refused
// before any lookup. Patterns and imports do not make such codes.
func nearRandomForm(code string) bool {
	if len(code) != CodeBodyLen && len(code) != CodeBodyLen+2 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if codeIndex[code[i]] < 0 {
			return false
		}
	}
	return true
}

// isCodeText reports a capital letter or a digit.
func isCodeText(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
