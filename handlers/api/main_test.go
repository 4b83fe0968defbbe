package api_test

import (
	"os"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	_ = testsupport.ReportAnswerCoverage("handlers/api")
	os.Exit(code)
}
