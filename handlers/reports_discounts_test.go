package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// TestReportsPageDiscounts: the reports page shows the discount by SKU and
// by category, with their CSV links, and says that a line in two
// categories counts in both.
func TestReportsPageDiscounts(t *testing.T) {
	p := testsupport.NewPageEnv(t)
	ctx := context.Background()
	tp := p.Template(t, "$5 off")
	res, err := p.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: "alice", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	cart := checkout.Cart{Lines: []pricing.Line{
		{ID: "a", SKU: "boots", CategoryIDs: []string{"shoes"}, Quantity: 1, UnitPriceCents: 1_000},
		{ID: "b", SKU: "sandals", CategoryIDs: []string{"sale", "shoes"}, Quantity: 1, UnitPriceCents: 1_000},
	}}
	// $5 off two lines of $10: $2.50 each.
	if _, err := p.Service.Checkout.Redeem(ctx, checkout.RedeemRequest{CouponCode: res.Coupon.Code, OrderID: "cart-1", Cart: cart}); err != nil {
		t.Fatal(err)
	}
	admin := p.Client(t)
	admin.Login("admin")
	page := admin.Get("/admin/reports")
	if page.Status != http.StatusOK {
		t.Fatalf("reports page: %d", page.Status)
	}
	text := page.Text()
	for _, want := range []string{"Discount by SKU", "Discount by category", "A line in two categories counts in both",
		`data-discount-csv="sku"`, `data-discount-csv="category"`, "by=category"} {
		if !strings.Contains(page.Body, want) && !strings.Contains(text, want) {
			t.Errorf("the reports page lacks %q", want)
		}
	}
	sku := page.Body[strings.Index(page.Body, `data-discount-report="sku"`):strings.Index(page.Body, `data-discount-report="category"`)]
	cat := page.Body[strings.Index(page.Body, `data-discount-report="category"`):]
	for _, c := range []struct{ in, want string }{
		{sku, `<td data-label="SKU">boots</td>`}, {sku, `<td data-label="SKU">sandals</td>`}, {sku, "$5.00"},
		{cat, `<td data-label="Category">sale</td>`}, {cat, `<td data-label="Category">shoes</td>`}, {cat, "$7.50"},
	} {
		if !strings.Contains(c.in, c.want) {
			t.Errorf("the discount table lacks %q:\n%s", c.want, c.in)
		}
	}
	page = admin.Get("/admin/reports?campaign_id=x")
	if page.Status != http.StatusBadRequest || testsupport.FieldErrorOf(page.Body, "report-campaign") == "" {
		t.Errorf("a bad campaign id: %d %q", page.Status, testsupport.FieldErrorOf(page.Body, "report-campaign"))
	}
}
