package pages_test

import (
	"context"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services/checkout"

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

// TestBrowserTemplateTargets: the template form's target lists sit in two
// titled groups, "It applies to" and "It never applies to", side by side at
// 1280 px and one under the other at 375 px; the help names the groups by
// their titles, never "on the left"; the SKU and category lists name the
// values seen on orders.
func TestBrowserTemplateTargets(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.Template(t, "$10 off orders")
	coupon := e.ClaimFor(t, threshold.ID, "shopper")
	if _, err := e.Service.RedeemSale(context.Background(), checkout.CheckoutRequest{OrderID: "T-1", CouponCodes: []string{coupon.Code},
		Cart: checkout.Cart{Lines: []checkout.Line{{ID: "1", SKU: "BOOT-42", Quantity: 1, UnitPriceCents: 8000, CategoryIDs: []string{"shoes"}},
			{ID: "2", SKU: "SOCK-1", Quantity: 3, UnitPriceCents: 400, CategoryIDs: []string{"socks", "sale"}}}}}, "cashier"); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/templates/new")
	admin.run("some items", chromedp.Click(chromedp.CSS(`input[name="applies_to"][value="items"]`), chromedp.NodeVisible))
	help := admin.text("[data-targets-help]")
	if strings.Contains(help, "left") || strings.Contains(help, "right") || !strings.Contains(help, "“It applies to”") {
		t.Errorf("the targets' help: %q", help)
	}
	if got := admin.text("#target_skus-known"); got != "Seen on orders: BOOT-42, SOCK-1" {
		t.Errorf("the SKUs seen: %q", got)
	}
	if got := admin.text("#target_exclude_category_ids-known"); got != "Seen on orders: sale, shoes, socks" {
		t.Errorf("the categories seen: %q", got)
	}
	// A value seen on orders, chosen in the field beside the list (its
	// datalist), is added to the list on a line of its own.
	if got := eval[string](admin, `Array.from(document.querySelectorAll("#known-skus option")).map(function (o) { return o.value; }).join(" ")`); got != "BOOT-42 SOCK-1" {
		t.Errorf("the SKUs offered: %q", got)
	}
	admin.fill("#target_skus", "HAT-1")
	admin.run("choose a SKU seen", chromedp.SendKeys(chromedp.CSS("#target_skus-add"), "BOOT-42\r"))
	if got := eval[string](admin, `document.querySelector("#target_skus").value`); got != "HAT-1\nBOOT-42" {
		t.Errorf("the SKU list after choosing BOOT-42: %q", got)
	}
	layout := func(width int64) string {
		t.Helper()
		admin.run("viewport", chromedp.EmulateViewport(width, 900))
		return eval[string](admin, `(function () {
		  var a = document.querySelector('[data-target-group="include"]').getBoundingClientRect();
		  var b = document.querySelector('[data-target-group="exclude"]').getBoundingClientRect();
		  if (Math.abs(a.top - b.top) < 2 && a.right <= b.left) { return "side by side"; }
		  if (b.top >= a.bottom) { return "stacked"; }
		  return "overlapping";
		})()`)
	}
	if got := layout(1280); got != "side by side" {
		t.Errorf("at 1280 px the groups are %s, want side by side", got)
	}
	if got := layout(375); got != "stacked" {
		t.Errorf("at 375 px the groups are %s, want stacked", got)
	}
	if got := admin.text(`[data-target-group="exclude"] .target-group-title`); got != "It never applies to" {
		t.Errorf("the second group's title at 375 px: %q", got)
	}
	admin.consoleShots("template-targets")
}
