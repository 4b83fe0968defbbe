package api_test

import (
	"os"
	"testing"

	"couponsvc/internal/testsupport"
	"couponsvc/services/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	_ = testsupport.ReportAnswerCoverage("handlers/api")
	os.Exit(code)
}
