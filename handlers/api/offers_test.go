package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestTemplateVisibility: anonymous callers, shoppers, app and cashier
// tokens see a template by id only when the list shows it, and otherwise
// the same not_found as for an id that does not exist; admins see all. The
// shop page shows what the list shows, and lists offers opening later last
// with their opening time.
func TestTemplateVisibility(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	hidden := e.HiddenOffers(t)
	open := e.Template(t, "$5 off")

	shopper := e.Client(t)
	shopper.Login("shopper")
	adminPage := e.Client(t)
	adminPage.Login("admin")
	token := func(role string) string {
		tok, _, err := e.Service.CreateToken(ctx, "test", role, role+" token")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	anon := e.Client(t)
	get := func(c *testsupport.PageClient, bearer, path string) (int, map[string]any) {
		t.Helper()
		headers := map[string]string{"Accept": "application/json"}
		if bearer != "" {
			headers["Authorization"] = "Bearer " + bearer
		}
		p := c.API("GET", path, "", headers)
		var out map[string]any
		if err := json.Unmarshal([]byte(p.Body), &out); err != nil {
			t.Fatalf("GET %s: not JSON: %v", path, p)
		}
		return p.Status, out
	}
	callers := []struct {
		name   string
		client *testsupport.PageClient
		bearer string
		admin  bool
	}{
		{"Anonymous", anon, "", false},
		{"Shopper", shopper, "", false},
		{"AppToken", anon, token(models.RoleApp), false},
		{"CashierToken", anon, token(models.RoleCashier), false},
		{"AdminToken", anon, token(models.RoleAdmin), true},
		{"AdminSession", adminPage, "", true},
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			_, unknown := get(c.client, c.bearer, "/api/v1/templates/999999")
			for name, tp := range hidden {
				status, out := get(c.client, c.bearer, fmt.Sprintf("/api/v1/templates/%d", tp.ID))
				switch {
				case c.admin && (status != http.StatusOK || out["template"].(map[string]any)["name"] != tp.Name):
					t.Errorf("%s: %d %v, want 200 with the template", name, status, out)
				case !c.admin && (status != http.StatusNotFound || out["result"] != "not_found" || out["code"] != unknown["code"] ||
					out["template"] != nil || out["remaining"] != nil ||
					out["error"] != strings.Replace(unknown["error"].(string), "999999", fmt.Sprint(tp.ID), 1)):
					t.Errorf("%s: %d %v, want 404 not_found as for an unknown id (%v)", name, status, out, unknown)
				}
			}
			status, out := get(c.client, c.bearer, fmt.Sprintf("/api/v1/templates/%d", open.ID))
			if status != http.StatusOK || out["template"].(map[string]any)["name"] != open.Name {
				t.Errorf("open template: %d %v", status, out)
			}
			// The list shows the same: the demo's open templates, none of the others.
			_, list := get(c.client, c.bearer, "/api/v1/templates")
			names := map[string]bool{}
			for _, v := range list["templates"].([]any) {
				names[v.(map[string]any)["name"].(string)] = true
			}
			for _, tp := range hidden {
				if names[tp.Name] {
					t.Errorf("the list shows %q", tp.Name)
				}
			}
			if len(names) != len(e.Demo.Templates) || !names[open.Name] {
				t.Errorf("the list shows %v, want the %d demo templates", names, len(e.Demo.Templates))
			}
		})
	}
	t.Run("ShopPage", func(t *testing.T) {
		for _, c := range []*testsupport.PageClient{anon, shopper, adminPage} {
			p := c.Get("/")
			for name, tp := range hidden {
				if name == "not yet" {
					// Offers opening later are listed last, with their
					// opening time and no claim button (docs/pages.md).
					_, upcoming, _ := strings.Cut(p.Body, "data-upcoming")
					if !strings.Contains(upcoming, tp.Name) || !strings.Contains(upcoming, "Opens ") ||
						strings.Contains(p.Body, fmt.Sprintf(`data-claim="%d"`, tp.ID)) {
						t.Errorf("the shop does not list %s as opening later, without a claim button", name)
					}
					continue
				}
				if strings.Contains(p.Body, fmt.Sprintf(`data-offer="%d"`, tp.ID)) || strings.Contains(p.Body, tp.Name) {
					t.Errorf("the shop shows %s", name)
				}
			}
			if !strings.Contains(p.Body, fmt.Sprintf(`data-offer="%d"`, open.ID)) {
				t.Errorf("the shop does not show %q", open.Name)
			}
		}
		if p := shopper.Get("/"); !strings.Contains(p.Body, fmt.Sprintf(`data-claim="%d"`, open.ID)) {
			t.Errorf("no claim button for %q", open.Name)
		}
	})
	t.Run("AdminState", func(t *testing.T) {
		// The console says of each why it takes no claims, by the same rule.
		for name, want := range map[string]string{"paused": "Paused", "not yet": "Not open yet", "closed": "Ended", "expired": "Ended"} {
			p := adminPage.Get(fmt.Sprintf("/admin/templates/%d", hidden[name].ID))
			if !strings.Contains(p.Text(), hidden[name].Name+" "+want) {
				t.Errorf("%s: the console does not say %q: %.300s", name, want, p.Text())
			}
		}
	})
	t.Run("ErrClaimExpired", func(t *testing.T) {
		// The shop hides it and a claim is refused, taking nothing.
		n := e.CountCoupons(t)
		p := shopper.Claim(hidden["expired"].ID, "expired-1")
		if p.Status != http.StatusConflict || !strings.Contains(p.Body, `"not_claimable"`) {
			t.Fatalf("claim of an expired template: %v", p)
		}
		if got := e.CountCoupons(t); got != n {
			t.Fatalf("%d coupons, want %d", got, n)
		}
		view, err := e.Service.ViewTemplate(ctx, hidden["expired"].ID)
		if err != nil || view.Remaining == nil || *view.Remaining != 7 {
			t.Fatalf("after the refused claim: %+v, %v; want 7 left", view, err)
		}
	})
}

// bornExpiredEnv is the demo data served with an admin token for the API and
// an admin logged in to the pages, and the helpers of
// TestTemplateBornExpiredAPIAndForms.
type bornExpiredEnv struct {
	*testsupport.PageEnv
	tok        string
	api, admin *testsupport.PageClient
	now        time.Time
}

func newBornExpiredEnv(t *testing.T) *bornExpiredEnv {
	e := testsupport.NewPageEnv(t)
	tok, _, err := e.Service.CreateToken(context.Background(), "test", models.RoleAdmin, "admin token")
	if err != nil {
		t.Fatal(err)
	}
	b := &bornExpiredEnv{PageEnv: e, tok: tok, api: e.Client(t), admin: e.Client(t), now: time.Now().UTC()}
	b.admin.Login("admin")
	return b
}

// call sends a JSON API request with the admin token.
func (b *bornExpiredEnv) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, b.Srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.tok)
	req.Header.Set("Content-Type", "application/json")
	p := b.api.Do(req)
	var out map[string]any
	if err := json.Unmarshal([]byte(p.Body), &out); err != nil {
		t.Fatalf("%s %s: not JSON: %v", method, path, p)
	}
	return p.Status, out
}

func (b *bornExpiredEnv) countTemplates() int64 {
	var n int64
	b.Backends.DB.Model(&models.Template{}).Count(&n)
	return n
}

// ts is the time d from now in RFC 3339, local the same as a form types it.
func (b *bornExpiredEnv) ts(d time.Duration) string { return b.now.Add(d).Format(time.RFC3339) }

func (b *bornExpiredEnv) local(d time.Duration) string {
	return b.now.Add(d).Format("2006-01-02T15:04")
}

// tmpl is an API body of a template with extra fields.
func (b *bornExpiredEnv) tmpl(extra string) string {
	return fmt.Sprintf(`{"campaign_id":%d,"name":"Dated","kind":"fixed","face_value_cents":100,"total_stock":5,`+
		`"per_user_limit":1%s}`, b.Demo.Campaign.ID, extra)
}

// base is the new template form, with the fields kv sets.
func (b *bornExpiredEnv) base(kv ...string) url.Values {
	f := url.Values{"campaign_id": {fmt.Sprint(b.Demo.Campaign.ID)}, "name": {"Dated form"}, "kind": {"fixed"},
		"face_value": {"1.00"}, "total_stock": {"5"}, "per_user_limit": {"1"}, "validity": {"dates"},
		"refund_policy": {"restore"}, "claim_starts_at": {b.local(-time.Hour)}}
	for i := 0; i < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

// TestTemplateBornExpiredAPIAndForms: a template whose coupons would be born
// expired is refused by the API (400 naming the field, nothing created) and
// by the admin forms (the error beside the field); resuming one says why not.
func TestTemplateBornExpiredAPIAndForms(t *testing.T) {
	b := newBornExpiredEnv(t)
	ts, local, tmpl, base, countTemplates, admin := b.ts, b.local, b.tmpl, b.base, b.countTemplates, b.admin
	e, now, fieldError := b.PageEnv, b.now, testsupport.FieldErrorOf

	t.Run("APIRefusesBornExpiredAndPatchPastValidity", func(t *testing.T) {
		call := func(method, path, body string) (int, map[string]any) {
			t.Helper()
			return b.call(t, method, path, body)
		}
		before := countTemplates()
		for _, c := range []struct{ name, body, field string }{
			{"ValidUntilPassed", tmpl(`,"valid_from":"` + ts(-48*time.Hour) + `","valid_until":"` + ts(-time.Hour) + `"`), "valid_until"},
			{"ClaimsCloseAfterValidity", tmpl(`,"valid_from":"` + ts(0) + `","valid_until":"` + ts(time.Hour) +
				`","claim_ends_at":"` + ts(2*time.Hour) + `"`), "claim_ends_at"},
			{"ClaimsOpenAfterValidity", tmpl(`,"valid_from":"` + ts(0) + `","valid_until":"` + ts(time.Hour) +
				`","claim_starts_at":"` + ts(time.Hour) + `"`), "claim_starts_at"},
		} {
			status, out := call("POST", "/api/v1/templates", c.body)
			if status != http.StatusBadRequest || out["result"] != "invalid_request" || out["field"] != c.field {
				t.Errorf("%s: %d %v, want 400 invalid_request naming %s", c.name, status, out, c.field)
			}
		}
		if n := countTemplates(); n != before {
			t.Fatalf("%d templates created", n-before)
		}
		status, out := call("POST", "/api/v1/templates", tmpl(`,"valid_from":"`+ts(0)+`","valid_until":"`+ts(time.Hour)+
			`","claim_ends_at":"`+ts(time.Hour)+`"`))
		if status != http.StatusCreated {
			t.Fatalf("claims closing with the validity: %d %v", status, out)
		}
		id := int64(out["template"].(map[string]any)["id"].(float64))
		var row models.Template
		e.Backends.DB.First(&row, id)
		status, out = call("PATCH", fmt.Sprintf("/api/v1/templates/%d", id), `{"claim_ends_at":"`+ts(2*time.Hour)+`"}`)
		if status != http.StatusBadRequest || out["result"] != "invalid_request" || out["field"] != "claim_ends_at" {
			t.Errorf("PATCH claim_ends_at past the validity: %d %v", status, out)
		}
		var after models.Template
		e.Backends.DB.First(&after, id)
		if !after.ClaimEndsAt.Equal(*row.ClaimEndsAt) || !after.UpdatedAt.Equal(row.UpdatedAt) {
			t.Errorf("the template changed: %+v, was %+v", after, row)
		}
	})

	t.Run("CreateFormShowsErrorBesideField", func(t *testing.T) {
		before := countTemplates()
		for _, c := range []struct {
			name string
			form url.Values
			id   string
			want string
		}{
			{"ValidUntilPassed", base("valid_from", local(-48*time.Hour), "valid_until", local(-2*time.Hour)),
				"valid_until", "every coupon claimed would already be expired"},
			{"ClaimsCloseAfterValidity", base("valid_from", local(0), "valid_until", local(2*time.Hour),
				"claim_ends_at", local(3*time.Hour)), "claim_ends_at", "by the time the coupons stop being valid"},
		} {
			p := admin.Form("/admin/templates/new", "/admin/templates", c.form)
			if p.Status != http.StatusBadRequest || !strings.Contains(fieldError(p.Body, c.id), c.want) {
				t.Errorf("%s: %d, the error beside %s is %q, want %q", c.name, p.Status, c.id, fieldError(p.Body, c.id), c.want)
			}
		}
		if n := countTemplates(); n != before {
			t.Fatalf("%d templates created", n-before)
		}
	})

	p := admin.Form("/admin/templates/new", "/admin/templates", base("valid_from", local(0), "valid_until", local(2*time.Hour)))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create a dated template: %v", p)
	}
	var dated models.Template
	if err := e.Backends.DB.Where("name = ?", "Dated form").First(&dated).Error; err != nil {
		t.Fatal(err)
	}
	edit := fmt.Sprintf("/admin/templates/%d", dated.ID)
	t.Run("EditFormRefusesClaimsClosingAfterValidity", func(t *testing.T) {
		p := admin.Form(edit, edit, url.Values{"name": {"Dated form"}, "claim_starts_at": {local(-time.Hour)},
			"claim_ends_at": {local(3 * time.Hour)}})
		if p.Status != http.StatusBadRequest || !strings.Contains(fieldError(p.Body, "edit-ends"), "by the time the coupons stop being valid") {
			t.Fatalf("edit with claims closing after the validity: %d %q", p.Status, fieldError(p.Body, "edit-ends"))
		}
		if got := e.TemplateStatus(t, dated.ID); got != models.TemplateActive {
			t.Fatalf("status %s", got)
		}
	})
	t.Run("ResumingExpiredTemplateSaysWhyNot", func(t *testing.T) {
		pause := edit + "/status"
		if p := admin.Form(edit, pause, url.Values{"status": {"paused"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("pause: %v", p)
		}
		e.Backends.DB.Model(&models.Template{}).Where("id = ?", dated.ID).
			Updates(map[string]any{"valid_from": now.Add(-2 * time.Hour), "valid_until": now.Add(-time.Minute)})
		p := admin.Form(edit, pause, url.Values{"status": {"active"}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("resume: %v", p)
		}
		if got := e.TemplateStatus(t, dated.ID); got != models.TemplatePaused {
			t.Fatalf("resumed an expired template: %s", got)
		}
		if p := admin.Get(p.Location()); !strings.Contains(p.Text(), "Not resumed: Valid until has passed") {
			t.Fatalf("no word of why it was not resumed: %s", p.Text())
		}
		// Editing its words still works: the validity binds only what opens claims.
		p = admin.Form(edit, edit, url.Values{"name": {"Dated, renamed"}, "claim_starts_at": {local(-time.Hour)}})
		if p.Status != http.StatusSeeOther {
			t.Fatalf("rename: %v", p)
		}
	})
}
