package pages_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"

	"github.com/chromedp/chromedp"
)

// expectFieldError checks that the field sel is marked invalid and described
// by an error text that holds want: aria-invalid="true", and aria-describedby
// naming an element with that text.
func expectFieldError(t *testing.T, tb *tab, sel, want string) {
	t.Helper()
	got := eval[string](tb, fmt.Sprintf(`(function(){
		var f = document.querySelector(%q);
		if (!f) { return "no field"; }
		if (f.getAttribute("aria-invalid") !== "true") { return "aria-invalid is " + f.getAttribute("aria-invalid"); }
		var ids = (f.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
		if (!ids.length) { return "no aria-describedby"; }
		return ids.map(function (id) { var e = document.getElementById(id); return e ? e.textContent : "(no #" + id + ")"; }).join(" | ");
	})()`, sel))
	if !strings.Contains(strings.Join(strings.Fields(got), " "), want) {
		t.Errorf("%s: %s, want its described error to say %q", sel, got, want)
	}
}

// expectFieldValid checks that the field sel is not marked invalid.
func expectFieldValid(t *testing.T, tb *tab, sel string) {
	t.Helper()
	if got := eval[string](tb, fmt.Sprintf(`String(document.querySelector(%q).getAttribute("aria-invalid"))`, sel)); got != "null" {
		t.Errorf("%s: aria-invalid is %s on a field without an error", sel, got)
	}
}

// TestBrowserFormErrors: the template form with four mistakes answers all
// four in one submit, each beside its field, marked aria-invalid and
// described by its error; the login form does the same for its empty fields
// and its wrong password.
func TestBrowserFormErrors(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)

	login := b.tab("visitor")
	login.open("/login")
	login.submit(`form[action="/login"] button[type="submit"]`)
	expectFieldError(t, login, "#username", "Enter your username.")
	expectFieldError(t, login, "#password", "Enter your password.")
	login.fill("#username", "admin")
	login.fill("#password", "not the password")
	login.submit(`form[action="/login"] button[type="submit"]`)
	expectFieldError(t, login, "#username", "Wrong username or password.")
	expectFieldError(t, login, "#password", "Wrong username or password.")

	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/templates/new")
	templates := e.CountTemplates(t)
	admin.fill("#name", "   ")
	admin.fill("#face_value", "two dollars")
	admin.fill("#total_stock", "0")
	admin.fill("#per_user_limit", "500")
	admin.run("choose the campaign", chromedp.SetValue(chromedp.CSS("#campaign_id"), fmt.Sprint(e.Demo.Campaign.ID)))
	admin.submit(`form[data-template-form] button[type="submit"]`)
	expectFieldError(t, admin, "#name", "Enter a name of 1 to 100 characters")
	expectFieldError(t, admin, "#face_value", "Enter an amount, such as 12.50.")
	expectFieldError(t, admin, "#total_stock", "from 1 to 10,000,000")
	expectFieldError(t, admin, "#per_user_limit", "from 1 to 100")
	expectFieldValid(t, admin, "#campaign_id")
	expectFieldValid(t, admin, "#valid_days")
	if n := eval[int](admin, `document.querySelectorAll(".field-error").length`); n != 4 {
		t.Errorf("%d field errors shown, want 4", n)
	}
	if n := e.CountTemplates(t); n != templates {
		t.Fatalf("%d templates after a refused form, want %d", n, templates)
	}
	admin.screenshot("admin-template-errors")

	// The campaign form: a blank name and a bad budget, both at once.
	admin.open("/admin/campaigns/new")
	admin.fill("#name", " ")
	admin.fill("#budget", "lots")
	admin.submit(`form[action="/admin/campaigns"] button[type="submit"]`)
	expectFieldError(t, admin, "#name", "This must be 1 to 100 characters.")
	expectFieldError(t, admin, "#budget", "Enter an amount, such as 12.50.")
}

// TestBrowserCampaignPause: an admin renames a campaign (a blank name is
// refused beside the field), pauses it (the shop stops offering its coupons
// and a claim is refused), and resumes it.
func TestBrowserCampaignPause(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	camp := e.Demo.Campaign
	fixed := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.run("open the campaign", chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href="/admin/campaigns/%d"]`, camp.ID))),
		chromedp.WaitVisible(chromedp.CSS("#campaign-name")))
	admin.fill("#campaign-name", " ")
	admin.submit(`form[action$="/campaigns/` + fmt.Sprint(camp.ID) + `"] button[type="submit"]`)
	expectFieldError(t, admin, "#campaign-name", "This must be 1 to 100 characters.")
	admin.fill("#campaign-name", "Autumn sale")
	admin.submit(`form[action$="/campaigns/` + fmt.Sprint(camp.ID) + `"] button[type="submit"]`)
	admin.expectPage("Saved the campaign “Autumn sale”.")

	admin.submit(`form[action$="/status"] button[type="submit"]`)
	admin.expectPage("Paused the campaign “Autumn sale”")
	admin.waitText("h1", "Paused")
	admin.waitText(".plain-list", "Campaign paused")
	admin.screenshot("admin-campaign-paused")

	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/")
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, offerSel(fixed.ID, ""))); n != 0 {
		t.Errorf("the shop offers a coupon of a paused campaign")
	}
	coupons := e.CountCoupons(t)
	_, err := e.Service.Claim(context.Background(), claimRequest(fixed.ID, "shopper", "paused-1"))
	if !models.IsCode(err, models.CodeNotClaimable) {
		t.Fatalf("claim while the campaign is paused: %v, want not_claimable", err)
	}
	if n := e.CountCoupons(t); n != coupons {
		t.Fatalf("%d coupons after a refused claim, want %d", n, coupons)
	}

	admin.submit(`form[action$="/status"] button[type="submit"]`)
	admin.expectPage("Resumed the campaign “Autumn sale”")
	shopper.open("/")
	shopper.run("see the offer again", chromedp.WaitVisible(chromedp.CSS(offerSel(fixed.ID, "[data-claim]"))))
	admin.open("/admin/audit?target=campaign:" + fmt.Sprint(camp.ID))
	admin.waitText(".audit-lines", "paused campaign #")
	admin.waitText(".audit-lines", "resumed campaign #")
}

// TestBrowserRecords: the coupon list filters by template and status and
// opens a coupon with its history; a revoke shows the reason, a second
// revoke is refused saying when, by whom and why; the audit log reads as
// sentences with money and coupon codes, filters, and pages through more
// entries than one page holds.
func TestBrowserRecords(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	fixed := e.Template(t, "$5 off")
	var codes []string
	for i := range 3 {
		codes = append(codes, e.ClaimFor(t, fixed.ID, fmt.Sprintf("rec-%d", i)).Code)
	}
	ctx := context.Background()
	if _, err := e.Service.Redeem(ctx, redeemRequest(codes[0], "R-1", 123_456)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Refund(ctx, refundRequest(codes[0], "R-1")); err != nil {
		t.Fatal(err)
	}
	// More stock changes than one page of the audit log holds.
	for i := range 55 {
		if _, err := e.Service.AddStock(ctx, "stocker", fixed.ID, 1, fmt.Sprintf("batch %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])

	// The list: this template's issued coupons, newest first.
	admin.open(fmt.Sprintf("/admin/coupons?template=%d&status=issued", fixed.ID))
	if got := eval[string](admin, `Array.from(document.querySelectorAll("[data-coupon]")).map(function(r){return r.getAttribute("data-coupon")}).join(",")`); got != strings.Join([]string{codes[2], codes[1], codes[0]}, ",") {
		t.Errorf("issued coupons of the template: %s, want %s", got, strings.Join([]string{codes[2], codes[1], codes[0]}, ","))
	}
	admin.open(fmt.Sprintf("/admin/coupons?template=%d&status=used", fixed.ID))
	admin.expectPage("No coupon matches.")
	admin.open("/admin/coupons?status=gone")
	expectFieldError(t, admin, "#f-status", "must be issued, expired, held, used or revoked")

	// A coupon with its history: the refund told as a sentence, money formatted.
	admin.open(fmt.Sprintf("/admin/coupons?template=%d", fixed.ID))
	admin.run("open a coupon", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-coupon=%q] a.mono`, codes[0]))),
		chromedp.WaitVisible(chromedp.CSS("[data-coupon-detail]")))
	admin.waitText("[data-uses]", "Order R-1: $5.00 off $1,234.56")
	admin.waitText("[data-uses]", "refunded")
	history := admin.waitText("[data-coupon-history]", "refunded coupon "+codeGroupsOf(codes[0]))
	if !strings.Contains(history, "order amount $1,234.56") || !strings.Contains(history, "discount $5.00") {
		t.Errorf("the refund's sentence: %s", history)
	}
	if !regexpTimeSeconds.MatchString(history) {
		t.Errorf("the history's time has no seconds: %s", history)
	}

	// Revoke, then revoke again: refused, saying when, by whom and why.
	admin.run("accept confirmations", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.run("choose the public reason", chromedp.Evaluate[chromedp.Void](`document.querySelector("#revoke-public").value = "fraud_suspected"`))
	admin.fill("#revoke-reason", "shared publicly")
	admin.submit(`form[action="/admin/coupons/revoke"] button[type="submit"]`)
	admin.expectPage("Revoked " + codeGroupsOf(codes[0]))
	admin.waitText("[data-revoke-reason]", "by admin: “shared publicly”")
	admin.run("accept confirmations", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.run("choose the public reason", chromedp.Evaluate[chromedp.Void](`document.querySelector("#revoke-public").value = "other"`))
	admin.fill("#revoke-reason", "again")
	admin.submit(`form[action="/admin/coupons/revoke"] button[type="submit"]`)
	expectFieldError(t, admin, "#revoke-code", "This coupon was already revoked on")
	expectFieldError(t, admin, "#revoke-code", "by admin: shared publicly")
	var revokes int64
	if err := e.Backends.DB.Model(&models.AuditEntry{}).Where("action = ?", "coupon.revoke").Count(&revokes).Error; err != nil || revokes != 1 {
		t.Fatalf("%d revoke entries (%v), want 1", revokes, err)
	}
	admin.screenshot("admin-coupon-history")

	// The audit log: one page of 50, then the older ones.
	admin.open("/admin/audit?actor=stocker")
	if n := eval[int](admin, `document.querySelectorAll("[data-audit]").length`); n != 50 {
		t.Errorf("the first page lists %d entries, want 50", n)
	}
	admin.waitText(".audit-lines", "stocker added stock to template #")
	admin.waitText(".audit-lines", "reason “batch 54”")
	admin.submit(`.pager a[rel="next"]`)
	if n := eval[int](admin, `document.querySelectorAll("[data-audit]").length`); n != 5 {
		t.Errorf("the second page lists %d entries, want 5", n)
	}
	admin.waitText(".audit-lines", "reason “batch 0”")
	if v := eval[string](admin, `document.querySelector("#f-actor").value`); v != "stocker" {
		t.Errorf("the filter lost the actor on the next page: %q", v)
	}
	// By the coupon's code, and by the kind of action.
	admin.open("/admin/audit?target=" + codes[0])
	if got := eval[string](admin, `Array.from(document.querySelectorAll("[data-audit]")).map(function(r){return r.getAttribute("data-action")}).join(",")`); got != "coupon.revoke,coupon.refund" {
		t.Errorf("the coupon's entries: %s, want coupon.revoke,coupon.refund", got)
	}
	admin.open("/admin/audit?action=coupon.")
	if got := eval[int](admin, `document.querySelectorAll("[data-audit]").length`); got != 2 {
		t.Errorf("%d coupon entries, want 2", got)
	}
	admin.open("/admin/audit?from=yesterday")
	expectFieldError(t, admin, "#f-from", "Enter a day, such as 2026-03-01.")
	admin.screenshot("admin-audit-filtered")
}

// regexpTimeSeconds matches a time to the second as the records show it
// (in the reader's time zone, by the browser: "10:04:05" or "10:04:05 AM").
var regexpTimeSeconds = regexp.MustCompile(`\d{1,2}:\d{2}:\d{2}`)

func claimRequest(templateID int64, user, key string) claims.ClaimRequest {
	return claims.ClaimRequest{TemplateID: templateID, UserID: user, IdempotencyKey: key}
}

func redeemRequest(code, order string, amount int64) checkout.RedeemRequest {
	return checkout.RedeemRequest{CouponCode: code, OrderID: order, OrderAmountCents: amount, Cashier: "cashier"}
}

func refundRequest(code, order string) checkout.RefundRequest {
	return checkout.RefundRequest{CouponCode: code, OrderID: order, Cashier: "cashier"}
}

// codeGroupsOf writes a code as the pages do: "ABCD-EFGH-JKLMN".
func codeGroupsOf(code string) string { return code[:4] + "-" + code[4:8] + "-" + code[8:] }
