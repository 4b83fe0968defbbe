package pages_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPagesTemplateFormFurtherAction: the form's "And also take off"
// creates "20% off + free shipping" as one template of two actions; a
// further percentage without its percent is refused beside that field,
// and nothing is created.
func TestPagesTemplateFormFurtherAction(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Both", "kind", "percent", "percent_off", "20",
		"max_discount", "50.00", "also_kind", "free_shipping", "also_max_discount", "10.00", "also_percent", "30"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d\n%s", p.Status, p.Text())
	}
	tp := created(t, e, "Both")
	want := models.TemplateAction{Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1000}
	if len(tp.Actions) != 1 || tp.Actions[0].Kind != want.Kind || tp.Actions[0].AppliesTo != want.AppliesTo ||
		tp.Actions[0].MaxDiscountCents != want.MaxDiscountCents || tp.Actions[0].PercentOff != 0 || tp.ValueCents() != 6000 {
		t.Fatalf("actions %+v (value %d), want %+v", tp.Actions, tp.ValueCents(), want)
	}
	p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Half", "kind", "fixed", "face_value", "5.00",
		"also_kind", "percent", "also_max_discount", "10.00"))
	if got := testsupport.FieldErrorBeside(p.Body, "also_percent"); p.Status != http.StatusBadRequest || got == "" {
		t.Fatalf("status %d, beside also_percent %q", p.Status, got)
	}
	var n int64
	if err := e.Backends.DB.Model(&models.Template{}).Where("name = ?", "Half").Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("templates named Half: %d (%v), want none", n, err)
	}
	if !strings.Contains(p.Text(), "And also take off") {
		t.Fatalf("the form has no further action:\n%s", p.Text())
	}
}
