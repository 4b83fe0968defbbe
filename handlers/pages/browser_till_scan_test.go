package pages_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp/kb"
)

// keyCounter types into a tab and counts the keystrokes (a character, Tab
// and Enter are one each), as a cashier's hands make them.
type keyCounter struct {
	tb *tab
	n  int
}

// keys types keys into what has the focus.
func (k *keyCounter) keys(keys string) {
	k.n += utf8.RuneCountInString(keys)
	k.tb.keys(keys)
}

// enter presses Enter and waits for the page it loads.
func (k *keyCounter) enter() {
	k.n++
	k.tb.enter()
}

// scan is a hand scanner reading code: it types the code, then Enter, and
// the page that answers is waited for. Its keys are not the cashier's, so
// they are not counted.
func (k *keyCounter) scan(code string) {
	k.tb.t.Helper()
	k.tb.keyToPage(code + kb.Enter)
}

// TestBrowserPOSScanner: the scanner's flow at the till, keyboard only. A
// scan previews; Enter on the empty code field redeems exactly what is
// previewed; the total may come before or after the code; a second scan
// while a preview is open replaces it and never redeems the first coupon;
// the keyboard is back on the code field after every answer. A coupon held
// for an online order says for which order until when, in the zone's time
// and in words, and cannot be redeemed; a used one is refunded from its scan
// with Tab and Enter. The keystrokes are counted: at most 4 for a
// redemption after the scan, at most 6 for a refund.
func TestBrowserPOSScanner(t *testing.T) {
	e := testsupport.NewZonedEnv(t, "2026-07-01T14:00:00Z")
	fixed := e.Template(t, "$5 off")
	first := e.ClaimFor(t, fixed.ID, "shopper")
	threshold := e.ClaimFor(t, e.Template(t, "$10 off orders").ID, "shopper")
	percent := e.ClaimFor(t, e.Template(t, "15%").ID, "shopper")
	second := e.ClaimFor(t, fixed.ID, "shopper2")
	held := e.ClaimFor(t, fixed.ID, "shopper3")
	e.HoldFor(t, "web-7", 3000, "shopper3", held.Code)
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.expectFocus("code")
	tillOrder := cashier.value("#order_id")
	if !strings.HasPrefix(tillOrder, "T-") || len(tillOrder) != 12 {
		t.Fatalf("the till's order number is %q, want T- and 10 hex digits", tillOrder)
	}

	// The total after the code: the scan asks for the total, the total and
	// Enter preview, Enter on the code field redeems.
	k := &keyCounter{tb: cashier}
	k.scan(first.Code)
	if got := cashier.text("#amount-error"); got != "Enter an amount, such as 12.50." {
		t.Errorf("a scan without a total: %q", got)
	}
	cashier.expectFocus("amount")
	k.keys("30")
	k.enter()
	cashier.expectFocus("code")
	if got := cashier.text("[data-payable]"); got != "$25.00" {
		t.Errorf("to pay: %q", got)
	}
	if got := cashier.text("[data-next-step]"); got != "Enter redeems the coupon above; scanning another code checks it instead." {
		t.Errorf("the next step: %q", got)
	}
	k.enter()
	cashier.expectPage("Redeemed on order " + tillOrder + ": $5.00 off, the customer pays $25.00.")
	cashier.expectFocus("code")
	afterCode := k.n
	t.Logf("a redemption with the total typed after the scan: %d keystrokes after the scan", afterCode)
	if afterCode != 4 {
		t.Errorf("a redemption took %d keystrokes after the scan, want 4", afterCode)
	}
	if c := e.UserCoupons(t, "shopper"); status(c, first.Code) != models.CouponUsed {
		t.Fatalf("the first coupon is %s, want used", status(c, first.Code))
	}
	// The sale keeps its number until "Next customer", which starts a new one.
	if kept := cashier.value("#order_id"); kept != tillOrder {
		t.Errorf("after the redemption the sale's number is %q, want %s kept", kept, tillOrder)
	}
	cashier.open("/pos")
	if next := cashier.value("#order_id"); next == tillOrder || !strings.HasPrefix(next, "T-") {
		t.Errorf("the next sale's order number is %q, want a new one (the last was %s)", next, tillOrder)
	}

	// The total before the code; then a second scan while the preview is
	// open replaces it: Enter redeems the second coupon, never the first.
	tillOrder = cashier.value("#order_id")
	k = &keyCounter{tb: cashier}
	k.keys(kb.Tab + "62.50")
	k.enter()
	if got := cashier.text("[data-notice]"); got != "Order "+tillOrder+", total $62.50: scan the coupon." {
		t.Errorf("a total before the code: %q", got)
	}
	cashier.expectFocus("code")
	before := k.n
	k.scan(percent.Code)
	cashier.waitText("[data-preview]", "Code "+grouped(percent.Code))
	cashier.expectFocus("code")
	k.scan(threshold.Code)
	cashier.waitText("[data-preview]", "Code "+grouped(threshold.Code))
	cashier.expectFocus("code")
	if got := cashier.text("[data-payable]"); got != "$52.50" {
		t.Errorf("to pay after the second scan: %q", got)
	}
	k.enter()
	cashier.expectPage("Redeemed on order " + tillOrder + ": $10.00 off, the customer pays $52.50.")
	cashier.expectFocus("code")
	afterScan := k.n - before
	t.Logf("a redemption with the total typed before the scan: %d keystrokes before it, %d after it", before, afterScan)
	if before != 7 || afterScan != 1 {
		t.Errorf("a redemption with the total first took %d keystrokes before the scan and %d after, want 7 and 1", before, afterScan)
	}
	mine := e.UserCoupons(t, "shopper")
	if status(mine, threshold.Code) != models.CouponUsed || status(mine, percent.Code) != models.CouponIssued {
		t.Fatalf("after the second scan and Enter: the second coupon is %s (want used), the first %s (want issued)",
			status(mine, threshold.Code), status(mine, percent.Code))
	}

	// A total changed after the preview is checked again, not redeemed. On
	// a new sale: the last one keeps its number and its coupon, which the
	// order's payable counts.
	cashier.open("/pos")
	cashier.keys(kb.Tab + "40")
	cashier.enter()
	cashier.scanCode(percent.Code)
	cashier.waitText("[data-payable]", "$34.00")
	cashier.keys(kb.Tab + "50")
	cashier.enter()
	cashier.waitText("[data-payable]", "$42.50")
	cashier.expectFocus("code")
	if s := e.CouponStatus(t, percent.Code); s != models.CouponIssued {
		t.Fatalf("a total changed after the preview redeemed the coupon: %s", s)
	}
	cashier.open("/pos")

	// Held for an online order: said with the order and until when, in the
	// deployment's zone and in words; no Redeem.
	cashier.keys(kb.Tab + "30")
	cashier.enter()
	cashier.scanCode(held.Code)
	if got := cashier.text("#code-error"); got != "Held for online order web-7 until 1 Jul 2026, 10:10:00 EDT (in 10 minutes): "+
		"confirm or release it under online orders; it cannot be redeemed here while it is held." {
		t.Errorf("a held coupon: %q", got)
	}
	if n := cashier.count("[data-confirm-redeem]"); n != 0 {
		t.Errorf("a held coupon has a Redeem button")
	}
	cashier.expectFocus("code")
	if s := e.CouponStatus(t, held.Code); s != models.CouponHeld {
		t.Fatalf("the held coupon is %s after its scan", s)
	}

	// A used coupon scanned: it says where it was used, and Tab, Enter
	// refund that order.
	k = &keyCounter{tb: cashier}
	k.scan(first.Code)
	if got := cashier.text("#code-error"); !strings.HasPrefix(got, "Already used on order ") {
		t.Errorf("a used coupon: %q", got)
	}
	cashier.expectFocus("code")
	k.keys(kb.Tab)
	cashier.expectFocus("refund-offer")
	k.enter()
	cashier.expectPage("Refunded order ")
	cashier.expectFocus("code")
	t.Logf("a refund: %d keystrokes after the scan", k.n)
	if k.n != 2 {
		t.Errorf("a refund took %d keystrokes after the scan, want 2", k.n)
	}
	if s := e.CouponStatus(t, first.Code); s != models.CouponIssued {
		t.Fatalf("after the refund the coupon is %s, want issued", s)
	}
	if s := e.CouponStatus(t, second.Code); s != models.CouponIssued {
		t.Fatalf("another shopper's coupon changed: %s", s)
	}
}

// scanCode is a scan whose keys are not counted.
func (tb *tab) scanCode(code string) {
	tb.t.Helper()
	tb.keyToPage(code + kb.Enter)
}

// status is the status of the coupon with code among coupons, "" when none.
func status(coupons []models.CouponView, code string) string {
	for _, c := range coupons {
		if c.Code == code {
			return c.Status
		}
	}
	return ""
}

// TestBrowserPOSReturnPreview: a partial return, keyboard only, shows what
// it will claw back before it is recorded: the amount kept, the discount
// kept and the discount taken back; Enter records it, Cancel records
// nothing.
func TestBrowserPOSReturnPreview(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.ClaimFor(t, e.Template(t, "$10 off orders").ID, "shopper")
	if _, err := e.Service.Redeem(context.Background(), redeemRequest(threshold.Code, "R-1", 8000)); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.open("/pos/hold")
	cashier.expectFocus("hold-order")

	// $40 of $80 back: the $40 kept is under the coupon's $50 minimum, so
	// its $10 is taken back; said before anything is recorded.
	cashier.keys(kb.Tab + kb.Tab + "R-1" + kb.Tab + "r-1" + kb.Tab + "40")
	cashier.enter()
	if got := cashier.text("[data-return-preview]"); !strings.Contains(got, "Return r-1 of order R-1: nothing is recorded until you confirm.") ||
		cashier.text("[data-return-kept]") != "$40.00" || cashier.text("[data-return-discount]") != "−$0.00" ||
		cashier.text("[data-return-clawback]") != "$10.00" {
		t.Errorf("the return's preview: %q", got)
	}
	cashier.expectFocus("return-confirm")
	if lg, found, err := e.Service.UseLog(context.Background(), threshold.ID, "R-1"); err != nil || !found || lg.DiscountCents != 1000 {
		t.Fatalf("after the preview the redemption is %+v (found %v, %v), want its $10.00 discount unchanged", lg, found, err)
	}
	cashier.screenshot("pos-return-preview")

	// Cancel: nothing recorded.
	cashier.keys(kb.Tab)
	cashier.expectFocus("return-cancel")
	cashier.enter()
	if lg, _, _ := e.Service.UseLog(context.Background(), threshold.ID, "R-1"); lg.DiscountCents != 1000 {
		t.Fatalf("Cancel changed the redemption's discount to %d", lg.DiscountCents)
	}

	// Again, and Enter records it as previewed.
	cashier.keys(kb.Tab + kb.Tab + "R-1" + kb.Tab + "r-1" + kb.Tab + "40")
	cashier.enter()
	cashier.expectFocus("return-confirm")
	cashier.enter()
	cashier.expectPage("Return r-1 of order R-1 recorded: the customer keeps $40.00 with $0.00 off; $10.00 of discount taken back.")
	if lg, _, _ := e.Service.UseLog(context.Background(), threshold.ID, "R-1"); lg.DiscountCents != 0 {
		t.Fatalf("after the return the redemption's discount is %d, want 0", lg.DiscountCents)
	}
}
