package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestStatementRow: the phase's deltas less the mean background of the idle
// windows before and after, scaled to the phase's length (our own readings
// left out), per operation; a background that changed between the two
// windows marks the row noisy.
func TestStatementRow(t *testing.T) {
	at := func(q, sel, ins, begin float64) map[string]float64 {
		return map[string]float64{"Questions": q, "Com_select": sel, "Com_insert": ins, "Com_begin": begin, "Com_commit": begin}
	}
	// Idle 0.5 s before: 10 questions of others (and our reading), 4 selects.
	before := window{from: at(1000, 500, 100, 10), to: at(1011, 504, 100, 10), secs: 0.5}
	// 100 claims in 2 s: 4 questions each and 40 of others' (20 a second).
	phase := window{from: before.to, to: at(1011+400+40+1, 504+16, 300, 110), secs: 2}
	// Idle 0.5 s after: the same background.
	after := window{from: phase.to, to: at(1452+11, 520+4, 300, 110), secs: 0.5}
	row := statementRow("claim", 100, phase, before, after)
	if row.RoundTrips != 4 || row.PerOp["Questions"] != 4 || row.PerOp["Com_select"] != 0 || row.PerOp["Com_insert"] != 2 ||
		row.PerOp["Com_begin"] != 1 || row.PerOp["Com_commit"] != 1 || row.BackgroundPerOp != 0.4 || row.Minimum != 4 ||
		row.Seconds != 2 || row.Noisy {
		t.Fatalf("row %+v", row)
	}
	var md bytes.Buffer
	writeStatementsTable(&md, []*Summary{{Name: "statements", Statements: []StatementRow{row}}})
	if !strings.Contains(md.String(), "| claim | 100 | 4.00 | 4 | 0.00 | 2.00 | 0.00 | 0.00 | 1.00 | 1.00 | 0.00 | 0.40 |") {
		t.Fatalf("table:\n%s", md.String())
	}

	// A burst of others' work after the phase: 60 questions in the window
	// after instead of 10; the mean background is subtracted and the row
	// is noisy.
	after.to = at(1452+61, 520+4, 300, 110)
	row = statementRow("claim", 100, phase, before, after)
	if !row.Noisy || row.BackgroundPerOp != 1.4 || row.PerOp["Questions"] != 3 {
		t.Fatalf("noisy row %+v", row)
	}
	md.Reset()
	writeStatementsTable(&md, []*Summary{{Name: "statements", Statements: []StatementRow{row}}})
	if !strings.Contains(md.String(), "| 1.40 (noisy: run again) |") {
		t.Fatalf("table:\n%s", md.String())
	}
}
