package handlers_test

import (
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"couponsvc/handlers"
	"couponsvc/handlers/openapicheck"

	"github.com/gin-gonic/gin"
)

// answers checks every JSON answer of the routers of the tests (newFixture
// installs it) against the OpenAPI document: a violation fails the test
// whose request produced it.
var answers = sync.OnceValue(func() *openapicheck.Recorder {
	doc, err := openapicheck.Parse(handlers.OpenAPIDocument())
	if err != nil {
		panic(err)
	}
	return openapicheck.NewRecorder(doc)
})

// checkAnswers is the router middleware that checks the answers of t's
// requests; checkedAnswers is the same as a router option
// (handlers.Options.Middleware) for a test that makes its own router.
func checkAnswers(t testing.TB) gin.HandlerFunc {
	return answers().Middleware(t.Errorf)
}

func checkedAnswers(t testing.TB) []gin.HandlerFunc { return []gin.HandlerFunc{checkAnswers(t)} }

// uncheckedAnswers lists the routes with a JSON answer whose success answer
// no test checks, and why.
var uncheckedAnswers = map[string]string{}

// checkAnswerCoverage runs after the tests: each route with a JSON success
// answer must have had one checked, unless it is listed in
// uncheckedAnswers. It fails only when every test ran (no -run), and
// returns the exit code.
func checkAnswerCoverage() int {
	answered, routes := answers().Answers()
	fmt.Printf("openapi: %d JSON answers of %d routes checked against the document\n", answered, routes)
	var want []string
	for _, rt := range handlers.RouteTable() {
		key := rt.Method + " " + rt.Path
		if !rt.Page && !rt.Raw && uncheckedAnswers[key] == "" {
			want = append(want, key)
		}
	}
	missed := answers().Unchecked(want)
	if len(missed) == 0 {
		return 0
	}
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		fmt.Printf("openapi: routes whose success answer these tests did not check:\n\t%s\n", strings.Join(missed, "\n\t"))
		return 0
	}
	fmt.Fprintf(os.Stderr, "FAIL: no test checked a success answer of these routes against the OpenAPI document "+
		"(add a test, or list the route in uncheckedAnswers with the reason):\n\t%s\n", strings.Join(missed, "\n\t"))
	return 1
}

// TestOperationalAnswers: the health and readiness checks answer their
// result alone.
func TestOperationalAnswers(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		rec := httptest.NewRecorder()
		f.router.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || rec.Body.String() != `{"code":0,"result":"ok","error":""}` {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
