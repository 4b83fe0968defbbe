package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/claims"
)

// TestWebhooksAPI registers, lists, changes and deletes a webhook endpoint
// over HTTP: a private address is refused naming url, the secret is in the
// create answer only, an unknown event type is refused naming event_types.
func TestWebhooksAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	for _, body := range []string{`{"url":"http://127.0.0.1:9/x"}`, `{"url":"http://169.254.169.254/latest/meta-data"}`} {
		code, out := e.Call(t, "POST", "/api/v1/webhooks", testsupport.AdminToken, nil, body)
		if code != 400 || out["result"] != "invalid_request" || !strings.Contains(fmt.Sprint(out["error"]), "url") {
			t.Fatalf("register %s: %d %v, want 400 naming url", body, code, out)
		}
	}
	code, out := e.Call(t, "POST", "/api/v1/webhooks", testsupport.AdminToken, nil, `{"url":"https://8.8.8.8/h","event_types":["coupon.nope"]}`)
	if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), "event_types") {
		t.Fatalf("unknown type: %d %v, want 400 naming event_types", code, out)
	}
	created := e.MustCall(t, 201, "POST", "/api/v1/webhooks", testsupport.AdminToken,
		`{"url":"https://8.8.8.8/h","event_types":["coupon.claimed","coupon.redeemed"],"secret":"a-secret-of-20-chars"}`)
	ep := created["endpoint"].(map[string]any)
	id := int64(ep["id"].(float64))
	if created["secret"] != "a-secret-of-20-chars" || fmt.Sprint(ep["event_types"]) != "[coupon.claimed coupon.redeemed]" || ep["enabled"] != true {
		t.Fatalf("created: %v", created)
	}
	list := e.MustCall(t, 200, "GET", "/api/v1/webhooks", testsupport.AdminToken, "")
	if eps := list["endpoints"].([]any); len(eps) != 1 || strings.Contains(fmt.Sprint(list), "a-secret-of-20-chars") {
		t.Fatalf("list: %v, want the one endpoint without its secret", list)
	}
	path := fmt.Sprintf("/api/v1/webhooks/%d", id)
	changed := e.MustCall(t, 200, "PATCH", path, testsupport.AdminToken, `{"enabled":false,"event_types":[]}`)
	if ep := changed["endpoint"].(map[string]any); ep["enabled"] != false || fmt.Sprint(ep["event_types"]) != "[]" || ep["disabled_at"] == nil {
		t.Fatalf("patch: %v", changed)
	}
	if log := e.MustCall(t, 200, "GET", path+"/attempts", testsupport.AdminToken, ""); len(log["attempts"].([]any)) != 0 {
		t.Fatalf("attempts of a new endpoint: %v", log)
	}
	e.MustCall(t, 200, "DELETE", path, testsupport.AdminToken, "")
	if code, _ := e.Call(t, "GET", path, testsupport.AdminToken, nil, ""); code != 404 {
		t.Fatalf("get a deleted endpoint: %d, want 404", code)
	}
}

// TestWebhooksAPISpecialAddresses: addresses of the special-purpose
// registries, and IPv6 addresses carrying a private IPv4 address, are 400
// naming url; a secret of spaces is 400 naming secret; nothing is made.
func TestWebhooksAPISpecialAddresses(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	for _, u := range []string{"http://[64:ff9b::7f00:1]/x", "http://[2002:a00:1::1]/x", "http://[::127.0.0.1]/x",
		"http://198.18.0.1/x", "http://240.0.0.1/x", "http://192.0.0.8/x", "http://255.255.255.255/x", "http://[2001:db8::1]/x"} {
		code, out := e.Call(t, "POST", "/api/v1/webhooks", testsupport.AdminToken, nil, fmt.Sprintf(`{"url":%q}`, u))
		if code != 400 || out["result"] != "invalid_request" || !strings.Contains(fmt.Sprint(out["error"]), "url") {
			t.Errorf("register %s: %d %v, want 400 naming url", u, code, out)
		}
	}
	code, out := e.Call(t, "POST", "/api/v1/webhooks", testsupport.AdminToken, nil, `{"url":"https://8.8.8.8/h","secret":"                    "}`)
	if code != 400 || out["result"] != "invalid_request" || !strings.Contains(fmt.Sprint(out["error"]), "secret") {
		t.Fatalf("a secret of 20 spaces: %d %v, want 400 naming secret", code, out)
	}
	if list := e.MustCall(t, 200, "GET", "/api/v1/webhooks", testsupport.AdminToken, ""); len(list["endpoints"].([]any)) != 0 {
		t.Fatalf("endpoints after refusals: %v, want none", list)
	}
}

// TestEventsFeedAPI: the pull feed over HTTP lists the events in id order
// with next, and refuses a bad after or limit naming it.
func TestEventsFeedAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	ctx := context.Background()
	c, err := e.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "Feed"})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := e.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "Feed", Kind: models.KindFixed,
		FaceValueCents: 100, TotalStock: 3, PerUserLimit: 1, ValidDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: fmt.Sprintf("u%d", i), IdempotencyKey: fmt.Sprintf("k%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	page := e.MustCall(t, 200, "GET", "/api/v1/events?after=0&limit=2", testsupport.AdminToken, "")
	evs := page["events"].([]any)
	if len(evs) != 2 || evs[0].(map[string]any)["type"] != "coupon.claimed" || page["next"] != evs[1].(map[string]any)["id"] {
		t.Fatalf("first page: %v", page)
	}
	data := evs[0].(map[string]any)["data"].(map[string]any)
	if data["user_id"] != "u0" || data["template_id"] != float64(tp.ID) || data["code"] == "" {
		t.Fatalf("claimed event data: %v", data)
	}
	rest := e.MustCall(t, 200, "GET", fmt.Sprintf("/api/v1/events?after=%v", page["next"]), testsupport.AdminToken, "")
	if evs := rest["events"].([]any); len(evs) != 2 || evs[1].(map[string]any)["type"] != "template.sold_out" {
		t.Fatalf("second page: %v, want the last claim and the sold out", rest)
	}
	for q, field := range map[string]string{"after=-1": "after", "limit=0": "limit", "limit=1001": "limit", "after=x": "after"} {
		code, out := e.Call(t, "GET", "/api/v1/events?"+q, testsupport.AdminToken, nil, "")
		if code != 400 || !strings.Contains(fmt.Sprint(out["error"]), field) {
			t.Errorf("?%s: %d %v, want 400 naming %s", q, code, out, field)
		}
	}
}
