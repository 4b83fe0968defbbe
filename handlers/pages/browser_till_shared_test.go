package pages_test

import (
	"context"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/admin"

	"github.com/chromedp/chromedp/kb"
)

// TestBrowserPOSSharedCode: a shared code at the till, keyboard only and
// with no user id (docs/shared-codes.md, docs/pages.md): the total, then
// the code typed and Enter previews it as a shared code for an anonymous
// shopper; Enter on the empty code field redeems it. The coupon made is
// nobody's (user_id ”), used by the till's order and claimed by it; the
// next sale's scan of the same code gets a coupon of its own.
func TestBrowserPOSSharedCode(t *testing.T) {
	e := testsupport.NewZonedEnv(t, "2026-07-01T14:00:00Z")
	fixed := e.Template(t, "$5 off")
	shared, code := models.CodeModeShared, "summer10"
	if _, err := e.Service.UpdateTemplate(context.Background(), "test", fixed.ID,
		admin.TemplatePatch{CodeMode: &shared, SharedCode: &code}); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, e.Srv.URL)
	cashier := b.tab("cashier")
	cashier.login("cashier", e.Passwords["cashier"])
	cashier.expectFocus("code")

	for sale := 1; sale <= 2; sale++ {
		tillOrder := cashier.value("#order_id")
		k := &keyCounter{tb: cashier}
		k.keys(kb.Tab + "30")
		k.enter()
		cashier.expectFocus("code")
		k.keys("Summer10")
		k.enter()
		cashier.waitText("[data-shared-preview]", "Shared code SUMMER10 · anonymous shopper")
		cashier.expectFocus("code")
		if got := cashier.text("[data-payable]"); got != "$25.00" {
			t.Errorf("sale %d: to pay %q, want $25.00", sale, got)
		}
		k.enter()
		cashier.expectPage("Redeemed on order " + tillOrder + ": $5.00 off, the customer pays $25.00.")
		cashier.expectFocus("code")

		var cs []models.Coupon
		if err := e.Backends.DB.Where("claim_order_id = ?", tillOrder).Find(&cs).Error; err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].UserID != "" || cs[0].UserOrdinal != nil || cs[0].Status != models.CouponUsed ||
			cs[0].TemplateID != fixed.ID || cs[0].OrderID == nil || *cs[0].OrderID != tillOrder {
			t.Fatalf("sale %d: coupons claimed by %s: %+v; want one used, nobody's", sale, tillOrder, cs)
		}
		// The sale keeps its number until "Next customer" starts a new one.
		if kept := cashier.value("#order_id"); kept != tillOrder {
			t.Errorf("after the redemption the sale's number is %q, want %s kept", kept, tillOrder)
		}
		cashier.open("/pos")
		if next := cashier.value("#order_id"); next == tillOrder || !strings.HasPrefix(next, "T-") {
			t.Errorf("the next sale's order number is %q, want a new one", next)
		}
	}
}
