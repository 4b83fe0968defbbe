package core_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/services/core"
)

// TestCSVWriterNeutralizesFormulas: every cell that begins with =, +, -,
// @, a tab or a carriage return is read back with a single quote in front
// and otherwise unchanged; plain numbers and other cells are unchanged.
func TestCSVWriterNeutralizesFormulas(t *testing.T) {
	cells := map[string]string{
		"=1+2": "'=1+2", "+1": "'+1", "-1+2": "'-1+2", "@SUM(A1)": "'@SUM(A1)",
		"\t=1+2": "'\t=1+2", "\r=1+2": "'\r=1+2", "-": "'-", "-1.": "'-1.", "-.5": "'-.5", "-1e3": "'-1e3",
		"=cmd|' /C calc'!A0": "'=cmd|' /C calc'!A0", "'=1": "'=1",
		"-500": "-500", "-0.25": "-0.25", "500": "500", "": "", "A=1": "A=1", " =1": " =1", "ABCD-1234": "ABCD-1234",
	}
	var in, want []string
	for c, w := range cells {
		in, want = append(in, c), append(want, w)
	}
	sent := fmt.Sprintf("%q", in)
	var b bytes.Buffer
	w := core.NewCSVWriter(&b)
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(got) != 1 {
		t.Fatalf("read back %q, %v", got, err)
	}
	if fmt.Sprintf("%q", got[0]) != fmt.Sprintf("%q", want) {
		t.Fatalf("cells %q\nread back %q\nwant      %q", in, got[0], want)
	}
	if fmt.Sprintf("%q", in) != sent {
		t.Fatalf("Write changed its record to %q", in)
	}
}

// TestReadCell: a cell read back from CSVWriter's file is the value
// written, but for a value that began with a quote and a formula's first
// character, which loses its quote; other quotes are kept.
func TestReadCell(t *testing.T) {
	for in, want := range map[string]string{
		"=1+2": "=1+2", "-AAAA-BBBB": "-AAAA-BBBB", "@x": "@x", "+1": "+1", "\t=1": "\t=1", "-500": "-500",
		"'x": "'x", "'": "'", "": "", "ABCD-1234": "ABCD-1234", "'=1": "=1",
	} {
		if got := core.ReadCell(core.SafeCell(in)); got != want {
			t.Errorf("ReadCell(SafeCell(%q)) = %q, want %q", in, got, want)
		}
	}
}
