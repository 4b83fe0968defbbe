package pages_test

import (
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"

	"github.com/chromedp/chromedp"
)

// TestBrowserTemplateWords: the new template form marks its required
// fields (an asterisk, "required" for screen readers, aria-required), says
// which fields the chosen kind needs, and says the coupon in words as the
// merchant types, kind by kind, creating nothing.
func TestBrowserTemplateWords(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	before := e.CountTemplates(t)

	admin.open("/admin/templates/new")
	marked := eval[string](admin, `Array.from(document.querySelectorAll("form[data-template-form] label"))
	  .filter(function (l) { return l.querySelector(".required"); })
	  .map(function (l) { var f = document.getElementById(l.htmlFor); return l.htmlFor + (f && f.getAttribute("aria-required") === "true" ? "" : "!"); }).join(" ")`)
	if marked != "campaign_id name face_value percent_off buy_quantity get_quantity get_percent tiers max_discount total_stock per_user_limit valid_days valid_from valid_until shared_code" {
		t.Errorf("required fields marked (! without aria-required): %s", marked)
	}
	if got := admin.text(`label[for="name"]`); got != "Name * (required)" {
		t.Errorf("the name's label reads %q to a screen reader", got)
	}
	// The kind's help: only the chosen kind's, naming what it needs.
	help := func() string {
		return eval[string](admin, `Array.from(document.querySelectorAll("[data-kind-help] p")).filter(function (p) { return !p.hidden; }).map(function (p) { return p.textContent; }).join(" | ")`)
	}
	if got := help(); got != "An amount off the order, or off the items or shipping it applies to. It needs: the amount off." {
		t.Errorf("the help of Amount off: %q", got)
	}
	words := func(want string) {
		t.Helper()
		admin.waitText("[data-describe]", want)
	}
	admin.waitText("[data-describe]", "Fill in what the coupon takes off to see it in words.")
	admin.fill("#face_value", "5")
	words("$5 off your order")
	admin.fill("#min_order", "25")
	words("$5 off your order on orders over $25")
	admin.consoleShots("template-words-fixed")

	admin.run("choose buy X get Y", chromedp.Click(chromedp.CSS(`input[name="kind"][value="buy_x_get_y"]`), chromedp.NodeVisible))
	if got := help(); !strings.HasPrefix(got, "Buy some items, get some of them off (the cheapest). It needs: the items bought, the items discounted") {
		t.Errorf("the help of buy X get Y: %q", got)
	}
	admin.fill("#min_order", " ")
	admin.fill("#buy_quantity", "2")
	admin.fill("#get_quantity", "1")
	admin.fill("#get_percent", "100")
	admin.fill("#max_discount", "80")
	admin.run("some items", chromedp.Click(chromedp.CSS(`input[name="applies_to"][value="items"]`), chromedp.NodeVisible))
	admin.fill("#target_category_ids", "shoes")
	admin.fill("#target_exclude_category_ids", "sale")
	words("Buy 2, get 1 free on shoes, not on sale items, up to $80 off")
	admin.consoleShots("template-words-buy2get1")

	admin.run("choose free shipping", chromedp.Click(chromedp.CSS(`input[name="kind"][value="free_shipping"]`), chromedp.NodeVisible))
	admin.fill("#max_discount", "10")
	admin.fill("#min_order", "25")
	words("Free shipping on orders over $25")
	if n := e.CountTemplates(t); n != before {
		t.Fatalf("%d templates after typing, want %d", n, before)
	}
}
