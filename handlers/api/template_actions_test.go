package api_test

import (
	"encoding/json"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestCreateTemplateWithActions: "20% off + free shipping" is created with
// its further action and read back in its normal form (applies_to set), its
// budget value both caps; a mistake in an action is refused 400 naming it
// with its place, and nothing is created.
func TestCreateTemplateWithActions(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)
	before := e.Counts(t)
	for _, c := range []struct{ fields, field string }{
		{`"kind":"percent","percent_off":20,"max_discount_cents":5000,"actions":[{"kind":"free_shipping","max_discount_cents":1000},{"kind":"percent","percent_off_bp":10001,"max_discount_cents":1}]`,
			"actions[1].percent_off_bp"},
		{`"kind":"percent","percent_off":20,"max_discount_cents":5000,"actions":[{"kind":"bogus"}]`, "actions[0].kind"},
		{`"kind":"percent","percent_off":20,"max_discount_cents":5000,"actions":[{"kind":"free_shipping"}]`, "actions[0].max_discount_cents"},
	} {
		out := e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken, templateBody(c.fields))
		if out["result"] != "invalid_request" || out["field"] != c.field {
			t.Errorf("%s: %v, want invalid_request naming %s", c.fields, out, c.field)
		}
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("counts %+v, want %+v", after, before)
	}
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken,
		templateBody(`"kind":"percent","percent_off":20,"max_discount_cents":5000,"actions":[{"kind":"free_shipping","max_discount_cents":1000}]`))
	created := out["template"].(map[string]any)
	for _, tp := range []map[string]any{created, e.TemplateJSON(t, 1)} {
		got, _ := json.Marshal(tp["actions"])
		want := `[{"applies_to":"shipping","buy_quantity":0,"face_value_cents":0,"full_price_only":false,"get_percent":0,"get_percent_bp":0,` +
			`"get_quantity":0,"kind":"free_shipping","max_applications":0,"max_discount_cents":1000,"max_units_per_line":0,"max_units_per_order":0,` +
			`"percent_off":0,"percent_off_bp":0,"target":{}}]`
		if string(got) != want {
			t.Fatalf("actions %s\nwant    %s", got, want)
		}
	}
}
