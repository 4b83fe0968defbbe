package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// codesMaxItems is the maxItems of coupon_codes in a document's schema of
// the named request.
func codesMaxItems(t *testing.T, doc []byte, schema string) any {
	t.Helper()
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	s, ok := d.Components.Schemas[schema]
	if !ok {
		t.Fatalf("no schema %s", schema)
	}
	return s.Properties["coupon_codes"]["maxItems"]
}

// A deployment that configures COUPON_MAX_COUPONS_PER_ORDER 8 takes 6 codes
// in one request (a hold of them, or a refusal by stacking: 409, not a 400
// of the field), bounds coupon_codes at 8, and its document says 8; the
// document made without a server says the default.
func TestMaxCouponsPerOrderConfigured(t *testing.T) {
	clock := &testenv.Clock{}
	e := &testsupport.HoldAPI{APIEnv: &testsupport.APIEnv{Fixture: testsupport.NewFixture(t,
		testsupport.WithConfig(services.Config{CoreConfig: services.CoreConfig{Now: clock.Now}, CheckoutConfig: services.CheckoutConfig{MaxCouponsPerOrder: 8}}), testsupport.WithBootstrap(testsupport.AdminToken))},
		Clock: clock}
	out := e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Cap","budget_cents":1000000}`)
	e.CampaignID = int64(out["campaign"].(map[string]any)["id"].(float64))
	e.App = e.AppToken(t)

	_, served := e.Call(t, "GET", "/api/openapi.json", "", nil, "")
	raw, err := json.Marshal(served)
	if err != nil {
		t.Fatal(err)
	}
	for _, schema := range []string{"HoldRequest", "ValidateRequest"} {
		if got := codesMaxItems(t, raw, schema); got != float64(8) {
			t.Errorf("served document: %s.coupon_codes maxItems %v, want 8", schema, got)
		}
		if got := codesMaxItems(t, handlers.OpenAPIDocument(), schema); got != float64(5) {
			t.Errorf("document without a server: %s.coupon_codes maxItems %v, want the default 5", schema, got)
		}
	}

	// One coupon of each template (an order takes one of a template),
	// the last of the given stacking.
	codes := func(n int, last string) string {
		cs := make([]string, n)
		for i := range cs {
			stacking := models.StackingCombinable
			if i == n-1 {
				stacking = last
			}
			cs[i] = fmt.Sprintf("%q", e.Claim(t, e.Template(t, 100, 0, stacking), "u1"))
		}
		return "[" + strings.Join(cs, ",") + "]"
	}
	const combinable, exclusive = models.StackingCombinable, models.StackingExclusive
	status, out := e.Post(t, "/api/v1/holds", e.App, `{"order_id":"six","order_amount_cents":10000,"user_id":"u1","coupon_codes":`+codes(6, combinable)+`}`)
	if status != 201 || out["result"] != "held" || out["discount_cents"] != float64(600) || len(out["coupons"].([]any)) != 6 {
		t.Fatalf("hold of 6 codes at a cap of 8: %d %v", status, out)
	}
	status, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"mixed","order_amount_cents":10000,"user_id":"u1","coupon_codes":`+codes(6, exclusive)+`}`)
	if status != 409 || out["result"] != "not_combinable" {
		t.Fatalf("hold of 6 codes, one exclusive: %d %v", status, out)
	}
	status, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"nine","order_amount_cents":10000,"user_id":"u1","coupon_codes":`+codes(9, combinable)+`}`)
	if status != 400 || out["field"] != "coupon_codes" || !strings.Contains(out["error"].(string), "1 to 8") {
		t.Fatalf("hold of 9 codes at a cap of 8: %d %v", status, out)
	}
	status, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":10000,"user_id":"u1","coupon_codes":`+codes(7, combinable)+`}`)
	if status != 200 || out["discount_cents"] != float64(700) {
		t.Fatalf("validate of 7 codes at a cap of 8: %d %v", status, out)
	}
}
