package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/claims"
)

// TestReconcileAPI: POST /api/v1/reconcile reports per template, repairs with
// repair:true (with an audit entry), and refuses bad input and other roles.
func TestReconcileAPI(t *testing.T) {
	const boot = "reconcile-bootstrap-token-0123456789"
	f := testsupport.NewFixture(t, testsupport.WithBootstrap(boot))
	env, router := f.Env, f.Router
	call := func(token, body string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest("POST", "/api/v1/reconcile", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("answer is not JSON (%d): %q", rec.Code, rec.Body.String())
		}
		return rec.Code, out
	}
	ctx := context.Background()
	c, err := env.Service.CreateCampaign(ctx, "test", models.Campaign{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := env.Service.CreateTemplate(ctx, "test", models.Template{CampaignID: c.ID, Name: "t", Kind: "fixed",
		FaceValueCents: 100, TotalStock: 10, PerUserLimit: 1, ValidDays: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"a", "b"} {
		if _, err := env.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: u, IdempotencyKey: "k-" + u}); err != nil {
			t.Fatal(err)
		}
	}
	row := func(out map[string]any) map[string]any {
		t.Helper()
		rows, _ := out["templates"].([]any)
		if len(rows) != 1 {
			t.Fatalf("want one template in %v", out)
		}
		return rows[0].(map[string]any)
	}

	t.Run("OK", func(t *testing.T) {
		code, out := call(boot, `{"repair":false}`)
		r := row(out)
		if code != 200 || out["result"] != "ok" || r["drift"] != 0.0 || r["users_drifted"] != 0.0 ||
			r["redis_remaining"] != 8.0 || r["db_live"] != 2.0 || r["total_stock"] != 10.0 || r["repaired"] != false {
			t.Fatalf("%d %v", code, out)
		}
	})
	t.Run("OKRepair", func(t *testing.T) {
		key := fmt.Sprintf("%s{c%d}:t:%d", env.Prefix, c.ID, tp.ID)
		if err := env.Backends.Redis.HIncrBy(ctx, key, "remaining", 4).Err(); err != nil {
			t.Fatal(err)
		}
		code, out := call(boot, fmt.Sprintf(`{"template_id":%d,"repair":true}`, tp.ID))
		if r := row(out); code != 200 || r["drift"] != 4.0 || r["repaired"] != true {
			t.Fatalf("%d %v", code, out)
		}
		code, out = call(boot, `{"repair":false}`)
		if r := row(out); code != 200 || r["drift"] != 0.0 || r["redis_remaining"] != 8.0 {
			t.Fatalf("after the repair: %d %v", code, out)
		}
		audit, err := env.Service.ListAudit(ctx, 10)
		if err != nil || len(audit) == 0 || audit[0].Action != "reconcile.repair" || audit[0].Actor == "" ||
			!strings.Contains(audit[0].Detail, "drift=4") {
			t.Fatalf("audit: %+v %v", audit, err)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		for _, tc := range []struct{ body, field string }{
			{`{}`, "repair"},
			{`{"repair":"yes"}`, "repair"},
			{`{"template_id":0,"repair":false}`, "template_id"},
			{`{"template_id":-3,"repair":false}`, "template_id"},
			{`{"repair":false,"force":true}`, "force"},
		} {
			code, out := call(boot, tc.body)
			if code != 400 || out["result"] != "invalid_request" || out["field"] != tc.field {
				t.Errorf("%s: %d %v, want 400 naming %s", tc.body, code, out, tc.field)
			}
		}
		if code, out := call(boot, `{"template_id":999999,"repair":false}`); code != 404 || out["result"] != "not_found" {
			t.Errorf("unknown template: %d %v", code, out)
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		app, _, err := env.Service.CreateToken(ctx, "test", "app", "shop")
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := call(app, `{"repair":true}`); code != 403 {
			t.Errorf("app token: %d, want 403", code)
		}
		if code, _ := call("", `{"repair":true}`); code != 401 {
			t.Errorf("anonymous: %d, want 401", code)
		}
	})
}
