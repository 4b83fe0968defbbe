package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"couponsvc/models"
	"couponsvc/services"
)

// holdFor holds the user's coupons for an online order through the service.
func (e *pageEnv) holdFor(t *testing.T, orderID string, amount int64, user string, codes ...string) *services.CheckoutResult {
	t.Helper()
	res, err := e.Service.Hold(context.Background(), services.CheckoutRequest{OrderID: orderID, OrderAmountCents: amount,
		CouponCodes: codes, UserID: user, TTLSeconds: 600, Actor: "test"})
	if err != nil || res.Result != "held" {
		t.Fatalf("hold %s: %+v %v", orderID, res, err)
	}
	return res
}

// TestPagesWalletHeldCoupon: a coupon held for an online order shows in the
// wallet as reserved for that order until the hold's expiry.
func TestPagesWalletHeldCoupon(t *testing.T) {
	e := newPageEnv(t)
	tpl := e.template(t, "$5 off")
	held := e.claimFor(t, tpl.ID, "shopper")
	res := e.holdFor(t, "web-77", 3000, "shopper", held.Code)
	shopper := e.client(t)
	shopper.login("shopper")
	p := shopper.get("/wallet")
	if p.status != http.StatusOK {
		t.Fatalf("wallet: %v", p)
	}
	want := "Reserved for order web-77 until " + res.ExpiresAt.UTC().Format("2 Jan 2006, 15:04 UTC")
	if txt := p.text(); !strings.Contains(txt, "Reserved for an order 1") || !strings.Contains(txt, want) {
		t.Fatalf("wallet lacks %q: %s", want, txt)
	}
	if !strings.Contains(p.body, `class="coupon coupon-`+models.CouponHeld+`"`) {
		t.Fatalf("the held coupon has no held card: %v", p)
	}
}
