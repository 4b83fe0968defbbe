package services_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/reports"
)

// discountFixture is two orders of a cart: o1 (boots in shoes, two sandals
// in shoes and sale, two socks in no category) with 1,500 off (campaign A)
// and 10% off (campaign B); o2 (boots) with 1,500 off.
type discountFixture struct {
	*holdFixture
	fixed, pct *models.Template
	o2         *models.Coupon
}

func newDiscountFixture(t *testing.T) *discountFixture {
	f := &discountFixture{holdFixture: newHoldFixture(t, services.Config{})}
	f.fixed = f.tmpl(models.StackingCombinable, 1_500, 0, 0)
	other := f.Campaign(0)
	f.pct = f.Template(models.Template{CampaignID: other.ID}, func(tp *models.Template) {
		tp.Stacking, tp.TotalStock, tp.PerUserLimit = models.StackingCombinable, 10, 10
		tp.Kind, tp.PercentOff, tp.MaxDiscountCents, tp.FaceValueCents = models.KindPercent, 10, 50_000, 0
	})
	boots := pricing.Line{ID: "b", SKU: "boots", CategoryIDs: []string{"shoes"}, Quantity: 1, UnitPriceCents: 8_000}
	sandals := pricing.Line{ID: "s", SKU: "sandals", CategoryIDs: []string{"sale", "shoes"}, Quantity: 2, UnitPriceCents: 3_000}
	socks := pricing.Line{ID: "k", SKU: "socks", Quantity: 2, UnitPriceCents: 500}
	// 1,500 over 8,000/6,000/1,000 is 800/600/100; 10% of what is left
	// is 720/540/90.
	pr := f.linedOrder("o1", pricing.Cart{Lines: []pricing.Line{boots, sandals, socks}}, f.claim(f.fixed, "u1"), f.claim(f.pct, "u1"))
	if pr.DiscountCents != 2_850 {
		t.Fatalf("o1 priced %+v", pr)
	}
	f.o2 = f.claim(f.fixed, "u2")
	f.linedOrder("o2", pricing.Cart{Lines: []pricing.Line{boots}}, f.o2)
	return f
}

func (f *discountFixture) report(by string, filter ...string) *reports.DiscountReport {
	f.T.Helper()
	req := reports.DiscountRequest{By: by}
	if len(filter) == 2 {
		req.CampaignID, req.TemplateID = filter[0], filter[1]
	}
	r, err := f.Reports.Discounts(f.Ctx, req)
	if err != nil {
		f.T.Fatal(err)
	}
	return r
}

func rows(r *reports.DiscountReport) string {
	return fmt.Sprint(r.Rows, " totals ", r.Totals, " by line ", r.TotalsByLine)
}

func TestDiscountReportBySKUAndCategory(t *testing.T) {
	f := newDiscountFixture(t)
	type row = reports.DiscountRow
	check := func(name string, r *reports.DiscountReport, want []row, totals, byLine row) {
		t.Helper()
		if got, w := rows(r), fmt.Sprint(want, " totals ", totals, " by line ", byLine); got != w {
			t.Fatalf("%s:\n got %s\nwant %s", name, got, w)
		}
	}
	check("by sku", f.report("sku"), []row{
		{Key: "boots", Orders: 2, Units: 2, DiscountCents: 3_020, NetDiscountCents: 3_020},
		{Key: "sandals", Orders: 1, Units: 2, DiscountCents: 1_140, NetDiscountCents: 1_140},
		{Key: "socks", Orders: 1, Units: 2, DiscountCents: 190, NetDiscountCents: 190},
	}, row{Orders: 2, Units: 6, DiscountCents: 4_350, NetDiscountCents: 4_350},
		row{Orders: 2, Units: 6, DiscountCents: 4_350, NetDiscountCents: 4_350})
	// Sandals are in two categories: they count in both.
	check("by category", f.report("category"), []row{
		{Key: "sale", Orders: 1, Units: 2, DiscountCents: 1_140, NetDiscountCents: 1_140},
		{Key: "shoes", Orders: 2, Units: 4, DiscountCents: 4_160, NetDiscountCents: 4_160},
	}, row{Orders: 2, Units: 6, DiscountCents: 5_300, NetDiscountCents: 5_300},
		row{Orders: 2, Units: 6, DiscountCents: 4_350, NetDiscountCents: 4_350})

	// One sandal back: its 300 + 270 of discount are returned.
	if _, err := f.Checkout.ReturnLines(f.Ctx, "pos", "o1", "r1", []checkout.ReturnLine{{LineID: "s", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	check("by sku after a return", f.report("sku"), []row{
		{Key: "boots", Orders: 2, Units: 2, DiscountCents: 3_020, NetDiscountCents: 3_020},
		{Key: "sandals", Orders: 1, Units: 2, ReturnedUnits: 1, DiscountCents: 1_140, ReturnedDiscountCents: 570, NetDiscountCents: 570},
		{Key: "socks", Orders: 1, Units: 2, DiscountCents: 190, NetDiscountCents: 190},
	}, row{Orders: 2, Units: 6, ReturnedUnits: 1, DiscountCents: 4_350, ReturnedDiscountCents: 570, NetDiscountCents: 3_780},
		row{Orders: 2, Units: 6, ReturnedUnits: 1, DiscountCents: 4_350, ReturnedDiscountCents: 570, NetDiscountCents: 3_780})
	check("by category after a return", f.report("category"), []row{
		{Key: "sale", Orders: 1, Units: 2, ReturnedUnits: 1, DiscountCents: 1_140, ReturnedDiscountCents: 570, NetDiscountCents: 570},
		{Key: "shoes", Orders: 2, Units: 4, ReturnedUnits: 1, DiscountCents: 4_160, ReturnedDiscountCents: 570, NetDiscountCents: 3_590},
	}, row{Orders: 2, Units: 6, ReturnedUnits: 2, DiscountCents: 5_300, ReturnedDiscountCents: 1_140, NetDiscountCents: 4_160},
		row{Orders: 2, Units: 6, ReturnedUnits: 1, DiscountCents: 4_350, ReturnedDiscountCents: 570, NetDiscountCents: 3_780})

	// Filters: the percent coupon's campaign; the fixed template.
	check("campaign of the percent", f.report("sku", fmt.Sprint(f.pct.CampaignID), ""), []row{
		{Key: "boots", Orders: 1, Units: 1, DiscountCents: 720, NetDiscountCents: 720},
		{Key: "sandals", Orders: 1, Units: 2, ReturnedUnits: 1, DiscountCents: 540, ReturnedDiscountCents: 270, NetDiscountCents: 270},
		{Key: "socks", Orders: 1, Units: 2, DiscountCents: 90, NetDiscountCents: 90},
	}, row{Orders: 1, Units: 5, ReturnedUnits: 1, DiscountCents: 1_350, ReturnedDiscountCents: 270, NetDiscountCents: 1_080},
		row{Orders: 1, Units: 5, ReturnedUnits: 1, DiscountCents: 1_350, ReturnedDiscountCents: 270, NetDiscountCents: 1_080})
	check("fixed template", f.report("sku", "", fmt.Sprint(f.fixed.ID)), []row{
		{Key: "boots", Orders: 2, Units: 2, DiscountCents: 2_300, NetDiscountCents: 2_300},
		{Key: "sandals", Orders: 1, Units: 2, ReturnedUnits: 1, DiscountCents: 600, ReturnedDiscountCents: 300, NetDiscountCents: 300},
		{Key: "socks", Orders: 1, Units: 2, DiscountCents: 100, NetDiscountCents: 100},
	}, row{Orders: 2, Units: 6, ReturnedUnits: 1, DiscountCents: 3_000, ReturnedDiscountCents: 300, NetDiscountCents: 2_700},
		row{Orders: 2, Units: 6, ReturnedUnits: 1, DiscountCents: 3_000, ReturnedDiscountCents: 300, NetDiscountCents: 2_700})

	// A coupon refunded leaves the report: o2's boots are gone.
	if _, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: f.o2.Code, OrderID: "o2", Cashier: "pos"}); err != nil {
		t.Fatal(err)
	}
	if r := f.report("sku"); r.Rows[0].Key != "boots" || r.Rows[0].Orders != 1 || r.Rows[0].DiscountCents != 1_520 || r.Totals.Orders != 1 {
		t.Fatalf("after the refund of o2: %s", rows(r))
	}

	for _, tc := range []struct {
		req   reports.DiscountRequest
		field string
	}{
		{reports.DiscountRequest{By: "brand"}, "by"},
		{reports.DiscountRequest{CampaignID: "x"}, "campaign_id"},
		{reports.DiscountRequest{TemplateID: "0"}, "template_id"},
		{reports.DiscountRequest{From: "2026-13-01"}, "from"},
	} {
		_, err := f.Reports.Discounts(f.Ctx, tc.req)
		if e := wantCode(t, err, models.CodeInvalidRequest); e.Field != tc.field {
			t.Fatalf("%+v: field %q, want %q", tc.req, e.Field, tc.field)
		}
	}
}
