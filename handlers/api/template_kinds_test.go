package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// templateBody is a valid template of campaign 1 with the fields given
// (a JSON object's members without braces).
func templateBody(fields string) string {
	return `{"campaign_id":1,"name":"T","total_stock":10,"per_user_limit":1,"valid_days":30,` + fields + `}`
}

// TestCreateTemplateEveryKind: each kind is created with its fields and
// read back as sent, with the defaults filled in (applies_to, priority 100,
// the deployment's currency) and the target lists sorted without repeats.
func TestCreateTemplateEveryKind(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)
	cases := []struct {
		kind, fields string
		want         map[string]any // fields of the answer, as JSON
	}{
		{"fixed", `"kind":"fixed","face_value_cents":500`,
			map[string]any{"face_value_cents": 500, "max_discount_cents": 0, "applies_to": "order", "priority": 100, "currency": "USD"}},
		{"percent", `"kind":"percent","percent_off":20,"max_discount_cents":2000,"applies_to":"items",` +
			`"target":{"category_ids":["shoes"],"exclude_category_ids":["sale","clearance","sale"]},"priority":5,"min_quantity":2`,
			map[string]any{"percent_off": 20, "percent_off_bp": 2000, "applies_to": "items", "priority": 5, "min_quantity": 2,
				"target": map[string]any{"category_ids": []any{"shoes"}, "exclude_category_ids": []any{"clearance", "sale"}}}},
		{"fixed_per_item", `"kind":"fixed_per_item","face_value_cents":1000,"max_discount_cents":5000,"applies_to":"items",` +
			`"target":{"skus":["TS-2","TS-1","TS-2"]}`,
			map[string]any{"face_value_cents": 1000, "max_discount_cents": 5000, "target": map[string]any{"skus": []any{"TS-1", "TS-2"}}}},
		{"buy_x_get_y", `"kind":"buy_x_get_y","buy_quantity":2,"get_quantity":1,"get_percent":100,"max_applications":2,"max_discount_cents":3000`,
			map[string]any{"buy_quantity": 2, "get_quantity": 1, "get_percent": 100, "max_applications": 2, "max_discount_cents": 3000,
				"target": map[string]any{}}},
		{"tiered", `"kind":"tiered","tiers":[{"min_cents":10000,"off_cents":1500},{"min_cents":20000,"off_cents":4000}],"max_discount_cents":4000,"currency":"USD"`,
			map[string]any{"tiers": []any{map[string]any{"min_cents": 10000, "off_cents": 1500}, map[string]any{"min_cents": 20000, "off_cents": 4000}},
				"max_discount_cents": 4000}},
		{"tiered percent", `"kind":"tiered","tiers":[{"min_cents":5000,"percent_off":5},{"min_cents":9000,"percent_off":10}],"max_discount_cents":900,"priority":0`,
			map[string]any{"tiers": []any{map[string]any{"min_cents": 5000, "percent_off": 5, "percent_off_bp": 500},
				map[string]any{"min_cents": 9000, "percent_off": 10, "percent_off_bp": 1000}}, "priority": 0}},
		{"percent bp", `"kind":"percent","percent_off_bp":3333,"max_discount_cents":2000`,
			map[string]any{"percent_off": 0, "percent_off_bp": 3333}},
		{"percent 100", `"kind":"percent","percent_off_bp":10000,"max_discount_cents":2000`,
			map[string]any{"percent_off": 100, "percent_off_bp": 10000}},
		{"buy_x_get_y bp", `"kind":"buy_x_get_y","buy_quantity":1,"get_quantity":1,"get_percent_bp":1250,"max_discount_cents":3000`,
			map[string]any{"get_percent": 0, "get_percent_bp": 1250}},
		{"tiered bp", `"kind":"tiered","tiers":[{"min_cents":5000,"percent_off_bp":750}],"max_discount_cents":900`,
			map[string]any{"tiers": []any{map[string]any{"min_cents": 5000, "percent_off_bp": 750}}}},
		{"full price only", `"kind":"percent","percent_off":20,"max_discount_cents":2000,"full_price_only":true`,
			map[string]any{"full_price_only": true}},
		{"quantity tiers", `"kind":"tiered","tiers":[{"min_quantity":2,"percent_off":5},{"min_quantity":4,"percent_off":10}],"max_discount_cents":900`,
			map[string]any{"tiers": []any{map[string]any{"min_cents": 0, "min_quantity": 2, "percent_off": 5, "percent_off_bp": 500},
				map[string]any{"min_cents": 0, "min_quantity": 4, "percent_off": 10, "percent_off_bp": 1000}}}},
		{"cheapest once", `"kind":"percent","percent_off":100,"max_discount_cents":2000,"max_units_per_order":1`,
			map[string]any{"max_units_per_order": 1, "max_units_per_line": 0, "unit_order": "cheapest"}},
		{"two per line dearest", `"kind":"fixed_per_item","face_value_cents":300,"max_discount_cents":2000,"max_units_per_line":2,"unit_order":"dearest"`,
			map[string]any{"max_units_per_line": 2, "max_units_per_order": 0, "unit_order": "dearest"}},
		{"free_shipping", `"kind":"free_shipping","max_discount_cents":1000,"min_order_cents":5000`,
			map[string]any{"applies_to": "shipping", "max_discount_cents": 1000, "min_order_cents": 5000, "face_value_cents": 0}},
	}
	for i, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, templateBody(c.fields))
			created := out["template"].(map[string]any)
			got := e.TemplateJSON(t, i+1)
			if fmt.Sprint(created["id"]) != fmt.Sprint(i+1) {
				t.Fatalf("created id %v, want %d", created["id"], i+1)
			}
			for _, tp := range []map[string]any{created, got} {
				for k, want := range c.want {
					wantJSON, _ := json.Marshal(want)
					gotJSON, _ := json.Marshal(tp[k])
					if string(wantJSON) != string(gotJSON) {
						t.Errorf("%s: %s, want %s", k, gotJSON, wantJSON)
					}
				}
				if tp["currency"] != "USD" {
					t.Errorf("currency %v, want USD", tp["currency"])
				}
			}
		})
	}
}

// TestCreateTemplatePercentNotBoth: a percent is given in whole percents
// or in basis points; both, or basis points out of 1..10,000, are refused
// 400 naming the field, and nothing is created (as full_price_only on a
// shipping coupon is, a unit bound on buy_x_get_y and unit_order without
// a bound).
func TestCreateTemplatePercentNotBoth(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)
	before := e.Counts(t)
	for _, c := range []struct{ fields, field string }{
		{`"kind":"percent","percent_off":20,"percent_off_bp":2000,"max_discount_cents":2000`, "percent_off_bp"},
		{`"kind":"percent","percent_off_bp":10001,"max_discount_cents":2000`, "percent_off_bp"},
		{`"kind":"percent","percent_off":101,"max_discount_cents":2000`, "percent_off"},
		{`"kind":"buy_x_get_y","buy_quantity":1,"get_quantity":1,"get_percent":50,"get_percent_bp":5000,"max_discount_cents":3000`, "get_percent_bp"},
		{`"kind":"tiered","tiers":[{"min_cents":5000,"percent_off":5,"percent_off_bp":500}],"max_discount_cents":900`, "tiers[0].percent_off_bp"},
		{`"kind":"fixed","face_value_cents":500,"percent_off_bp":500`, "percent_off_bp"},
		{`"kind":"free_shipping","max_discount_cents":1000,"full_price_only":true`, "full_price_only"},
		{`"kind":"buy_x_get_y","buy_quantity":1,"get_quantity":1,"get_percent":50,"max_discount_cents":3000,"max_units_per_line":1`, "max_units_per_line"},
		{`"kind":"percent","percent_off":10,"max_discount_cents":3000,"unit_order":"dearest"`, "unit_order"},
	} {
		out := e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken, templateBody(c.fields))
		if out["result"] != "invalid_request" || out["field"] != c.field {
			t.Errorf("%s: %v, want invalid_request naming %s", c.fields, out, c.field)
		}
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("counts %+v, want %+v", after, before)
	}
}

// TestCreateTemplateEveryMistake: one request with a mistake in several
// new fields names every one of them.
func TestCreateTemplateEveryMistake(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)
	before := e.Counts(t)
	out := e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken, templateBody(
		`"kind":"tiered","tiers":[{"min_cents":200,"off_cents":10},{"min_cents":100,"percent_off":5}],"priority":1001,`+
			`"applies_to":"order","target":{"skus":["A"]},"currency":"usd","min_quantity":-1`))
	var fields []string
	for _, f := range out["fields"].([]any) {
		fields = append(fields, f.(map[string]any)["field"].(string))
	}
	want := "tiers[1].min_cents tiers[1].percent_off max_discount_cents min_quantity priority currency target"
	if strings.Join(fields, " ") != want || out["field"] != "tiers[1].min_cents" {
		t.Fatalf("fields %v (first %v), want %s", fields, out["field"], want)
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("a refused template changed rows: %v → %v", before, after)
	}
	// An unknown kind lists the kinds; 1,001 entries are too many.
	out = e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken, templateBody(`"kind":"bogo"`))
	if out["field"] != "kind" || !strings.Contains(out["error"].(string), `"free_shipping"`) {
		t.Fatalf("unknown kind: %v", out)
	}
	skus := make([]string, 1001)
	for i := range skus {
		skus[i] = fmt.Sprintf("%q", fmt.Sprint("S", i))
	}
	out = e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken,
		templateBody(`"kind":"fixed","face_value_cents":5,"applies_to":"items","target":{"skus":[`+strings.Join(skus, ",")+`]}`))
	if out["field"] != "target.skus" {
		t.Fatalf("1,001 skus: %v", out)
	}
}

// TestTemplateCurrencyIsTheCampaigns: a campaign has the deployment's
// currency unless it names one; a template must have its campaign's, and
// without one has the deployment's; the campaign's currency changes only
// while it has no template.
func TestTemplateCurrencyIsTheCampaigns(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	usd := e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)["campaign"].(map[string]any)
	if usd["currency"] != "USD" {
		t.Fatalf("campaign currency %v, want USD", usd["currency"])
	}
	eur := e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Frühling","currency":"EUR"}`)["campaign"].(map[string]any)
	if eur["currency"] != "EUR" {
		t.Fatalf("campaign currency %v, want EUR", eur["currency"])
	}
	if out := e.MustCall(t, 400, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"X","currency":"EURO"}`); out["field"] != "currency" {
		t.Fatalf("currency EURO: %v", out)
	}
	fixed := `"kind":"fixed","face_value_cents":500`
	// Campaign 2 is in euros: a template without a currency (dollars) or in
	// yen is refused naming currency; in euros it is created.
	for _, cur := range []string{``, `,"currency":"JPY"`} {
		body := strings.Replace(templateBody(fixed+cur), `"campaign_id":1`, `"campaign_id":2`, 1)
		out := e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken, body)
		if out["field"] != "currency" || !strings.Contains(out["error"].(string), "EUR") {
			t.Fatalf("template %q in a euro campaign: %v", cur, out)
		}
	}
	body := strings.Replace(templateBody(fixed+`,"currency":"EUR"`), `"campaign_id":1`, `"campaign_id":2`, 1)
	if tp := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, body)["template"].(map[string]any); tp["currency"] != "EUR" {
		t.Fatalf("template currency %v, want EUR", tp["currency"])
	}
	// Campaign 1 has no template: its currency may change, and back.
	out := e.MustCall(t, 200, "PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"currency":"JPY"}`)
	if out["campaign"].(map[string]any)["currency"] != "JPY" {
		t.Fatalf("campaign 1 in yen: %v", out)
	}
	e.MustCall(t, 200, "PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"currency":"USD"}`)
	for _, bad := range []string{`null`, `""`, `"usd"`} {
		if out := e.MustCall(t, 400, "PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"currency":`+bad+`}`); out["field"] != "currency" {
			t.Fatalf("currency %s: %v", bad, out)
		}
	}
	// Campaign 2 has one: its currency stays, other changes go through.
	out = e.MustCall(t, 400, "PATCH", "/api/v1/campaigns/2", testsupport.AdminToken, `{"currency":"USD"}`)
	if out["field"] != "currency" {
		t.Fatalf("currency of a campaign with templates: %v", out)
	}
	e.MustCall(t, 200, "PATCH", "/api/v1/campaigns/2", testsupport.AdminToken, `{"currency":"EUR","name":"Printemps"}`)
	got := e.MustCall(t, 200, "GET", "/api/v1/campaigns/2", testsupport.AdminToken, "")["campaign"].(map[string]any)
	if got["currency"] != "EUR" || got["name"] != "Printemps" {
		t.Fatalf("campaign 2 after the changes: %v", got)
	}
}

// TestPatchTemplatePricingFields: what a coupon takes off never changes by
// PATCH, as kind and face_value_cents never did: every pricing field is
// refused naming it, and the template is unchanged.
func TestPatchTemplatePricingFields(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring"}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, templateBody(
		`"kind":"percent","percent_off":10,"max_discount_cents":1000,"applies_to":"items","target":{"skus":["A"]}`))
	before := e.TemplateJSON(t, 1)
	for _, f := range []string{`"kind":"fixed"`, `"face_value_cents":5`, `"percent_off":20`, `"max_discount_cents":5`,
		`"min_order_cents":5`, `"applies_to":"order"`, `"target":{"skus":["B"]}`, `"min_quantity":2`, `"buy_quantity":1`,
		`"get_quantity":1`, `"get_percent":50`, `"max_applications":1`, `"tiers":[{"min_cents":1,"off_cents":1}]`,
		`"priority":1`, `"currency":"EUR"`} {
		field := strings.Trim(strings.SplitN(f, ":", 2)[0], `"`)
		out := e.MustCall(t, 400, "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"name":"Renamed",`+f+`}`)
		if out["field"] != field {
			t.Fatalf("PATCH %s: %v", f, out)
		}
	}
	after := e.TemplateJSON(t, 1)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("refused patches changed the template:\n%v\n%v", before, after)
	}
}
