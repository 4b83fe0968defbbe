package handlers_test

import (
	"os"
	"testing"

	"couponsvc/internal/testsupport"
	"couponsvc/services/testenv"
)

// TestMain runs the tests, then says which routes' answers they checked.
func TestMain(m *testing.M) {
	code := testenv.Main(m)
	testsupport.ReportAnswerCoverage("handlers")
	os.Exit(code)
}
