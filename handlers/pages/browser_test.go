package pages_test

// Browser tests: the real router over test backends with the demo data,
// driven through headless Chromium with chromedp. They need Chromium at
// /usr/bin/chromium (or COUPON_TEST_CHROMIUM); without it they skip, unless
// COUPON_REQUIRE_BROWSER=1 (CI), where they fail. They write screenshots of the
// pages at 390 and 1280 pixels wide to ./screenshots/ at the repository root.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// browser is one headless Chromium for one test.
type browser struct {
	t    *testing.T
	root context.Context
	base string
}

// startBrowser starts Chromium, or skips (fails under COUPON_REQUIRE_BROWSER=1)
// when there is none.
func startBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path := os.Getenv("COUPON_TEST_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		if os.Getenv("COUPON_REQUIRE_BROWSER") == "1" {
			t.Fatalf("Chromium is required (COUPON_REQUIRE_BROWSER=1) but %s is not there: %v", path, err)
		}
		t.Skipf("no Chromium at %s (set COUPON_TEST_CHROMIUM, or install chromium): browser test skipped", path)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	root, cancelRoot := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelRoot()
		cancelAlloc()
	})
	if err := chromedp.Do(root); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	return &browser{t: t, root: root, base: base}
}

// tab is a browser tab with cookies of its own (an incognito-like browser
// context): one person at one device.
type tab struct {
	t    *testing.T
	b    *browser
	ctx  context.Context
	name string

	mu       sync.Mutex
	problems []string
}

// tab opens a tab for who. Script errors and CSP violations on any page of
// it fail the test; dialogs (confirm) are accepted.
func (b *browser) tab(who string) *tab {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.root, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	tb := &tab{t: b.t, b: b, ctx: ctx, name: who}
	messages := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("open a tab: %v", err)
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			// A refused request (409 sold out, 403 refused) is logged by the
			// browser as a network error: expected. Anything else is not.
			if (m.Type == chromedp.ConsoleError && m.Source != "network") || m.IsException() {
				tb.mu.Lock()
				tb.problems = append(tb.problems, fmt.Sprintf("%s %s:%d %s", m.Type, m.URL, m.Line+1, m.Text))
				tb.mu.Unlock()
			}
		}
	}()
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	b.t.Cleanup(func() {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, p := range tb.problems {
			b.t.Errorf("%s's tab: the browser reported: %s", who, p)
		}
	})
	return tb
}

// run runs actions with a time limit, failing the test with what was tried.
func (tb *tab) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %s: %v\npage text: %s", tb.name, what, err, tb.pageText())
	}
}

// open loads a page of the service.
func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.run("open "+path, chromedp.Navigate(tb.b.base+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// submit clicks a button that sends a form and waits for the page that
// follows (after any redirect).
func (tb *tab) submit(sel string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		tb.t.Fatalf("%s: submit %s: %v\npage text: %s", tb.name, sel, err, tb.pageText())
	}
	tb.run("page after "+sel, chromedp.WaitReady(chromedp.CSS("body")))
}

// fill replaces the value of a field as a person types it.
func (tb *tab) fill(sel, value string) {
	tb.t.Helper()
	tb.run("fill "+sel, chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).value = ""`, sel)),
		chromedp.SendKeys(chromedp.CSS(sel), value))
}

// text returns the text of the first element that matches sel.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		tb.t.Fatalf("%s: read %s: %v\npage text: %s", tb.name, sel, err, tb.pageText())
	}
	return strings.Join(strings.Fields(s), " ")
}

// eval evaluates a script expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("%s: evaluate %s: %v", tb.name, expr, err)
	}
	return v
}

// pageText is the visible text of the page, for failure messages.
func (tb *tab) pageText() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return strings.Join(strings.Fields(s), " ")
}

// waitText waits until the element sel holds want.
func (tb *tab) waitText(sel, want string) string {
	tb.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
			`(function(){var e=document.querySelector(%q);return e?e.textContent:"";})()`, sel)))
		cancel()
		s = strings.Join(strings.Fields(s), " ")
		if err == nil && strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("%s: %s never showed %q (it shows %q, err %v)\npage text: %s", tb.name, sel, want, s, err, tb.pageText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectPage checks that the page shows want somewhere.
func (tb *tab) expectPage(want string) {
	tb.t.Helper()
	tb.waitText("body", want)
}

// location is the path of the page shown.
func (tb *tab) location() string {
	tb.t.Helper()
	return eval[string](tb, `location.pathname + location.search`)
}

// login logs in through the login page (the one shown, when it is).
func (tb *tab) login(username, password string) {
	tb.t.Helper()
	if !strings.HasPrefix(tb.location(), "/login") {
		tb.open("/login")
	}
	tb.fill("#username", username)
	tb.fill("#password", password)
	tb.submit(`form[action="/login"] button[type="submit"]`)
	if strings.HasPrefix(tb.location(), "/login") {
		tb.t.Fatalf("%s: still on the login page after logging in: %s", tb.name, tb.pageText())
	}
}

// screenshot writes full-page screenshots of the current page at a phone's
// and a laptop's width to screenshots/<name>-390.png and -1280.png.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	dir := screenshotDir(tb.t)
	for _, width := range []int64{390, 1280} {
		ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844), chromedp.Sleep(150*time.Millisecond)); err != nil {
			cancel()
			tb.t.Fatalf("%s: viewport %d: %v", tb.name, width, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			tb.t.Fatalf("%s: screenshot %s at %d: %v", tb.name, name, width, err)
		}
		file := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
		if err := os.WriteFile(file, png, 0o644); err != nil {
			tb.t.Fatalf("write %s: %v", file, err)
		}
		tb.t.Logf("screenshot %s", file)
	}
	tb.run("restore the viewport", chromedp.EmulateViewport(1280, 900))
}

// screenshotDir is ./screenshots at the root of the module (kept out of git).
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "screenshots")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// offerSel selects the shop card of a template.
func offerSel(id int64, inner string) string {
	return strings.TrimSpace(fmt.Sprintf(`[data-offer="%d"] %s`, id, inner))
}

// TestBrowserShopper: a shopper logs in, claims a coupon, sees it in the wallet
// with its QR code; the same click's key sent again does not claim twice; a
// sold-out template shows sold out; the cashier's and admin's pages refuse
// the shopper.
func TestBrowserShopper(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")

	shopper.open("/wallet")
	if loc := shopper.location(); !strings.HasPrefix(loc, "/login") {
		t.Fatalf("the wallet without a login went to %s, want the login page", loc)
	}
	shopper.login("shopper", e.Passwords["shopper"])
	if loc := shopper.location(); loc != "/wallet" {
		t.Fatalf("after login the shopper is at %s, want back at /wallet", loc)
	}
	shopper.expectPage("Your wallet is empty")

	threshold := e.Template(t, "$10 off orders") // one per person
	fixed := e.Template(t, "$5 off")             // two per person
	flash := e.Template(t, "Flash deal")
	shopper.open("/")
	shopper.expectPage("Coupons on offer")
	before := shopper.text(offerSel(fixed.ID, "[data-remaining]"))

	// Claim: the answer in words with the code, a copy button and the QR
	// code; the stock figure down by one.
	shopper.run("claim", chromedp.Click(chromedp.CSS(offerSel(fixed.ID, "[data-claim]"))))
	shopper.waitText(offerSel(fixed.ID, "[data-result]"), "Claimed — see your wallet")
	if after := shopper.text(offerSel(fixed.ID, "[data-remaining]")); after != fmt.Sprint(mustAtoi(t, before)-1) {
		t.Errorf("remaining after the claim: %s, want one less than %s", after, before)
	}
	mine := e.UserCoupons(t, "shopper")
	if len(mine) != 1 || mine[0].TemplateID != fixed.ID {
		t.Fatalf("the shopper holds %+v after one claim", mine)
	}
	first := mine[0].Code
	if got := shopper.text(offerSel(fixed.ID, "[data-claimed-code]")); got != first[:4]+"-"+first[4:8]+"-"+first[8:] {
		t.Errorf("the claim message shows the code %q, want %s", got, first)
	}
	if got := eval[string](shopper, fmt.Sprintf(`document.querySelector(%q).getAttribute("data-copy")`,
		offerSel(fixed.ID, "[data-result] button[data-copy]"))); got != first {
		t.Errorf("the claim message's copy button copies %q, want %s", got, first)
	}
	shopper.waitTrue("the QR code loads", fmt.Sprintf(
		`(function(){var i=document.querySelector(%q);return !!i && i.complete && i.naturalWidth > 0;})()`,
		offerSel(fixed.ID, "img.claimed-qr")))

	// The same click again (its answer lost, say): the same key, no second coupon.
	key := eval[string](shopper, fmt.Sprintf(`document.querySelector(%q).dataset.lastKey`, offerSel(fixed.ID, "[data-claim]")))
	if len(key) != 32 {
		t.Fatalf("the claim button sent the key %q, want 32 hex characters", key)
	}
	eval[bool](shopper, fmt.Sprintf(`(function(){var b=document.querySelector(%q);b.dataset.key=%q;return true;})()`,
		offerSel(fixed.ID, "[data-claim]"), key))
	shopper.run("claim again with the same key", chromedp.Click(chromedp.CSS(offerSel(fixed.ID, "[data-claim]"))))
	shopper.waitText(offerSel(fixed.ID, "[data-result]"), "Already claimed with this click")
	if n := len(e.UserCoupons(t, "shopper")); n != 1 {
		t.Fatalf("the shopper holds %d coupons after two clicks with one key, want 1", n)
	}
	// A new click is a new claim: the second of two, so the card changes at
	// once, without a reload: no claim button, the limit said.
	shopper.run("claim a second time", chromedp.Click(chromedp.CSS(offerSel(fixed.ID, "[data-claim]"))))
	shopper.waitText(offerSel(fixed.ID, "[data-result]"), "Claimed — see your wallet")
	shopper.waitText(offerSel(fixed.ID, ".offer-action"), "You have the most you may hold · see your wallet")
	shopper.waitText(offerSel(fixed.ID, "[data-held-badge]"), "You have 2")
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, offerSel(fixed.ID, "[data-claim]"))); n != 0 {
		t.Errorf("the offer the shopper now holds the most of still has a claim button")
	}
	if n := len(e.UserCoupons(t, "shopper")); n != 2 {
		t.Fatalf("the shopper holds %d coupons, want 2", n)
	}

	// Claimed on another device while this page is open: the click is
	// refused by the limit of one per person, and the card changes at once.
	code := e.ClaimFor(t, threshold.ID, "shopper").Code
	shopper.run("claim over the limit", chromedp.Click(chromedp.CSS(offerSel(threshold.ID, "[data-claim]"))))
	shopper.waitText(offerSel(threshold.ID, "[data-result]"), "You already have the most you may hold")
	shopper.waitText(offerSel(threshold.ID, ".offer-action"), "You have the most you may hold")
	if n := len(e.UserCoupons(t, "shopper")); n != 3 {
		t.Fatalf("the shopper holds %d coupons, want 3", n)
	}

	// Sold out: the last five go to other shoppers while the page is open.
	for i := range flash.TotalStock {
		e.ClaimFor(t, flash.ID, fmt.Sprintf("other-%d", i))
	}
	shopper.run("claim the sold-out one", chromedp.Click(chromedp.CSS(offerSel(flash.ID, "[data-claim]"))))
	shopper.waitText(offerSel(flash.ID, "[data-result]"), "Sold out")
	shopper.waitText(offerSel(flash.ID, ".offer-action"), "Sold out")

	// The stock figures follow claims made elsewhere while the page is open.
	pct := e.Template(t, "15%")
	for i := range 3 {
		e.ClaimFor(t, pct.ID, fmt.Sprintf("elsewhere-%d", i))
	}
	shopper.waitText(offerSel(pct.ID, "[data-remaining]"), fmt.Sprint(pct.TotalStock-3))
	shopper.open("/")
	shopper.waitText(offerSel(flash.ID, ".offer-action"), "Sold out")
	shopper.waitText(offerSel(threshold.ID, ".offer-action"), "the most you may hold")
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, offerSel(threshold.ID, "[data-claim]"))); n != 0 {
		t.Errorf("an offer the shopper holds the most of still has a claim button")
	}
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, offerSel(flash.ID, "[data-claim]"))); n != 0 {
		t.Errorf("a sold-out offer still has a claim button")
	}
	shopper.screenshot("shop")

	// The wallet: the code and its QR code; a coupon used at a till on the
	// way shows as used.
	percent := e.ClaimFor(t, e.Template(t, "15%").ID, "shopper")
	if _, err := e.Service.Redeem(context.Background(), checkout.RedeemRequest{CouponCode: percent.Code,
		OrderID: "W-2231", OrderAmountCents: 4820, Cashier: "cashier"}); err != nil {
		t.Fatal(err)
	}
	shopper.run("go to the wallet", chromedp.Click(chromedp.CSS(`nav a[href="/wallet"]`)), chromedp.WaitReady(chromedp.CSS(".coupon")))
	card := fmt.Sprintf(`[data-coupon="%s"]`, code)
	if got := shopper.text(card + " [data-code]"); got != code[:4]+"-"+code[4:8]+"-"+code[8:] {
		t.Errorf("the wallet shows the code %q, want %s", got, code)
	}
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, card+" .coupon-qr svg path")); n != 1 {
		t.Errorf("the coupon has no QR code in the wallet")
	}
	shopper.waitText(card+" [data-when]", "Expires in 30 days.")
	shopper.waitText(".wallet-group .section-title", "Ready to use")
	shopper.waitText(fmt.Sprintf(`[data-coupon="%s"]`, percent.Code), "on order W-2231")
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, fmt.Sprintf(`[data-coupon="%s"] .coupon-qr`, percent.Code))); n != 0 {
		t.Errorf("a used coupon shows a QR code")
	}
	shopper.screenshot("wallet")

	// The cashier's and admin's pages refuse a shopper.
	for _, path := range []string{"/pos", "/admin", "/admin/templates/new", "/admin/reconcile"} {
		shopper.open(path)
		shopper.expectPage("Not for your account")
		if loc := shopper.location(); loc != path {
			t.Errorf("%s went to %s", path, loc)
		}
	}
	shopper.screenshot("refused")
}

// TestBrowserCashier: a cashier redeems a coupon with an order below the
// minimum (refused, with the message), then with a valid order (the discount
// shown), and refunds it.
func TestBrowserCashier(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.Template(t, "$10 off orders")
	coupon := e.ClaimFor(t, threshold.ID, "shopper")
	for i := range 3 {
		e.ClaimFor(t, e.Template(t, "15%").ID, fmt.Sprintf("walk-in-%d", i))
	}
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	if loc := cashier.location(); loc != "/pos" {
		t.Fatalf("the cashier landed on %s, want /pos", loc)
	}
	cashier.expectPage("No redemptions yet")

	// Below the minimum: refused, with the minimum in words beside the amount.
	cashier.fill("#code", strings.ToLower(coupon.Code[:6])+" "+coupon.Code[6:]) // as a person types it
	cashier.fill("#order_id", "A-1001")
	cashier.fill("#amount", "30")
	cashier.submit(`form[action="/pos/preview"] button[type="submit"]`)
	cashier.waitText("#amount-error", "Below the minimum: this coupon needs an order of at least $50.00")
	if v := eval[string](cashier, `document.querySelector("#order_id").value`); v != "A-1001" {
		t.Errorf("the form lost the order number: %q", v)
	}
	cashier.screenshot("pos-refused")

	// A valid order: the discount and the amount to pay, then redeem.
	cashier.fill("#amount", "62.50")
	cashier.submit(`form[action="/pos/preview"] button[type="submit"]`)
	cashier.waitText("[data-discount]", "−$10.00")
	cashier.waitText("[data-payable]", "$52.50")
	if got := models.CouponIssued; e.UserCoupons(t, "shopper")[0].Status != got {
		t.Fatalf("the preview changed the coupon")
	}
	cashier.screenshot("pos-preview")
	cashier.submit("[data-confirm-redeem]")
	cashier.expectPage("Redeemed on order A-1001: $10.00 off, the customer pays $52.50.")
	if c := e.UserCoupons(t, "shopper")[0]; c.Status != models.CouponUsed || c.OrderID == nil || *c.OrderID != "A-1001" {
		t.Fatalf("after the redemption the coupon is %s on %v", c.Status, c.OrderID)
	}
	cashier.waitText("[data-recent]", "A-1001")

	// The same coupon on another order: already used, with the order named.
	cashier.fill("#code", coupon.Code)
	cashier.fill("#order_id", "A-1002")
	cashier.fill("#amount", "80")
	cashier.submit(`form[action="/pos/preview"] button[type="submit"]`)
	cashier.waitText("#code-error", "Already used on order A-1001")
	cashier.open("/pos")
	cashier.screenshot("pos")

	// Refund: the coupon goes back to the shopper.
	cashier.fill("#refund-code", coupon.Code)
	cashier.fill("#refund-order", "A-1001")
	cashier.submit(`form[action="/pos/refund"] button[type="submit"]`)
	cashier.expectPage("Refunded order A-1001: the coupon is back in the customer's wallet.")
	if c := e.UserCoupons(t, "shopper")[0]; c.Status != models.CouponIssued {
		t.Fatalf("after the refund the coupon is %s, want issued", c.Status)
	}
	cashier.waitText("[data-recent]", "Refunded")

	cashier.open("/admin")
	cashier.expectPage("Not for your account")
}

// TestBrowserAdmin: an admin creates a template through the form (first with
// an invalid field, whose error shows beside it, then valid), pauses it (the
// shop shows it as not open), adds stock, runs reconcile and sees the report.
func TestBrowserAdmin(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	// Some activity for the figures and the chart.
	fixed := e.Template(t, "$5 off")
	for i := range 6 {
		e.ClaimFor(t, fixed.ID, fmt.Sprintf("early-%d", i))
	}
	c := e.ClaimFor(t, fixed.ID, "shopper")
	if _, err := e.Service.Redeem(context.Background(), checkout.RedeemRequest{CouponCode: c.Code, OrderID: "W-1",
		OrderAmountCents: 2000, Cashier: "cashier"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	if loc := admin.location(); loc != "/admin" {
		t.Fatalf("the admin landed on %s, want /admin", loc)
	}
	admin.expectPage("Spring sale")
	admin.screenshot("admin")

	// Create a template: first with a stock of 0.
	admin.run("new template", chromedp.Click(chromedp.CSS(`a[href="/admin/templates/new"]`)), chromedp.WaitVisible(chromedp.CSS("#name")))
	admin.fill("#name", "Weekend treat")
	admin.fill("#description", "Two dollars off, weekends only.")
	admin.fill("#face_value", "2.00")
	admin.fill("#total_stock", "0")
	admin.fill("#per_user_limit", "1")
	admin.run("choose the campaign", chromedp.SetValue(chromedp.CSS("#campaign_id"), fmt.Sprint(e.Demo.Campaign.ID)))
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.waitText(".has-error #total_stock + .field-error, #total_stock ~ .field-error", "from 1 to 10,000,000")
	if v := eval[string](admin, `document.querySelector("#name").value`); v != "Weekend treat" {
		t.Errorf("the form lost the name typed: %q", v)
	}
	if v := eval[string](admin, `document.querySelector("#face_value").value`); v != "2.00" {
		t.Errorf("the form lost the amount typed: %q", v)
	}
	admin.screenshot("admin-template-error")
	admin.fill("#total_stock", "3")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.expectPage("Created “Weekend treat”.")
	var created models.Template
	if err := e.Backends.DB.Where("name = ?", "Weekend treat").First(&created).Error; err != nil {
		t.Fatalf("the template is not in the database: %v", err)
	}
	if created.FaceValueCents != 200 || created.TotalStock != 3 || created.Status != models.TemplateActive {
		t.Fatalf("created %+v", created)
	}

	// A shopper has the shop open with it on offer.
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/")
	shopper.run("see the offer", chromedp.WaitVisible(chromedp.CSS(offerSel(created.ID, "[data-claim]"))))

	// Pause it: the shop no longer offers it.
	admin.submit(`form[action$="/status"] button[type="submit"]`)
	admin.expectPage("Paused “Weekend treat”: the shop no longer offers it.")
	// The page made before the pause: a click is refused, takes nothing, and the button goes.
	coupons := e.CountCoupons(t)
	shopper.run("claim the paused offer", chromedp.Click(chromedp.CSS(offerSel(created.ID, "[data-claim]")), chromedp.NodeVisible))
	shopper.waitText(offerSel(created.ID, "[data-result]"), "Not open right now (this coupon is paused).")
	shopper.waitText(offerSel(created.ID, ".offer-action"), "Not open right now")
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, offerSel(created.ID, "[data-claim]"))); n != 0 {
		t.Errorf("a paused offer has a claim button")
	}
	if n := e.CountCoupons(t); n != coupons {
		t.Errorf("%d coupons after a refused claim, want %d", n, coupons)
	}
	shopper.open("/")
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, offerSel(created.ID, ""))); n != 0 {
		t.Errorf("the shop shows the paused offer")
	}

	// Add stock, with a reason.
	admin.fill("#stock-delta", "7")
	admin.fill("#stock-reason", "more for the weekend")
	admin.submit(`form[action$="/stock"] button[type="submit"]`)
	admin.expectPage("Added 7 to “Weekend treat”: the stock is now 10.")
	admin.waitText(".details", "10")
	admin.open(fmt.Sprintf("/admin/templates/%d", fixed.ID))
	admin.waitText(".legend", "Claims (7)")
	admin.screenshot("admin-template")

	// Reconcile: Redis made to drift, the check shows it, the repair fixes it.
	key := fmt.Sprintf("%s{c%d}:t:%d", e.Prefix, fixed.CampaignID, fixed.ID)
	if err := e.Backends.Redis.HIncrBy(context.Background(), key, "remaining", 2).Err(); err != nil {
		t.Fatal(err)
	}
	admin.run("reconcile", chromedp.Click(chromedp.CSS(`nav a[href="/admin/reconcile"]`)), chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/reconcile"]`)))
	admin.submit(`form[method="get"][action="/admin/reconcile"] button`)
	admin.waitText("[data-reconcile-report]", "1 template drifted")
	admin.waitText("[data-reconcile-report] tbody", "Drift")
	admin.submit(`form[method="post"][action="/admin/reconcile"] button`)
	admin.expectPage("Repaired “$5 off your order”")
	admin.waitText("[data-reconcile-report]", "in agreement")
	admin.screenshot("admin-reconcile")

	admin.open("/admin/audit")
	admin.waitText(".audit-lines", "repaired the counters of template #")
	admin.waitText(".audit-lines", "more for the weekend")
	admin.screenshot("admin-audit")
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
