package models

import (
	"strings"
	"unicode/utf8"
)

// Text kinds for CheckText: a line (names, reasons) or a multi-line text
// (descriptions), which may hold line breaks.
const (
	SingleLine = false
	MultiLine  = true
)

// CheckText is the one rule for free text that people type and others read
// (names, descriptions, reasons): valid UTF-8, no control characters, no
// U+FFFD (what a decoder puts where the bytes were not UTF-8), and no
// characters that change the direction of what follows, since those make a
// name read as something it is not in every list and log that shows it. A
// multi-line text may hold line breaks (\n or \r\n) and the direction marks
// that right-to-left writing needs; a line holds neither. It returns a
// CodeInvalidRequest error naming field, or nil.
func CheckText(field, s string, multiLine bool) error {
	if !utf8.ValidString(s) {
		return Invalid(field, "must be valid UTF-8 text")
	}
	for i, r := range s {
		switch {
		case r == '\n' && multiLine:
		case r == '\r' && multiLine && strings.HasPrefix(s[i+1:], "\n"):
		case (r == '\r' || r == '\u2028' || r == '\u2029') && multiLine:
			return Invalid(field, "may break lines only with ordinary line breaks")
		case r == '\n', r == '\r', r == '\u2028', r == '\u2029':
			return Invalid(field, "must be one line of text")
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			return Invalid(field, "must not contain control characters (U+%04X)", r)
		case r == utf8.RuneError:
			return Invalid(field, "must not contain U+FFFD (text that was not UTF-8)")
		case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
			return Invalid(field, "must not contain characters that change the text direction (U+%04X)", r)
		case (r == '\u200e' || r == '\u200f' || r == '\u061c') && !multiLine:
			return Invalid(field, "must not contain direction marks (U+%04X)", r)
		}
	}
	return nil
}
