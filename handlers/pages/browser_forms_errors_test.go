package pages_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// TestBrowserWebhookAllErrors: the webhook form names every mistake at
// once, a missing (then a wrong) address and a too long description each
// beside its field, with the keyboard on the first; nothing is registered.
func TestBrowserWebhookAllErrors(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	long := strings.Repeat("x", 201)
	for _, url := range []string{"", "ftp://example.com/hooks"} {
		admin.open("/admin/webhooks")
		if url != "" {
			admin.fill("#url", url)
		}
		// maxlength stops typing at 200: a script sets what a person cannot type.
		admin.run("long description", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("description").value = %q`, long)))
		admin.submit(`form[action="/admin/webhooks"] button[type="submit"]`)
		if url == "" {
			expectFieldError(t, admin, "#url", "Enter the address to send the events to")
		} else {
			expectFieldError(t, admin, "#url", "This must be an absolute http or https URL.")
		}
		expectFieldError(t, admin, "#description", "This must be at most 200 characters.")
		if got := eval[string](admin, `document.getElementById("description").value`); got != long {
			t.Errorf("the description typed is not kept: %q", got)
		}
		if id := activeID(admin); id != "url" {
			t.Errorf("the keyboard is on %q, want url", id)
		}
	}
	if n := countRows(t, e, &models.WebhookEndpoint{}); n != 0 {
		t.Fatalf("%d webhooks registered by a form with mistakes", n)
	}
}

// TestBrowserImportFileError: the import form sent without a file says so
// beside the file field, which is aria-invalid, described by the message
// and has the keyboard; nothing is queued.
func TestBrowserImportFileError(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open(fmt.Sprintf("/admin/templates/%d/jobs", tp.ID))
	admin.submit(`form[action$="/codes/import"] button[type="submit"]`)
	expectFieldError(t, admin, "#import-file", "Choose a CSV file.")
	if id := activeID(admin); id != "import-file" {
		t.Errorf("the keyboard is on %q, want import-file", id)
	}
	if n := countRows(t, e, &models.Job{}); n != 0 {
		t.Fatalf("%d jobs queued by a form with mistakes", n)
	}
}
