package pages_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"couponsvc/internal/testsupport"
)

// TestBrowserJobs: an admin starts a generation job from a template's page,
// sees a pattern with too little randomness refused next to its field, then
// follows the job's progress bar to done and finds the download of its
// codes, which holds them all.
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

	admin.fill("#gen-pattern", "SPRING-####-####")
	admin.submit(`form[action$="/codes"] button[type="submit"]`)
	admin.expectPage("Making 25 codes")
	admin.run("the job completes", chromedp.WaitVisible(chromedp.CSS(`[data-job][data-job-state="done"] a[data-job-download]`)))
	admin.waitText("[data-job-done]", "25")
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
}
