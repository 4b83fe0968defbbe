package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// badText are text values no field takes. The JSON of each is written by
// hand: encoding/json would turn the bad bytes into U+FFFD.
var badText = []struct{ name, json, raw string }{
	{"InvalidUTF8", "\"ok\xffok\"", "ok\xffok"},
	{"TruncatedUTF8", "\"ok\xe2\x80\"", "ok\xe2\x80"},
	{"LoneSurrogate", `"ok\ud800ok"`, "ok\U0000fffdok"},
	{"ReplacementChar", `"ok\ufffdok"`, "ok\ufffdok"},
	{"NUL", `"ok\u0000ok"`, "ok\x00ok"},
	{"Bell", `"ok\u0007ok"`, "ok\aok"},
	{"Tab", `"ok\tok"`, "ok\tok"},
	{"Escape", `"ok\u001b[31mok"`, "ok\x1b[31mok"},
	{"Delete", `"ok\u007fok"`, "ok\x7fok"},
	{"C1", `"ok\u0085ok"`, "ok\u0085ok"},
	{"LoneCR", `"ok\rok"`, "ok\rok"},
	{"LineSeparator", `"ok\u2028ok"`, "ok\u2028ok"},
	{"RightToLeftOverride", `"ok\u202eko"`, "ok\u202eko"},
	{"LeftToRightEmbedding", `"ok\u202aok"`, "ok\u202aok"},
	{"PopDirectional", `"ok\u202cok"`, "ok\u202cok"},
	{"RightToLeftIsolate", `"ok\u2067ok"`, "ok\u2067ok"},
	{"PopIsolate", `"ok\u2069ok"`, "ok\u2069ok"},
}

// lineOnlyText are refused in a line and taken in a multi-line text.
var lineOnlyText = []struct{ name, json, raw string }{
	{"Newline", `"line one\nline two"`, "line one\nline two"},
	{"CRLF", `"line one\r\nline two"`, "line one\r\nline two"},
	{"RightToLeftMark", `"ok\u200fok"`, "ok\u200fok"},
	{"LeftToRightMark", `"ok\u200eok"`, "ok\u200eok"},
}

// TestTextIsClean sends every text field of the API each value no text field
// takes: each is refused 400 naming the field, and nothing changes. Line
// breaks and direction marks are taken in descriptions only.
func TestTextIsClean(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, testsupport.ValidTemplate)
	app := e.AppToken(t)
	cashier := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"till"}`)["token"].(string)
	code, out := e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": "setup"}, `{"user_id":"alice"}`)
	if code != 201 {
		t.Fatalf("claim: %d %v", code, out)
	}
	couponCode := out["coupon"].(map[string]any)["code"].(string)

	type field struct {
		name, method, path, token string
		headers                   map[string]string
		body                      func(v string) string // v is a JSON string literal
		field                     string
		multiLine                 bool
		invalidUTF8Only           bool // a field without a text rule of its own: only its bytes are checked
	}
	tmpl := func(key string) func(string) string {
		return func(v string) string {
			return strings.Replace(testsupport.ValidTemplate, `"kind"`, `"`+key+`":`+v+`,"kind"`, 1)
		}
	}
	obj := func(format string) func(string) string {
		return func(v string) string { return fmt.Sprintf(format, v) }
	}
	key := map[string]string{"Idempotency-Key": "text-test"}
	fields := []field{
		{name: "CampaignName", method: "POST", path: "/api/v1/campaigns", token: testsupport.AdminToken, body: obj(`{"name":%s}`), field: "name"},
		{name: "TemplateName", method: "POST", path: "/api/v1/templates", token: testsupport.AdminToken,
			body: func(v string) string { return strings.Replace(testsupport.ValidTemplate, `"Five off"`, v, 1) }, field: "name"},
		{name: "TemplateDescription", method: "POST", path: "/api/v1/templates", token: testsupport.AdminToken, body: tmpl("description"),
			field: "description", multiLine: true},
		{name: "PatchName", method: "PATCH", path: "/api/v1/templates/1", token: testsupport.AdminToken, body: obj(`{"name":%s}`), field: "name"},
		{name: "PatchDescription", method: "PATCH", path: "/api/v1/templates/1", token: testsupport.AdminToken, body: obj(`{"description":%s}`),
			field: "description", multiLine: true},
		{name: "StockReason", method: "POST", path: "/api/v1/templates/1/stock", token: testsupport.AdminToken, body: obj(`{"delta":1,"reason":%s}`), field: "reason"},
		{name: "RevokeReason", method: "POST", path: "/api/v1/coupons/" + couponCode + "/revoke", token: testsupport.AdminToken,
			body: obj(`{"return_stock":true,"reason":%s}`), field: "reason"},
		{name: "TokenName", method: "POST", path: "/api/v1/tokens", token: testsupport.AdminToken, body: obj(`{"role":"app","name":%s}`), field: "name"},
		{name: "Username", method: "POST", path: "/api/v1/users", token: testsupport.AdminToken,
			body: obj(`{"username":%s,"password":"long enough pw","role":"shopper"}`), field: "username"},
		{name: "Password", method: "POST", path: "/api/v1/users", token: testsupport.AdminToken,
			body: obj(`{"username":"zed","password":%s,"role":"shopper"}`), field: "password", invalidUTF8Only: true},
		{name: "ClaimUserID", method: "POST", path: "/api/v1/templates/1/claim", token: app, headers: key,
			body: obj(`{"user_id":%s}`), field: "user_id"},
		{name: "RedeemCode", method: "POST", path: "/api/v1/redemptions", token: cashier,
			body: obj(`{"coupon_code":%s,"order_id":"o1","order_amount_cents":1000}`), field: "coupon_code"},
		{name: "RedeemOrderID", method: "POST", path: "/api/v1/redemptions", token: cashier,
			body: obj(`{"coupon_code":"` + couponCode + `","order_id":%s,"order_amount_cents":1000}`), field: "order_id"},
		{name: "RedeemUserID", method: "POST", path: "/api/v1/redemptions", token: cashier,
			body: obj(`{"coupon_code":"` + couponCode + `","order_id":"o1","order_amount_cents":1000,"user_id":%s}`), field: "user_id"},
		{name: "RefundCode", method: "POST", path: "/api/v1/refunds", token: cashier,
			body: obj(`{"coupon_code":%s,"order_id":"o1"}`), field: "coupon_code"},
		{name: "RefundOrderID", method: "POST", path: "/api/v1/refunds", token: cashier,
			body: obj(`{"coupon_code":"` + couponCode + `","order_id":%s}`), field: "order_id"},
	}
	before, tplBefore := e.Counts(t), e.TemplateJSON(t, 1)
	for _, f := range fields {
		cases := badText
		if !f.multiLine {
			cases = append(cases[:len(cases):len(cases)], lineOnlyText...)
		}
		for _, v := range cases {
			if f.invalidUTF8Only && !strings.Contains(v.name, "UTF8") {
				continue
			}
			t.Run(f.name+"/"+v.name, func(t *testing.T) {
				code, out := e.Call(t, f.method, f.path, f.token, f.headers, f.body(v.json))
				if code != 400 || out["field"] != f.field || out["result"] != "invalid_request" || out["code"] != float64(3) {
					t.Fatalf("%s: %d %v, want 400 naming %s", f.body(v.json), code, out, f.field)
				}
			})
		}
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("refused text changed the database: %v -> %v", before, after)
	}
	if after := e.TemplateJSON(t, 1); fmt.Sprint(after) != fmt.Sprint(tplBefore) {
		t.Fatalf("refused text changed the template:\n%v\n%v", tplBefore, after)
	}
	var c models.Coupon
	if err := e.Backends.DB.Where("code = ?", couponCode).First(&c).Error; err != nil || c.Status != models.CouponIssued {
		t.Fatalf("coupon %s is %q (%v) after refused revokes and redemptions", couponCode, c.Status, err)
	}

	// A description takes line breaks and direction marks, stored as sent.
	for _, v := range lineOnlyText {
		t.Run("DescriptionTakes/"+v.name, func(t *testing.T) {
			out := e.MustCall(t, 200, "PATCH", "/api/v1/templates/1", testsupport.AdminToken, `{"description":`+v.json+`}`)
			if got := out["template"].(map[string]any)["description"]; got != v.raw {
				t.Fatalf("description %q, want %q", got, v.raw)
			}
			if got := e.TemplateJSON(t, 1)["description"]; got != v.raw {
				t.Fatalf("stored description %q, want %q", got, v.raw)
			}
			out = e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, tmpl("description")(v.json))
			if got := out["template"].(map[string]any)["description"]; got != v.raw {
				t.Fatalf("created description %q, want %q", got, v.raw)
			}
		})
	}
	// Text in other scripts is text.
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Été – שלום – 春の セール 🎉"}`)
}

// TestPagesTextIsClean posts each admin form with text no field takes: each
// is refused 400 with the error beside the field, and nothing changes.
func TestPagesTextIsClean(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	tpl := e.Template(t, "$5 off")
	edit := fmt.Sprintf("/admin/templates/%d", tpl.ID)
	coupon := e.ClaimFor(t, tpl.ID, "victim")
	newTemplate := url.Values{"campaign_id": {fmt.Sprint(e.Demo.Campaign.ID)}, "name": {"Form test"}, "kind": {"fixed"},
		"face_value": {"3.00"}, "total_stock": {"50"}, "per_user_limit": {"2"}, "validity": {"days"}, "valid_days": {"10"},
		"refund_policy": {"restore"}, "claim_starts_at": {"2026-01-01T09:00"}}
	editForm := url.Values{"name": {tpl.Name}, "description": {tpl.Description}, "claim_starts_at": {"2026-01-01T09:00"}}
	with := func(base url.Values, k, v string) url.Values {
		f := url.Values{}
		for key, vals := range base {
			f[key] = vals
		}
		f.Set(k, v)
		return f
	}
	forms := []struct {
		name, from, to string
		form           func(v string) url.Values
		id             string
		multiLine      bool
	}{
		{"CampaignName", "/admin/campaigns/new", "/admin/campaigns",
			func(v string) url.Values { return url.Values{"name": {v}, "budget": {""}} }, "name", false},
		{"NewTemplateName", "/admin/templates/new", "/admin/templates",
			func(v string) url.Values { return with(newTemplate, "name", v) }, "name", false},
		{"NewTemplateDescription", "/admin/templates/new", "/admin/templates",
			func(v string) url.Values { return with(newTemplate, "description", v) }, "description", true},
		{"EditName", edit, edit, func(v string) url.Values { return with(editForm, "name", v) }, "edit-name", false},
		{"EditDescription", edit, edit, func(v string) url.Values { return with(editForm, "description", v) }, "edit-description", true},
		{"StockReason", edit, edit + "/stock",
			func(v string) url.Values { return url.Values{"delta": {"5"}, "reason": {v}} }, "stock-reason", false},
		{"RevokeReason", "/admin/coupons", "/admin/coupons/revoke",
			func(v string) url.Values {
				return url.Values{"code": {coupon.Code}, "public_reason": {"issued_in_error"}, "reason": {v}, "return_stock": {"1"}}
			}, "revoke-reason", false},
	}
	counts := func() map[string]int64 {
		out := map[string]int64{}
		for _, table := range []string{"campaigns", "templates", "user_coupons", "audit_log"} {
			var n int64
			if err := e.Backends.DB.Table(table).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			out[table] = n
		}
		return out
	}
	before := counts()
	tplBefore, err := e.Service.GetTemplate(context.Background(), tpl.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range forms {
		cases := badText
		if !f.multiLine {
			cases = append(cases[:len(cases):len(cases)], lineOnlyText...)
		}
		for _, v := range cases {
			t.Run(f.name+"/"+v.name, func(t *testing.T) {
				p := admin.Form(f.from, f.to, f.form(v.raw))
				if p.Status != http.StatusBadRequest || testsupport.FieldErrorBeside(p.Body, f.id) == "" {
					t.Fatalf("%q: %v, want 400 with an error beside %s", v.raw, p, f.id)
				}
			})
		}
	}
	if after := counts(); !testsupport.EqualCounts(before, after) {
		t.Fatalf("refused text changed the database: %v -> %v", before, after)
	}
	if after, _ := e.Service.GetTemplate(context.Background(), tpl.ID); after.Name != tplBefore.Name ||
		after.Description != tplBefore.Description || after.TotalStock != tplBefore.TotalStock {
		t.Fatalf("refused text changed the template: %+v", after)
	}
	if s := e.CouponStatus(t, coupon.Code); s != models.CouponIssued {
		t.Fatalf("the coupon is %s after refused revokes", s)
	}
	// A textarea sends its line breaks as \r\n: a description keeps them.
	p := admin.Form(edit, edit, with(editForm, "description", "line one\r\nline two"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("a description of two lines: %v", p)
	}
	if tp, _ := e.Service.GetTemplate(context.Background(), tpl.ID); tp.Description != "line one\r\nline two" {
		t.Fatalf("description %q", tp.Description)
	}
}
