package api_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestCampaignPauseAPI: PATCH /api/v1/campaigns/:id pauses a campaign (its
// templates' claims answer 409 not_claimable and leave the offers), renames
// and resumes it; bad fields are all named in one 400 (fields), and a
// second revoke of a coupon is 409 revoked.
func TestCampaignPauseAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	e.MustCall(t, 201, "POST", "/api/v1/templates", testsupport.AdminToken,
		`{"campaign_id":1,"name":"Five off","kind":"fixed","face_value_cents":500,"total_stock":10,"per_user_limit":5,"valid_days":30}`)

	app := e.AppToken(t)
	claimAs := func(user, key string) (int, map[string]any) {
		return e.Call(t, "POST", "/api/v1/templates/1/claim", app, map[string]string{"Idempotency-Key": key}, `{"user_id":"`+user+`"}`)
	}
	out := e.MustCall(t, 200, "PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"status":"paused"}`)
	if c := out["campaign"].(map[string]any); c["status"] != "paused" || c["name"] != "Spring" {
		t.Fatalf("paused campaign %v", c)
	}
	status, body := claimAs("u1", "k1")
	if status != 409 || body["result"] != "not_claimable" || body["error"] != "this coupon's campaign is paused" {
		t.Fatalf("claim while paused: %d %v", status, body)
	}
	offers := e.MustCall(t, 200, "GET", "/api/v1/templates", app, "")
	if n := len(offers["templates"].([]any)); n != 0 {
		t.Fatalf("%d offers while the campaign is paused, want 0", n)
	}

	bad := e.MustCall(t, 400, "PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"name":"","status":"stopped"}`)
	fields := fmt.Sprint(bad["fields"])
	if bad["field"] != "name" || fields != `[map[field:name message:must be 1 to 100 characters] map[field:status message:must be "active" or "paused"]]` {
		t.Fatalf("bad patch: %v", bad)
	}
	e.MustCall(t, 404, "PATCH", "/api/v1/campaigns/99", testsupport.AdminToken, `{"status":"paused"}`)

	out = e.MustCall(t, 200, "PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"name":"Summer","status":"active"}`)
	if c := out["campaign"].(map[string]any); c["status"] != "active" || c["name"] != "Summer" {
		t.Fatalf("resumed campaign %v", c)
	}
	status, body = claimAs("u1", "k2")
	if status != 201 {
		t.Fatalf("claim after the resume: %d %v", status, body)
	}
	code := body["coupon"].(map[string]any)["code"].(string)
	e.MustCall(t, 200, "POST", "/api/v1/coupons/"+code+"/revoke", testsupport.AdminToken, `{"reason":"abuse"}`)
	again := e.MustCall(t, 409, "POST", "/api/v1/coupons/"+code+"/revoke", testsupport.AdminToken, `{"reason":"abuse"}`)
	if again["result"] != "revoked" {
		t.Fatalf("second revoke: %v", again)
	}

	// A template with several mistakes: every field named in one answer.
	tbad := e.MustCall(t, 400, "POST", "/api/v1/templates", testsupport.AdminToken,
		`{"campaign_id":1,"name":"","kind":"fixed","face_value_cents":0,"total_stock":0,"per_user_limit":500,"valid_days":30}`)
	var names []string
	for _, f := range tbad["fields"].([]any) {
		names = append(names, f.(map[string]any)["field"].(string))
	}
	if tbad["field"] != "name" || fmt.Sprint(names) != "[name face_value_cents total_stock per_user_limit]" {
		t.Fatalf("template with four mistakes: %v", tbad)
	}
}
