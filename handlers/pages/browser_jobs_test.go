package pages_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestBrowserJobs: an admin starts a generation job from a template's page,
// sees a pattern with too little randomness refused next to its field, then
// follows the job's progress bar to done and finds the download of its
// codes, which holds them all; the job's page, the jobs list and the
// template's page show the pattern as typed. An import's job page lists
// its first 50 refused rows in words, with the count of the others.
func TestBrowserJobs(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go e.Service.RunJobs(ctx)
	fixed := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open(fmt.Sprintf("/admin/templates/%d", fixed.ID))
	admin.waitText("[data-codes]", "Codes and distribution")
	admin.run("make codes", chromedp.Click(chromedp.CSS(`[data-codes] a[href$="/jobs#generate"]`)), chromedp.WaitVisible(chromedp.CSS("#gen-count")))

	admin.fill("#gen-count", "25")
	admin.fill("#gen-pattern", "WEB-###-###")
	admin.submit(`form[action$="/codes"] button[type="submit"]`)
	admin.waitText("#gen-pattern ~ .field-error", "40")
	if v := eval[string](admin, `document.querySelector("#gen-count").value`); v != "25" {
		t.Errorf("the form lost the count typed: %q", v)
	}

	admin.fill("#gen-pattern", "spring-####-####")
	admin.submit(`form[action$="/codes"] button[type="submit"]`)
	admin.expectPage("Making 25 codes")
	admin.run("the job completes", chromedp.WaitVisible(chromedp.CSS(`[data-job][data-job-state="done"] a[data-job-download]`)))
	admin.waitText("[data-job-summary]", "25 made, 0 refused.")
	admin.waitText("[data-job-pattern]", "pattern spring-####-####")
	admin.screenshot("admin-job")
	href := eval[string](admin, `document.querySelector("a[data-job-download]").getAttribute("href")`)
	if !strings.HasPrefix(href, "/api/v1/jobs/") || !strings.HasSuffix(href, "/result.csv") {
		t.Fatalf("download link %q", href)
	}
	csv := eval[string](admin, fmt.Sprintf(`(function () { var x = new XMLHttpRequest(); x.open("GET", %q, false); x.send(); return x.responseText; })()`, href))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 26 || lines[0] != "code" || !strings.HasPrefix(lines[1], "SPRING") {
		t.Fatalf("the download holds %d lines: %q", len(lines), lines[:min(3, len(lines))])
	}
	// The template's page lists the job, done, with its download.
	admin.open(fmt.Sprintf("/admin/templates/%d", fixed.ID))
	admin.waitText(`[data-codes] [data-job-state="done"]`, "25 / 25")
	admin.waitText(`[data-codes] [data-job-pattern]`, "pattern spring-####-####")

	// An import with 53 refused rows: a formula, a duplicate, 51 bad codes.
	var file strings.Builder
	file.WriteString("code\nGOOD-CODE-0001\n=1+2\ngoodcode0001\n")
	for i := range 51 {
		fmt.Fprintf(&file, "bad_%d\n", i)
	}
	path := filepath.Join(t.TempDir(), "codes.csv")
	if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	admin.open(fmt.Sprintf("/admin/templates/%d/jobs", fixed.ID))
	admin.waitText(`[data-job-pattern]`, "pattern spring-####-####")
	admin.run("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#import-file"), []string{path}))
	admin.submit(`form[action$="/codes/import"] button[type="submit"]`)
	admin.expectPage("Importing 54 rows")
	// The page loads again when the job ends, to list the refused rows.
	admin.run("the import completes", chromedp.WaitVisible(chromedp.CSS(`[data-job-refused] tr[data-refused-line="3"]`)))
	admin.waitText("[data-job-refused]", "The first 50 of 53 refused rows; the other 3 are in the result’s download.")
	rows := eval[[]string](admin, `Array.from(document.querySelectorAll("[data-job-refused] tbody tr")).map(function (r) { return r.innerText.replace(/\s+/g, " ").trim(); })`)
	if len(rows) != 50 || rows[0] != "3 =1+2 not a code: it needs 4 to 64 letters and digits (dashes and spaces aside), and must not read as a mistyped random code" ||
		rows[1] != "4 goodcode0001 an earlier line of the file has the same code" || !strings.HasPrefix(rows[49], "52 bad_47 not a code") {
		t.Errorf("the refused rows listed: %d, first %q, last %q", len(rows), rows[:min(2, len(rows))], rows[len(rows)-1:])
	}
	admin.waitText("[data-job-refused]", "Download all 53 refused rows (CSV)")
	admin.waitText("[data-job-summary]", "1 imported, 53 refused.")
	admin.consoleShots("import-refused")
}
