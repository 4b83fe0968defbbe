package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestTokensAPI lists and revokes API tokens: the list never shows a secret,
// a revoked token is refused at once, a second revoke is a duplicate.
func TestTokensAPI(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	created := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop backend"}`)
	secret := created["token"].(string)
	id := int64(created["token_info"].(map[string]any)["id"].(float64))
	callAsApp := func() int {
		code, _ := e.Call(t, "GET", "/api/v1/users/alice/coupons", secret, nil, "")
		return code
	}
	if code := callAsApp(); code != 200 {
		t.Fatalf("the new token: status %d, want 200", code)
	}
	var hash string
	if err := e.Backends.DB.Table("api_tokens").Where("id = ?", id).Pluck("token_hash", &hash).Error; err != nil || hash == "" {
		t.Fatalf("read the token's hash: %q %v", hash, err)
	}

	t.Run("ListShowsTokenWithoutSecret", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/api/v1/tokens", nil)
		req.Header.Set("Authorization", "Bearer "+testsupport.AdminToken)
		rec := httptest.NewRecorder()
		e.Router.ServeHTTP(rec, req)
		raw := rec.Body.String()
		if strings.Contains(raw, secret) || strings.Contains(raw, hash) || strings.Contains(raw, "hash") {
			t.Fatalf("the token list shows a secret: %s", raw)
		}
		out := e.MustCall(t, 200, "GET", "/api/v1/tokens", testsupport.AdminToken, "")
		tokens := out["tokens"].([]any)
		if out["result"] != "ok" || len(tokens) != 1 {
			t.Fatalf("list: %v, want the one token", out)
		}
		tok := tokens[0].(map[string]any)
		if tok["id"] != float64(id) || tok["name"] != "shop backend" || tok["role"] != "app" ||
			tok["created_at"] == nil || tok["revoked_at"] != nil || len(tok) != 5 {
			t.Fatalf("listed token: %v", tok)
		}
	})

	path := fmt.Sprintf("/api/v1/tokens/%d/revoke", id)
	t.Run("RevokeRefusesTheToken", func(t *testing.T) {
		out := e.MustCall(t, 200, "POST", path, testsupport.AdminToken, "")
		tok := out["token"].(map[string]any)
		if out["result"] != "ok" || out["code"] != float64(0) || tok["id"] != float64(id) || tok["revoked_at"] == nil {
			t.Fatalf("revoke: %v", out)
		}
		if code := callAsApp(); code != 401 {
			t.Fatalf("the revoked token: status %d, want 401", code)
		}
		listed := e.MustCall(t, 200, "GET", "/api/v1/tokens", testsupport.AdminToken, "")["tokens"].([]any)[0].(map[string]any)
		if listed["revoked_at"] == nil {
			t.Fatalf("the list shows the revoked token live: %v", listed)
		}
	})
	t.Run("RevokeAgainIsDuplicate", func(t *testing.T) {
		before := e.Counts(t)
		out := e.MustCall(t, 200, "POST", path, testsupport.AdminToken, "")
		if out["result"] != "duplicate" || out["code"] != float64(models.CodeDuplicate) || out["token"].(map[string]any)["revoked_at"] == nil {
			t.Fatalf("revoke again: %v", out)
		}
		if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
			t.Fatalf("a duplicate revoke changed rows: %v → %v", before, after)
		}
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		out := e.MustCall(t, 404, "POST", fmt.Sprintf("/api/v1/tokens/%d/revoke", id+1000), testsupport.AdminToken, "")
		if out["result"] != "not_found" {
			t.Fatalf("unknown token: %v", out)
		}
	})
	t.Run("ErrBadID", func(t *testing.T) {
		out := e.MustCall(t, 400, "POST", "/api/v1/tokens/abc/revoke", testsupport.AdminToken, "")
		if out["result"] != "invalid_request" || !strings.Contains(fmt.Sprint(out["error"]), "id") {
			t.Fatalf("bad id: %v", out)
		}
	})
	t.Run("AuditOnce", func(t *testing.T) {
		var entries []models.AuditEntry
		if err := e.Backends.DB.Where("action = ?", "token.revoke").Find(&entries).Error; err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Target != fmt.Sprintf("token:%d", id) || entries[0].Actor != "token:bootstrap" ||
			!strings.Contains(entries[0].Detail, "shop backend") {
			t.Fatalf("audit entries of the revoke: %+v, want one", entries)
		}
	})
}

// TestPagesTokens lists the tokens in the console and revokes one with its
// button, which needs the page's CSRF token.
func TestPagesTokens(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	secret, rec, err := e.Service.CreateToken(ctx, "test", models.RoleCashier, "till 7")
	if err != nil {
		t.Fatal(err)
	}
	admin := e.Client(t)
	admin.Login("admin")
	action := fmt.Sprintf("/admin/tokens/%d/revoke", rec.ID)
	live := func() bool {
		_, err := e.Service.AuthenticateToken(ctx, secret)
		if err != nil && models.ErrorCode(err) != models.CodeUnauthorized {
			t.Fatal(err)
		}
		return err == nil
	}

	p := admin.Get("/admin/tokens")
	if p.Status != 200 || !strings.Contains(p.Text(), "till 7") || !strings.Contains(p.Body, `action="`+action+`"`) {
		t.Fatalf("the token page: %v", p)
	}
	if strings.Contains(p.Body, secret) {
		t.Fatal("the token page shows the secret")
	}

	t.Run("ErrRevokeWithoutCSRF", func(t *testing.T) {
		if p := admin.Post(action, url.Values{}); p.Status != http.StatusForbidden || !live() {
			t.Fatalf("revoke without a CSRF token: %v (live %v)", p, live())
		}
	})
	t.Run("RevokeWithButton", func(t *testing.T) {
		p := admin.Form("/admin/tokens", action, url.Values{})
		if p.Status != http.StatusSeeOther || p.Location() != "/admin/tokens" {
			t.Fatalf("revoke: %v", p)
		}
		if live() {
			t.Fatal("the token still works after its revoke")
		}
		p = admin.Get("/admin/tokens")
		if p.Status != 200 || !strings.Contains(p.Text(), `Revoked the token "till 7"`) ||
			strings.Contains(p.Body, `action="`+action+`"`) || !strings.Contains(p.Text(), "Revoked") {
			t.Fatalf("the token page after the revoke: %v", p)
		}
		var n int64
		e.Backends.DB.Model(&models.AuditEntry{}).Where("action = ? AND target = ? AND actor = ?", "token.revoke",
			fmt.Sprintf("token:%d", rec.ID), "admin").Count(&n)
		if n != 1 {
			t.Fatalf("%d audit entries of the revoke, want 1", n)
		}
	})
	t.Run("RevokeAgainChangesNothing", func(t *testing.T) {
		p := admin.Form("/admin/tokens", action, url.Values{})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("revoke again: %v", p)
		}
		if p := admin.Get("/admin/tokens"); !strings.Contains(p.Text(), "already revoked") {
			t.Fatalf("the page after a second revoke: %v", p)
		}
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		if p := admin.Form("/admin/tokens", fmt.Sprintf("/admin/tokens/%d/revoke", rec.ID+1000), url.Values{}); p.Status != http.StatusNotFound {
			t.Fatalf("revoke an unknown token: %v", p)
		}
	})
}
