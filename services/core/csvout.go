package core

import (
	"encoding/csv"
	"io"
)

// CSVWriter writes CSV that people open in a spreadsheet: the coupons
// export, a job's result, the redemption report. Every CSV the service
// hands out is written by it, so that no cell can run as a formula
// (docs/jobs.md, "CSV files"). It is encoding/csv's writer with each cell
// passed through SafeCell.
type CSVWriter struct {
	w   *csv.Writer
	rec []string
}

// NewCSVWriter returns a CSVWriter writing to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one record, each cell made safe; rec is not changed.
func (c *CSVWriter) Write(rec []string) error {
	c.rec = c.rec[:0]
	for _, cell := range rec {
		c.rec = append(c.rec, SafeCell(cell))
	}
	return c.w.Write(c.rec)
}

// Flush writes any buffered data to the underlying writer.
func (c *CSVWriter) Flush() { c.w.Flush() }

// Error reports an error of a previous Write or Flush.
func (c *CSVWriter) Error() error { return c.w.Error() }

// SafeCell neutralizes a cell a spreadsheet would read as a formula, as
// OWASP recommends against CSV injection: a cell that begins with =, +, -,
// @, a tab or a carriage return gets a single quote in front, and is
// otherwise kept as it is. A plain number (an optional minus, digits, an
// optional decimal part: -500, -0.25) is no formula and stays a number.
func SafeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if plainNumber(s) {
			return s
		}
		return "'" + s
	}
	return s
}

// plainNumber reports -?[0-9]+(\.[0-9]+)?.
func plainNumber(s string) bool {
	if s[0] == '-' {
		s = s[1:]
	}
	digits := func(s string) int {
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		return n
	}
	n := digits(s)
	if n == 0 {
		return false
	}
	s = s[n:]
	if s == "" {
		return true
	}
	if s[0] != '.' {
		return false
	}
	m := digits(s[1:])
	return m > 0 && m == len(s)-1
}

// ReadCell is a cell of a file written by CSVWriter as it was given: the
// quote SafeCell put in front of a would-be formula is taken off
// (docs/jobs.md, "CSV files"). A value that itself began with a quote and
// a formula's first character cannot be told from one that was neutralized,
// and loses its quote.
func ReadCell(s string) string {
	if len(s) >= 2 && s[0] == '\'' {
		switch s[1] {
		case '=', '+', '-', '@', '\t', '\r':
			return s[1:]
		}
	}
	return s
}
