package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"couponsvc/internal/testsupport"
	"couponsvc/services/checkout"
	"couponsvc/services/claims"
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
	if _, err := p.Service.Checkout.Redeem(ctx, checkout.RedeemRequest{CouponCode: res.Coupon.Code, OrderID: "cart-1", OrderAmountCents: 2_000}); err != nil {
		t.Fatal(err)
	}
	db := p.Backends.DB
	for i, l := range []struct {
		id, sku, cats string
		discount      int64
	}{{"a", "boots", `["shoes"]`, 250}, {"b", "sandals", `["sale","shoes"]`, 250}} {
		if err := db.Exec(`INSERT INTO order_lines (order_id, line_no, line_id, sku, product_id, category_ids, quantity, unit_price_cents, discountable, returned_quantity)
			VALUES (?, ?, ?, ?, '', ?, 1, 1000, ?, 0)`, "cart-1", i, l.id, l.sku, l.cats, true).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(`INSERT INTO order_line_discounts (order_id, coupon_id, line_no, template_id, discount_cents, returned_discount_cents, units, created_at)
			VALUES (?, ?, ?, ?, ?, 0, '[{"first":0,"count":1,"per_unit_cents":250}]', ?)`, "cart-1", res.Coupon.ID, i, tp.ID, l.discount, time.Now()).Error; err != nil {
			t.Fatal(err)
		}
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
