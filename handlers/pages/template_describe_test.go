package pages_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPagesDescribeTemplate: the new template form's coupon in words,
// asked as the script asks (the sentence alone) and by the form's button
// (the form again, as typed, with the sentence); neither creates a
// template, and a form whose value cannot be read has no sentence.
func TestPagesDescribeTemplate(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	admin := e.Client(t)
	admin.Login("admin")
	before := e.CountTemplates(t)
	// describe asks as the form's script does: the sentence alone.
	describe := func(form url.Values) testsupport.Page {
		t.Helper()
		form.Set("csrf_token", admin.CSRF("/admin/templates/new"))
		req, _ := http.NewRequest("POST", e.Srv.URL+"/admin/templates/describe", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.Srv.URL)
		req.Header.Set("Accept", "text/plain")
		return admin.Do(req)
	}
	camp := strconv.FormatInt(e.Template(t, "").CampaignID, 10)
	form := url.Values{"campaign_id": {camp}, "kind": {models.KindBuyXGetY}, "buy_quantity": {"2"}, "get_quantity": {"1"},
		"get_percent": {"100"}, "max_discount": {"80"}, "applies_to": {models.AppliesToItems}, "target_category_ids": {"shoes"},
		"target_exclude_category_ids": {"sale"}, "name": {"Shoes deal"}}
	words := describe(form)
	const want = "Buy 2, get 1 free on shoes, not on sale items, up to $80 off"
	if words.Status != http.StatusOK || words.Body != want {
		t.Fatalf("the sentence: %d %q, want %q", words.Status, words.Body, want)
	}
	page := admin.Form("/admin/templates/new", "/admin/templates/describe", form)
	if page.Status != http.StatusOK || !strings.Contains(page.Text(), "The coupon in words "+want) ||
		!strings.Contains(page.Body, `value="Shoes deal"`) {
		t.Fatalf("the form with its sentence: %v", page)
	}
	form.Set("max_discount", "eighty")
	if words := describe(form); words.Body != "" {
		t.Fatalf("a form whose cap cannot be read says %q, want no sentence", words.Body)
	}
	// A template's page says its sentence above its edit form.
	tp := e.Template(t, "$5 off your order")
	if p := admin.Get("/admin/templates/" + strconv.FormatInt(tp.ID, 10)); !strings.Contains(p.Body, "This coupon: <strong>$5 off your order</strong>. What it takes off and what it applies to stay as made") {
		t.Fatalf("the edit form without the coupon's sentence: %s", p.Text())
	}
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("%d templates after describing, want %d", n, before)
	}
}
