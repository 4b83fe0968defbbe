package handlers_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestMain runs the tests, then checks that the router's tests checked a
// success answer of every route with a JSON answer against the OpenAPI
// document (the packages' own tests check theirs too, and report what they
// missed). Only a run of every test can tell: a -run filter skips the check.
func TestMain(m *testing.M) {
	code := testenv.Main(m)
	missed := testsupport.ReportAnswerCoverage("handlers")
	if f := flag.Lookup("test.run"); code == 0 && len(missed) > 0 && f != nil && f.Value.String() == "" {
		fmt.Fprintf(os.Stderr, "FAIL: no test checked a success answer of these routes against the OpenAPI document: %v\n", missed)
		code = 1
	}
	os.Exit(code)
}
