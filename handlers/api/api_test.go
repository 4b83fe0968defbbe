package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

func TestClaimAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	tpl := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, testsupport.ValidTemplate)
	if id := tpl["template"].(map[string]any)["id"].(float64); id != 1 {
		t.Fatalf("template id %v", id)
	}
	app := e.AppToken(t)
	claim := func(key, body string) (int, map[string]any) {
		return e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": key}, body)
	}

	t.Run("OK", func(t *testing.T) {
		code, out := claim("k1", `{"user_id":"alice"}`)
		if code != 201 || out["result"] != "claimed" || out["code"].(float64) != 0 || out["remaining"].(float64) != 9 {
			t.Fatalf("claim: %d %v", code, out)
		}
		c := out["coupon"].(map[string]any)
		if c["user_id"] != "alice" || c["status"] != "issued" || len(c["code"].(string)) != 13 {
			t.Fatalf("coupon: %v", c)
		}
	})
	t.Run("Duplicate", func(t *testing.T) {
		code, out := claim("k1", `{"user_id":"alice"}`)
		if code != 200 || out["result"] != "duplicate" || out["code"].(float64) != 1 {
			t.Fatalf("replay: %d %v", code, out)
		}
	})
	t.Run("ErrIdempotencyMismatch", func(t *testing.T) {
		before := e.Counts(t)
		code, out := claim("k1", `{"user_id":"bob"}`)
		if code != 422 || out["result"] != "idempotency_mismatch" || out["code"].(float64) != 12 {
			t.Fatalf("mismatch: %d %v", code, out)
		}
		if after := e.Counts(t); after["user_coupons"] != before["user_coupons"] {
			t.Fatalf("coupons changed: %v -> %v", before, after)
		}
	})
	t.Run("ErrUserLimitReached", func(t *testing.T) {
		if code, _ := claim("k2", `{"user_id":"alice"}`); code != 201 {
			t.Fatalf("second claim: %d", code)
		}
		code, out := claim("k3", `{"user_id":"alice"}`)
		if code != 409 || out["result"] != "user_limit_reached" || out["code"].(float64) != 4 {
			t.Fatalf("limit: %d %v", code, out)
		}
	})
	t.Run("ErrNotClaimable", func(t *testing.T) {
		e.MustCall(t, 200, "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"status":"paused"}`)
		code, out := claim("k4", `{"user_id":"carol"}`)
		if code != 409 || out["result"] != "not_claimable" {
			t.Fatalf("paused: %d %v", code, out)
		}
		// A replay of a claim made while open is still a replay.
		if code, out := claim("k1", `{"user_id":"alice"}`); code != 200 || out["result"] != "duplicate" {
			t.Fatalf("replay while paused: %d %v", code, out)
		}
		e.MustCall(t, 200, "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"status":"active"}`)
	})
	t.Run("ErrSoldOut", func(t *testing.T) {
		for i := 0; i < 8; i++ {
			if code, out := claim("fill"+string(rune('a'+i)), `{"user_id":"u`+string(rune('a'+i))+`"}`); code != 201 {
				t.Fatalf("fill %d: %d %v", i, code, out)
			}
		}
		code, out := claim("k5", `{"user_id":"dave"}`)
		if code != 409 || out["result"] != "sold_out" || out["code"].(float64) != 2 {
			t.Fatalf("sold out: %d %v", code, out)
		}
		e.MustCall(t, 200, "POST", "/api/v1/templates/1/stock", testsupport.AdminToken, `{"delta":1,"reason":"one more"}`)
		if code, out := claim("k6", `{"user_id":"dave"}`); code != 201 || out["remaining"].(float64) != 0 {
			t.Fatalf("after adding stock: %d %v", code, out)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		cashier := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"till"}`)["token"].(string)
		code, out := e.Call(t, "POST", "/api/v1/templates/1/claim", cashier, map[string]string{"Idempotency-Key": "k7"}, `{"user_id":"x"}`)
		if code != 403 || out["result"] != "forbidden" || out["code"].(float64) != 14 {
			t.Fatalf("cashier claim: %d %v", code, out)
		}
		code, out = e.Call(t, "POST", "/api/v1/templates/1/claim", "", map[string]string{"Idempotency-Key": "k7"}, `{"user_id":"x"}`)
		if code != 401 || out["result"] != "unauthorized" {
			t.Fatalf("anonymous claim: %d %v", code, out)
		}
		code, _ = e.Call(t, "POST", "/api/v1/templates/1/claim", "cps_not-a-token", map[string]string{"Idempotency-Key": "k7"}, `{"user_id":"x"}`)
		if code != 401 {
			t.Fatalf("bad token: %d", code)
		}
	})
}

// TestBadInput sends malformed requests to every endpoint of the claim issue
// and checks each gets a 4xx naming the field, and that nothing changed.
func TestBadInput(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":1000}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, testsupport.ValidTemplate)
	app := e.AppToken(t)
	big := `{"name":"` + strings.Repeat("a", 70<<10) + `"}`
	tmpl := func(field, value string) string {
		var m map[string]any
		_ = json.Unmarshal([]byte(testsupport.ValidTemplate), &m)
		if value == "" {
			delete(m, field)
		} else {
			var v any
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				// Raw text that is not valid JSON on its own (overflow numbers).
				b, _ := json.Marshal(m)
				return strings.Replace(string(b), "{", `{"`+field+`":`+value+",", 1)
			}
			m[field] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	cases := []struct {
		name, method, path, token, body string
		headers                         map[string]string
		status                          int
		field                           string
	}{
		{"CampaignMissingName", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"budget_cents":5}`, nil, 400, "name"},
		{"CampaignEmptyName", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"  "}`, nil, 400, "name"},
		{"CampaignLongName", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"` + strings.Repeat("x", 101) + `"}`, nil, 400, "name"},
		{"CampaignNegativeBudget", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","budget_cents":-1}`, nil, 400, "budget_cents"},
		{"CampaignHugeBudget", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","budget_cents":1000000000000000}`, nil, 400, "budget_cents"},
		{"CampaignOverflowBudget", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","budget_cents":99999999999999999999999}`, nil, 400, "budget_cents"},
		{"CampaignFloatBudget", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","budget_cents":1.5}`, nil, 400, "budget_cents"},
		{"CampaignWrongType", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":5}`, nil, 400, "name"},
		{"CampaignUnknownField", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","colour":"red"}`, nil, 400, "colour"},
		{"CampaignMalformed", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":`, nil, 400, "body"},
		{"CampaignTwoObjects", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a"}{"name":"b"}`, nil, 400, "body"},
		{"CampaignArray", "POST", "/api/v1/campaigns", testsupport.AdminToken, `[1,2]`, nil, 400, "body"},
		{"CampaignEmptyBody", "POST", "/api/v1/campaigns", testsupport.AdminToken, ` `, nil, 400, "body"},
		{"CampaignControlChars", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a\u0000b"}`, nil, 400, "name"},
		{"CampaignWrongContentType", "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a"}`, map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type"},
		{"CampaignOversized", "POST", "/api/v1/campaigns", testsupport.AdminToken, big, nil, 413, "body"},
		{"CampaignBadID", "GET", "/api/v1/campaigns/abc", testsupport.AdminToken, ``, nil, 400, "id"},
		{"CampaignNegativeID", "GET", "/api/v1/campaigns/-1", testsupport.AdminToken, ``, nil, 400, "id"},
		{"CampaignUnknownID", "GET", "/api/v1/campaigns/999", testsupport.AdminToken, ``, nil, 404, ""},
		{"CampaignHugeID", "GET", "/api/v1/campaigns/99999999999999999999", testsupport.AdminToken, ``, nil, 400, "id"},

		{"TemplateMissingKind", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("kind", ""), nil, 400, "kind"},
		{"TemplateBadKind", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("kind", `"bogus"`), nil, 400, "kind"},
		{"TemplateMissingStock", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("total_stock", ""), nil, 400, "total_stock"},
		{"TemplateZeroStock", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("total_stock", "0"), nil, 400, "total_stock"},
		{"TemplateHugeStock", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("total_stock", "10000001"), nil, 400, "total_stock"},
		{"TemplateOverflowStock", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("total_stock", "1e40"), nil, 400, "total_stock"},
		{"TemplateNegativeFace", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("face_value_cents", "-5"), nil, 400, "face_value_cents"},
		{"TemplateZeroLimit", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("per_user_limit", "0"), nil, 400, "per_user_limit"},
		{"TemplateLimitTooHigh", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("per_user_limit", "101"), nil, 400, "per_user_limit"},
		{"TemplateNoValidity", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("valid_days", ""), nil, 400, "valid_days"},
		{"TemplateValidDaysTooHigh", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("valid_days", "3651"), nil, 400, "valid_days"},
		{"TemplateBadTime", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("claim_starts_at", `"yesterday"`), nil, 400, "claim_starts_at"},
		{"TemplatePercentOnFixed", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("percent_off", "10"), nil, 400, "percent_off"},
		{"TemplateBadPolicy", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("refund_policy", `"burn"`), nil, 400, "refund_policy"},
		{"TemplateNonASCIIName", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("name", `"`+strings.Repeat("é", 101)+`"`), nil, 400, "name"},
		{"TemplateUnknownCampaign", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("campaign_id", "77"), nil, 404, "campaign_id"},
		{"TemplateExtraField", "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("stock", "5"), nil, 400, "stock"},
		{"TemplateBadID", "GET", "/api/v1/templates/x1", "", ``, nil, 400, "id"},
		{"TemplateUnknownID", "GET", "/api/v1/templates/42", "", ``, nil, 404, ""},
		{"PatchBadStatus", "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"status":"gone"}`, nil, 400, "status"},
		{"PatchEmptyStatus", "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"status":""}`, nil, 400, "status"},
		{"PatchBadEnd", "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"claim_ends_at":5}`, nil, 400, "claim_ends_at"},
		{"PatchEndBeforeStart", "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"claim_ends_at":"2000-01-01T00:00:00Z"}`, nil, 400, "claim_ends_at"},
		{"PatchStock", "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"total_stock":5}`, nil, 400, "total_stock"},
		{"PatchUnknown", "PATCH", "/api/v1/templates/9", testsupport.AdminToken, `{"name":"x"}`, nil, 404, ""},
		{"StockZero", "POST", "/api/v1/templates/1/stock", testsupport.AdminToken, `{"delta":0,"reason":"r"}`, nil, 400, "delta"},
		{"StockNegative", "POST", "/api/v1/templates/1/stock", testsupport.AdminToken, `{"delta":-3,"reason":"r"}`, nil, 400, "delta"},
		{"StockOverMax", "POST", "/api/v1/templates/1/stock", testsupport.AdminToken, `{"delta":9999999,"reason":"r"}`, nil, 400, "delta"},
		{"StockNoReason", "POST", "/api/v1/templates/1/stock", testsupport.AdminToken, `{"delta":3}`, nil, 400, "reason"},
		{"StockUnknownTemplate", "POST", "/api/v1/templates/5/stock", testsupport.AdminToken, `{"delta":3,"reason":"r"}`, nil, 404, ""},

		{"ClaimNoKey", "POST", "/api/v1/templates/1/claim", app, `{"user_id":"a"}`, nil, 400, "Idempotency-Key"},
		{"ClaimLongKey", "POST", "/api/v1/templates/1/claim", app, `{"user_id":"a"}`, map[string]string{"Idempotency-Key": strings.Repeat("k", 129)}, 400, "Idempotency-Key"},
		{"ClaimNonASCIIKey", "POST", "/api/v1/templates/1/claim", app, `{"user_id":"a"}`, map[string]string{"Idempotency-Key": "clé"}, 400, "Idempotency-Key"},
		{"ClaimNoUser", "POST", "/api/v1/templates/1/claim", app, `{}`, map[string]string{"Idempotency-Key": "k"}, 400, "user_id"},
		{"ClaimEmptyUser", "POST", "/api/v1/templates/1/claim", app, `{"user_id":""}`, map[string]string{"Idempotency-Key": "k"}, 400, "user_id"},
		{"ClaimLongUser", "POST", "/api/v1/templates/1/claim", app, `{"user_id":"` + strings.Repeat("u", 65) + `"}`, map[string]string{"Idempotency-Key": "k"}, 400, "user_id"},
		{"ClaimBadUserChars", "POST", "/api/v1/templates/1/claim", app, `{"user_id":"a b|c"}`, map[string]string{"Idempotency-Key": "k"}, 400, "user_id"},
		{"ClaimNonASCIIUser", "POST", "/api/v1/templates/1/claim", app, `{"user_id":"jürgen"}`, map[string]string{"Idempotency-Key": "k"}, 400, "user_id"},
		{"ClaimUserNumber", "POST", "/api/v1/templates/1/claim", app, `{"user_id":7}`, map[string]string{"Idempotency-Key": "k"}, 400, "user_id"},
		{"ClaimNoBody", "POST", "/api/v1/templates/1/claim", app, ``, map[string]string{"Idempotency-Key": "k"}, 415, "Content-Type"},
		{"ClaimBadTemplate", "POST", "/api/v1/templates/0/claim", app, `{"user_id":"a"}`, map[string]string{"Idempotency-Key": "k"}, 400, "id"},
		{"ClaimUnknownTemplate", "POST", "/api/v1/templates/31/claim", app, `{"user_id":"a"}`, map[string]string{"Idempotency-Key": "k"}, 404, ""},

		{"TokenBadRole", "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"shopper","name":"x"}`, nil, 400, "role"},
		{"TokenNoName", "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app"}`, nil, 400, "name"},
		{"UserShortPassword", "POST", "/api/v1/users", testsupport.AdminToken, `{"username":"zed","password":"short","role":"shopper"}`, nil, 400, "password"},
		{"UserBadName", "POST", "/api/v1/users", testsupport.AdminToken, `{"username":"z e d","password":"long enough pw","role":"shopper"}`, nil, 400, "username"},
		{"UserBadRole", "POST", "/api/v1/users", testsupport.AdminToken, `{"username":"zed","password":"long enough pw","role":"king"}`, nil, 400, "role"},
		{"UserAppRole", "POST", "/api/v1/users", testsupport.AdminToken, `{"username":"zed","password":"long enough pw","role":"app"}`, nil, 400, "role"},

		{"NoRoute", "GET", "/api/v1/nothing", testsupport.AdminToken, ``, nil, 404, ""},
		{"WrongMethod", "PUT", "/api/v1/templates/1", testsupport.AdminToken, ``, nil, 405, ""},
	}
	before := e.Counts(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := e.Call(t, tc.method, tc.path, tc.token, tc.headers, tc.body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %v", code, tc.status, out)
			}
			if tc.field != "" && out["field"] != tc.field {
				t.Fatalf("field %v, want %q: %v", out["field"], tc.field, out)
			}
			if msg, _ := out["error"].(string); msg == "" {
				t.Fatalf("no error message: %v", out)
			}
		})
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("bad input changed the database: %v -> %v", before, after)
	}
	var remaining int64
	if err := e.Backends.Redis.HGet(t.Context(), e.Prefix+"{c1}:t:1", "remaining").Scan(&remaining); err != nil || remaining != 10 {
		t.Fatalf("remaining %d (%v), want 10", remaining, err)
	}
}
