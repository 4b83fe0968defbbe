package pages_test

// Browser tests of the admin console: contrast measured on the pages as
// drawn, the menu on a phone, and the console's forms. Screenshots of the
// console pages at 375 and 1280 pixels go to $COUPON_TEST_ARTIFACTS/console
// (a temporary directory of the test when it is not set).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"

	"github.com/chromedp/chromedp"
)

// consoleArtifactsEnv names the directory the console's screenshots are
// kept in (CI keeps it as the run's artifacts).
const consoleArtifactsEnv = "COUPON_TEST_ARTIFACTS"

// consoleShots writes full-page screenshots of the page shown at a small
// phone's width (375) and a laptop's (1280) to the artifacts directory.
func (tb *tab) consoleShots(name string) {
	tb.t.Helper()
	dir := os.Getenv(consoleArtifactsEnv)
	if dir == "" {
		dir = tb.t.TempDir()
	}
	dir = filepath.Join(dir, "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	for _, width := range []int64{375, 1280} {
		ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 812), chromedp.Sleep(150*time.Millisecond)); err != nil {
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

// lowContrastScript lists the visible texts of the page whose colour, over
// the background drawn behind them (the ancestors' backgrounds, blended by
// their alpha over white), is below 4.5:1 by WCAG 2.1, one a line:
// "ratio selector «text» colour on background".
const lowContrastScript = `(function () {
  function rgba(s) {
    var m = s.match(/rgba?\(([^)]+)\)/);
    if (!m) { return [0, 0, 0, 0]; }
    var p = m[1].split(/[ ,\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  function over(top, under) {
    var a = top[3];
    return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a), top[2] * a + under[2] * (1 - a), 1];
  }
  function lum(c) {
    var l = c.slice(0, 3).map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }
  function background(el) {
    var layers = [];
    for (var n = el; n && n.nodeType === 1; n = n.parentElement) {
      var bg = rgba(getComputedStyle(n).backgroundColor);
      if (bg[3] > 0) { layers.push(bg); }
      if (bg[3] >= 1) { break; }
    }
    var c = [255, 255, 255, 1];
    for (var i = layers.length - 1; i >= 0; i--) { c = over(layers[i], c); }
    return c;
  }
  function name(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) { s += "#" + el.id; }
    if (el.className && typeof el.className === "string") { s += "." + el.className.trim().split(/\s+/).join("."); }
    return s;
  }
  var out = [];
  document.querySelectorAll("body *").forEach(function (el) {
    if (el.closest("svg") || el.disabled || !el.getClientRects().length) { return; }
    var text = Array.prototype.filter.call(el.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); })
      .map(function (n) { return n.textContent.trim(); }).join(" ");
    if (!text) { return; }
    var st = getComputedStyle(el);
    if (st.visibility !== "visible" || parseFloat(st.opacity) === 0) { return; }
    var bg = background(el), fg = over(rgba(st.color), bg);
    var a = lum(fg), b = lum(bg), ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) {
      out.push(ratio.toFixed(2) + " " + name(el) + " «" + text.slice(0, 40) + "» " + st.color + " on rgb(" + bg.slice(0, 3).map(Math.round).join(", ") + ")");
    }
  });
  return out.join("\n");
})()`

// expectReadable fails for each text of the page shown under 4.5:1.
func expectReadable(t *testing.T, tb *tab, page string) {
	t.Helper()
	if low := eval[string](tb, lowContrastScript); low != "" {
		t.Errorf("%s: text under 4.5:1 contrast:\n%s", page, low)
	}
}

// TestBrowserConsoleContrast measures every visible text of the shop, the
// login form and the console pages (a form with errors included) against
// the background drawn behind it: 4.5:1 or better, the value of an offer
// included. It also fails when a page is not there.
func TestBrowserConsoleContrast(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	visitor := b.tab("visitor")
	visitor.open("/")
	visitor.run("see an offer", chromedp.WaitVisible(chromedp.CSS(".offer-value")))
	expectReadable(t, visitor, "the shop")
	visitor.open("/login")
	visitor.submit(`form[action="/login"] button[type="submit"]`)
	expectReadable(t, visitor, "the login form with errors")

	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	for _, page := range []string{"/admin", "/admin/campaigns/new", fmt.Sprintf("/admin/campaigns/%d", e.Demo.Campaign.ID),
		"/admin/templates/new", fmt.Sprintf("/admin/templates/%d", tp.ID), fmt.Sprintf("/admin/templates/%d/jobs", tp.ID),
		"/admin/coupons", "/admin/reports", "/admin/reconcile", "/admin/tokens", "/admin/webhooks", "/admin/audit"} {
		admin.open(page)
		if strings.Contains(admin.pageText(), "There is no ") {
			t.Fatalf("%s: not found", page)
		}
		expectReadable(t, admin, page)
	}
	admin.open("/admin/templates/new")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	expectReadable(t, admin, "the template form with errors")
}

// TestBrowserAdminMenuOnPhone: on a 375 px wide screen every link of the
// admin menu is on the screen, none cut off or scrolled out of sight, and
// the page does not scroll sideways.
func TestBrowserAdminMenuOnPhone(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.run("a phone's screen", chromedp.EmulateViewport(375, 812))
	admin.open("/admin")
	off := eval[string](admin, `(function () {
	  var out = [];
	  document.querySelectorAll(".nav a").forEach(function (a) {
	    var r = a.getBoundingClientRect();
	    if (r.left < 0 || r.right > window.innerWidth || r.width === 0) {
	      out.push(a.textContent.trim() + " at " + Math.round(r.left) + "-" + Math.round(r.right));
	    }
	  });
	  return out.join(", ");
	})()`)
	if off != "" {
		t.Errorf("menu links not on a 375 px screen: %s", off)
	}
	if n := eval[int](admin, `document.querySelectorAll(".nav a").length`); n != 8 {
		t.Errorf("the admin menu has %d links, want 8", n)
	}
	if w := eval[int](admin, `document.documentElement.scrollWidth`); w > 375 {
		t.Errorf("the page is %d px wide on a 375 px screen", w)
	}
	admin.consoleShots("admin-menu")
}

// activeID is the id of the element that has the keyboard.
func activeID(tb *tab) string {
	tb.t.Helper()
	return eval[string](tb, `document.activeElement ? document.activeElement.id : ""`)
}

// TestBrowserConsoleFocusAndArchive: a form answered with mistakes puts the
// keyboard on its first field in error (the campaign form's budget when the
// name is right; the template form's first wrong field); Archive asks first,
// saying what it does, and a "no" changes nothing.
func TestBrowserConsoleFocusAndArchive(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])

	admin.open("/admin/campaigns/new")
	admin.fill("#name", "Winter sale")
	admin.fill("#budget", "lots")
	admin.submit(`form[action="/admin/campaigns"] button[type="submit"]`)
	expectFieldError(t, admin, "#budget", "Enter an amount, such as 12.50.")
	if id := activeID(admin); id != "budget" {
		t.Errorf("after a wrong budget the keyboard is on %q, want budget", id)
	}

	admin.open("/admin/templates/new")
	admin.run("choose the campaign", chromedp.SetValue(chromedp.CSS("#campaign_id"), fmt.Sprint(e.Demo.Campaign.ID)))
	admin.fill("#name", "Ten off")
	admin.fill("#face_value", "ten")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	first := eval[string](admin, `document.querySelector('main form [aria-invalid="true"]').id`)
	if id := activeID(admin); id != first || id == "" || id == "name" {
		t.Errorf("after the template form's mistakes the keyboard is on %q, want the first wrong field %q", id, first)
	}
	admin.consoleShots("template-form-errors")

	// Archive asks first, saying what it does; "no" keeps the template.
	admin.open(fmt.Sprintf("/admin/templates/%d", tp.ID))
	admin.run("answer no", chromedp.Evaluate[chromedp.Void](
		`window.asked = ""; window.confirm = function (q) { window.asked = q; return false; }`))
	admin.run("press Archive", chromedp.Click(chromedp.CSS(`form[data-archive] button[type="submit"]`), chromedp.NodeVisible))
	asked := eval[string](admin, `window.asked`)
	for _, want := range []string{"Archive “" + tp.Name + "”?", "takes no claims again", "cannot be undone", "stay usable"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the archive question %q does not say %q", asked, want)
		}
	}
	if st := e.TemplateStatus(t, tp.ID); st != "active" {
		t.Fatalf("after answering no the template is %s, want active", st)
	}
	admin.run("answer yes", chromedp.Evaluate[chromedp.Void](`window.confirm = function () { return true; }`))
	admin.submit(`form[data-archive] button[type="submit"]`)
	admin.expectPage("Archived “" + tp.Name + "”")
	if st := e.TemplateStatus(t, tp.ID); st != "archived" {
		t.Fatalf("after answering yes the template is %s, want archived", st)
	}
}

// sendFormTwice posts the form sel twice at once from the page, as a double
// click that got through would: the same fields, the same form token.
func sendFormTwice(tb *tab, sel string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(async function () {
	  var form = document.querySelector(%q);
	  var send = function () {
	    return fetch(form.action, { method: "POST", credentials: "same-origin", redirect: "manual",
	      body: new URLSearchParams(new FormData(form)) }).then(function (r) { return r.type + " " + r.status; });
	  };
	  return (await Promise.all([send(), send()])).join(", ");
	})()`, sel), chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("%s: post %s twice: %v", tb.name, sel, err)
	}
	tb.t.Logf("two posts of %s: %s", sel, got)
}

// countRows counts the rows of a model's table.
func countRows(t *testing.T, e *testsupport.PageEnv, model any) int64 {
	t.Helper()
	var n int64
	if err := e.Backends.DB.Model(model).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBrowserCreateOnce: the campaign and the template forms sent twice at
// once, and then a third time by their button, create one campaign and one
// template; the third send says it was done already and goes where the
// first went. A form refused for a mistake and then corrected creates one.
func TestBrowserCreateOnce(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])

	campaigns := countRows(t, e, &models.Campaign{})
	admin.open("/admin/campaigns/new")
	admin.fill("#name", "Once only")
	admin.fill("#budget", "100.00")
	sendFormTwice(admin, `form[action="/admin/campaigns"]`)
	if n := countRows(t, e, &models.Campaign{}); n != campaigns+1 {
		t.Fatalf("%d campaigns after two sends of one form, want %d", n, campaigns+1)
	}
	admin.submit(`form[action="/admin/campaigns"] button[type="submit"]`)
	admin.expectPage("Already created: this form had been sent before, so nothing was made again.")
	if loc := admin.location(); !strings.HasPrefix(loc, "/admin/templates/new?campaign=") {
		t.Errorf("the third send went to %s, want the new template form of the campaign", loc)
	}
	if n := countRows(t, e, &models.Campaign{}); n != campaigns+1 {
		t.Fatalf("%d campaigns after three sends of one form, want %d", n, campaigns+1)
	}

	// The template form: refused once (no name), corrected, then sent twice.
	templates := e.CountTemplates(t)
	admin.fill("#name", " ")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	expectFieldError(t, admin, "#name", "Enter a name")
	admin.fill("#name", "Two off")
	admin.fill("#face_value", "2.00")
	sendFormTwice(admin, `form[data-template-form]`)
	if n := e.CountTemplates(t); n != templates+1 {
		t.Fatalf("%d templates after two sends of one form, want %d", n, templates+1)
	}
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.expectPage("Already created: this form had been sent before, so nothing was made again.")
	admin.waitText("h1", "Two off")
	if n := e.CountTemplates(t); n != templates+1 {
		t.Fatalf("%d templates after three sends of one form, want %d", n, templates+1)
	}
	// A new form is a new token: it creates again.
	admin.open("/admin/campaigns/new")
	admin.fill("#name", "Once more")
	admin.submit(`form[action="/admin/campaigns"] button[type="submit"]`)
	if n := countRows(t, e, &models.Campaign{}); n != campaigns+2 {
		t.Fatalf("%d campaigns after a second form, want %d", n, campaigns+2)
	}
}

// recordCopies makes the page's clipboard keep what is copied in
// window.copied, so that the test can read it.
func recordCopies(tb *tab) {
	tb.t.Helper()
	tb.run("record copies", chromedp.Evaluate[chromedp.Void](`window.copied = "";
	  Object.defineProperty(navigator, "clipboard", { configurable: true,
	    value: { writeText: function (s) { window.copied = s; return Promise.resolve(); } } });`))
}

// TestBrowserTokens: an admin makes an API token in the console (a blank
// name refused beside the field), sees its secret once with a copy button
// that copies it, the token works on the API, the list does not show the
// secret again, and a revoke from the list stops it.
func TestBrowserTokens(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	tokens := countRows(t, e, &models.APIToken{})

	admin.open("/admin/tokens")
	admin.submit(`form[action="/admin/tokens"] button[type="submit"]`)
	expectFieldError(t, admin, "#token-name", "Enter a name")
	if n := countRows(t, e, &models.APIToken{}); n != tokens {
		t.Fatalf("%d tokens after a refused form, want %d", n, tokens)
	}
	admin.fill("#token-name", "nightly export")
	admin.run("choose admin", chromedp.SetValue(chromedp.CSS("#token-role"), "admin"))
	admin.submit(`form[action="/admin/tokens"] button[type="submit"]`)
	secret := admin.text("#token-secret")
	if n := countRows(t, e, &models.APIToken{}); n != tokens+1 || secret == "" {
		t.Fatalf("%d tokens after making one (secret %q), want %d", n, secret, tokens+1)
	}
	recordCopies(admin)
	admin.run("copy", chromedp.Click(chromedp.CSS(`#token-created button[data-copy]`), chromedp.NodeVisible))
	admin.waitText(`#token-created button[data-copy]`, "Copied")
	if got := eval[string](admin, `window.copied`); got != secret {
		t.Errorf("copied %q, want the secret %q", got, secret)
	}
	admin.consoleShots("tokens-created")
	api := func() int {
		req, _ := http.NewRequest("GET", e.Srv.URL+"/api/v1/tokens", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := api(); st != http.StatusOK {
		t.Fatalf("the new token on the API: %d, want 200", st)
	}

	admin.open("/admin/tokens")
	if strings.Contains(admin.pageText(), secret) {
		t.Fatal("the list shows the secret again")
	}
	row := admin.text(`[data-token]`)
	if !strings.Contains(row, "nightly export") || !strings.Contains(row, "Live") {
		t.Fatalf("the newest token's row: %s", row)
	}
	admin.submit(`[data-token] form[action$="/revoke"] button[type="submit"]`)
	admin.expectPage("Revoked the token \"nightly export\"")
	admin.waitText(`[data-token]`, "Revoked")
	if st := api(); st != http.StatusUnauthorized {
		t.Fatalf("the revoked token on the API: %d, want 401", st)
	}
}

// TestBrowserTemplateFormCodes: the template form shows the shared code
// field only when a shared code is chosen, and shows the stacking setting;
// a shared, combinable template is created as chosen and its page says so.
func TestBrowserTemplateFormCodes(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/templates/new")
	visible := func(sel string) bool {
		return eval[bool](admin, fmt.Sprintf(`(function(){var e=document.querySelector(%q);return !!e && e.getClientRects().length>0;})()`, sel))
	}
	if visible("#shared_code") {
		t.Error("the shared code field shows while each shopper gets a code of their own")
	}
	if !visible("#stacking") {
		t.Fatal("the form does not show the stacking setting")
	}
	if v := eval[string](admin, `document.querySelector("#stacking").value`); v != "exclusive" {
		t.Errorf("stacking starts as %q, want exclusive", v)
	}
	admin.run("choose a shared code", chromedp.SetValue(chromedp.CSS("#code_mode"), "shared"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#code_mode").dispatchEvent(new Event("change", {bubbles: true}))`))
	if !visible("#shared_code") {
		t.Fatal("the shared code field is hidden after choosing a shared code")
	}
	admin.run("choose the campaign", chromedp.SetValue(chromedp.CSS("#campaign_id"), fmt.Sprint(e.Demo.Campaign.ID)))
	admin.fill("#name", "Shared three off")
	admin.fill("#face_value", "3.00")
	admin.fill("#shared_code", "three-off")
	admin.run("combinable", chromedp.SetValue(chromedp.CSS("#stacking"), "combinable"))
	admin.consoleShots("template-form-shared")
	admin.submit(`form[data-template-form] button[type="submit"]`)
	admin.expectPage("Created “Shared three off”.")
	var tp models.Template
	if err := e.Backends.DB.Where("name = ?", "Shared three off").First(&tp).Error; err != nil {
		t.Fatal(err)
	}
	if tp.CodeMode != models.CodeModeShared || tp.SharedCode != "THREEOFF" || tp.Stacking != models.StackingCombinable {
		t.Fatalf("created %s/%q/%s, want shared/THREEOFF/combinable", tp.CodeMode, tp.SharedCode, tp.Stacking)
	}
	admin.waitText("[data-stacking]", "May join other coupons")
	admin.waitText("[data-shared-code]", "THREEOFF")
}

// TestBrowserConsoleWords: the console's figures speak the admin's words:
// no "slot", "in flight" or Redis on the console, a template's page, a
// campaign's page or the reconcile page (its report of a drift and the
// repair's message included, and no formula there), and the sums still read
// as sums.
func TestBrowserConsoleWords(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := e.Template(t, "$5 off")
	e.ClaimFor(t, tp.ID, "words-1")
	// A drift, so that the reconcile page shows its report and its repair.
	key := fmt.Sprintf("%s{c%d}:t:%d", e.Prefix, tp.CampaignID, tp.ID)
	if err := e.Backends.Redis.HIncrBy(context.Background(), key, "remaining", 2).Err(); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	noJargon := func(page string, formulas bool) {
		t.Helper()
		text := strings.ToLower(admin.pageText())
		words := []string{"slot", "in flight", "in-flight", "redis", "database"}
		if formulas {
			words = append(words, "−", " = ", " + ")
		}
		for _, jargon := range words {
			if i := strings.Index(text, jargon); i >= 0 {
				t.Errorf("%s says %q: …%s…", page, jargon, text[max(0, i-60):min(len(text), i+60)])
			}
		}
	}
	for _, page := range []string{"/admin", fmt.Sprintf("/admin/templates/%d", tp.ID), fmt.Sprintf("/admin/campaigns/%d", e.Demo.Campaign.ID)} {
		admin.open(page)
		noJargon(page, false)
	}
	admin.open("/admin/reconcile?run=1")
	admin.waitText("[data-reconcile-report]", "1 template drifted")
	admin.waitText("[data-reconcile-report] thead", "Using stock")
	admin.waitText("[data-reconcile-report] thead", "Being claimed now")
	admin.waitText("[data-reconcile-report] thead", "Left by the fast counter")
	noJargon("/admin/reconcile?run=1", true)
	admin.submit(`form[method="post"][action="/admin/reconcile"] button`)
	admin.expectPage("Repaired “$5 off your order”: the fast counter had 1001 left where the coupons on record leave 999. Its stock was counted again from the coupons on record.")
	noJargon("the repair's page", true)
	admin.consoleShots("reconcile-words")

	admin.open(fmt.Sprintf("/admin/templates/%d", tp.ID))
	admin.waitText(`[data-sum="claimed"]`, "1 claimed = 1 using stock + 0 revoked, stock given back")
	admin.consoleShots("template-figures")
}

// TestBrowserWebhookTestEvent: an admin registers an endpoint (its secret
// shown once, copied by its button), sends it a test event from its page:
// the receiver gets exactly one webhook.test, signed, and the delivery log
// shows the try with the answer, and the payload under it; the audit log
// says it as a sentence.
func TestBrowserWebhookTestEvent(t *testing.T) {
	e := testsupport.NewPageEnvWith(t, services.Config{EventsConfig: services.EventsConfig{WebhookAllowPrivate: true}})
	var mu sync.Mutex
	var got []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Header.Get(models.SignatureHeader)+" "+string(body))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer rcv.Close()
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/webhooks")
	admin.fill("#url", rcv.URL+"/hook")
	admin.run("only template.paused", chromedp.Click(chromedp.CSS(`input[value="template.paused"]`), chromedp.NodeVisible))
	admin.submit(`form[action="/admin/webhooks"] button[type="submit"]`)
	secret := admin.text("#webhook-secret")
	recordCopies(admin)
	admin.run("copy", chromedp.Click(chromedp.CSS(`#webhook-created button[data-copy]`), chromedp.NodeVisible))
	admin.waitText(`#webhook-created button[data-copy]`, "Copied")
	if c := eval[string](admin, `window.copied`); c != secret || !strings.HasPrefix(secret, "whsec_") {
		t.Errorf("copied %q, want the secret %q", c, secret)
	}
	admin.consoleShots("webhook-created")

	admin.submit(`[data-webhook] a[href^="/admin/webhooks/"]`)
	admin.submit(`form[data-test-event] button[type="submit"]`)
	admin.expectPage("Sent a test event")
	if n, err := e.Service.DispatchOnce(context.Background()); n != 1 || err != nil {
		t.Fatalf("dispatch = %d, %v; want 1 delivery", n, err)
	}
	mu.Lock()
	if len(got) != 1 || !strings.Contains(got[0], `"type":"webhook.test"`) || !strings.HasPrefix(got[0], "t=") {
		t.Errorf("the receiver got %q, want one signed webhook.test", got)
	}
	mu.Unlock()
	admin.open(admin.location())
	row := admin.text(`#delivery-log [data-attempt]`)
	if !strings.Contains(row, "webhook.test") || !strings.Contains(row, "202") || !strings.Contains(row, "Delivered") {
		t.Errorf("the log's row: %s, want webhook.test delivered with 202", row)
	}
	admin.run("open the payload", chromedp.Click(chromedp.CSS(`[data-delivery-detail] summary`), chromedp.NodeVisible))
	payload := admin.text(`[data-payload]`)
	if !strings.Contains(payload, `"endpoint_id"`) || !strings.Contains(payload, `"actor": "admin"`) {
		t.Errorf("the payload shown: %s", payload)
	}
	admin.waitText(`[data-delivery-detail]`, "Answer: HTTP 202")
	admin.consoleShots("webhook-log")
	admin.open("/admin/audit?action=webhook.")
	admin.waitText(".audit-lines", "admin sent a test event to webhook #")
	admin.waitText(".audit-lines", "admin registered webhook #")
}
