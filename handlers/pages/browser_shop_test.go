package pages_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/claims"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// tap taps the middle of the element sel with a finger (a touch gesture, not
// a mouse click).
func (tb *tab) tap(sel string) {
	tb.t.Helper()
	xy := eval[[]float64](tb, fmt.Sprintf(`(function(){var r=document.querySelector(%q).getBoundingClientRect();`+
		`return [r.left+r.width/2, r.top+r.height/2];})()`, sel))
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	for _, ev := range []input.DispatchTouchEventParams{
		{Type: input.DispatchTouchEventTypeTouchStart, TouchPoints: []*input.TouchPoint{{X: xy[0], Y: xy[1]}}},
		{Type: input.DispatchTouchEventTypeTouchEnd, TouchPoints: []*input.TouchPoint{}},
	} {
		if _, err := chromedp.Call(ctx, input.DispatchTouchEvent, ev); err != nil {
			tb.t.Fatalf("%s: tap %s: %v", tb.name, sel, err)
		}
	}
}

// phone makes the tab a 390 by 844 pixel phone with a touch screen.
func (tb *tab) phone() {
	tb.t.Helper()
	tb.run("a phone's screen", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch))
}

// TestBrowserWalletPhone: five coupons in the wallet on a 390 px phone make
// a page at most 920 px high (docs/pages.md): a list of value, expiry and code, soonest
// expiry first, each with a copy button; a tap opens its QR code full screen.
func TestBrowserWalletPhone(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	fixed := e.Template(t, "$5 off")
	var codes []string
	for _, name := range []string{"$5 off", "$5 off", "15%", "$10 off orders", "Flash deal"} {
		codes = append(codes, e.ClaimFor(t, e.Template(t, name).ID, "shopper").Code)
		// Distinct keys for the two of one template.
		if name == "$5 off" && len(codes) == 1 {
			if _, err := e.Service.Claim(context.Background(), claims.ClaimRequest{TemplateID: fixed.ID, UserID: "shopper",
				IdempotencyKey: "second"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mine := e.UserCoupons(t, "shopper")
	if len(mine) != 5 {
		t.Fatalf("the shopper holds %d coupons, want 5", len(mine))
	}
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.phone()
	shopper.open("/wallet")
	shopper.waitText(".wallet-group .section-title", "Ready to use 5")

	height := eval[int](shopper, `document.documentElement.scrollHeight`)
	t.Logf("the wallet of 5 coupons at 390 px is %d px high", height)
	if height > 920 {
		t.Errorf("the wallet of 5 coupons is %d px high on a 390 px phone, want at most 920", height)
	}
	// Soonest expiry first: the flash deal (7 days), then the 15% (14 days).
	order := eval[[]string](shopper, `Array.from(document.querySelectorAll("[data-coupon]")).map(function(e){return e.getAttribute("data-coupon");})`)
	if len(order) != 5 || order[0] != codes[4] || order[1] != codes[2] {
		t.Errorf("the wallet lists %v, want %s (7 days) then %s (14 days) first", order, codes[4], codes[2])
	}
	first := fmt.Sprintf(`[data-coupon="%s"]`, codes[4])
	if got := shopper.text(first + " [data-when] .wallet-expires"); got != "Expires in 7 days." {
		t.Errorf("the flash deal says %q", got)
	}
	if got := shopper.text(first + " [data-code]"); got != grouped(codes[4]) {
		t.Errorf("the flash deal's code: %q", got)
	}
	if got := eval[string](shopper, fmt.Sprintf(`document.querySelector(%q).getAttribute("data-copy")`, first+" button[data-copy]")); got != codes[4] {
		t.Errorf("the copy button copies %q, want %s", got, codes[4])
	}
	// Each coupon says its minimum order: the flash deal needs $100, the
	// 15% none.
	if got := eval[string](shopper, fmt.Sprintf(`document.querySelector(%q).textContent`, first+" [data-min]")); got != "Min. $100.00 order" {
		t.Errorf("the flash deal's minimum: %q", got)
	}
	if got := shopper.text(fmt.Sprintf(`[data-coupon="%s"] [data-min]`, codes[2])); got != "Any order" {
		t.Errorf("the 15%%'s minimum: %q", got)
	}
	if n := shopper.count(".wallet-list button[data-copy]"); n != 5 {
		t.Errorf("%d copy buttons for 5 coupons", n)
	}
	shopper.screenshot("wallet-phone")

	// A tap opens the QR code full screen; Close closes it.
	shopper.phone()
	dialog := "#qr-" + codes[4]
	shopper.tap(first + " .wallet-open")
	shopper.waitTrue("the QR code opens", fmt.Sprintf(`document.querySelector(%q).open`, dialog))
	box := eval[[]float64](shopper, fmt.Sprintf(`(function(){var d=document.querySelector(%q).getBoundingClientRect(),`+
		`q=document.querySelector(%q).getBoundingClientRect();return [d.left,d.top,d.width,d.height,q.width,innerWidth,innerHeight];})()`,
		dialog, dialog+" svg.qr"))
	if box[0] != 0 || box[1] != 0 || box[2] != box[5] || box[3] != box[6] {
		t.Errorf("the QR dialog covers %v of the %vx%v screen, want all of it", box[:4], box[5], box[6])
	}
	if box[4] < 0.85*box[5] {
		t.Errorf("the QR code is %v px wide on a %v px screen, want nearly all of it", box[4], box[5])
	}
	shopper.tap(dialog + " [data-qr-close]")
	shopper.waitTrue("the QR code closes", fmt.Sprintf(`!document.querySelector(%q).open`, dialog))
}

// TestBrowserShopChanges: with the shop open, an offer paused by an admin
// loses its claim button without a reload (the page polls); an offer whose
// claims open later is listed last and says when it opens; each card says
// its value once.
func TestBrowserShopChanges(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	fixed := e.Template(t, "$5 off")
	opens := e.Service.Now().Add(50 * time.Hour).Truncate(time.Minute)
	later, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: e.Demo.Campaign.ID,
		Name: "Weekend treat", Kind: models.KindFixed, FaceValueCents: 200, TotalStock: 10, PerUserLimit: 1, ValidDays: 7,
		ClaimStartsAt: opens})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/")
	shopper.run("see the offer", chromedp.WaitVisible(chromedp.CSS(offerSel(fixed.ID, "[data-claim]"))))

	// Opening later: last, in its own section, with the time it opens.
	last := eval[string](shopper, `(function(){var a=document.querySelectorAll("[data-offer]");return a[a.length-1].getAttribute("data-offer");})()`)
	if last != fmt.Sprint(later.ID) {
		t.Errorf("the last card is offer %s, want %d (opens later)", last, later.ID)
	}
	want := "Opens " + opens.UTC().Format("2 Jan 2006, 15:04:05 UTC")
	got := shopper.text(offerSel(later.ID, "[data-opens]"))
	if got != want {
		t.Errorf("the later offer says %q, want %q", got, want)
	}
	if n := shopper.count(offerSel(later.ID, "[data-claim]")); n != 0 {
		t.Errorf("an offer not open yet has a claim button")
	}
	// The value once: the name "$5 off your order" is the value line; the
	// name "Weekend treat" goes under "$2 off your order" (models.DescribeTemplate).
	if txt := shopper.text(offerSel(fixed.ID, "")); strings.Count(txt, "$5") != 1 {
		t.Errorf("the $5 card says its value %d times: %s", strings.Count(txt, "$5"), txt)
	}
	if v, n := shopper.text(offerSel(later.ID, ".offer-value")), shopper.text(offerSel(later.ID, ".offer-name")); v != "$2 off your order" || n != "Weekend treat" {
		t.Errorf("the later card's value and name: %q, %q", v, n)
	}

	// Opened early while the page is open: its claim button appears, and a
	// claim of the one a person may have turns the card at once.
	now := e.Service.Now()
	if _, err := e.Service.UpdateTemplate(context.Background(), "admin", later.ID, admin.TemplatePatch{ClaimStartsAt: &now}); err != nil {
		t.Fatal(err)
	}
	shopper.run("the offer opens", chromedp.WaitVisible(chromedp.CSS(offerSel(later.ID, "[data-claim]"))))
	shopper.run("claim it", chromedp.Click(chromedp.CSS(offerSel(later.ID, "[data-claim]"))))
	shopper.waitText(offerSel(later.ID, "[data-result]"), "Claimed — see your wallet")
	shopper.waitText(offerSel(later.ID, ".offer-action"), "You have the most you may hold")

	// Paused while the page is open: the card changes by itself.
	paused := models.TemplatePaused
	if _, err := e.Service.UpdateTemplate(context.Background(), "admin", fixed.ID, admin.TemplatePatch{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	shopper.waitText(offerSel(fixed.ID, ".offer-action"), "Not open right now")
	if n := shopper.count(offerSel(fixed.ID, "[data-claim]")); n != 0 {
		t.Errorf("the paused offer still has a claim button")
	}
}

// TestBrowserNotFoundHeader: a logged-in shopper on a page that does not
// exist is still shown as logged in, with their navigation, and can log out
// from there.
func TestBrowserNotFoundHeader(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/no/such/page")
	shopper.expectPage("There is no page at this address.")
	if got := shopper.text(".account .who-name"); got != "shopper" {
		t.Errorf("the 404 page's header shows %q, want the shopper logged in", got)
	}
	if n := shopper.count(`nav a[href="/wallet"]`); n != 1 {
		t.Errorf("the 404 page has no link to the wallet")
	}
	if got := shopper.text(".error-card .actions"); got != "Go to my page" {
		t.Errorf("the 404 page offers %q", got)
	}
	shopper.submit(`form[action="/logout"] button`)
	if n := shopper.count(".account .who-name"); n != 0 {
		t.Errorf("still logged in after logging out from the 404 page: %s", shopper.pageText())
	}
	shopper.open("/wallet")
	if loc := shopper.location(); !strings.HasPrefix(loc, "/login") {
		t.Errorf("after logging out the wallet is at %s, want the login page", loc)
	}
}

// TestBrowserShopUsableCount: a card's "You have N" counts the coupons the
// shopper can still use: one used at a till is not counted, though it still
// counts against the limit.
func TestBrowserShopUsableCount(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	fixed := e.Template(t, "$5 off")
	used := e.ClaimFor(t, fixed.ID, "shopper")
	if _, err := e.Service.Claim(context.Background(), claims.ClaimRequest{TemplateID: fixed.ID, UserID: "shopper",
		IdempotencyKey: "second"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Redeem(context.Background(), redeemRequest(used.Code, "U-1", 3000)); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/")
	if got := shopper.text(offerSel(fixed.ID, "[data-held-badge]")); got != "You have 1" {
		t.Errorf("with one coupon used and one to use, the card says %q, want You have 1", got)
	}
	// Both count against the limit of 2: no claim button.
	if got := shopper.text(offerSel(fixed.ID, ".offer-action")); got != "You have the most you may hold · see your wallet" {
		t.Errorf("at the limit the card says %q", got)
	}
}

// TestBrowserWalletRevokeReason: an admin revokes a coupon in the console
// with a public reason chosen from the list and an internal note; the
// shopper's wallet says the public reason, never the note.
func TestBrowserWalletRevokeReason(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	gone := e.ClaimFor(t, e.Template(t, "15%").ID, "shopper")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/coupons?code=" + gone.Code)
	admin.run("accept confirmations", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.fill("#revoke-code", gone.Code)
	// No public reason chosen: refused beside the field, nothing revoked.
	admin.fill("#revoke-reason", "bought a list of accounts")
	admin.submit(`form[action="/admin/coupons/revoke"] button[type="submit"]`)
	if got := admin.text("#revoke-public-error"); got != "Choose what the shopper is told." {
		t.Errorf("no public reason: %q", got)
	}
	if s := e.CouponStatus(t, gone.Code); s != models.CouponIssued {
		t.Fatalf("a revoke without a public reason changed the coupon: %s", s)
	}
	admin.run("accept confirmations", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.run("choose the public reason", chromedp.Evaluate[chromedp.Void](`document.querySelector("#revoke-public").value = "fraud_suspected"`))
	admin.fill("#revoke-reason", "bought a list of accounts")
	admin.submit(`form[action="/admin/coupons/revoke"] button[type="submit"]`)
	admin.expectPage("Revoked " + grouped(gone.Code))

	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/wallet")
	sel := fmt.Sprintf(`[data-coupon="%s"] [data-when]`, gone.Code)
	if got := shopper.text(sel); got != "Revoked: withdrawn after suspected misuse" {
		t.Errorf("the wallet says %q about the revoke", got)
	}
	if strings.Contains(shopper.pageText(), "bought a list") {
		t.Errorf("the wallet shows the admin's note")
	}
}
