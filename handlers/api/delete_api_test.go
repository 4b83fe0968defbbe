package api_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestDeleteAPI: DELETE /api/v1/templates/:id deletes a template that never
// issued a coupon (200 ok; then 404), refuses one with a coupon (409 in_use,
// the message saying to archive it) and needs the admin role; DELETE
// /api/v1/campaigns/:id refuses a campaign with templates and deletes an
// empty one; bad and unknown ids are 400 and 404.
func TestDeleteAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	tmpl := `{"campaign_id":1,"name":"Five off","kind":"fixed","face_value_cents":500,"total_stock":10,"per_user_limit":5,"valid_days":30}`
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, tmpl)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken, tmpl)
	app := e.AppToken(t)
	if status, body := e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": "k1"}, `{"user_id":"u1"}`); status != 201 {
		t.Fatalf("claim: %d %v", status, body)
	}

	used := e.MustCall(t, 409, "DELETE", "/api/v1/templates/1", testsupport.AdminToken, "")
	if used["result"] != "in_use" || used["code"] != float64(24) ||
		used["error"] != "template 1 has issued coupons: it cannot be deleted; archive it instead" {
		t.Fatalf("delete of a used template: %v", used)
	}
	e.MustCall(t, 403, "DELETE", "/api/v1/templates/2", app, "")
	camp := e.MustCall(t, 409, "DELETE", "/api/v1/campaigns/1", testsupport.AdminToken, "")
	if camp["result"] != "in_use" ||
		camp["error"] != "campaign 1 has 2 template(s): delete those that never issued a coupon first, or archive the campaign's templates instead" {
		t.Fatalf("delete of a campaign with templates: %v", camp)
	}
	ok := e.MustCall(t, 200, "DELETE", "/api/v1/templates/2", testsupport.AdminToken, "")
	if ok["result"] != "ok" || ok["code"] != float64(0) {
		t.Fatalf("delete: %v", ok)
	}
	e.MustCall(t, 404, "GET", "/api/v1/templates/2", testsupport.AdminToken, "")
	gone := e.MustCall(t, 404, "DELETE", "/api/v1/templates/2", testsupport.AdminToken, "")
	if gone["result"] != "not_found" {
		t.Fatalf("second delete: %v", gone)
	}
	bad := e.MustCall(t, 400, "DELETE", "/api/v1/templates/x", testsupport.AdminToken, "")
	if bad["field"] != "id" {
		t.Fatalf("bad id: %v", bad)
	}

	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Empty","budget_cents":0}`)
	e.MustCall(t, 200, "DELETE", "/api/v1/campaigns/2", testsupport.AdminToken, "")
	e.MustCall(t, 404, "GET", "/api/v1/campaigns/2", testsupport.AdminToken, "")
	e.MustCall(t, 404, "DELETE", "/api/v1/campaigns/2", testsupport.AdminToken, "")
}
