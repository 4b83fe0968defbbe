package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestAutomaticNotAppliedAPI: validate and the usable coupons answer every
// live offer that does not join the cart with why: its own condition, in
// the shopper's words, or the stacking rules (docs/automatic-offers.md,
// "Why an offer is not applied").
func TestAutomaticNotAppliedAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	create := func(name, rest string) int64 {
		t.Helper()
		out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":%q,`+
			`"total_stock":20,"per_user_limit":5,"valid_days":30,"code_mode":"automatic",%s}`, e.CampaignID, name, rest))
		return int64(out["template"].(map[string]any)["id"].(float64))
	}
	autumn := create("Autumn", `"kind":"fixed","face_value_cents":500,"stacking":"combinable"`)
	jackets := create("Jackets deal", `"kind":"percent","percent_off":10,"max_discount_cents":100000,"stacking":"combinable",`+
		`"applies_to":"items","target":{"category_ids":["jackets"]},"condition":{"target":{"category_ids":["trousers"]},"min_quantity":2}`)
	solo := create("Solo", `"kind":"fixed","face_value_cents":300,"stacking":"exclusive"`)
	lines := `"lines":[{"line_id":"t","sku":"T","category_ids":["trousers"],"quantity":1,"unit_price_cents":4000},` +
		`{"line_id":"j","sku":"J","category_ids":["jackets"],"quantity":1,"unit_price_cents":12000}]`
	want := fmt.Sprintf("[map[message:needs 2 items of category trousers, the cart has 1 name:Jackets deal reason:condition_not_met template_id:%d] "+
		"map[message:a coupon of template %d is exclusive: it is the only coupon on its order name:Solo reason:not_combinable template_id:%d]]",
		jackets, solo, solo)

	t.Run("Validate", func(t *testing.T) {
		st, out := e.Post(t, "/api/v1/checkout/validate", e.App, `{"user_id":"bob","coupon_codes":[],`+lines+`}`)
		e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 500, 15500)
		if cs := out["coupons"].([]any); len(cs) != 1 || cs[0].(map[string]any)["template_id"] != float64(autumn) {
			t.Fatalf("validate's coupons %v, want the offer %d", cs, autumn)
		}
		if got := fmt.Sprint(out["automatic_not_applied"]); got != want {
			t.Fatalf("automatic_not_applied %s, want %s", got, want)
		}
	})
	t.Run("Usable", func(t *testing.T) {
		st, out := e.Call(t, "POST", "/api/v1/users/bob/coupons/usable", e.App, nil, `{`+lines+`}`)
		e.Doc.CheckAnswer(t, "POST", "/api/v1/users/{user_id}/coupons/usable", st, out)
		offers, _ := out["automatic"].([]any)
		if st != 200 || len(offers) != 1 || offers[0].(map[string]any)["template_id"] != float64(autumn) {
			t.Fatalf("usable: %d %v", st, out)
		}
		if got := fmt.Sprint(out["automatic_not_applied"]); got != want {
			t.Fatalf("automatic_not_applied %s, want %s", got, want)
		}
	})
}
