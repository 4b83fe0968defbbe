package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestStatementRow: the phase's deltas less the background of the idle
// window scaled to the phase's length (and less couponbench's own
// readings), per operation.
func TestStatementRow(t *testing.T) {
	b0 := map[string]float64{"Questions": 1000, "Com_select": 500, "Com_insert": 100, "Com_begin": 10, "Com_commit": 10}
	// Idle 0.5 s: 11 questions, one of them our reading, 4 selects.
	b1 := map[string]float64{"Questions": 1011, "Com_select": 504, "Com_insert": 100, "Com_begin": 10, "Com_commit": 10}
	// 100 claims in 2 s: 4 questions each, plus 40 of background, plus our reading.
	a1 := map[string]float64{"Questions": 1011 + 400 + 40 + 1, "Com_select": 504 + 16, "Com_insert": 300, "Com_begin": 110, "Com_commit": 110}
	row := statementRow("claim", 100, b0, b1, a1, 0.5, 2)
	if row.RoundTrips != 4 || row.PerOp["Questions"] != 4 || row.PerOp["Com_select"] != 0 || row.PerOp["Com_insert"] != 2 ||
		row.PerOp["Com_begin"] != 1 || row.PerOp["Com_commit"] != 1 || row.BackgroundPerOp != 0.4 || row.Minimum != 4 || row.Seconds != 2 {
		t.Fatalf("row %+v", row)
	}
	var md bytes.Buffer
	writeStatementsTable(&md, []*Summary{{Name: "statements", Statements: []StatementRow{row}}})
	if !strings.Contains(md.String(), "| claim | 100 | 4.00 | 4 | 0.00 | 2.00 | 0.00 | 0.00 | 1.00 | 1.00 | 0.00 | 0.40 |") {
		t.Fatalf("table:\n%s", md.String())
	}
}
