package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestPagesReturnItems: one item of a web order (held and confirmed with
// lines) and of a till sale comes back by item: the order's items with
// SKU, price, units kept and returned and the discount on each; the
// preview says the money to hand back and the discount taken back and
// changes nothing; the record, sent twice, records once. An order redeemed
// for an amount says to return it by amount; too many units are refused
// beside the items.
func TestPagesReturnItems(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ten := e.ClaimFor(t, e.Combinable(t, "Ten off", 1000, 0).ID, "shopper")
	cart := checkout.Cart{Lines: []checkout.Line{{ID: "1", SKU: "TEE-M", Quantity: 2, UnitPriceCents: 1500},
		{ID: "2", SKU: "MUG-1", Quantity: 1, UnitPriceCents: 1000}}}
	ctx := context.Background()
	if _, err := e.Service.Hold(ctx, checkout.CheckoutRequest{OrderID: "W-1", Cart: cart, CouponCodes: []string{ten.Code},
		UserID: "shopper", TTLSeconds: 600, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Confirm(ctx, checkout.ConfirmRequest{OrderID: "W-1", Cart: cart, Cashier: "test"}); err != nil {
		t.Fatal(err)
	}
	cashier := e.Client(t)
	cashier.Login("cashier")
	p := cashier.Get("/pos/return?order_id=W-1")
	// $10 over $40: TEE-M (2 × $15) takes $7.50, MUG-1 $2.50.
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "TEE-M $15.00 2 2 0 −$7.50") ||
		!strings.Contains(txt, "MUG-1 $10.00 1 1 0 −$2.50") {
		t.Fatalf("the order's items: %v\n%s", p, txt)
	}
	rid := hidden(p, "return_id")
	if !strings.HasPrefix(rid, "R-") {
		t.Fatalf("return id %q", rid)
	}
	form := url.Values{"order_id": {"W-1"}, "return_id": {rid}, "line_id": {"1", "2"}, "return_qty": {"1", ""}}
	p = cashier.Form("/pos/return?order_id=W-1", "/pos/return/items/preview", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "Hand back $11.25") ||
		!strings.Contains(txt, "Discount taken back $3.75") {
		t.Fatalf("the return's preview: %v\n%s", p, txt)
	}
	record := func() string {
		t.Helper()
		r := cashier.Form("/pos/return?order_id=W-1", "/pos/return/items", form)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("record: %v\n%s", r, r.Text())
		}
		return cashier.Get(r.Location()).Text()
	}
	if txt := record(); !strings.Contains(txt, "Return "+rid+" of order W-1 recorded: hand back $11.25; $3.75 of discount taken back.") ||
		!strings.Contains(txt, "TEE-M $15.00 2 1 1 −$3.75") {
		t.Fatalf("after the return: %s", txt)
	}
	// The same return again (a second click): recorded once.
	if txt := record(); !strings.Contains(txt, "was already recorded (nothing changed): $11.25 handed back.") ||
		!strings.Contains(txt, "TEE-M $15.00 2 1 1 −$3.75") {
		t.Fatalf("the return again: %s", txt)
	}
	// Too many units: refused beside the items, nothing recorded.
	form.Set("return_id", "R-2")
	form["return_qty"] = []string{"2", ""}
	if p := cashier.Form("/pos/return?order_id=W-1", "/pos/return/items/preview", form); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.Text(), "That is more units than are left to return of this item.") {
		t.Fatalf("too many units: %v\n%s", p, p.Text())
	}

	// A till sale, by item.
	shoes, socks := saleTemplates(t, e)
	if _, err := e.Service.RedeemSale(ctx, checkout.CheckoutRequest{OrderID: "T-1", CouponCodes: []string{shoes.Code, socks.Code},
		Cart: checkout.Cart{Lines: []checkout.Line{{ID: "1", SKU: "BOOT-42", Quantity: 1, UnitPriceCents: 8000, CategoryIDs: []string{"shoes"}},
			{ID: "2", SKU: "SOCK-1", Quantity: 3, UnitPriceCents: 400, CategoryIDs: []string{"socks"}}}}}, "cashier"); err != nil {
		t.Fatal(err)
	}
	p = cashier.Get("/pos/return?order_id=T-1")
	form = url.Values{"order_id": {"T-1"}, "return_id": {hidden(p, "return_id")}, "line_id": {"1", "2"}, "return_qty": {"1", ""}}
	p = cashier.Form("/pos/return?order_id=T-1", "/pos/return/items/preview", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "Hand back $75.00") || !strings.Contains(txt, "Discount taken back $5.00") {
		t.Fatalf("the till sale's return preview: %v\n%s", p, txt)
	}
	if r := cashier.Form("/pos/return?order_id=T-1", "/pos/return/items", form); r.Status != http.StatusSeeOther {
		t.Fatalf("record the till sale's return: %v\n%s", r, r.Text())
	}
	if s := e.CouponStatus(t, socks.Code); s != models.CouponUsed {
		t.Fatalf("the socks coupon is %s after the boot came back", s)
	}

	// An order redeemed for an amount: returned by amount.
	amt := e.ClaimFor(t, e.Template(t, "$5 off").ID, "shopper2")
	if _, err := e.Service.Redeem(ctx, checkout.RedeemRequest{CouponCode: amt.Code, OrderID: "A-1", OrderAmountCents: 3000}); err != nil {
		t.Fatal(err)
	}
	if txt := cashier.Get("/pos/return?order_id=A-1").Text(); !strings.Contains(txt, "This order was redeemed for an amount, not items") {
		t.Fatalf("an amount order: %s", txt)
	}
}
