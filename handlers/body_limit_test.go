package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestBodyTooLarge: a JSON body or a form over 64 KiB is answered 413 saying
// so, with or without a Content-Length, and changes nothing; an oversized form
// is not taken for an expired one.
func TestBodyTooLarge(t *testing.T) {
	const want = `{"code":3,"result":"invalid_request","error":"body: is larger than 64 KiB","field":"body"}`
	t.Run("API", func(t *testing.T) {
		e := testsupport.NewAPIEnv(t)
		before := e.Counts(t)
		body := `{"name":"` + strings.Repeat("a", 70<<10) + `"}`
		for _, chunked := range []bool{false, true} {
			rec := e.Send("POST", "/api/v1/campaigns", testsupport.AdminToken, "application/json", body, chunked)
			if rec.Code != http.StatusRequestEntityTooLarge || strings.TrimSpace(rec.Body.String()) != want {
				t.Fatalf("chunked %t: %d %s, want 413 %s", chunked, rec.Code, rec.Body, want)
			}
		}
		if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
			t.Fatalf("an oversized body changed the database: %v -> %v", before, after)
		}
	})

	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	tpl := e.Template(t, "$5 off")
	edit := fmt.Sprintf("/admin/templates/%d", tpl.ID)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("Form/chunked=%t", chunked), func(t *testing.T) {
			form := url.Values{"csrf_token": {admin.CSRF(edit)}, "name": {"Renamed"}, "claim_starts_at": {"2026-01-01T09:00"},
				"description": {strings.Repeat("d", 70<<10)}}
			var body io.Reader = strings.NewReader(form.Encode())
			if chunked {
				body = io.MultiReader(body) // no length: sent chunked
			}
			req, _ := http.NewRequest("POST", e.Srv.URL+edit, body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", e.Srv.URL)
			p := admin.Do(req)
			if p.Status != http.StatusRequestEntityTooLarge || !strings.Contains(p.Text(), "This form is too large") ||
				!strings.Contains(p.Text(), "at most 64 KiB") || strings.Contains(p.Text(), "expired") {
				t.Fatalf("a form of 70 KiB: %v", p)
			}
			if tp, _ := e.Service.GetTemplate(context.Background(), tpl.ID); tp.Name != tpl.Name {
				t.Fatalf("an oversized form renamed the template to %q", tp.Name)
			}
		})
	}
	t.Run("FormAtTheLimit", func(t *testing.T) {
		form := url.Values{"csrf_token": {admin.CSRF(edit)}, "name": {"Renamed"}, "claim_starts_at": {"2026-01-01T09:00"}}
		pad := (64 << 10) - len(form.Encode()) - len("&description=")
		form.Set("description", strings.Repeat("d", pad))
		if n := len(form.Encode()); n != 64<<10 {
			t.Fatalf("form of %d bytes", n)
		}
		// Too long a description, but not too large a form: the field says so.
		p := admin.Post(edit, form)
		if p.Status != http.StatusBadRequest || testsupport.FieldErrorBeside(p.Body, "edit-description") == "" {
			t.Fatalf("a form of exactly 64 KiB: %v", p)
		}
	})
	t.Run("SessionAPI", func(t *testing.T) {
		e.AddUser(t, "alice", models.RoleShopper)
		alice := e.Client(t)
		alice.Login("alice")
		token := alice.CSRF("/")
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/templates/%d/claim", e.Srv.URL, tpl.ID),
			strings.NewReader(`{"user_id":"alice"}`+strings.Repeat(" ", 70<<10)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", e.Srv.URL)
		req.Header.Set("X-CSRF-Token", token)
		req.Header.Set("Idempotency-Key", "big")
		before := e.CountCoupons(t)
		p := alice.Do(req)
		if p.Status != http.StatusRequestEntityTooLarge || strings.TrimSpace(p.Body) != want {
			t.Fatalf("a claim of 70 KiB with the session: %v", p)
		}
		if n := e.CountCoupons(t); n != before {
			t.Fatalf("%d coupons after an oversized claim, %d before", n, before)
		}
	})
}

// TestBodyIsTheObject: a body that is not the documented object (null, an
// array, a string, a number) is 400, on PATCH and on confirm too; a key given
// twice, in any case, is 400 naming it; nothing changes.
func TestBodyIsTheObject(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	e.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Spring","budget_cents":0}`)
	cashier := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"till"}`)["token"].(string)
	before := e.Counts(t)
	for _, c := range []struct{ method, path, token, body, field, msg string }{
		{"PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `null`, "body", "must be a JSON object"},
		{"PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, ` []`, "body", "must be a JSON object"},
		{"PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `"paused"`, "body", "must be a JSON object"},
		{"PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `12`, "body", "must be a JSON object"},
		{"PATCH", "/api/v1/templates/1", testsupport.AdminToken, `null`, "body", "must be a JSON object"},
		{"POST", "/api/v1/holds/order-1/confirm", cashier, `null`, "body", "must be a JSON object"},
		{"POST", "/api/v1/holds/order-1/confirm", cashier, `[{"order_amount_cents":1}]`, "body", "must be a JSON object"},
		{"POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","budget_cents":0,"name":"b"}`, "name", "appears more than once in the body"},
		{"POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"a","budget_cents":0,"Name":"b"}`, "Name", "appears more than once in the body"},
		{"PATCH", "/api/v1/campaigns/1", testsupport.AdminToken, `{"status":"paused","status":"active"}`, "status", "appears more than once in the body"},
	} {
		code, out := e.Call(t, c.method, c.path, c.token, nil, c.body)
		if code != 400 || out["result"] != "invalid_request" || out["field"] != c.field || out["error"] != c.field+": "+c.msg {
			t.Errorf("%s %s %s: %d %v, want 400 %s: %s", c.method, c.path, c.body, code, out, c.field, c.msg)
		}
	}
	if after := e.Counts(t); !testsupport.EqualCounts(before, after) {
		t.Fatalf("bodies that are not the object changed the database: %v -> %v", before, after)
	}
	if out := e.MustCall(t, 200, "GET", "/api/v1/campaigns/1", testsupport.AdminToken, ""); out["campaign"].(map[string]any)["status"] != "active" {
		t.Fatalf("the campaign changed: %v", out)
	}
}

// TestBodyLimitOfEveryRoute: each route takes the body its row documents
// (x-max-body-bytes in the OpenAPI document): a route that takes no body,
// like resend, refuses one over 1 KiB with 413, with or without a length,
// before anything is done; a small one is ignored.
func TestBodyLimitOfEveryRoute(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	doc := testsupport.FetchOpenAPI(t, e)
	for path, limit := range map[string]float64{
		"/api/v1/webhooks/{id}/deliveries/{delivery_id}/resend": 1 << 10,
		"/api/v1/tokens/{id}/revoke":                            1 << 10,
		"/api/v1/campaigns":                                     64 << 10,
		"/api/v1/templates/{id}/codes/import":                   50 << 20,
	} {
		if got := doc.Paths[path]["post"]["x-max-body-bytes"]; got != limit {
			t.Errorf("%s documents a body of at most %v bytes, want %v", path, got, limit)
		}
	}
	token := e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop"}`)["token_info"].(map[string]any)
	revoke := fmt.Sprintf("/api/v1/tokens/%v/revoke", token["id"])
	const want = `{"code":3,"result":"invalid_request","error":"body: must be empty: this request takes no body (at most 1 KiB is ignored)","field":"body"}`
	for _, path := range []string{"/api/v1/webhooks/1/deliveries/1/resend", revoke} {
		for _, chunked := range []bool{false, true} {
			rec := e.Send("POST", path, testsupport.AdminToken, "application/json", `{"x":"`+strings.Repeat("a", 1<<20)+`"}`, chunked)
			if rec.Code != http.StatusRequestEntityTooLarge || strings.TrimSpace(rec.Body.String()) != want {
				t.Errorf("%s, 1 MiB body, chunked %t: %d %s", path, chunked, rec.Code, rec.Body)
			}
		}
	}
	if out := e.MustCall(t, 200, "GET", "/api/v1/tokens", testsupport.AdminToken, ""); fmt.Sprint(out["tokens"].([]any)[0].(map[string]any)["revoked_at"]) != "<nil>" {
		t.Fatalf("an oversized revoke revoked the token: %v", out)
	}
	// A small body where none is taken is ignored, as before.
	e.MustCall(t, 200, "POST", revoke, testsupport.AdminToken, `{}`)
	code, out := e.Call(t, "POST", "/api/v1/webhooks/1/deliveries/1/resend", testsupport.AdminToken, nil, `{"why":"again"}`)
	if code != 404 || out["result"] != "not_found" {
		t.Fatalf("resend with a small body: %d %v", code, out)
	}
}
