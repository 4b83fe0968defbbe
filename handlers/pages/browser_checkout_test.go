package pages_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp"
)

// TestBrowserCheckoutSharedCode: on the shop the shared code's card shows
// the code to type, with no claim button; the shopper follows it to the
// checkout, fills the cart, presses Enter in the code field and sees the
// discount per item, places the order, and the wallet shows the coupon
// once, used on that order.
func TestBrowserCheckoutSharedCode(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := summerCode(t, e)
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])

	shopper.open("/")
	card := fmt.Sprintf(`[data-offer="%d"]`, tp.ID)
	if got := shopper.text(card + " [data-shared-code]"); got != "Type SUMMER10 at checkout" {
		t.Fatalf("the shared card says %q", got)
	}
	if n := eval[int](shopper, fmt.Sprintf(`document.querySelectorAll(%q).length`, card+" [data-claim]")); n != 0 {
		t.Fatalf("the shared card has %d claim buttons, want none", n)
	}
	shopper.submit(card + " [data-checkout-link]")
	if got := eval[string](shopper, `document.getElementById("codes").value`); got != "SUMMER10" {
		t.Fatalf("the checkout from the card has code %q", got)
	}

	// The cart: the example's first two rows, a fourth item typed.
	shopper.fill(`[data-row="3"] input[name="sku"]`, "")
	shopper.fill(`[data-row="3"] input[name="category"]`, "")
	shopper.fill(`[data-row="3"] input[name="quantity"]`, "")
	shopper.fill(`[data-row="3"] input[name="unit_price"]`, "")
	shopper.fill(`[data-row="4"] input[name="sku"]`, "CAP-1")
	shopper.fill(`[data-row="4"] input[name="quantity"]`, "1")
	shopper.fill(`[data-row="4"] input[name="unit_price"]`, "11.50")
	order := eval[string](shopper, `document.querySelector('input[name="order_id"]').value`)
	// Enter in the code field checks the cart.
	shopper.fill("#codes", "summer10")
	shopper.run("Enter in the code field", chromedp.SendKeys("#codes", "\r"), chromedp.WaitVisible("[data-priced]"))
	discounts := eval[[]string](shopper, `Array.from(document.querySelectorAll("[data-item-discount]")).map(function(e){return e.textContent;})`)
	if strings.Join(discounts, " ") != "−$3.00 −$0.85 −$1.15" {
		t.Fatalf("discount per item %v, want −$3.00 −$0.85 −$1.15", discounts)
	}
	if got := shopper.text("[data-payable]"); got != "$45.00" {
		t.Fatalf("to pay %q, want $45.00", got)
	}
	if got := eval[string](shopper, `document.querySelector('input[name="order_id"]').value`); got != order {
		t.Fatalf("the check changed the order id from %s to %s", order, got)
	}
	shopper.consoleShots("checkout-checked")

	shopper.submit("#place-order")
	if got := shopper.text("[data-placed]"); got != "You paid $45.00 and saved $5.00." {
		t.Fatalf("the order's answer says %q", got)
	}
	shopper.consoleShots("checkout-placed")

	shopper.open("/wallet")
	used := eval[[]string](shopper, `Array.from(document.querySelectorAll(".coupon-used [data-when]")).map(function(e){return e.textContent.trim();})`)
	if len(used) != 1 || !strings.HasSuffix(used[0], "on order "+order) {
		t.Fatalf("the wallet's used coupons: %q, want one used on %s", used, order)
	}
	if mine := e.UserCoupons(t, "shopper"); len(mine) != 1 || mine[0].Status != models.CouponUsed {
		t.Fatalf("the shopper holds %+v, want one used coupon", mine)
	}
}
