package pages_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp/kb"
)

// TestBrowserTillSale: a sale of three items with two codes (a targeted
// coupon and a buy-2-get-1) at the till, keyboard only: the codes, the
// rows (typing in the last row adds one), Enter previews the whole cart
// per item with each coupon in words, Enter on the empty code field
// redeems it as previewed; the sale keeps its number and items, and a
// row is removed by keyboard. The keystrokes are counted.
func TestBrowserTillSale(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	shoes, socks := saleTemplates(t, e)
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.expectFocus("code")
	sale := cashier.value("#order_id")

	k := &keyCounter{tb: cashier}
	codes := shoes.Code + "," + socks.Code
	k.keys(codes + kb.Tab + kb.Tab + kb.Tab)
	if name := eval[string](cashier, `document.activeElement.name`); name != "sku" {
		t.Fatalf("three Tabs after the code go to %q, want the first item's SKU", name)
	}
	k.keys("BOOT-42" + kb.Tab + "1" + kb.Tab + "80" + kb.Tab + "shoes" + kb.Tab + kb.Tab)
	k.keys("SOCK-1" + kb.Tab + "3" + kb.Tab + "4" + kb.Tab + "socks" + kb.Tab + kb.Tab)
	k.keys("HAT-1" + kb.Tab + "1" + kb.Tab + "20")
	if n := cashier.count("#items tbody tr"); n != 4 {
		t.Errorf("after typing in the last row the cart has %d rows, want 4 (one empty to type in)", n)
	}
	k.enter()
	cashier.expectFocus("code")
	for _, want := range []string{"$5 off shoes: −$5.00", "Buy 2, get 1 free on socks, up to $80 off: −$4.00"} {
		cashier.waitText("[data-sale]", want)
	}
	if got := cashier.text(`[data-item="2"] [data-item-pays]`); got != "$8.00" {
		t.Errorf("the socks pay %q, want $8.00", got)
	}
	if got := cashier.text("[data-payable]"); got != "$103.00" {
		t.Errorf("to pay: %q, want $103.00", got)
	}
	cashier.consoleShots("till-sale-preview")
	k.enter()
	cashier.expectPage("Redeemed on sale " + sale + ": $9.00 off, the customer pays $103.00.")
	cashier.expectFocus("code")
	typed := len(codes)
	t.Logf("a 3-item sale with 2 codes: %d keystrokes (%d of them the codes' characters, which a scanner types)", k.n, typed)
	if k.n != typed+53 {
		t.Errorf("the sale took %d keystrokes, want %d", k.n, typed+53)
	}
	for _, c := range []*models.Coupon{shoes, socks} {
		if s := e.CouponStatus(t, c.Code); s != models.CouponUsed {
			t.Fatalf("coupon %s is %s after the sale, want used", c.Code, s)
		}
	}
	// The sale is kept: its number and items, for a further code.
	if got := cashier.value("#order_id"); got != sale {
		t.Errorf("the sale's number after its redemption is %q, want %s", got, sale)
	}
	if got := cashier.value(`[data-row="2"] input[name="sku"]`); got != "SOCK-1" {
		t.Errorf("the second item after the redemption is %q, want SOCK-1", got)
	}
	cashier.consoleShots("till-sale-redeemed")
	// Remove, by keyboard: the row goes, the keyboard to the next row.
	eval[bool](cashier, `(document.querySelector('[data-row="2"] [data-remove-row]').focus(), true)`)
	cashier.keys(kb.Enter)
	if got := cashier.value(`[data-row="2"] input[name="sku"]`); got != "HAT-1" {
		t.Errorf("after removing the second item the second row is %q, want HAT-1", got)
	}
	if name := eval[string](cashier, `document.activeElement.name`); name != "sku" {
		t.Errorf("after Remove the focus is on %q, want the next row's SKU", name)
	}
	// The boot comes back, by item, from the cashier's list: its price less
	// its discount is handed back.
	cashier.open("/pos/return?order_id=" + sale)
	cashier.expectFocus("return-qty-1")
	cashier.keys("1")
	cashier.enter()
	cashier.waitText("[data-return-refund]", "$75.00")
	cashier.waitText("[data-return-clawback]", "$5.00")
	cashier.expectFocus("return-items-record")
	cashier.consoleShots("till-return-items")
	cashier.enter()
	cashier.expectPage("of order " + sale + " recorded: hand back $75.00; $5.00 of discount taken back.")
	if got := cashier.text(`[data-order-item="1"] [data-returned]`); got != "1" {
		t.Errorf("the boot's returned units: %q, want 1", got)
	}
	// Next customer: a new sale, a new number, no items.
	cashier.open("/pos")
	if got := cashier.value("#order_id"); got == sale || cashier.value(`[data-row="1"] input[name="sku"]`) != "" {
		t.Errorf("the next customer's sale is %q with items, want a new number and none", got)
	}
}
