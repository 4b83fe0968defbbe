package pages_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestPagesWalletHeldCoupon: a coupon held for an online order shows in the
// wallet as reserved for that order until the hold's expiry.
func TestPagesWalletHeldCoupon(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	held := e.ClaimFor(t, tpl.ID, "shopper")
	res := e.HoldFor(t, "web-77", 3000, "shopper", held.Code)
	shopper := e.Client(t)
	shopper.Login("shopper")
	p := shopper.Get("/wallet")
	if p.Status != http.StatusOK {
		t.Fatalf("wallet: %v", p)
	}
	want := "Reserved for order web-77 until " + res.ExpiresAt.UTC().Format("2 Jan 2006, 15:04:05 UTC")
	if txt := p.Text(); !strings.Contains(txt, "Reserved for an order 1") || !strings.Contains(txt, want) {
		t.Fatalf("wallet lacks %q: %s", want, txt)
	}
	if !strings.Contains(p.Body, `class="coupon coupon-`+models.CouponHeld+`"`) {
		t.Fatalf("the held coupon has no held card: %v", p)
	}
}

// TestPagesPOSHoldConfirmReleaseReturn: the cashier looks an online order's
// hold up, confirms one, releases another, records a partial return; bad
// input is refused beside its field and changes nothing.
func TestPagesPOSHoldConfirmReleaseReturn(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	c1 := e.ClaimFor(t, tpl.ID, "shopper")
	e.HoldFor(t, "web-1", 3000, "shopper", c1.Code)
	cashier := e.Client(t)
	cashier.Login("cashier")

	p := cashier.Get("/pos/hold?order_id=web-1")
	txt := p.Text()
	if p.Status != http.StatusOK || !strings.Contains(txt, "Order web-1: held, until") ||
		!strings.Contains(txt, "Discount −$5.00") || !strings.Contains(txt, "To pay $25.00") ||
		!strings.Contains(p.Body, `action="/pos/hold/confirm"`) || !strings.Contains(p.Body, `action="/pos/hold/release"`) {
		t.Fatalf("hold lookup: %v\n%s", p, txt)
	}
	if p := cashier.Get("/pos/hold?order_id=nope-1"); p.Status != http.StatusNotFound ||
		!strings.Contains(p.Text(), "No online order with this number has a hold.") {
		t.Fatalf("unknown order: %v", p)
	}
	if p := cashier.Get("/pos/hold?order_id=a%20b"); p.Status != http.StatusBadRequest ||
		!strings.Contains(p.Text(), "no spaces") {
		t.Fatalf("bad order id: %v", p)
	}
	// A post without the page's CSRF token changes nothing.
	if p := cashier.Post("/pos/hold/confirm", url.Values{"order_id": {"web-1"}}); p.Status != http.StatusForbidden {
		t.Fatalf("confirm without CSRF: %v", p)
	}
	if s := e.UserCoupons(t, "shopper")[0].Status; s != models.CouponHeld {
		t.Fatalf("after a refused confirm the coupon is %s", s)
	}

	p = cashier.Form("/pos/hold", "/pos/hold/confirm", url.Values{"order_id": {"web-1"}})
	if p.Status != http.StatusSeeOther || p.Location() != "/pos/hold?order_id=web-1" {
		t.Fatalf("confirm: %v", p)
	}
	p = cashier.Get(p.Location())
	if txt := p.Text(); !strings.Contains(txt, "Confirmed order web-1: 1 coupon redeemed, $5.00 off, $25.00 to pay.") ||
		!strings.Contains(txt, "Order web-1: confirmed") || strings.Contains(p.Body, `action="/pos/hold/confirm"`) {
		t.Fatalf("after confirm: %s", txt)
	}
	if s := e.UserCoupons(t, "shopper")[0].Status; s != models.CouponUsed {
		t.Fatalf("confirmed coupon is %s", s)
	}
	// Release after confirm is refused in words; the coupon stays used.
	p = cashier.Form("/pos/hold", "/pos/hold/release", url.Values{"order_id": {"web-1"}})
	if p.Status != http.StatusConflict || !strings.Contains(p.Text(), "This order's hold was confirmed: refund it instead.") {
		t.Fatalf("release after confirm: %v", p)
	}

	// Partial return: bad input first, then 10.00 of 30.00 back.
	p = cashier.Form("/pos/hold", "/pos/return", url.Values{"order_id": {"web-1"}, "return_id": {"r-1"}, "amount": {"ten"}})
	if p.Status != http.StatusBadRequest || !strings.Contains(p.Text(), "Enter an amount, such as 12.50.") {
		t.Fatalf("bad return amount: %v", p)
	}
	p = cashier.Form("/pos/hold", "/pos/return", url.Values{"order_id": {"web-1"}, "return_id": {"r-1"}, "amount": {"40.00"}})
	if p.Status != http.StatusUnprocessableEntity && p.Status != http.StatusConflict ||
		!strings.Contains(p.Text(), "This is more than is left of the order to return.") {
		t.Fatalf("return over the order: %v", p)
	}
	p = cashier.Form("/pos/hold", "/pos/return", url.Values{"order_id": {"web-1"}, "return_id": {"r-1"}, "amount": {"10.00"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("return: %v", p)
	}
	if txt := cashier.Get(p.Location()).Text(); !strings.Contains(txt,
		"Return r-1 of order web-1 recorded: the customer keeps $20.00 with $5.00 off; $0.00 of discount taken back.") {
		t.Fatalf("after return: %s", txt)
	}

	// Another hold, released: the coupon is back in the wallet.
	c2 := e.ClaimFor(t, tpl.ID, "shopper2")
	e.HoldFor(t, "web-2", 3000, "shopper2", c2.Code)
	p = cashier.Form("/pos/hold", "/pos/hold/release", url.Values{"order_id": {"web-2"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("release: %v", p)
	}
	if txt := cashier.Get(p.Location()).Text(); !strings.Contains(txt, "Released order web-2: its coupons are back in the customers' wallets.") ||
		!strings.Contains(txt, "Order web-2: released") {
		t.Fatalf("after release: %s", txt)
	}
	if s := e.UserCoupons(t, "shopper2")[0].Status; s != models.CouponIssued {
		t.Fatalf("released coupon is %s", s)
	}
}

// TestBrowserPOSHoldConfirm: in a browser, the cashier opens the online
// orders page from the checkout, looks an order's hold up, sees its coupon,
// discount and amount to pay, and confirms it: the coupon is used on the
// order and the page says so.
func TestBrowserPOSHoldConfirm(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$10 off orders")
	coupon := e.ClaimFor(t, tpl.ID, "shopper")
	e.HoldFor(t, "web-501", 6250, "shopper", coupon.Code)
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.open("/pos")
	cashier.submit(`a[href="/pos/hold"]`)
	cashier.fill("#hold-order", "web-501")
	cashier.submit("[data-hold-lookup]")
	cashier.waitText("[data-hold-state]", "Order web-501: held, until")
	cashier.waitText("[data-hold-coupon]", "−$10.00")
	cashier.waitText("[data-discount]", "−$10.00")
	cashier.waitText("[data-payable]", "$52.50")
	cashier.screenshot("pos-hold")
	if s := e.UserCoupons(t, "shopper")[0].Status; s != models.CouponHeld {
		t.Fatalf("the lookup changed the coupon: %s", s)
	}
	cashier.submit("[data-hold-confirm]")
	cashier.expectPage("Confirmed order web-501: 1 coupon redeemed, $10.00 off, $52.50 to pay.")
	cashier.waitText("[data-hold-state]", "Order web-501: confirmed")
	if c := e.UserCoupons(t, "shopper")[0]; c.Status != models.CouponUsed || c.OrderID == nil || *c.OrderID != "web-501" {
		t.Fatalf("after confirm the coupon is %s on %v", c.Status, c.OrderID)
	}
}

// TestPagesPOSCartPreview: the checkout prices several codes on one order
// (comma separated, up to 5): each coupon's discount, or why it does not
// apply, and the total; nothing changes.
func TestPagesPOSCartPreview(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	two, three := e.Combinable(t, "Two off", 200, 0), e.Combinable(t, "Three off", 300, 5000)
	a, b := e.ClaimFor(t, two.ID, "shopper"), e.ClaimFor(t, three.ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	cart := func(codes, amount string) testsupport.Page {
		return cashier.Form("/pos", "/pos/preview", url.Values{"code": {codes}, "order_id": {"C-1"}, "amount": {amount}})
	}
	grouped := func(code string) string { return code[:4] + "-" + code[4:8] + "-" + code[8:] }

	p := cart(strings.ToLower(a.Code)+", "+b.Code, "60.00")
	txt := p.Text()
	if p.Status != http.StatusOK || !strings.Contains(txt, "Coupon "+grouped(a.Code)+" · $2 off your order: −$2.00") ||
		!strings.Contains(txt, "Coupon "+grouped(b.Code)+" · $3 off your order on orders over $50: −$3.00") ||
		!strings.Contains(txt, "Discount −$5.00") || !strings.Contains(txt, "To pay $55.00") {
		t.Fatalf("cart of two: %v\n%s", p, txt)
	}
	// Below one coupon's minimum: that one says why, and no discount.
	p = cart(a.Code+"\n"+b.Code, "40.00")
	txt = p.Text()
	if p.Status != http.StatusConflict || !strings.Contains(txt, "Coupon "+grouped(b.Code)+" · $3 off your order on orders over $50: Below the minimum of this coupon ($50.00).") ||
		!strings.Contains(txt, "Discount −$0.00") || !strings.Contains(txt, "To pay $40.00") {
		t.Fatalf("cart below a minimum: %v\n%s", p, txt)
	}
	// An exclusive coupon with another: not together.
	ex := e.ClaimFor(t, e.Template(t, "$5 off").ID, "shopper")
	p = cart(a.Code+","+ex.Code, "60.00")
	if txt := p.Text(); p.Status != http.StatusConflict || !strings.Contains(txt, "These coupons cannot be used together on one order.") ||
		!strings.Contains(txt, "To pay $60.00") {
		t.Fatalf("cart exclusive with combinable: %v\n%s", p, txt)
	}
	// More than 5 codes, a code twice: refused beside the field; a mistyped code: not found.
	six := strings.Repeat(a.Code+",", 6)
	if p := cart(six, "60.00"); p.Status != http.StatusBadRequest || !strings.Contains(p.Text(), "Enter at most 5 codes, separated by commas.") {
		t.Fatalf("six codes: %v", p)
	}
	if p := cart(a.Code+","+a.Code, "60.00"); p.Status != http.StatusBadRequest || !strings.Contains(p.Text(), "twice") {
		t.Fatalf("a code twice: %v", p)
	}
	// A mistyped code is a code no coupon has, as validate answers it
	// (docs/result-codes.md): the same words as any unknown code.
	if p := cart(a.Code+",ZZZZ-ZZZZ-ZZZZZ", "60.00"); p.Status != http.StatusNotFound ||
		!strings.Contains(p.Text(), "No coupon has this code. Check it and try again.") {
		t.Fatalf("a mistyped code: %v\n%s", p, p.Text())
	}
	for _, c := range e.UserCoupons(t, "shopper") {
		if c.Status != models.CouponIssued {
			t.Fatalf("the preview changed coupon %s to %s", c.Code, c.Status)
		}
	}
}

// TestPagesTemplateCountsHeld: the admin's template page counts a coupon
// held for an online order among those using stock, and gives it back to
// "ready to use" once the hold is released.
func TestPagesTemplateCountsHeld(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	held := e.ClaimFor(t, tpl.ID, "shopper")
	e.ClaimFor(t, tpl.ID, "shopper2")
	e.HoldFor(t, "web-9", 3000, "shopper", held.Code)
	admin := e.Client(t)
	admin.Login("admin")
	path := fmt.Sprintf("/admin/templates/%d", tpl.ID)
	if txt := admin.Get(path).Text(); !strings.Contains(txt, "2 using stock = 1 ready to use + 1 held for an order + 0 expired") {
		t.Fatalf("template page while held: %s", txt)
	}
	if _, err := e.Service.Release(context.Background(), "test", "web-9"); err != nil {
		t.Fatal(err)
	}
	if txt := admin.Get(path).Text(); !strings.Contains(txt, "2 using stock = 2 ready to use + 0 held for an order + 0 expired") {
		t.Fatalf("template page after the release: %s", txt)
	}
}

// TestBrowserPOSCart: in a browser, the cashier types two codes of one
// order (comma separated) and sees each coupon's discount and the total;
// then a cart with a coupon below its minimum says which and why. Nothing
// changes.
func TestBrowserPOSCart(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	two, three := e.Combinable(t, "Two off", 200, 0), e.Combinable(t, "Three off", 300, 5000)
	a, b := e.ClaimFor(t, two.ID, "shopper"), e.ClaimFor(t, three.ID, "shopper")
	br := startBrowser(t, e.Srv.URL)
	cashier := br.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.open("/pos")
	cashier.fill("#code", strings.ToLower(a.Code)+", "+b.Code)
	cashier.fill("#order_id", "C-77")
	cashier.fill("#amount", "60")
	cashier.submit(`form[action="/pos/preview"] button[type="submit"]`)
	cashier.waitText("[data-sale]", "−$2.00")
	cashier.waitText("[data-sale]", "−$3.00")
	cashier.waitText("[data-discount]", "−$5.00")
	cashier.waitText("[data-payable]", "$55.00")
	if n := eval[int](cashier, `document.querySelectorAll("[data-cart-line]").length`); n != 2 {
		t.Fatalf("the cart shows %d lines, want 2", n)
	}
	cashier.screenshot("pos-cart")

	cashier.fill("#amount", "40")
	cashier.submit(`form[action="/pos/preview"] button[type="submit"]`)
	cashier.waitText("[data-sale]", "Below the minimum of this coupon ($50.00).")
	cashier.waitText("[data-payable]", "$40.00")
	for _, c := range e.UserCoupons(t, "shopper") {
		if c.Status != models.CouponIssued {
			t.Fatalf("the cart changed coupon %s to %s", c.Code, c.Status)
		}
	}
}

// TestBrowserWalletHeld: in a browser, the shopper's wallet shows a coupon
// held for an online order as reserved for that order until the hold's
// time, without a QR code to present; once the order releases it, it is
// ready to use again.
func TestBrowserWalletHeld(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tpl := e.Template(t, "$5 off")
	coupon := e.ClaimFor(t, tpl.ID, "shopper")
	res := e.HoldFor(t, "web-88", 3000, "shopper", coupon.Code)
	br := startBrowser(t, e.Srv.URL)
	shopper := br.tab("shopper")
	shopper.login("shopper", e.Passwords["shopper"])
	shopper.open("/wallet")
	card := fmt.Sprintf(`[data-coupon="%s"]`, coupon.Code)
	shopper.waitText(card, "Reserved for order web-88 until ")
	// The time is shown in the deployment's zone; its datetime is the hold's.
	until := eval[string](shopper, fmt.Sprintf(`document.querySelector(%q).getAttribute("datetime")`, card+" [data-when] time"))
	if at, err := time.Parse(time.RFC3339, until); err != nil || !at.Equal(res.ExpiresAt.Truncate(time.Second)) {
		t.Errorf("the wallet shows the hold until %q, want %s", until, res.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if cls := eval[string](shopper, fmt.Sprintf(`document.querySelector(%q).className`, card)); !strings.Contains(cls, "coupon-held") {
		t.Errorf("the held coupon's card has the classes %q, want coupon-held", cls)
	}
	shopper.screenshot("wallet-held")
	if _, err := e.Service.Release(context.Background(), "test", "web-88"); err != nil {
		t.Fatal(err)
	}
	shopper.open("/wallet")
	shopper.waitText(".wallet-group .section-title", "Ready to use")
	if txt := shopper.text(card); strings.Contains(txt, "Reserved") {
		t.Errorf("the released coupon still shows as reserved: %q", txt)
	}
}

// TestPagesPOSCartItems: with the sale's items, the till shows each
// item's discount, which coupon gave it and what is left to pay for it
// (three items of $10.00 and $10 off: $3.34, $3.33, $3.33); a mistake in an
// item is named beside the items by its row.
func TestPagesPOSCartItems(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ten := e.Combinable(t, "Ten off", 1000, 0)
	a := e.ClaimFor(t, ten.ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	items := func(amount string, rows ...string) testsupport.Page {
		form := url.Values{"code": {a.Code}, "order_id": {"C-2"}, "amount": {amount}}
		for _, r := range rows {
			f := strings.Split(r, ",")
			form["sku"], form["quantity"] = append(form["sku"], f[0]), append(form["quantity"], f[1])
			form["unit_price"], form["category"] = append(form["unit_price"], f[2]), append(form["category"], f[3])
		}
		return cashier.Form("/pos", "/pos/preview", form)
	}
	grouped := a.Code[:4] + "-" + a.Code[4:8] + "-" + a.Code[8:]
	p := items("", "SKU-X,1,10.00,", "SKU-Y,1,10.00,shoes", "SKU-Z,1,10.00,")
	txt := p.Text()
	for _, want := range []string{"SKU-X × 1 $10.00 −$3.34 $6.66 " + grouped + " −$3.34", "SKU-Y × 1 (shoes) $10.00 −$3.33 $6.67",
		"SKU-Z × 1 $10.00 −$3.33", "Discount −$10.00", "To pay $20.00"} {
		if p.Status != http.StatusOK || !strings.Contains(txt, want) {
			t.Fatalf("items: %v lacks %q\n%s", p, want, txt)
		}
	}
	// A total that is not the items' sum, a bad quantity: beside their fields.
	if p := items("12.00", "SKU-X,1,10.00,"); p.Status != http.StatusBadRequest || !strings.Contains(p.Text(), "cart's total") {
		t.Fatalf("a total that disagrees: %v\n%s", p, p.Text())
	}
	if p := items("", "SKU-X,1,10.00,", "SKU-Y,none,1.00,"); p.Status != http.StatusBadRequest ||
		!strings.Contains(p.Text(), "Item 2: the quantity must be a whole number from 1 to 10000.") {
		t.Fatalf("a bad quantity: %v\n%s", p, p.Text())
	}
	// Rows whose total is over the most an order may be: refused, no sum wraps.
	if p := items("", "A,10000,999999999999.99,", "B,10000,999999999999.99,"); p.Status != http.StatusBadRequest ||
		!strings.Contains(p.Text(), "Item 1: enter the unit price") {
		t.Fatalf("a price over the bound: %v\n%s", p, p.Text())
	}
	if p := items("", "A,100,6000000.00,", "B,100,6000000.00,"); p.Status != http.StatusBadRequest ||
		!strings.Contains(p.Text(), "Item 2: the cart's total would be over the most an order may be.") {
		t.Fatalf("a total over the bound: %v\n%s", p, p.Text())
	}
}

// TestPagesPOSHoldItems: an online order held with its items shows each
// item's discount and the coupon that gave it.
func TestPagesPOSHoldItems(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	c1 := e.ClaimFor(t, e.Combinable(t, "Ten off", 1000, 0).ID, "shopper")
	cart := checkout.Cart{Lines: []checkout.Line{{ID: "x", SKU: "X", Quantity: 1, UnitPriceCents: 1000},
		{ID: "y", SKU: "Y", Quantity: 2, UnitPriceCents: 1000}}}
	if _, err := e.Service.Hold(context.Background(), checkout.CheckoutRequest{OrderID: "web-9", Cart: cart,
		CouponCodes: []string{c1.Code}, UserID: "shopper", TTLSeconds: 600, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	cashier := e.Client(t)
	cashier.Login("cashier")
	p := cashier.Get("/pos/hold?order_id=web-9")
	grouped := c1.Code[:4] + "-" + c1.Code[4:8] + "-" + c1.Code[8:]
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "x −$3.33 "+grouped+" −$3.33") ||
		!strings.Contains(txt, "y −$6.67 "+grouped+" −$6.67") || !strings.Contains(txt, "To pay $20.00") {
		t.Fatalf("hold with items: %v\n%s", p, txt)
	}
}
