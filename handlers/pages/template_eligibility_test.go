package pages_test

import (
	"net/http"
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
