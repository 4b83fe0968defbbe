package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"couponsvc/models"
)

// TestBodyTooLarge: a JSON body or a form over 64 KiB is answered 413 saying
// so, with or without a Content-Length, and changes nothing; an oversized form
// is not taken for an expired one.
func TestBodyTooLarge(t *testing.T) {
	const want = `{"code":3,"result":"invalid_request","error":"body: is larger than 64 KiB","field":"body"}`
	t.Run("API", func(t *testing.T) {
		e := newAPIEnv(t)
		before := e.counts(t)
		body := `{"name":"` + strings.Repeat("a", 70<<10) + `"}`
		for _, chunked := range []bool{false, true} {
			req := httptest.NewRequest("POST", "/api/v1/campaigns", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+adminToken)
			if chunked {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			e.router.ServeHTTP(rec, req)
			if rec.Code != http.StatusRequestEntityTooLarge || strings.TrimSpace(rec.Body.String()) != want {
				t.Fatalf("chunked %t: %d %s, want 413 %s", chunked, rec.Code, rec.Body, want)
			}
		}
		if after := e.counts(t); !equalCounts(before, after) {
			t.Fatalf("an oversized body changed the database: %v -> %v", before, after)
		}
	})

	e := newPageEnv(t)
	admin := e.client(t)
	admin.login("admin")
	tpl := e.template(t, "$5 off")
	edit := fmt.Sprintf("/admin/templates/%d", tpl.ID)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("Form/chunked=%t", chunked), func(t *testing.T) {
			form := url.Values{"csrf_token": {admin.csrf(edit)}, "name": {"Renamed"}, "claim_starts_at": {"2026-01-01T09:00"},
				"description": {strings.Repeat("d", 70<<10)}}
			var body io.Reader = strings.NewReader(form.Encode())
			if chunked {
				body = io.MultiReader(body) // no length: sent chunked
			}
			req, _ := http.NewRequest("POST", e.srv.URL+edit, body)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", e.srv.URL)
			p := admin.do(req)
			if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.text(), "This form is too large") ||
				!strings.Contains(p.text(), "at most 64 KiB") || strings.Contains(p.text(), "expired") {
				t.Fatalf("a form of 70 KiB: %v", p)
			}
			if tp, _ := e.Service.GetTemplate(context.Background(), tpl.ID); tp.Name != tpl.Name {
				t.Fatalf("an oversized form renamed the template to %q", tp.Name)
			}
		})
	}
	t.Run("FormAtTheLimit", func(t *testing.T) {
		form := url.Values{"csrf_token": {admin.csrf(edit)}, "name": {"Renamed"}, "claim_starts_at": {"2026-01-01T09:00"}}
		pad := (64 << 10) - len(form.Encode()) - len("&description=")
		form.Set("description", strings.Repeat("d", pad))
		if n := len(form.Encode()); n != 64<<10 {
			t.Fatalf("form of %d bytes", n)
		}
		// Too long a description, but not too large a form: the field says so.
		p := admin.post(edit, form)
		if p.status != http.StatusBadRequest || fieldErrorBeside(p.body, "edit-description") == "" {
			t.Fatalf("a form of exactly 64 KiB: %v", p)
		}
	})
	t.Run("SessionAPI", func(t *testing.T) {
		e.addUser(t, "alice", models.RoleShopper)
		alice := e.client(t)
		alice.login("alice")
		token := alice.csrf("/")
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/templates/%d/claim", e.srv.URL, tpl.ID),
			strings.NewReader(`{"user_id":"alice"}`+strings.Repeat(" ", 70<<10)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", e.srv.URL)
		req.Header.Set("X-CSRF-Token", token)
		req.Header.Set("Idempotency-Key", "big")
		before := e.countCoupons(t)
		p := alice.do(req)
		if p.status != http.StatusRequestEntityTooLarge || strings.TrimSpace(p.body) != want {
			t.Fatalf("a claim of 70 KiB with the session: %v", p)
		}
		if n := e.countCoupons(t); n != before {
			t.Fatalf("%d coupons after an oversized claim, %d before", n, before)
		}
	})
}
