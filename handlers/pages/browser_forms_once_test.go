package pages_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// TestBrowserTokenShownOnce: a token made in the console shows its secret
// on the page the form goes to; reloading that page shows it no more and
// makes no second token; Back to the form and Make again makes nothing
// and says "Already created" with a link to the first token.
func TestBrowserTokenShownOnce(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	tokens := countRows(t, e, &models.APIToken{})

	admin.open("/admin/tokens")
	admin.fill("#token-name", "till 4")
	admin.submit(`form[action="/admin/tokens"] button[type="submit"]`)
	secret := admin.text("#token-secret")
	if n := countRows(t, e, &models.APIToken{}); n != tokens+1 || secret == "" {
		t.Fatalf("%d tokens after making one (secret %q), want %d", n, secret, tokens+1)
	}
	if loc := admin.location(); !strings.HasPrefix(loc, "/admin/tokens?made=") {
		t.Fatalf("the form went to %s, want the list naming the token", loc)
	}
	admin.run("reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("body")))
	admin.waitText("[data-secret-gone]", "The token till 4 (app) was made; its secret was shown once")
	if strings.Contains(admin.pageText(), secret) {
		t.Fatal("the reloaded page shows the secret again")
	}
	if n := countRows(t, e, &models.APIToken{}); n != tokens+1 {
		t.Fatalf("%d tokens after a reload, want %d", n, tokens+1)
	}
	admin.consoleShots("token-reloaded")

	admin.run("back to the form", chromedp.NavigateBack(), chromedp.WaitReady(chromedp.CSS("body")))
	if loc := admin.location(); loc != "/admin/tokens" {
		t.Fatalf("Back went to %s, want the form", loc)
	}
	admin.fill("#token-name", "till 4")
	admin.submit(`form[action="/admin/tokens"] button[type="submit"]`)
	admin.waitText("[data-already-created]", "Already created: this form had been sent before, so nothing was made again.")
	if n := countRows(t, e, &models.APIToken{}); n != tokens+1 {
		t.Fatalf("%d tokens after Back and Make, want %d", n, tokens+1)
	}
	if strings.Contains(admin.pageText(), secret) {
		t.Fatal("the form sent again shows the secret again")
	}
	href := eval[string](admin, `document.querySelector("[data-already-created] a").getAttribute("href")`)
	if !strings.HasPrefix(href, "/admin/tokens?made=") {
		t.Errorf("the Already created link goes to %q, want the first token", href)
	}
	admin.consoleShots("token-already-created")
}

// TestBrowserCodeFormsForgive: on a template's codes page, a pattern with
// a character no code holds is refused naming it with a fix; an import
// with a column the import does not know is refused naming the column,
// queuing nothing; an import's job page counts what was imported and what
// was refused; the make-codes and add-stock forms sent twice queue one job
// and add the stock once.
func TestBrowserCodeFormsForgive(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go e.Service.RunJobs(ctx)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	jobsPage := fmt.Sprintf("/admin/templates/%d/jobs", tp.ID)

	admin.open(jobsPage)
	admin.fill("#gen-count", "3")
	admin.fill("#gen-pattern", "SHOE-####-####")
	admin.submit(`form[action$="/codes"] button[type="submit"]`)
	admin.waitText("#gen-pattern ~ .field-error", "SHOE-####-####: O is not a code character (no 0, 1, I or O in a 13-character code); "+
		"use another character, e.g. SHQE-####-####, or make the code one character longer, e.g. SHOEX-####-####")
	admin.consoleShots("codes-pattern-fix")
	if n := countRows(t, e, &models.Job{}); n != 0 {
		t.Fatalf("%d jobs queued by a refused pattern", n)
	}
	// The corrected form, sent twice at once: one job.
	admin.fill("#gen-pattern", "SHQE-####-####")
	sendFormTwice(admin, `form[action$="/codes"]`)
	if n := countRows(t, e, &models.Job{}); n != 1 {
		t.Fatalf("%d jobs after the make-codes form sent twice, want 1", n)
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	admin.open(jobsPage)
	admin.run("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#import-file"),
		[]string{write("customers.csv", "code,Customer\nSHOE-AAAA-0001,alice\nSHOE-AAAA-0002,bob\n")}))
	admin.submit(`form[action$="/codes/import"] button[type="submit"]`)
	expectFieldError(t, admin, "#import-file", `Has a column "Customer" the import does not know; it reads only code and user_id: `+
		"rename it user_id if it holds the user each code is for, or remove it. Nothing was imported")
	admin.consoleShots("codes-import-unknown-column")
	if n := countRows(t, e, &models.Job{}); n != 1 {
		t.Fatalf("%d jobs after an import with an unknown column, want 1", n)
	}

	admin.run("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#import-file"),
		[]string{write("codes.csv", "code,user_id\nSHOE-BBBB-0001,\nSHOE-BBBB-0002,\nSHOE-BBBB-0003,\nSHOE-BBBB-0004,\nSHOE-BBBB-0005,alice\nbad_1,\n")}))
	admin.submit(`form[action$="/codes/import"] button[type="submit"]`)
	admin.expectPage("Importing 6 rows")
	admin.run("the import completes", chromedp.WaitVisible(chromedp.CSS(`[data-job-refused] tr[data-refused-line="7"]`)))
	admin.waitText("[data-job-summary]", "5 imported, 1 refused.")
	if txt := admin.text("[data-job-summary]"); strings.Contains(txt, "done") {
		t.Errorf("the summary %q counts refused rows as done", txt)
	}
	admin.consoleShots("codes-import-summary")

	// Add stock sent twice: added once.
	before := e.GetTemplate(t, tp.ID).TotalStock
	admin.open(fmt.Sprintf("/admin/templates/%d", tp.ID))
	admin.fill("#stock-delta", "7")
	admin.fill("#stock-reason", "a second shelf")
	sendFormTwice(admin, `form[action$="/stock"]`)
	if got := e.GetTemplate(t, tp.ID).TotalStock; got != before+7 {
		t.Fatalf("stock %d after adding 7 twice by one form, want %d", got, before+7)
	}
	admin.submit(`form[action$="/stock"] button[type="submit"]`)
	admin.waitText("[data-already-created]", "Already created")
	if got := e.GetTemplate(t, tp.ID).TotalStock; got != before+7 {
		t.Fatalf("stock %d after the form sent a third time, want %d", got, before+7)
	}
}
