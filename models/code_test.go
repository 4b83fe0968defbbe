package models_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/models"
)

// testCodes are valid codes that the tests mutate: fixed ones that put the
// alphabet's first and last characters next to each other (the swap a Luhn
// mod 32 check misses), and freshly drawn ones.
func testCodes(t *testing.T, fresh int) []string {
	t.Helper()
	var codes []string
	for _, body := range []string{"AAAAAAAAAA2Z", "2ZAAAAAAAAAA", "Z2Z2Z2Z2Z2Z2", "23456789ABCD", "ZZZZZZZZZZZZ", "222222222222"} {
		codes = append(codes, withCheck(t, body))
	}
	for range fresh {
		codes = append(codes, models.NewCouponCode())
	}
	return codes
}

// withCheck returns body followed by the one check character that makes it a
// valid code.
func withCheck(t *testing.T, body string) string {
	t.Helper()
	var found []string
	for i := 0; i < len(models.CodeAlphabet); i++ {
		code := body + string(models.CodeAlphabet[i])
		if _, err := models.ParseCouponCode("code", code); err == nil {
			found = append(found, code)
		}
	}
	if len(found) != 1 {
		t.Fatalf("body %s: %d check characters make it valid, want exactly 1: %v", body, len(found), found)
	}
	return found[0]
}

// assertRefused checks that s is refused as a coupon code, with the field named.
func assertRefused(t *testing.T, s string) {
	t.Helper()
	got, err := models.ParseCouponCode("coupon_code", s)
	if err == nil {
		t.Fatalf("ParseCouponCode(%q) = %q, want refused", s, got)
	}
	var e *models.Error
	if !asError(err, &e) || e.Code != models.CodeInvalidRequest || e.Field != "coupon_code" {
		t.Fatalf("ParseCouponCode(%q) error = %#v, want invalid_request on coupon_code", s, err)
	}
}

func asError(err error, target **models.Error) bool {
	e, ok := err.(*models.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestNewCouponCode(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		seen := map[string]bool{}
		for range 20000 {
			code := models.NewCouponCode()
			if len(code) != models.CodeBodyLen+1 || len(code) < 12 {
				t.Fatalf("code %q has %d characters, want %d", code, len(code), models.CodeBodyLen+1)
			}
			for _, c := range code {
				if !strings.ContainsRune(models.CodeAlphabet, c) {
					t.Fatalf("code %q has %q, outside the alphabet", code, c)
				}
			}
			got, err := models.ParseCouponCode("code", code)
			if err != nil || got != code {
				t.Fatalf("ParseCouponCode(%q) = %q, %v; want the code itself", code, got, err)
			}
			if seen[code] {
				t.Fatalf("code %q drawn twice", code)
			}
			seen[code] = true
		}
	})
	t.Run("AlphabetUnambiguous", func(t *testing.T) {
		if len(models.CodeAlphabet) != 32 {
			t.Fatalf("alphabet has %d characters, want 32", len(models.CodeAlphabet))
		}
		for _, c := range "01OI" {
			if strings.ContainsRune(models.CodeAlphabet, c) {
				t.Fatalf("alphabet holds the look-alike %q", c)
			}
		}
	})
}

func TestParseCouponCode(t *testing.T) {
	valid := withCheck(t, "ABCDEFGHJKLM")

	t.Run("OK", func(t *testing.T) {
		for _, in := range []string{
			valid,
			strings.ToLower(valid),
			valid[:4] + "-" + valid[4:8] + "-" + valid[8:],
			" " + valid[:6] + " " + valid[6:] + " ",
			"-" + strings.ToLower(valid[:3]) + valid[3:] + "-",
		} {
			got, err := models.ParseCouponCode("code", in)
			if err != nil || got != valid {
				t.Errorf("ParseCouponCode(%q) = %q, %v; want %q", in, got, err, valid)
			}
		}
	})
	t.Run("ErrLength", func(t *testing.T) {
		for _, in := range []string{"", "-", "   ", valid[:3], valid[:1], strings.Repeat(valid, 5), valid[:12], valid + "2"} {
			assertRefused(t, in)
		}
	})
	t.Run("ErrTooLong", func(t *testing.T) {
		assertRefused(t, valid+strings.Repeat("-", 96)) // only separators added, still refused
		assertRefused(t, strings.Repeat("A", 10000))
	})
	t.Run("ErrCharacter", func(t *testing.T) {
		for _, bad := range []string{"0", "O", "1", "I", "o", "i", "_", ".", "\x00", "\t", "é", "\xff", "Ａ"} {
			assertRefused(t, valid[:5]+bad+valid[6:])
		}
		// Longer codes (patterned, imported) may hold 0, 1, I and O, never
		// anything but letters and digits.
		for _, bad := range []string{"_", ".", "\x00", "\t", "é", "\xff", "Ａ"} {
			assertRefused(t, valid[:5]+bad+valid[5:])
		}
	})
	t.Run("OKOtherLengths", func(t *testing.T) {
		for in, want := range map[string]string{"summer-10": "SUMMER10", "SPRING-AB2C-DE3F": "SPRINGAB2CDE3F", "olds": "OLDS",
			valid[:11]: valid[:11], valid + "I": valid + "I", valid + "I2": valid + "I2"} {
			got, err := models.ParseCouponCode("code", in)
			if err != nil || got != want {
				t.Errorf("ParseCouponCode(%q) = %q, %v; want %q", in, got, err, want)
			}
		}
	})
	t.Run("ErrSingleChange", func(t *testing.T) {
		n := 0
		for _, code := range testCodes(t, 300) {
			for i := range len(code) {
				for j := 0; j < len(models.CodeAlphabet); j++ {
					c := models.CodeAlphabet[j]
					if c == code[i] {
						continue
					}
					assertRefused(t, code[:i]+string(c)+code[i+1:])
					n++
				}
			}
		}
		t.Logf("%d single-character changes refused", n)
	})
	t.Run("ErrAdjacentSwap", func(t *testing.T) {
		n := 0
		for _, code := range testCodes(t, 2000) {
			for i := 0; i+1 < len(code); i++ {
				if code[i] == code[i+1] {
					continue
				}
				b := []byte(code)
				b[i], b[i+1] = b[i+1], b[i]
				assertRefused(t, string(b))
				n++
			}
		}
		t.Logf("%d adjacent swaps refused", n)
	})
	t.Run("ErrAdjacentSwapEveryPair", func(t *testing.T) {
		// Every ordered pair of distinct characters, at every position.
		a := models.CodeAlphabet
		for x := 0; x < len(a); x++ {
			for y := 0; y < len(a); y++ {
				if x == y {
					continue
				}
				for pos := 0; pos+1 < models.CodeBodyLen; pos++ {
					body := []byte(strings.Repeat("K", models.CodeBodyLen))
					body[pos], body[pos+1] = a[x], a[y]
					code := []byte(withCheck(t, string(body)))
					code[pos], code[pos+1] = code[pos+1], code[pos]
					assertRefused(t, string(code))
				}
				// The last body character swapped with the check character.
				code := []byte(withCheck(t, strings.Repeat("K", models.CodeBodyLen-1)+string(a[x])))
				if code[models.CodeBodyLen-1] != code[models.CodeBodyLen] {
					code[models.CodeBodyLen-1], code[models.CodeBodyLen] = code[models.CodeBodyLen], code[models.CodeBodyLen-1]
					assertRefused(t, string(code))
				}
			}
		}
	})
}

// FuzzParseCouponCode checks that any input is either refused with the field
// named, or accepted as a canonical code that is the input without separators,
// in capitals, and that parses to itself.
func FuzzParseCouponCode(f *testing.F) {
	for _, s := range []string{"", "ABCDEFGHJKLMN", "abcd-efgh-jklm-n", "0O1I", "\xff\xfe", strings.Repeat("-", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		code, err := models.ParseCouponCode("code", s)
		if err != nil {
			var e *models.Error
			if !asError(err, &e) || e.Code != models.CodeInvalidRequest || e.Field != "code" || e.Message == "" {
				t.Fatalf("ParseCouponCode(%q) error = %#v, want invalid_request on code", s, err)
			}
			if !utf8.ValidString(e.Error()) {
				t.Fatalf("ParseCouponCode(%q) error message is not valid UTF-8: %q", s, e.Error())
			}
			return
		}
		if len(code) < models.MinCodeLen || len(code) > models.MaxCodeLen {
			t.Fatalf("ParseCouponCode(%q) = %q: %d characters", s, code, len(code))
		}
		for _, c := range code {
			if (len(code) >= models.CodeBodyLen && len(code) <= models.CodeBodyLen+2) && !strings.ContainsRune(models.CodeAlphabet+"01IO", c) ||
				len(code) == models.CodeBodyLen+1 && !strings.ContainsRune(models.CodeAlphabet, c) ||
				!strings.ContainsRune(models.CodeAlphabet+"01IO", c) {
				t.Fatalf("ParseCouponCode(%q) = %q holds %q", s, code, c)
			}
		}
		stripped := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(s))
		if stripped != code {
			t.Fatalf("ParseCouponCode(%q) = %q, want %q", s, code, stripped)
		}
		again, err := models.ParseCouponCode("code", code)
		if err != nil || again != code {
			t.Fatalf("ParseCouponCode(%q) = %q, %v; a canonical code must parse to itself", code, again, err)
		}
	})
}

// TestParseNamesNonASCIICharacter checks that a refused character outside
// ASCII is named as typed, not as the first byte of its UTF-8 form.
func TestParseNamesNonASCIICharacter(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"ÉCOLE2024", `'É' is not a code character`},
		{"SAVE€10", `'€' is not a code character`},
	}
	for _, c := range cases {
		_, err := models.ParseCouponCode("code", c.in)
		var e *models.Error
		if !asError(err, &e) || e.Field != "code" || e.Message != "is not a coupon code: "+c.want {
			t.Errorf("ParseCouponCode(%q) error = %v, want code: is not a coupon code: %s", c.in, err, c.want)
		}
	}
	patterns := []struct {
		in, want string
	}{
		{"ÉTÉ-########", `'É'`},
		{"€-##########", `'€'`},
	}
	for _, c := range patterns {
		_, err := models.ParsePattern("pattern", c.in)
		var e *models.Error
		want := "may hold only letters, digits, dashes and # (a random character), not " + c.want
		if !asError(err, &e) || e.Field != "pattern" || e.Message != want {
			t.Errorf("ParsePattern(%q) error = %v, want pattern: %s", c.in, err, want)
		}
	}
}

// TestPatternNamesCharacterAndFix checks that a 13-character pattern with
// a character outside the code alphabet is refused naming the character
// and suggesting patterns that are accepted.
func TestPatternNamesCharacterAndFix(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SHOE-####-####", "SHOE-####-####: O is not a code character (no 0, 1, I or O in a 13-character code); use another character, e.g. SHQE-####-####, or make the code one character longer, e.g. SHOEX-####-####"},
		{"shoe-####-####", "shoe-####-####: O is not a code character (no 0, 1, I or O in a 13-character code); use another character, e.g. SHQE-####-####, or make the code one character longer, e.g. shoeX-####-####"},
		{"A1-##########", "A1-##########: 1 is not a code character (no 0, 1, I or O in a 13-character code); use another character, e.g. AL-##########, or make the code one character longer, e.g. A1X-##########"},
	}
	for _, c := range cases {
		_, err := models.ParsePattern("pattern", c.in)
		var e *models.Error
		if !asError(err, &e) || e.Field != "pattern" || e.Message != c.want {
			t.Errorf("ParsePattern(%q) error = %v, want pattern: %s", c.in, err, c.want)
		}
		for _, fix := range []string{"SHQE-####-####", "SHOEX-####-####", "AL-##########", "A1X-##########"} {
			if _, err := models.ParsePattern("pattern", fix); err != nil {
				t.Errorf("suggested pattern %q refused: %v", fix, err)
			}
		}
	}
}
