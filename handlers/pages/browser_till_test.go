package pages_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// waitTrue waits until the script expression expr is true.
func (tb *tab) waitTrue(what, expr string) {
	tb.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		// An evaluation that meets a page being replaced (a form sent, a
		// redirect followed) is tried again, not a failure.
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("%s: %s never happened (%s)\npage text: %s", tb.name, what, expr, tb.pageText())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// focused describes the focused element: its id, or its tag.
func (tb *tab) focused() string {
	tb.t.Helper()
	return eval[string](tb, `(function(){var e=document.activeElement;return e?(e.id||e.tagName.toLowerCase()):"";})()`)
}

// selection is the selected text of the focused field.
func (tb *tab) selection() string {
	tb.t.Helper()
	return eval[string](tb, `(function(){var e=document.activeElement;`+
		`return e&&typeof e.selectionStart==="number"?e.value.substring(e.selectionStart,e.selectionEnd):"";})()`)
}

// keys types keys into whatever has the focus: key events only, as a
// keyboard or a hand scanner sends them.
func (tb *tab) keys(keys string) {
	tb.t.Helper()
	tb.run(fmt.Sprintf("type %q", keys), chromedp.KeyEvent(keys))
}

// enter presses Enter on the focused element and waits for the page that
// follows (a form sent, a link followed).
func (tb *tab) enter() {
	tb.t.Helper()
	tb.keyToPage(kb.Enter)
}

// keyToPage presses keys and waits for the page they load.
func (tb *tab) keyToPage(keys string) {
	tb.t.Helper()
	eval[bool](tb, `(window.__stale = true)`)
	tb.keys(keys)
	tb.waitTrue(fmt.Sprintf("a new page after %q", keys), `!window.__stale && document.readyState === "complete"`)
}

// expectFocus checks that the element with id want has the focus.
func (tb *tab) expectFocus(want string) {
	tb.t.Helper()
	if got := tb.focused(); got != want {
		tb.t.Fatalf("%s: the focus is on %q, want %q\npage text: %s", tb.name, got, want, tb.pageText())
	}
}

// shiftTab presses Shift+Tab: the focus goes back one element.
func (tb *tab) shiftTab() {
	tb.t.Helper()
	tb.run("Shift+Tab", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
}

// grouped writes a code as the pages show it.
func grouped(code string) string { return code[:4] + "-" + code[4:8] + "-" + code[8:] }

// value is the value of the form field sel.
func (tb *tab) value(sel string) string {
	tb.t.Helper()
	return eval[string](tb, fmt.Sprintf(`document.querySelector(%q).value`, sel))
}

// count counts the elements that match sel.
func (tb *tab) count(sel string) int {
	tb.t.Helper()
	return eval[int](tb, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// TestBrowserPOSKeyboard: a whole checkout with the keyboard alone (key
// events only: typing, Tab, Enter), as a cashier with a hand scanner works.
// An error focuses the wrong field with its text selected, so that the next
// scan replaces it; a preview focuses Redeem, so that Enter redeems; Cancel
// keeps the order; a coupon already redeemed on the order says so, with no
// Redeem button; a capped percent says it is capped; a refund's error stays
// in the refund form; an online order's hold is confirmed, and another
// released, from the keyboard.
func TestBrowserPOSKeyboard(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.ClaimFor(t, e.Template(t, "$10 off orders").ID, "shopper")
	percent := e.ClaimFor(t, e.Template(t, "15%").ID, "shopper")
	fixed := e.Template(t, "$5 off")
	held1, held2 := e.ClaimFor(t, fixed.ID, "shopper2"), e.ClaimFor(t, fixed.ID, "shopper3")
	e.HoldFor(t, "web-9", 3000, "shopper2", held1.Code)
	e.HoldFor(t, "web-10", 3000, "shopper3", held2.Code)
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	if loc := cashier.location(); loc != "/pos" {
		t.Fatalf("the cashier landed on %s, want /pos", loc)
	}
	cashier.expectFocus("code")

	// Below the minimum: the amount is focused with its text selected, so
	// the right amount typed replaces it.
	cashier.keys(threshold.Code + kb.Tab + "30" + kb.Tab + "K-1")
	cashier.enter()
	if got := cashier.text("#amount-error"); got != "Below the minimum: this coupon needs an order of at least $50.00." {
		t.Errorf("below the minimum: %q", got)
	}
	cashier.expectFocus("amount")
	if sel := cashier.selection(); sel != "30" {
		t.Errorf("the amount's selected text is %q, want all of it", sel)
	}
	cashier.keys("62.50")
	cashier.enter()
	cashier.expectFocus("code")
	if got := cashier.text("[data-payable]"); got != "$52.50" {
		t.Errorf("to pay: %q", got)
	}
	cashier.enter() // on the empty code field: redeems what is previewed
	cashier.expectPage("Redeemed on order K-1: $10.00 off, the customer pays $52.50.")
	cashier.expectFocus("code")
	if c, err := e.Service.GetCoupon(context.Background(), threshold.Code); err != nil ||
		c.Coupon.Status != models.CouponUsed || c.Coupon.OrderID == nil || *c.Coupon.OrderID != "K-1" {
		t.Fatalf("after Enter on Redeem the coupon is %+v (%v), want used on K-1", c, err)
	}

	// The same coupon checked again on the same order: already redeemed on
	// it, with its amounts, and nothing to confirm.
	cashier.keys(threshold.Code + kb.Tab + "62.50" + kb.Tab + "K-1")
	cashier.enter()
	if got := cashier.text("[data-already-redeemed]"); got != "Already redeemed on this order: nothing more to do." {
		t.Errorf("re-check on the same order: %q", got)
	}
	if n := cashier.count("[data-confirm-redeem]"); n != 0 {
		t.Errorf("a coupon already redeemed on this order has a Redeem button")
	}
	cashier.expectFocus("pos-next")
	cashier.screenshot("pos-already-redeemed")
	cashier.expectFocus("pos-next")
	cashier.enter()
	cashier.expectFocus("code")

	// A code that is no coupon: the error selects the code, so the next
	// scan replaces it instead of being appended to it.
	cashier.keys(models.NewCouponCode() + kb.Tab + "200" + kb.Tab + "K-2")
	cashier.enter()
	if got := cashier.text("#code-error"); got != "No coupon has this code. Check it and try again." {
		t.Errorf("unknown code: %q", got)
	}
	cashier.expectFocus("code")
	if sel, v := cashier.selection(), cashier.value("#code"); sel == "" || sel != v {
		t.Errorf("after the error the code field holds %q with %q selected, want all of it selected", v, sel)
	}
	cashier.keys(percent.Code + kb.Enter)
	cashier.waitText("[data-preview]", "Code "+grouped(percent.Code))
	cashier.expectFocus("code")
	if got := cashier.text("[data-capped]"); got != "15% of $200.00 is $30.00, capped at $20.00." {
		t.Errorf("capped percent: %q", got)
	}
	if got := cashier.text("[data-discount]"); got != "−$20.00" {
		t.Errorf("capped discount: %q", got)
	}
	cashier.screenshot("pos-capped")
	cashier.expectFocus("code")

	// Cancel (Shift+Tab from the code field, Enter): the order stays, the
	// code goes.
	cashier.shiftTab()
	cashier.expectFocus("pos-cancel")
	cashier.enter()
	if o, a, c := cashier.value("#order_id"), cashier.value("#amount"), cashier.value("#code"); o != "K-2" || a != "200" || c != "" {
		t.Errorf("after Cancel: order %q, amount %q, code %q; want K-2, 200 and no code", o, a, c)
	}
	cashier.expectFocus("code")
	if s := e.UserCoupons(t, "shopper"); len(s) != 2 {
		t.Fatalf("the shopper has %d coupons", len(s))
	}
	if c, _ := e.Service.GetCoupon(context.Background(), percent.Code); c.Coupon.Status != models.CouponIssued {
		t.Fatalf("Cancel changed the coupon: %s", c.Coupon.Status)
	}

	// A refund refused: the focus stays in the refund form, on its wrong
	// field. (The refund form comes after the sale's item rows: the
	// keyboard is put on its code field here.)
	eval[bool](cashier, `(document.getElementById("refund-code").focus(), true)`)
	cashier.expectFocus("refund-code")
	cashier.keys(threshold.Code + kb.Tab + "K-9")
	cashier.enter()
	if got := cashier.text("#refund-order-error"); got != "Order K-9 does not hold this coupon: order K-1 does." {
		t.Errorf("refund refused: %q", got)
	}
	cashier.expectFocus("refund-order")
	if sel := cashier.selection(); sel != "K-9" {
		t.Errorf("the refund's order field has %q selected, want K-9", sel)
	}
	// The right order typed over it: refunded.
	cashier.keys("K-1")
	cashier.enter()
	cashier.expectPage("Refunded order K-1: the coupon is back in the customer's wallet.")
	if c, _ := e.Service.GetCoupon(context.Background(), threshold.Code); c.Coupon.Status != models.CouponIssued {
		t.Fatalf("after the refund the coupon is %s", c.Coupon.Status)
	}

	// Online orders: look the order up, Enter confirms; the next order typed
	// over the last, Tab to Release, Enter releases.
	cashier.open("/pos/hold")
	cashier.expectFocus("hold-order")
	cashier.keys("web-9")
	cashier.enter()
	cashier.expectFocus("hold-confirm")
	cashier.enter()
	cashier.expectPage("Confirmed order web-9: 1 coupon redeemed, $5.00 off, $25.00 to pay.")
	cashier.expectFocus("hold-order")
	if sel := cashier.selection(); sel != "web-9" {
		t.Errorf("after the confirm the order field has %q selected, want web-9", sel)
	}
	cashier.keys("web-10")
	cashier.enter()
	cashier.waitText("[data-hold-state]", "Order web-10: held, until")
	cashier.keys(kb.Tab)
	cashier.expectFocus("hold-release")
	cashier.enter()
	cashier.expectPage("Released order web-10: its coupons are back in the customers' wallets.")
	if s := e.UserCoupons(t, "shopper2")[0].Status; s != models.CouponUsed {
		t.Errorf("web-9's coupon is %s, want used", s)
	}
	if s := e.UserCoupons(t, "shopper3")[0].Status; s != models.CouponIssued {
		t.Errorf("web-10's coupon is %s, want issued", s)
	}
}
