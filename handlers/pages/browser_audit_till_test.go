package pages_test

import (
	"context"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestBrowserAuditTill: a till sale's redemption and its refund read as
// sentences on the audit page, at 375 and 1280 px.
func TestBrowserAuditTill(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	ctx := context.Background()
	threshold := e.Template(t, "$10 off orders")
	coupon := e.ClaimFor(t, threshold.ID, "shopper")
	if _, err := e.Service.RedeemSale(ctx, checkout.CheckoutRequest{OrderID: "T-7", CouponCodes: []string{coupon.Code},
		OrderAmountCents: 6_000}, "cashier"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Refund(ctx, checkout.RefundRequest{CouponCode: coupon.Code, OrderID: "T-7", Cashier: "cashier"}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	admin := b.tab("admin")
	admin.login("admin", e.Passwords["admin"])
	admin.open("/admin/audit?action=coupon.")
	shown := codeGroupsOf(coupon.Code)
	admin.waitText("main", "cashier redeemed at the till coupon "+shown)
	admin.waitText("main", "order T-7 · order amount $60.00 · discount $10.00")
	admin.waitText("main", "cashier refunded coupon "+shown)
	admin.consoleShots("audit-till")
}
