package testsupport

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"couponsvc/handlers"
	"couponsvc/handlers/api"
	"couponsvc/handlers/openapicheck"
	"couponsvc/models"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"
)

// answers checks every JSON answer of the tests' routers (NewFixture
// installs it) against the OpenAPI document: a violation fails the test
// whose request produced it.
var answers = sync.OnceValue(func() *openapicheck.Recorder {
	doc, err := openapicheck.Parse(handlers.OpenAPIDocument())
	if err != nil {
		panic(err)
	}
	return openapicheck.NewRecorder(doc)
})

// CheckAnswers is the router middleware that checks the answers of t's
// requests; CheckedAnswers is the same as a router option
// (handlers.Options.Middleware) for a test that makes its own router.
func CheckAnswers(t testing.TB) gin.HandlerFunc { return answers().Middleware(t.Errorf) }

// CheckedAnswers: see CheckAnswers.
func CheckedAnswers(t testing.TB) []gin.HandlerFunc { return []gin.HandlerFunc{CheckAnswers(t)} }

// checkEvents checks every event the test's flows wrote (the outbox) against
// the schema the document gives its type (x-webhooks): what a webhook
// endpoint receives is what the document promises. NewFixture runs it when
// the test ends.
func checkEvents(t testing.TB, db *gorm.DB) {
	var evs []models.Event
	if err := db.Order("id").Find(&evs).Error; err != nil {
		t.Errorf("events: %v", err)
		return
	}
	for _, ev := range evs {
		body, err := json.Marshal(ev)
		if err != nil {
			t.Errorf("event %d: %v", ev.ID, err)
			continue
		}
		if errs := answers().Doc().CheckEvent(body); len(errs) > 0 {
			t.Errorf("event %d (%s) does not match the OpenAPI document's x-webhooks: %s\n\t%s", ev.ID, ev.Type, strings.Join(errs, "; "), body)
		}
	}
}

// ReportAnswerCoverage prints, after a package's tests, how many JSON
// answers were checked and which routes with a JSON success answer this
// package's tests did not check, and returns those routes.
func ReportAnswerCoverage(pkg string) (missed []string) {
	answered, routes := answers().Answers()
	fmt.Printf("openapi: %s: %d JSON answers of %d routes checked against the document\n", pkg, answered, routes)
	var want []string
	for _, rt := range (*api.Server)(nil).Routes() {
		if rt.Raw == nil {
			want = append(want, rt.Method+" "+rt.Path)
		}
	}
	missed = answers().Unchecked(want)
	if len(missed) > 0 {
		fmt.Printf("openapi: %s: %d routes' success answers not checked here:\n\t%s\n", pkg, len(missed), strings.Join(missed, "\n\t"))
	}
	return missed
}
