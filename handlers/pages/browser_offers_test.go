package pages_test

import (
	"context"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"

	"github.com/chromedp/chromedp/kb"
)

// autumnOffer creates the automatic offer "Autumn sale" of campaign cid:
// $5.00 off orders of at least minOrder, combinable, perUser a user.
func autumnOffer(t *testing.T, e *testsupport.PageEnv, cid, minOrder, perUser int64) *models.Template {
	t.Helper()
	tp, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: cid,
		Name: "Autumn sale", Kind: models.KindFixed, FaceValueCents: 500, MinOrderCents: minOrder, TotalStock: 20,
		PerUserLimit: perUser, ValidDays: 30, Stacking: models.StackingCombinable, CodeMode: models.CodeModeAutomatic})
	if err != nil {
		t.Fatalf("automatic offer: %v", err)
	}
	return tp
}

// offerWords is the sentence the pages give the Autumn sale
// (models.DescribeTemplate).
const offerWords = "Automatic: $5 off your order on orders over $50"

// TestBrowserCheckoutAutomaticOffer: the shop's checkout, with no code
// typed, shows the automatic offer the service applied to the cart, by
// name and sentence, with what it takes off; a cart below the offer's
// minimum shows it not applied with the service's reason and nothing
// off; the order placed names the offer and is paid less it, and the
// shopper's coupon is used.
func TestBrowserCheckoutAutomaticOffer(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	autumnOffer(t, e, e.Demo.Campaign.ID, 5000, 5)
	b := startBrowser(t, e.Srv.URL)
	shopper := b.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])

	// The example cart: $50.50, over the offer's minimum.
	shopper.open("/checkout")
	shopper.submit("#check-codes")
	want := "Autumn sale · " + offerWords + ": −$5.00"
	if got := shopper.text("[data-offer-line]"); got != want {
		t.Fatalf("the checked cart's offer says %q, want %q", got, want)
	}
	if got := shopper.text("[data-payable]"); got != "$45.50" {
		t.Fatalf("to pay %q, want $45.50", got)
	}
	if got := shopper.text(`[data-item="1"] [data-item-discount]`); got != "−$2.97" {
		t.Fatalf("the first item's discount %q, want −$2.97", got)
	}
	if n := shopper.count("[data-code-line]"); n != 0 {
		t.Fatalf("the cart lists %d code lines with no code typed, want none", n)
	}

	// Without the socks: $38.50, below the minimum.
	for _, f := range []string{"sku", "category", "quantity", "unit_price"} {
		shopper.fill(`[data-row="3"] input[name="`+f+`"]`, "")
	}
	shopper.submit("#check-codes")
	want = "Autumn sale · " + offerWords + ": not applied: needs at least 5000 cents of the lines it applies to" // the service's reason
	if got := shopper.text("[data-offer-line]"); got != want {
		t.Fatalf("the small cart's offer says %q, want %q", got, want)
	}
	if n := shopper.count("[data-offer-line][data-applied]"); n != 0 {
		t.Fatalf("%d offers applied to a cart below their minimum", n)
	}
	if got := shopper.text("[data-discount]"); got != "−$0.00" {
		t.Fatalf("the small cart's discount %q, want −$0.00", got)
	}

	// The socks again, and the order placed.
	shopper.fill(`[data-row="3"] input[name="sku"]`, "SOCKS-3")
	shopper.fill(`[data-row="3"] input[name="quantity"]`, "3")
	shopper.fill(`[data-row="3"] input[name="unit_price"]`, "4.00")
	shopper.submit("#place-order")
	if got := shopper.text("[data-placed]"); got != "You paid $45.50 and saved $5.00." {
		t.Fatalf("the order's answer says %q", got)
	}
	if got := shopper.text("[data-offer-line]"); got != "Autumn sale · "+offerWords+": −$5.00" {
		t.Fatalf("the placed order's offer says %q", got)
	}
	if mine := e.UserCoupons(t, "shopper"); len(mine) != 1 || mine[0].Status != models.CouponUsed {
		t.Fatalf("the shopper holds %+v, want one used coupon of the offer", mine)
	}
}

// TestBrowserTillAutomaticOffer: a till sale with a typed combinable
// coupon over the offer's minimum previews the automatic offer by name,
// sentence and amount beside the coupon, names it on each item's
// discount, and the receipt after the sale names it with its amount.
func TestBrowserTillAutomaticOffer(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	autumnOffer(t, e, e.Demo.Campaign.ID, 5000, 5)
	tp := e.Combinable(t, "Two off", 200, 0)
	c := e.ClaimFor(t, tp.ID, "walker")
	before := e.CountCoupons(t)
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.expectFocus("code")
	sale := cashier.value("#order_id")

	cashier.keys(c.Code + kb.Tab + kb.Tab + kb.Tab)
	cashier.keys("COAT-1" + kb.Tab + "1" + kb.Tab + "60")
	cashier.enter()
	want := "Autumn sale · " + offerWords + ": −$5.00"
	cashier.waitText("[data-offer-line]", want)
	if got := cashier.text("[data-offer-line]"); got != want {
		t.Fatalf("the preview's offer says %q, want %q", got, want)
	}
	if got := cashier.text("[data-payable]"); got != "$53.00" {
		t.Fatalf("to pay %q, want $53.00", got)
	}
	if got := cashier.text(`[data-item="1"] td[data-label="From"]`); got != "Autumn sale −$5.00, "+codeGroupsOf(c.Code)+" −$2.00" {
		t.Fatalf("the item's discount is from %q", got)
	}
	cashier.enter()
	cashier.expectPage("Redeemed on sale " + sale + ": $7.00 off (automatic offer Autumn sale −$5.00), the customer pays $53.00.")
	if s := e.CouponStatus(t, c.Code); s != models.CouponUsed {
		t.Fatalf("the typed coupon is %s after the sale, want used", s)
	}
	if n := e.CountCoupons(t) - before; n != 1 {
		t.Fatalf("the sale made %d coupons, want 1 (the offer's)", n)
	}

	// The next customer brings no code: a $40.00 sale is below the
	// offer's minimum, the code is asked for; at $60.00 the offer alone
	// is previewed and redeemed.
	cashier.open("/pos")
	cashier.expectFocus("code")
	sale = cashier.value("#order_id")
	cashier.keys(kb.Tab + kb.Tab + kb.Tab + "SCARF-1" + kb.Tab + "1" + kb.Tab + "40")
	cashier.enter()
	if got := cashier.text("#code-error"); got != "Enter or scan the coupon code." {
		t.Fatalf("a $40.00 sale with no code says %q", got)
	}
	if n := cashier.count("[data-offer-line]"); n != 0 {
		t.Fatalf("%d offers shown on a sale no offer joins", n)
	}
	cashier.fill(`[data-row="1"] input[name="unit_price"]`, "60")
	eval[bool](cashier, `(document.getElementById("code").focus(), true)`)
	cashier.enter()
	cashier.waitText("[data-offer-line]", want)
	if got := cashier.text("[data-payable]"); got != "$55.00" {
		t.Fatalf("to pay %q, want $55.00", got)
	}
	cashier.enter()
	cashier.expectPage("Redeemed on sale " + sale + ": $5.00 off (automatic offer Autumn sale −$5.00), the customer pays $55.00.")
	if n := e.CountCoupons(t) - before; n != 2 {
		t.Fatalf("the two sales made %d coupons, want 2 (the offer's)", n)
	}
}
