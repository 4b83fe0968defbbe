package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestAutomaticOfferAPI: the usable coupons answer the live automatic
// offer beside the best coupons, and a one-step redemption takes it with
// the typed code, answering the code's own discount in the redemption's
// shape, the same when sent again (docs/automatic-offers.md).
func TestAutomaticOfferAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	typed := e.Template(t, 300, 0, models.StackingCombinable)
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Auto",`+
		`"kind":"fixed","face_value_cents":500,"min_order_cents":5000,"total_stock":20,"per_user_limit":1,"valid_days":30,`+
		`"stacking":"combinable","code_mode":"automatic"}`, e.CampaignID))
	offer := int64(out["template"].(map[string]any)["id"].(float64))
	code := e.Claim(t, typed, "bob")

	st, out := e.Call(t, "GET", "/api/v1/users/bob/coupons/usable?order_amount_cents=6000", e.App, nil, "")
	e.Doc.CheckAnswer(t, "GET", "/api/v1/users/{user_id}/coupons/usable", st, out)
	offers, _ := out["automatic"].([]any)
	if st != 200 || len(offers) != 1 || out["best_discount_cents"] != float64(300) {
		t.Fatalf("usable: %d %v", st, out)
	}
	o := offers[0].(map[string]any)
	if o["template_id"] != float64(offer) || o["coupon_code"] != fmt.Sprintf("AUTO-%d", offer) || o["discount_cents"] != float64(500) ||
		o["automatic"] != true || o["stacking"] != models.StackingCombinable {
		t.Fatalf("usable offer: %v", o)
	}

	body := `{"coupon_code":"` + code + `","order_id":"r-1","order_amount_cents":6000,"user_id":"bob"}`
	for _, result := range []string{"redeemed", "duplicate"} {
		st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, body)
		e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, result, 300, 5200)
		if out["coupon"].(map[string]any)["code"] != code {
			t.Fatalf("redemption answers coupon %v, want %s", out["coupon"], code)
		}
	}
	// The offer was taken once: bob's limit of it is reached.
	st, out = e.Call(t, "GET", "/api/v1/users/bob/coupons/usable?order_amount_cents=6000", e.App, nil, "")
	if offers, _ := out["automatic"].([]any); st != 200 || offers == nil || len(offers) != 0 {
		t.Fatalf("usable after the redemption: %d %v", st, out)
	}
}
