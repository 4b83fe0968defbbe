package testsupport

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/handlers/api"
	"github.com/couponsvc/couponsvc/handlers/openapicheck"
	"github.com/couponsvc/couponsvc/models"

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
	return openapicheck.NewRecorder(doc, statedRules)
})

// statedRules are the rules of requests that the OpenAPI document states in
// words only, by "METHOD route field" ("* * field" on every operation): a
// request the schemas take and the server refuses 400 naming such a field
// is no violation of the document (openapicheck.Recorder). Each says where
// the document states it.
var statedRules = map[string]string{
	// Text fields: "on one line, without control characters, characters
	// that change the text direction or U+FFFD" (their descriptions).
	"* * name":        "text rule",
	"* * reason":      "text rule",
	"* * description": "text rule",
	// A code of the random form: "with a check character" (code's description).
	"* * code":           "check character",
	"* * coupon_code":    "check character; or required without return_id and returned_amount_cents (refunds' description)",
	"* * coupon_codes[]": "check character",
	// A mistyped code in a list is refused naming the list, with or
	// without a user (docs/result-codes.md, "Validate").
	"* * coupon_codes": "check character",
	// Cross-field rules of a template (the fields' descriptions): kind's own
	// fields, the claim and validity windows, the campaign's currency, a
	// shared code of another template.
	"POST /api/v1/templates valid_days":             "instead of valid_from/valid_until",
	"POST /api/v1/templates percent_off":            "percent: 1..100",
	"POST /api/v1/templates percent_off_bp":         "not both",
	"POST /api/v1/templates full_price_only":        "not with applies_to shipping",
	"POST /api/v1/templates max_units_per_line":     "not for buy_x_get_y nor the shipping",
	"POST /api/v1/templates max_units_per_order":    "not for buy_x_get_y nor the shipping",
	"POST /api/v1/templates unit_order":             "only with max_units_per_line or max_units_per_order",
	"POST /api/v1/templates get_percent_bp":         "not both",
	"POST /api/v1/templates condition.min_quantity": "this or min_amount_cents, at least 1",
	"POST /api/v1/templates condition.repeat":       "needs both",
	"POST /api/v1/templates tiers[].percent_off_bp": "not both",
	// An action's fields follow its kind as the template's do.
	"POST /api/v1/templates actions[].max_discount_cents": "required by every kind but fixed",
	"POST /api/v1/templates valid_until":                  "not yet passed",
	"POST /api/v1/templates claim_ends_at":                "not after valid_until",
	"POST /api/v1/templates claim_starts_at":              "before valid_until",
	"POST /api/v1/templates currency":                     "must be the campaign's",
	"POST /api/v1/templates shared_code":                  "another template's code (shared_code's description)",
	"POST /api/v1/templates eligibility":                  "compiled when saved (eligibility's description)",
	"PATCH /api/v1/templates/:id eligibility":             "compiled when saved (eligibility's description)",
	"PATCH /api/v1/templates/:id claim_ends_at":           "to after from: after claim_starts_at",
	"PATCH /api/v1/templates/:id status":                  "archived is final",
	"PATCH /api/v1/campaigns/:id currency":                "changes only while the campaign has no template",
	"POST /api/v1/templates/:id/stock delta":              "total_stock stays at most 10,000,000",
	// Whom a claim is for: "required with an app token".
	"POST /api/v1/templates/:id/claim user_id": "required with an app token",
	// Carts (cart_lines' and lines' descriptions): a line_id names one line;
	// order_amount_cents is required without lines and is the cart's total
	// with them; shipping belongs to a cart of lines.
	"* * lines[].line_id":                        "unique in the cart; a return names each line of the order once",
	"* * order_amount_cents":                     "required without lines; with both, the cart's total",
	"* * shipping_cents":                         "the shipping amount of a cart with lines",
	"* * customer.tags[]":                        "text rule",
	"POST /api/v1/refunds return_id":             "a partial return: with returned_amount_cents",
	"POST /api/v1/refunds returned_amount_cents": "an order redeemed with a cart is returned by lines",
	// What only the server knows: a private webhook address, a taken user
	// name, a secret's spaces, a pattern's randomness, a CSV upload's rows.
	"POST /api/v1/webhooks url":                    "loopback, private and link-local addresses are refused",
	"POST /api/v1/webhooks secret":                 "at least 16 of them not whitespace, none at either end",
	"POST /api/v1/users username":                  "a name taken is refused 400",
	"POST /api/v1/templates/:id/codes pattern":     "at least 40 bits of randomness (8 #)",
	"POST /api/v1/templates/:id/codes/import file": "a header with a code column (the operation's description)",
	// The feed from now: "without after" (from's description).
	"GET /api/v1/events from": "from=latest without after",
	// Reports: "at most 366 days from from", to on or after from.
	"GET /api/v1/reports/redemptions.csv to": "to after from",
	"GET /api/v1/reports/discounts to":       "to after from",
	"GET /api/v1/reports/discounts.csv to":   "to after from",
}

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
	requests, refused := answers().Requests()
	fmt.Printf("openapi: %s: %d JSON answers of %d routes checked against the document; %d requests, %d refused 400 and checked\n",
		pkg, answered, routes, requests, refused)
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
