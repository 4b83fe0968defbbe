package models_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/models"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		s         string
		line, doc bool // taken as a line, taken as a multi-line text
	}{
		{"Summer sale", true, true},
		{"", true, true},
		{"Été – שלום – 春の セール 🎉 👩‍👩‍👧", true, true},
		{"a\nb", false, true},
		{"a\r\nb\r\n", false, true},
		{"a\u200fb", false, true},
		{"a\u200eb", false, true},
		{"a\u061cb", false, true},
		{"a\rb", false, false},
		{"a\r", false, false},
		{"a\n\rb", false, false},
		{"a\u2028b", false, false},
		{"a\u2029b", false, false},
		{"a\xffb", false, false},
		{"a\xe2\x80", false, false},
		{"a\ufffdb", false, false},
		{"a\x00b", false, false},
		{"a\tb", false, false},
		{"a\x07b", false, false},
		{"a\x1bb", false, false},
		{"a\x7fb", false, false},
		{"a\u0080b", false, false},
		{"a\u009fb", false, false},
		{"a\u202ab", false, false},
		{"a\u202bb", false, false},
		{"a\u202cb", false, false},
		{"a\u202db", false, false},
		{"a\u202eb", false, false},
		{"a\u2066b", false, false},
		{"a\u2067b", false, false},
		{"a\u2068b", false, false},
		{"a\u2069b", false, false},
	} {
		for _, kind := range []struct {
			multiLine, want bool
		}{{models.SingleLine, tc.line}, {models.MultiLine, tc.doc}} {
			err := models.CheckText("label", tc.s, kind.multiLine)
			if kind.want {
				if err != nil {
					t.Errorf("%q (multi-line %t): %v, want it taken", tc.s, kind.multiLine, err)
				}
				continue
			}
			assertInvalid(t, err, "label")
		}
	}
}
