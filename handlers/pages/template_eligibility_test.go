package pages_test

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

// TestPagesTemplateFormEligibility: the form's rule is compiled when the
// template is saved: a fault comes back beside the field with its line
// and column, what was typed kept and nothing created; a rule that
// compiles is stored and the template's sentence says whom it is for.
func TestPagesTemplateFormEligibility(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	before := e.CountTemplates(t)
	p := admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Rule", "kind", "fixed", "face_value", "5.00",
		"eligibility", `customer.age > 18`))
	if p.Status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", p.Status)
	}
	if got := testsupport.FieldErrorBeside(p.Body, "eligibility"); !strings.Contains(got, "Line 1, column 10: type eligibility.Customer has no field age") {
		t.Fatalf("beside eligibility: %q", got)
	}
	if !strings.Contains(p.Body, "customer.age &gt; 18</textarea>") {
		t.Errorf("the form lost the rule typed")
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("a template was created: %d → %d", before, n)
	}
	p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Rule", "kind", "fixed", "face_value", "5.00",
		"eligibility", `customer.orders_count == 0`))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d\n%s", p.Status, p.Text())
	}
	tp := created(t, e, "Rule")
	if tp.Eligibility != "customer.orders_count == 0" {
		t.Fatalf("stored rule %q", tp.Eligibility)
	}
	if got := models.DescribeTemplate(&tp, func(c int64) string { return "$5" }); !strings.HasSuffix(got, "for customers who meet the rule “customer.orders_count == 0”") {
		t.Fatalf("sentence %q", got)
	}
}

// TestPagesTemplateEditEligibility: the edit form shows the template's
// rule; a rule that compiles is saved, a broken one is refused beside the
// field with its position and changes nothing (not even the name sent
// with it); a form without the field leaves the rule as it is.
func TestPagesTemplateEditEligibility(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	admin := e.Client(t)
	admin.Login("admin")
	page := fmt.Sprintf("/admin/templates/%d", tp.ID)
	edit := func(kv ...string) testsupport.Page {
		t.Helper()
		f := url.Values{"name": {tp.Name}, "description": {tp.Description}, "claim_starts_at": {"2026-01-01T00:00:00"}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return admin.Form(page, page, f)
	}
	stored := func() models.Template {
		t.Helper()
		got, err := e.Service.GetTemplate(context.Background(), tp.ID)
		if err != nil {
			t.Fatal(err)
		}
		return *got
	}
	if p := edit("eligibility", ` channel == "web" `); p.Status != http.StatusSeeOther {
		t.Fatalf("save: status %d\n%s", p.Status, p.Text())
	}
	if got := stored().Eligibility; got != `channel == "web"` {
		t.Fatalf("stored rule %q", got)
	}
	if body := admin.Get(page).Body; !strings.Contains(body, `>channel == &#34;web&#34;</textarea>`) {
		t.Errorf("the edit form does not show the rule")
	}
	p := edit("name", "Renamed", "eligibility", "customer.age > 18")
	if p.Status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", p.Status)
	}
	if got := testsupport.FieldErrorBeside(p.Body, "edit-eligibility"); got != "Line 1, column 10: type eligibility.Customer has no field age." {
		t.Errorf("beside the rule: %q", got)
	}
	if got := stored(); got.Eligibility != `channel == "web"` || got.Name != tp.Name {
		t.Fatalf("after a broken rule: rule %q, name %q", got.Eligibility, got.Name)
	}
	if p := edit("description", "kept rule"); p.Status != http.StatusSeeOther {
		t.Fatalf("save without the field: status %d", p.Status)
	}
	if got := stored(); got.Eligibility != `channel == "web"` || got.Description != "kept rule" {
		t.Fatalf("a form without the field: rule %q, description %q", got.Eligibility, got.Description)
	}
}
