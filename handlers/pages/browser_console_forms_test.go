package pages_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// TestBrowserTemplateEditStacking: the template's edit form shows its
// stacking setting and saves a change of it (the page then says so, and so
// does the database).
func TestBrowserTemplateEditStacking(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	stackingOf := func() string {
		var s string
		e.Env.Backends.DB.Model(&models.Template{}).Where("id = ?", tp.ID).Pluck("stacking", &s)
		return s
	}
	before := stackingOf()
	admin.open(fmt.Sprintf("/admin/templates/%d", tp.ID))
	if got := eval[string](admin, `document.querySelector('#edit-stacking').value`); got != before {
		t.Fatalf("the edit form shows stacking %q, the template has %q", got, before)
	}
	want := models.StackingCombinable
	if before == models.StackingCombinable {
		want = models.StackingExclusive
	}
	admin.run("choose", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('#edit-stacking').value = %q`, want)))
	admin.submit(`form[action="/admin/templates/` + fmt.Sprint(tp.ID) + `"] button[type="submit"]`)
	admin.expectPage("Saved “" + tp.Name + "”.")
	if got := stackingOf(); got != want {
		t.Fatalf("after saving the template's stacking is %q, want %q", got, want)
	}
	if got := eval[string](admin, `document.querySelector('#edit-stacking').value`); got != want {
		t.Fatalf("after saving the form shows %q, want %q", got, want)
	}
	line := "The only coupon on its order"
	if want == models.StackingCombinable {
		line = "May join other coupons that may be combined"
	}
	if got := admin.text("[data-stacking]"); got != line {
		t.Fatalf("the page says %q, want %q", got, line)
	}
}

// TestBrowserGenerateAllErrors: the form making codes names every mistake
// at once, a wrong count and a wrong pattern each beside its field and
// aria-invalid, with the keyboard on the first; nothing is queued.
func TestBrowserGenerateAllErrors(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open(fmt.Sprintf("/admin/templates/%d/jobs", tp.ID))
	admin.fill("#gen-count", "0")
	admin.fill("#gen-pattern", "WEB-###-###")
	admin.submit(`form[action$="/codes"] button[type="submit"]`)
	admin.waitText("#gen-count ~ .field-error", "Enter a number from 1 to 1000000.")
	admin.waitText("#gen-pattern ~ .field-error", "40")
	for _, id := range []string{"gen-count", "gen-pattern"} {
		if v := eval[string](admin, fmt.Sprintf(`document.getElementById(%q).getAttribute("aria-invalid") || ""`, id)); v != "true" {
			t.Errorf("#%s aria-invalid = %q, want true", id, v)
		}
	}
	if id := activeID(admin); id != "gen-count" {
		t.Errorf("the keyboard is on %q, want gen-count", id)
	}
	if n := countRows(t, e, &models.Job{}); n != 0 {
		t.Fatalf("%d jobs queued by a form with mistakes", n)
	}
}
