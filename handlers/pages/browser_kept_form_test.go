package pages_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserSessionEndedKeepsForm: a campaign form sent after its session
// ended goes to the login, and after it back to the form with what was
// typed filled in; sent again, it makes exactly one campaign.
func TestBrowserSessionEndedKeepsForm(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/campaigns/new")
	admin.fill("#name", "Kept through login")
	admin.fill("#budget", "250.00")
	ctx, cancel := context.WithTimeout(admin.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: web.SessionCookie, URL: e.Srv.URL + "/"}); err != nil {
		t.Fatalf("delete the session cookie: %v", err)
	}
	admin.submit(`form[action="/admin/campaigns"] button[type="submit"]`)
	if loc := admin.location(); !strings.HasPrefix(loc, "/login?next=") {
		t.Fatalf("a form sent without a session went to %s, want the login", loc)
	}
	admin.login("admin", e.Passwords["admin"])
	if loc := admin.location(); !strings.HasPrefix(loc, "/admin/campaigns/new?kept=") {
		t.Fatalf("after the login the admin is at %s, want the campaign form", loc)
	}
	if got := eval[string](admin, `document.getElementById("name").value`); got != "Kept through login" {
		t.Fatalf("the name field holds %q after the login", got)
	}
	if got := eval[string](admin, `document.getElementById("budget").value`); got != "250.00" {
		t.Fatalf("the budget field holds %q after the login", got)
	}
	named := func() int64 {
		var n int64
		e.Env.Backends.DB.Model(&models.Campaign{}).Where("name = ?", "Kept through login").Count(&n)
		return n
	}
	if n := named(); n != 0 {
		t.Fatalf("%d campaigns before the form is sent again", n)
	}
	admin.submit(`form[action="/admin/campaigns"] button[type="submit"]`)
	if n := named(); n != 1 {
		t.Fatalf("%d campaigns after the form is sent again, want 1: %s", n, admin.pageText())
	}
	// The kept input fills the form once: a reload shows it empty.
	admin.open("/admin/campaigns/new")
	if got := eval[string](admin, `document.getElementById("name").value`); got != "" {
		t.Fatalf("a fresh form holds %q", got)
	}
}
