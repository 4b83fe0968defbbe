package pages_test

import (
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
