package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestSharedCodeAPI: a shared template made and archived over the API, and
// its code at checkout: validate, hold (and its repeat), the per-user limit,
// release, one-step redemption; every answer matches the OpenAPI document.
func TestSharedCodeAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Poster",`+
		`"kind":"fixed","face_value_cents":500,"total_stock":5,"per_user_limit":1,"valid_days":30,`+
		`"code_mode":"shared","shared_code":"summer10"}`, e.CampaignID))
	tpl := out["template"].(map[string]any)
	id := int64(tpl["id"].(float64))
	if tpl["shared_code"] != "SUMMER10" || tpl["code_mode"] != "shared" {
		t.Fatalf("template %v", tpl)
	}
	st, out := e.Post(t, "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Copy",`+
		`"kind":"fixed","face_value_cents":500,"total_stock":5,"per_user_limit":1,"valid_days":30,`+
		`"code_mode":"shared","shared_code":"Summer10"}`, e.CampaignID))
	if st != 400 || out["result"] != "invalid_request" || !strings.Contains(out["error"].(string), "shared_code") {
		t.Fatalf("a second live template with the code: %d %v", st, out)
	}

	// Without a user_id the shopper is anonymous (docs/shared-codes.md).
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":3000,"coupon_codes":["summer10"]}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 500, 2500)
	st, out = e.Post(t, "/api/v1/checkout/validate", e.App, `{"order_amount_cents":3000,"coupon_codes":["summer10"],"user_id":"alice"}`)
	e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 500, 2500)

	hold := `{"order_id":"web-s1","order_amount_cents":3000,"coupon_codes":["Summer10"],"user_id":"alice","ttl_seconds":600}`
	st, out = e.Post(t, "/api/v1/holds", e.App, hold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 2500)
	c := out["coupons"].([]any)[0].(map[string]any)
	if c["shared_code"] != "SUMMER10" || len(c["coupon_code"].(string)) != 13 {
		t.Fatalf("held coupon %v", c)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, hold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 200, "duplicate", 500, 2500)
	if again := out["coupons"].([]any)[0].(map[string]any); again["coupon_code"] != c["coupon_code"] || again["shared_code"] != "SUMMER10" {
		t.Fatalf("the repeat answers %v, want the first coupon %v", again, c)
	}
	st, out = e.Post(t, "/api/v1/holds", e.App, `{"order_id":"web-s2","order_amount_cents":3000,"coupon_codes":["SUMMER10"],"user_id":"alice"}`)
	e.Want(t, "POST", "/api/v1/holds", st, out, 409, "user_limit_reached", -1, 0)
	st, out = e.Post(t, "/api/v1/holds/web-s1/release", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "released", -1, 0)

	redeem := `{"coupon_code":"summer10","order_id":"till-s1","order_amount_cents":3000,"user_id":"alice"}`
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, redeem)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 2500)
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, redeem)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "duplicate", 500, 2500)
	// An anonymous shopper at the till: no user_id, a coupon of its own
	// with no owner, used by the order; the repeat is its duplicate.
	anon := `{"coupon_code":"Summer-10","order_id":"till-s2","order_amount_cents":3000}`
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, anon)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "redeemed", 500, 2500)
	ac := out["coupon"].(map[string]any)
	if ac["user_id"] != "" || ac["status"] != "used" || len(ac["code"].(string)) != 13 {
		t.Fatalf("anonymous redemption's coupon %v, want used with user_id \"\"", ac)
	}
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, anon)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 200, "duplicate", 500, 2500)
	if again := out["coupon"].(map[string]any); again["code"] != ac["code"] {
		t.Fatalf("the repeat answers %v, want the first coupon %v", again, ac)
	}
	// An anonymous hold of another order takes a coupon too, its release
	// gives it back; a second one of the order is its duplicate.
	anonHold := `{"order_id":"web-s3","order_amount_cents":3000,"coupon_codes":["summer10"],"ttl_seconds":600}`
	st, out = e.Post(t, "/api/v1/holds", e.App, anonHold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 201, "held", 500, 2500)
	st, out = e.Post(t, "/api/v1/holds", e.App, anonHold)
	e.Want(t, "POST", "/api/v1/holds", st, out, 200, "duplicate", 500, 2500)
	st, out = e.Post(t, "/api/v1/holds/web-s3/release", e.App, "")
	e.Want(t, "POST", "/api/v1/holds/{order_id}/release", st, out, 200, "released", -1, 0)
	var anonRows []models.Coupon
	if err := e.Backends.DB.Where("user_id = ? AND template_id = ?", "", id).Order("id").Find(&anonRows).Error; err != nil {
		t.Fatal(err)
	}
	if len(anonRows) != 2 || anonRows[0].Status != models.CouponUsed || anonRows[0].UserOrdinal != nil || anonRows[0].Slot == nil ||
		anonRows[1].Status != models.CouponRevoked || anonRows[1].Slot != nil || anonRows[1].ClaimOrderID == nil || *anonRows[1].ClaimOrderID != "web-s3" {
		t.Fatalf("anonymous coupons %+v; want one used with a slot and no ordinal, one given back by web-s3", anonRows)
	}

	// Archived is final and frees the code.
	path := fmt.Sprintf("/api/v1/templates/%d", id)
	st, out = e.Call(t, "PATCH", path, testsupport.AdminToken, nil, `{"status":"archived"}`)
	if st != 200 || out["template"].(map[string]any)["status"] != "archived" {
		t.Fatalf("archive: %d %v", st, out)
	}
	st, out = e.Call(t, "PATCH", path, testsupport.AdminToken, nil, `{"status":"active"}`)
	if st != 400 || !strings.Contains(out["error"].(string), "status") {
		t.Fatalf("resume an archived template: %d %v", st, out)
	}
	st, out = e.Post(t, "/api/v1/redemptions", e.Cashier, `{"coupon_code":"summer10","order_id":"till-s3","order_amount_cents":3000,"user_id":"bob"}`)
	e.Want(t, "POST", "/api/v1/redemptions", st, out, 404, "not_found", -1, 0)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, fmt.Sprintf(`{"campaign_id":%d,"name":"Again",`+
		`"kind":"fixed","face_value_cents":300,"total_stock":5,"per_user_limit":1,"valid_days":30,`+
		`"code_mode":"shared","shared_code":"SUMMER10"}`, e.CampaignID))
}

// TestSharedCodePages: the admin's create form takes a shared code (an error
// beside the field when another live template has it), the template page
// shows it, and its Archive button archives the template for good.
func TestSharedCodePages(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	form := url.Values{"campaign_id": {fmt.Sprint(e.Demo.Campaign.ID)}, "name": {"Poster"}, "kind": {"fixed"},
		"face_value": {"5.00"}, "total_stock": {"50"}, "per_user_limit": {"1"}, "validity": {"days"}, "valid_days": {"10"},
		"refund_policy": {"restore"}, "code_mode": {"shared"}, "shared_code": {"summer10"}}
	p := admin.Form("/admin/templates/new", "/admin/templates", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create a shared template: %v", p)
	}
	var tp models.Template
	if err := e.Backends.DB.Where("name = ?", "Poster").First(&tp).Error; err != nil || tp.SharedCode != "SUMMER10" || tp.CodeMode != "shared" {
		t.Fatalf("created %+v %v", tp, err)
	}
	form.Set("name", "Copy")
	p = admin.Form("/admin/templates/new", "/admin/templates", form)
	m := regexp.MustCompile(`(?s)id="shared_code".*?<p class="field-error"[^>]*>([^<]*)</p>`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusBadRequest || m == nil || !strings.Contains(m[1], "another template") {
		t.Fatalf("a taken code: %d, error beside the field %v", p.Status, m)
	}
	page := fmt.Sprintf("/admin/templates/%d", tp.ID)
	if body := admin.Get(page).Body; !strings.Contains(body, `data-shared-code>SUMMER10<`) || !strings.Contains(body, "data-archive") {
		t.Fatalf("template page lacks the code or the Archive button")
	}
	p = admin.Form(page, page+"/status", url.Values{"status": {"archived"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("archive: %v", p)
	}
	if s := e.TemplateStatus(t, tp.ID); s != models.TemplateArchived {
		t.Fatalf("status after archive %q", s)
	}
	body := admin.Get(page).Body
	if !strings.Contains(body, "Archived: final") || strings.Contains(body, "data-archive") || strings.Contains(body, "Resume claims") {
		t.Fatalf("the page of an archived template still offers its buttons")
	}
	// Its code is free: the copy is created now.
	p = admin.Form("/admin/templates/new", "/admin/templates", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("reuse the code of an archived template: %v", p)
	}
}

// TestSharedCodeNormalFormAPI: a shared code made with a dash is kept in its
// normal form (no dash), a second template with the code spelt without the
// dash is 400 naming shared_code, and the code typed with spaces or dashes
// is found at checkout.
func TestSharedCodeNormalFormAPI(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	body := func(code string) string {
		return fmt.Sprintf(`{"campaign_id":%d,"name":"Poster","kind":"fixed","face_value_cents":500,"total_stock":5,`+
			`"per_user_limit":1,"valid_days":30,"code_mode":"shared","shared_code":%q}`, e.CampaignID, code)
	}
	out := e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, body("SUMMER-8931"))
	if tpl := out["template"].(map[string]any); tpl["shared_code"] != "SUMMER8931" {
		t.Fatalf("template %v, want shared_code SUMMER8931", tpl)
	}
	for _, code := range []string{"SUMMER8931", "summer 8931"} {
		st, out := e.Post(t, "/api/v1/templates", testsupport.AdminToken, body(code))
		if st != 400 || out["result"] != "invalid_request" || !strings.Contains(out["error"].(string), "shared_code") {
			t.Fatalf("a second live template with %q: %d %v", code, st, out)
		}
	}
	for _, typed := range []string{"SUMMER 8931", "summer-8931", "Summer8931"} {
		st, out := e.Post(t, "/api/v1/checkout/validate", e.App,
			fmt.Sprintf(`{"order_amount_cents":3000,"coupon_codes":[%q],"user_id":"alice"}`, typed))
		e.Want(t, "POST", "/api/v1/checkout/validate", st, out, 200, "ok", 500, 2500)
		if c := out["coupons"].([]any)[0].(map[string]any); c["shared_code"] != "SUMMER8931" {
			t.Fatalf("validate %q: coupon %v", typed, c)
		}
	}
}
