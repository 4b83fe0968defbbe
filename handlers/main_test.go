package handlers_test

import (
	"os"
	"testing"

	"couponsvc/services/testenv"
)

// TestMain runs the tests, then checks that their answers covered every
// route with a JSON answer (checkAnswerCoverage).
func TestMain(m *testing.M) {
	code := testenv.Main(m)
	if coverage := checkAnswerCoverage(); code == 0 {
		code = coverage
	}
	os.Exit(code)
}
