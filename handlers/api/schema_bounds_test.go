package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// boundCase sends one request whose property prop holds a value of size n:
// n characters of a string, n items of an array, or the number n.
type boundCase struct {
	method, route, prop string
	send                func(t *testing.T, n int64) (int, map[string]any)
}

// text is n characters of two bytes each, so that a bound counted in bytes
// would show.
func text(n int64) string { return strings.Repeat("é", int(n)) }

func body(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSchemaBoundsEnforced reads the bounds of request properties from the
// served OpenAPI document (minLength/maxLength, minimum/maximum,
// minItems/maxItems) and sends each at its bound, which the service accepts,
// and one past it, which it refuses 400 naming the property.
func TestSchemaBoundsEnforced(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	admin := testsupport.AdminToken
	mustID := func(out map[string]any, key string) int64 {
		t.Helper()
		return int64(out[key].(map[string]any)["id"].(float64))
	}
	// A campaign without a budget, and a template with room for the largest
	// generation and issue (the job runner does not run here: jobs are only
	// queued).
	campaign := mustID(e.MustCall(t, 201, "POST", "/api/v1/campaigns", admin, `{"name":"Bounds"}`), "campaign")
	template := func(fields map[string]any) map[string]any {
		base := map[string]any{"campaign_id": campaign, "name": "Bounds", "kind": "fixed", "face_value_cents": 100,
			"total_stock": 10_000_000, "per_user_limit": 10, "valid_days": 30}
		for k, v := range fields {
			base[k] = v
		}
		return base
	}
	big := mustID(e.MustCall(t, 201, "POST", "/api/v1/templates", admin, body(t, template(nil))), "template")
	webhook := mustID(e.MustCall(t, 201, "POST", "/api/v1/webhooks", admin, `{"url":"https://8.8.8.8/h"}`), "endpoint")
	// An order carries one coupon of a template: five templates for five.
	var combinable []int64
	for i := range 5 {
		combinable = append(combinable, mustID(e.MustCall(t, 201, "POST", "/api/v1/templates", admin, body(t, template(map[string]any{
			"name": fmt.Sprintf("Combinable %d", i), "total_stock": 1000, "stacking": "combinable"}))), "template"))
	}
	users := 0
	// claimed returns n coupons of one new user, each of another template.
	claimed := func(t *testing.T, n int64) (string, []string) {
		users++
		user := fmt.Sprintf("bounds-%d", users)
		codes := []string{}
		for i := range n {
			codes = append(codes, e.Claim(t, combinable[i], user))
		}
		return user, codes
	}
	orders := 0
	hold := func(t *testing.T, user string, codes []string, ttl any) (int, map[string]any) {
		orders++
		fields := map[string]any{"order_id": fmt.Sprintf("bounds-%d", orders), "order_amount_cents": 10_000,
			"user_id": user, "coupon_codes": codes}
		if ttl != nil {
			fields["ttl_seconds"] = ttl
		}
		return e.Call(t, "POST", "/api/v1/holds", e.App, map[string]string{"Idempotency-Key": fmt.Sprintf("bounds-%d", orders)}, body(t, fields))
	}
	post := func(method, path, token string, fields map[string]any) func(t *testing.T) (int, map[string]any) {
		return func(t *testing.T) (int, map[string]any) { return e.Call(t, method, path, token, nil, body(t, fields)) }
	}
	templatePath := fmt.Sprintf("/api/v1/templates/%d", big)
	cases := []boundCase{
		{"POST", "/api/v1/templates", "name", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/templates", admin, template(map[string]any{"name": text(n)}))(t)
		}},
		{"PATCH", "/api/v1/templates/:id", "name", func(t *testing.T, n int64) (int, map[string]any) {
			return post("PATCH", templatePath, admin, map[string]any{"name": text(n)})(t)
		}},
		{"POST", "/api/v1/campaigns", "name", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/campaigns", admin, map[string]any{"name": text(n)})(t)
		}},
		{"PATCH", "/api/v1/campaigns/:id", "name", func(t *testing.T, n int64) (int, map[string]any) {
			return post("PATCH", fmt.Sprintf("/api/v1/campaigns/%d", campaign), admin, map[string]any{"name": text(n)})(t)
		}},
		{"POST", "/api/v1/tokens", "name", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/tokens", admin, map[string]any{"role": "app", "name": text(n)})(t)
		}},
		{"POST", "/api/v1/templates", "description", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/templates", admin, template(map[string]any{"description": text(n)}))(t)
		}},
		{"PATCH", "/api/v1/templates/:id", "description", func(t *testing.T, n int64) (int, map[string]any) {
			return post("PATCH", templatePath, admin, map[string]any{"description": text(n)})(t)
		}},
		{"POST", "/api/v1/coupons/:code/revoke", "reason", func(t *testing.T, n int64) (int, map[string]any) {
			_, codes := claimed(t, 1)
			return post("POST", "/api/v1/coupons/"+codes[0]+"/revoke", admin, map[string]any{"reason": text(n)})(t)
		}},
		{"POST", "/api/v1/templates/:id/stock", "reason", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", fmt.Sprintf("/api/v1/templates/%d/stock", combinable[0]), admin, map[string]any{"delta": 1, "reason": text(n)})(t)
		}},
		{"POST", "/api/v1/webhooks", "description", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/webhooks", admin, map[string]any{"url": "https://8.8.8.8/d", "description": text(n)})(t)
		}},
		{"PATCH", "/api/v1/webhooks/:id", "description", func(t *testing.T, n int64) (int, map[string]any) {
			return post("PATCH", fmt.Sprintf("/api/v1/webhooks/%d", webhook), admin, map[string]any{"description": text(n)})(t)
		}},
		{"POST", "/api/v1/webhooks", "secret", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/webhooks", admin, map[string]any{"url": "https://8.8.8.8/s", "secret": text(n)})(t)
		}},
		{"PATCH", "/api/v1/webhooks/:id", "secret", func(t *testing.T, n int64) (int, map[string]any) {
			return post("PATCH", fmt.Sprintf("/api/v1/webhooks/%d", webhook), admin, map[string]any{"secret": text(n)})(t)
		}},
		{"POST", "/api/v1/templates", "total_stock", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/templates", admin, template(map[string]any{"total_stock": n}))(t)
		}},
		{"POST", "/api/v1/templates", "per_user_limit", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/templates", admin, template(map[string]any{"per_user_limit": n}))(t)
		}},
		{"POST", "/api/v1/templates", "valid_days", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/templates", admin, template(map[string]any{"valid_days": n}))(t)
		}},
		{"POST", "/api/v1/templates/:id/codes", "count", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", fmt.Sprintf("/api/v1/templates/%d/codes", big), admin, map[string]any{"count": n})(t)
		}},
		{"POST", "/api/v1/campaigns", "budget_cents", func(t *testing.T, n int64) (int, map[string]any) {
			return post("POST", "/api/v1/campaigns", admin, map[string]any{"name": "Budget", "budget_cents": n})(t)
		}},
		{"POST", "/api/v1/holds", "ttl_seconds", func(t *testing.T, n int64) (int, map[string]any) {
			user, codes := claimed(t, 1)
			return hold(t, user, codes, n)
		}},
		{"POST", "/api/v1/checkout/validate", "coupon_codes", func(t *testing.T, n int64) (int, map[string]any) {
			user, codes := claimed(t, min(n, 5))
			for int64(len(codes)) < n {
				codes = append(codes, codes[0]+"X")
			}
			return post("POST", "/api/v1/checkout/validate", e.App, map[string]any{"order_amount_cents": 10_000, "user_id": user, "coupon_codes": codes})(t)
		}},
		{"POST", "/api/v1/holds", "coupon_codes", func(t *testing.T, n int64) (int, map[string]any) {
			user, codes := claimed(t, min(n, 5))
			for int64(len(codes)) < n {
				codes = append(codes, codes[0]+"X")
			}
			return hold(t, user, codes, nil)
		}},
		{"POST", "/api/v1/templates/:id/issue", "user_ids", func(t *testing.T, n int64) (int, map[string]any) {
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("issued-%d", i)
			}
			return post("POST", fmt.Sprintf("/api/v1/templates/%d/issue", big), admin, map[string]any{"user_ids": ids})(t)
		}},
	}
	type bound struct {
		keyword string
		n       int64
		past    int64
	}
	checked := 0
	for _, tc := range cases {
		schema := e.Doc.RequestBodySchema(tc.method, tc.route)
		prop, _ := schema["properties"].(map[string]any)[tc.prop].(map[string]any)
		if prop == nil {
			t.Fatalf("%s %s: no property %s in the document", tc.method, tc.route, tc.prop)
		}
		var bounds []bound
		for _, kw := range []string{"minLength", "minItems", "minimum"} {
			if v, ok := prop[kw].(float64); ok && v > 0 || ok && kw == "minimum" {
				bounds = append(bounds, bound{kw, int64(v), int64(v) - 1})
			}
		}
		for _, kw := range []string{"maxLength", "maxItems", "maximum"} {
			if v, ok := prop[kw].(float64); ok {
				bounds = append(bounds, bound{kw, int64(v), int64(v) + 1})
			}
		}
		if len(bounds) == 0 {
			t.Fatalf("%s %s %s: the document states no bound: %v", tc.method, tc.route, tc.prop, prop)
		}
		for _, b := range bounds {
			t.Run(fmt.Sprintf("%s %s %s %s", tc.method, tc.route, tc.prop, b.keyword), func(t *testing.T) {
				checked++
				if status, out := tc.send(t, b.n); status/100 != 2 {
					t.Fatalf("%s %d (the bound): %d %v, want it accepted", b.keyword, b.n, status, out)
				}
				if status, out := tc.send(t, b.past); status != 400 || out["field"] != tc.prop {
					t.Fatalf("%s %d (past the bound %d): %d %v, want 400 naming %s", b.keyword, b.past, b.n, status, out, tc.prop)
				}
			})
		}
	}
	if len(cases) != 22 || checked < 35 {
		t.Fatalf("%d properties, %d bounds checked: the table lost cases", len(cases), checked)
	}
}

// TestTokenNameFitsItsActor: a token's name, prefixed "token:", is the actor
// of what the token does, kept in 400 bytes; a name of 100 characters of four
// bytes would not fit, and is refused naming name, while the longest name that
// fits acts and is audited under it.
func TestTokenNameFitsItsActor(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	tooLong := strings.Repeat("😀", 99) // 396 bytes, 402 with "token:"
	if status, out := e.Call(t, "POST", "/api/v1/tokens", testsupport.AdminToken, nil,
		body(t, map[string]any{"role": "admin", "name": tooLong})); status != 400 || out["field"] != "name" {
		t.Fatalf("a name of 396 bytes: %d %v, want 400 naming name", status, out)
	}
	longest := strings.Repeat("😀", 98) + "ab" // 394 bytes, 100 characters
	token := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken,
		body(t, map[string]any{"role": "admin", "name": longest}))["token"].(string)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", token, `{"name":"By a long name"}`)
	var actors []string
	if err := e.Backends.DB.Table("audit_log").Where("action = ?", "campaign.create").Pluck("actor", &actors).Error; err != nil {
		t.Fatal(err)
	}
	if len(actors) != 1 || actors[0] != "token:"+longest {
		t.Fatalf("audit actors %q, want the token's", actors)
	}
}
