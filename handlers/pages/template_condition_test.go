package pages_test

import (
	"context"
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

// TestPagesTillSaleCondition: at the till, a coupon whose condition the
// sale does not meet is refused saying what the sale lacks; with the
// items it needs, the preview says the coupon with its condition and
// takes its discount off the jacket only.
func TestPagesTillSaleCondition(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{Name: "Jackets", CampaignID: e.Demo.Campaign.ID,
		TotalStock: 50, PerUserLimit: 5, ValidDays: 30, Kind: models.KindPercent, PercentOff: 10, MaxDiscountCents: 5000,
		AppliesTo: models.AppliesToItems, Target: models.TemplateTarget{CategoryIDs: []string{"jackets"}},
		Condition: &models.TemplateCondition{Target: models.TemplateTarget{CategoryIDs: []string{"trousers"}}, MinQuantity: 2}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.ClaimFor(t, tp.ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	p := cashier.Form("/pos", "/pos/preview", saleForm("T-200", c.Code, "", "TR-1,1,40.00,trousers", "JK-1,1,120.00,jackets"))
	if txt := p.Text(); p.Status == http.StatusOK || !strings.Contains(txt, "needs 2 items of category trousers, the cart has 1") {
		t.Fatalf("1 trousers: %v\n%s", p, txt)
	}
	p = cashier.Form("/pos", "/pos/preview", saleForm("T-201", c.Code, "", "TR-1,2,40.00,trousers", "JK-1,1,120.00,jackets"))
	txt := p.Text()
	for _, want := range []string{"· 10% off jackets when the cart has 2 items of category trousers, up to $50: −$12.00",
		"TR-1 × 2 (trousers) $80.00 — $80.00", "JK-1 × 1 (jackets) $120.00 −$12.00 $108.00", "To pay $188.00"} {
		if p.Status != http.StatusOK || !strings.Contains(txt, want) {
			t.Fatalf("2 trousers: want %q in\n%s", want, txt)
		}
	}
}
