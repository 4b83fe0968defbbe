package testsupport

import (
	"context"
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// HoldAPI is a router over fresh backends whose service runs on a clock the
// test moves, with a campaign and app and cashier tokens.
type HoldAPI struct {
	*APIEnv
	Doc          *OpenAPIDoc
	Clock        *testenv.Clock
	App, Cashier string
	CampaignID   int64
	seq          int
}

// NewHoldAPI returns a HoldAPI; its Doc is the OpenAPI document the router
// serves.
func NewHoldAPI(t *testing.T) *HoldAPI {
	t.Helper()
	clock := &testenv.Clock{}
	e := &HoldAPI{APIEnv: &APIEnv{NewFixture(t, WithConfig(services.Config{CoreConfig: services.CoreConfig{Now: clock.Now}}), WithBootstrap(AdminToken),
		WithShopperHeader())}, Clock: clock}
	e.Doc = FetchOpenAPI(t, e.APIEnv)
	out := e.MustCall(t, 201, "POST", "/api/v1/campaigns", AdminToken, `{"name":"Holds","budget_cents":1000000}`)
	e.CampaignID = int64(out["campaign"].(map[string]any)["id"].(float64))
	e.App = e.AppToken(t)
	e.Cashier = e.MustCall(t, 201, "POST", "/api/v1/tokens", AdminToken, `{"role":"cashier","name":"till-1"}`)["token"].(string)
	return e
}

// Template creates a fixed-amount template: face cents off an order of at
// least minOrder, with that stacking.
func (e *HoldAPI) Template(t *testing.T, face, minOrder int64, stacking string) int64 {
	t.Helper()
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"T%d",`+
		`"kind":"fixed","face_value_cents":%d,"min_order_cents":%d,"total_stock":20,"per_user_limit":10,"valid_days":30,`+
		`"stacking":%q}`, e.CampaignID, face, face, minOrder, stacking))
	return int64(out["template"].(map[string]any)["id"].(float64))
}

// Claim claims a coupon of the template for user and returns its code.
func (e *HoldAPI) Claim(t *testing.T, templateID int64, user string) string {
	t.Helper()
	e.seq++
	res, err := e.Env.Service.Claim(context.Background(), claims.ClaimRequest{TemplateID: templateID, UserID: user,
		IdempotencyKey: fmt.Sprintf("hold-claim-%d", e.seq)})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return res.Coupon.Code
}

// CouponStatus is the coupon's effective status as the API shows it.
func (e *HoldAPI) CouponStatus(t *testing.T, code string) string {
	t.Helper()
	out := e.MustCall(t, 200, "GET", "/api/v1/coupons/"+code, e.Cashier, "")
	return out["coupon"].(map[string]any)["status"].(string)
}

// Want checks an answer's status, result and amounts, and that it matches
// the OpenAPI document of its route.
func (e *HoldAPI) Want(t *testing.T, method, route string, status int, out map[string]any, wantStatus int, result string,
	discount, payable int64) {
	t.Helper()
	if status != wantStatus || out["result"] != result {
		t.Fatalf("%s %s: %d %v, want %d %s", method, route, status, out, wantStatus, result)
	}
	if discount >= 0 && (out["discount_cents"] != float64(discount) || out["payable_cents"] != float64(payable)) {
		t.Fatalf("%s %s: %v, want discount %d payable %d", method, route, out, discount, payable)
	}
	e.Doc.CheckAnswer(t, method, route, status, out)
}

// Post sends a JSON POST.
func (e *HoldAPI) Post(t *testing.T, path, token, body string) (int, map[string]any) {
	t.Helper()
	return e.Call(t, "POST", path, token, nil, body)
}
