package web

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readBody reads the whole body whatever its declared length says, in one
// allocation when the declaration is right, and stops where its reader
// does (DecodeJSONLimit's limit).
func TestReadBodyReadsWhateverTheDeclaredLength(t *testing.T) {
	body := strings.Repeat(`{"sku":"A-1","quantity":2},`, 200) // 5,400 bytes
	for _, tc := range []struct {
		name     string
		declared int64
	}{
		{"declared exactly", int64(len(body))},
		{"not declared", -1},
		{"declared zero", 0},
		{"declared shorter", 10},
		{"declared longer", int64(len(body)) + 100},
	} {
		got, err := readBody(iotest.HalfReader(strings.NewReader(body)), tc.declared)
		if err != nil || string(got) != body {
			t.Errorf("%s: read %d bytes, err %v; want the %d bytes of the body", tc.name, len(got), err, len(body))
		}
		if tc.declared == int64(len(body)) && cap(got) != len(body)+1 {
			t.Errorf("%s: buffer of %d bytes, want the one of %d", tc.name, cap(got), len(body)+1)
		}
	}
	got, err := readBody(io.LimitReader(strings.NewReader(body), 100), int64(len(body)))
	if err != nil || !bytes.Equal(got, []byte(body[:100])) {
		t.Errorf("limited to 100: %d bytes, %v", len(got), err)
	}
	broken := errors.New("connection reset")
	got, err = readBody(io.MultiReader(strings.NewReader("{\"a\":"), iotest.ErrReader(broken)), 50)
	if !errors.Is(err, broken) || string(got) != "{\"a\":" {
		t.Errorf("a failing reader: %q, %v; want what came before and its error", got, err)
	}
}
