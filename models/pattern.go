package models

import (
	"fmt"
	"math"
	"strings"
)

// MinPatternBits is the least randomness a code pattern must keep: fewer bits
// make codes that can be guessed by trying (docs/jobs.md).
const MinPatternBits = 40

// MaxCodeLen bounds every stored code (the code column's width).
const MaxCodeLen = 64

// bitsPerChar is the randomness of one random character of the alphabet.
var bitsPerChar = math.Log2(float64(len(CodeAlphabet)))

// Pattern is a parsed code pattern such as "SPRING-####-####": '#' is a
// random code character, letters and digits are kept, dashes (and spaces)
// are only for reading and are not part of the stored code, as they are not
// part of what a person types (ParseCouponCode drops them).
type Pattern struct {
	// body is the normalised pattern without dashes; '#' marks random places.
	body   string
	random int
}

// ParsePattern checks a pattern. The empty pattern is a plain random code
// (12 random characters). Errors: CodeInvalidRequest naming field.
func ParsePattern(field, s string) (Pattern, error) {
	if s == "" {
		return Pattern{body: strings.Repeat("#", CodeBodyLen), random: CodeBodyLen}, nil
	}
	var b strings.Builder
	random := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case c == '#':
			random++
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return Pattern{}, Invalid(field, "may hold only letters, digits, dashes and # (a random character), not %q", charAt(s, i))
		}
		b.WriteByte(c)
	}
	p := Pattern{body: b.String(), random: random}
	if bits := p.Bits(); bits < MinPatternBits {
		return Pattern{}, Invalid(field, "keeps %.1f bits of randomness (%d random characters); at least %d are needed, that is %d # or more",
			bits, random, MinPatternBits, int(math.Ceil(MinPatternBits/bitsPerChar)))
	}
	if len(p.body)+1 > MaxCodeLen {
		return Pattern{}, Invalid(field, "makes codes of %d characters; at most %d", len(p.body)+1, MaxCodeLen)
	}
	if n := len(p.body) + 1; (n == CodeBodyLen || n == CodeBodyLen+2) && !strings.ContainsAny(p.body, "01IO") {
		return Pattern{}, Invalid(field, "makes codes of %d characters, which would be read as a mistyped 13-character code; add or remove a character", n)
	}
	if len(p.body)+1 == CodeBodyLen+1 && p.random != len(p.body) {
		// A 13-character code is read as a random code, whose every
		// character is checked; fixed text could collide with that format.
		if i := strings.IndexAny(s, "01IOio"); i >= 0 {
			return Pattern{}, notCodeCharacter(field, s, i)
		}
	}
	return p, nil
}

// lookalike is the code character suggested for one a 13-character code
// may not hold: a letter or digit that is not mistaken for it.
var lookalike = map[byte]byte{'0': 'D', 'O': 'Q', '1': 'L', 'I': 'J'}

// notCodeCharacter is the refusal of a 13-character pattern holding a
// character outside the code alphabet (the first at i of s, as typed): it
// names the character and suggests two patterns that are accepted, the
// character replaced by a letter like it, or the fixed text one character
// longer (a code of another length may hold any letter or digit).
func notCodeCharacter(field, s string, i int) *Error {
	bad := s[i]
	if bad >= 'a' && bad <= 'z' {
		bad -= 'a' - 'A'
	}
	var fixed strings.Builder
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if r, ok := lookalike[c]; ok {
			c = r
		}
		fixed.WriteByte(c)
	}
	longer := "X" + s
	if j := strings.LastIndexFunc(s, func(r rune) bool { return r != '#' && r != '-' && r != ' ' }); j >= 0 {
		longer = s[:j+1] + "X" + s[j+1:]
	}
	msg := fmt.Sprintf("%s: %c is not a code character (no 0, 1, I or O in a 13-character code); use another character, e.g. %s",
		s, bad, fixed.String())
	if _, err := ParsePattern(field, longer); err == nil {
		msg += fmt.Sprintf(", or make the code one character longer, e.g. %s", longer)
	}
	return Invalid(field, "%s", msg)
}

// Bits is the randomness of one code of the pattern.
func (p Pattern) Bits() float64 { return float64(p.random) * bitsPerChar }

// Len is the length of a code of the pattern, its check character included.
func (p Pattern) Len() int { return len(p.body) + 1 }

// Random is the number of random characters in a code of the pattern.
func (p Pattern) Random() int { return p.random }

// Fill makes one code from p.random random bytes (each used mod 32, which
// 256 divides: no bias), appended to dst, check character last.
func (p Pattern) Fill(dst []byte, random []byte) []byte {
	start := len(dst)
	k := 0
	for i := 0; i < len(p.body); i++ {
		c := p.body[i]
		if c == '#' {
			c = CodeAlphabet[int(random[k])%len(CodeAlphabet)]
			k++
		}
		dst = append(dst, c)
	}
	return append(dst, checkChar(string(dst[start:])))
}
