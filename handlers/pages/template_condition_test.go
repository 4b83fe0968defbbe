package pages_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPagesTemplateFormCondition: the form's condition on the cart is
// stored with the template and said in words on its page; nothing typed
// is no condition; a condition without a number of items or an amount is
// refused beside its field, and nothing is created.
func TestPagesTemplateFormCondition(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	p := admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Jackets 10", "kind", "percent",
		"percent_off", "10", "max_discount", "50", "applies_to", "items", "target_category_ids", "jackets",
		"cond_category_ids", "trousers", "cond_min_quantity", "2"))
	if p.Status != http.StatusSeeOther {
		t.Fatalf("create: status %d\n%s", p.Status, p.Text())
	}
	tp := created(t, e, "Jackets 10")
	want := &models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"trousers"}}, MinQuantity: 2}
	if !reflect.DeepEqual(tp.Condition, want) {
		t.Fatalf("condition %+v, want %+v", tp.Condition, want)
	}
	if page := admin.Get(fmt.Sprintf("/admin/templates/%d", tp.ID)).Text(); !strings.Contains(page,
		"10% off jackets when the cart has 2 items of category trousers, up to $50") {
		t.Errorf("the template's page does not say its condition:\n%s", page)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Buy A get B", "kind", "percent",
		"percent_off", "100", "max_discount", "50", "applies_to", "items", "target_skus", "B", "max_units_per_order", "1",
		"cond_skus", "A", "cond_min_quantity", "2", "cond_min_amount", "12.50", "cond_repeat", "1"))
	tp = created(t, e, "Buy A get B")
	want = &models.TemplateCondition{Target: models.TemplateTarget{SKUs: []string{"A"}}, MinQuantity: 2, MinAmountCents: 1250, Repeat: true}
	if !reflect.DeepEqual(tp.Condition, want) {
		t.Fatalf("condition %+v, want %+v", tp.Condition, want)
	}
	admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "No condition", "kind", "percent",
		"percent_off", "10", "max_discount", "50"))
	if tp = created(t, e, "No condition"); tp.Condition != nil {
		t.Fatalf("nothing typed gave the condition %+v", tp.Condition)
	}
	before := e.CountTemplates(t)
	p = admin.Form("/admin/templates/new", "/admin/templates", kindForm(e, "Wrong", "kind", "percent",
		"percent_off", "10", "max_discount", "50", "cond_category_ids", "trousers"))
	if p.Status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", p.Status)
	}
	if got := testsupport.FieldErrorBeside(p.Body, "cond_min_quantity"); !strings.Contains(got, "how many of these items") {
		t.Errorf("beside cond_min_quantity: %q", got)
	}
	if !strings.Contains(p.Body, ">trousers</textarea>") {
		t.Errorf("the form lost the condition typed")
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("a template was created: %d → %d", before, n)
	}
}
