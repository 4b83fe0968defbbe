package models_test

import (
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

func TestParsePattern(t *testing.T) {
	tests := []struct {
		pattern string
		ok      bool
		length  int // of a code, check character included
	}{
		{"", true, 13},
		{"SPRING-####-####", true, 15},       // 8 random: 40 bits exactly
		{"spring-####-####", true, 15},       // lower case is read as capitals
		{"########", true, 9},                // 40 bits
		{"#######", false, 0},                // 35 bits
		{"SPRING-###-####", false, 0},        // 35 bits
		{"SALE-####", false, 0},              // 20 bits
		{"X", false, 0},                      // none
		{"A-#", false, 0},                    // 5 bits
		{"SPRING_####-####", false, 0},       // a character that is not allowed
		{"SPRING-####-####!", false, 0},      // idem
		{"ÉTÉ-########", false, 0},           // idem
		{strings.Repeat("#", 63), true, 64},  // the longest code
		{strings.Repeat("#", 64), false, 0},  // one too long
		{"AB-##########", true, 13},          // 13 characters with fixed text: fine (all code characters)...
		{"OI-##########", false, 0},          // ...but 0, 1, I, O there would read as a mistyped random code
		{"#### #### ####", true, 13},         // spaces are for reading only
		{"A-##########", false, 0},           // 12 characters: read as a random code with one missing
		{"ABC-##########", false, 0},         // 14: read as a random code with one too many
		{"OI-#########", true, 12},           // unless it holds a character a random code never has
		{"WINTER2026-##-##-##-##", true, 19}, // digits and look-alikes are fine in fixed text
	}
	for _, tt := range tests {
		p, err := models.ParsePattern("pattern", tt.pattern)
		if !tt.ok {
			var e *models.Error
			if err == nil || !asError(err, &e) || e.Code != models.CodeInvalidRequest || e.Field != "pattern" {
				t.Errorf("ParsePattern(%q) = %v, %v; want invalid_request naming pattern", tt.pattern, p, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", tt.pattern, err)
			continue
		}
		if p.Bits() < models.MinPatternBits || p.Len() != tt.length {
			t.Errorf("ParsePattern(%q): %.1f bits, codes of %d; want >= 40 bits, codes of %d", tt.pattern, p.Bits(), p.Len(), tt.length)
		}
		random := make([]byte, p.Random())
		for i := range random {
			random[i] = byte(i * 7)
		}
		code := string(p.Fill(nil, random))
		got, err := models.ParseCouponCode("code", code)
		if err != nil || got != code || len(code) != tt.length {
			t.Errorf("pattern %q made %q, which parses to %q, %v", tt.pattern, code, got, err)
		}
	}
}

func TestPatternFill(t *testing.T) {
	p, err := models.ParsePattern("pattern", "SPRING-####-####")
	if err != nil {
		t.Fatal(err)
	}
	code := string(p.Fill(nil, []byte{0, 1, 2, 3, 31, 30, 29, 32}))
	// 0→2 1→3 2→4 3→5, 31→Z 30→Y 29→X, 32 wraps to 2; then the check.
	if !strings.HasPrefix(code, "SPRING2345ZYX2") || len(code) != 15 || !strings.ContainsRune(models.CodeAlphabet, rune(code[14])) {
		t.Fatalf("code = %q, want SPRING2345ZYX2 and a check character", code)
	}
}
