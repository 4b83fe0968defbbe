package services_test

import (
	"encoding/json"
	"time"

	"couponsvc/models"
	"couponsvc/services/checkout"
	"couponsvc/services/core"
	"couponsvc/services/pricing"
)

// linedOrder makes an order of the cart with the coupons confirmed on it
// and returns how they priced it.
func (f *holdFixture) linedOrder(order string, cart pricing.Cart, cs ...*models.Coupon) pricing.Result {
	f.T.Helper()
	ps := make([]pricing.Coupon, len(cs))
	for i, c := range cs {
		tp, err := f.Checkout.Template(f.Ctx, c.TemplateID)
		if err != nil {
			f.T.Fatal(err)
		}
		ps[i] = core.PricingCoupon(tp, c.Code)
	}
	return f.linedOrderPriced(order, cart, cs, ps)
}

// linedOrderPriced is linedOrder with the coupons' rules given.
func (f *holdFixture) linedOrderPriced(order string, cart pricing.Cart, cs []*models.Coupon, ps []pricing.Coupon) pricing.Result {
	f.T.Helper()
	if _, err := f.hold(order, cart.TotalCents(), 600, cs...); err != nil {
		f.T.Fatal(err)
	}
	if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: order}); err != nil {
		f.T.Fatal(err)
	}
	pr := pricing.Price(&cart, ps)
	db := f.Backends.DB
	must := func(err error) {
		f.T.Helper()
		if err != nil {
			f.T.Fatal(err)
		}
	}
	must(db.Exec(`UPDATE checkout_orders SET cart_hash = ?, shipping_cents = ? WHERE order_id = ?`, "test", cart.ShippingCents, order).Error)
	for i, l := range cart.Lines {
		cats, _ := json.Marshal(l.CategoryIDs)
		must(db.Exec(`INSERT INTO order_lines (order_id, line_no, line_id, sku, product_id, category_ids, quantity, unit_price_cents, discountable, returned_quantity)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`, order, i, l.ID, l.SKU, l.ProductID, string(cats), l.Quantity, l.UnitPriceCents, !l.NotDiscountable).Error)
	}
	type run struct {
		First        int64 `json:"first"`
		Count        int64 `json:"count"`
		PerUnitCents int64 `json:"per_unit_cents"`
	}
	for i, cr := range pr.Coupons {
		c := cs[i]
		for _, ls := range cr.Lines {
			var rs []run
			for _, u := range ls.Units {
				rs = append(rs, run{u.First, u.Count, u.PerUnitCents})
			}
			units, _ := json.Marshal(rs)
			must(db.Exec(`INSERT INTO order_line_discounts (order_id, coupon_id, line_no, template_id, discount_cents, returned_discount_cents, units, created_at)
				VALUES (?, ?, ?, ?, ?, 0, ?, ?)`, order, c.ID, ls.Line, c.TemplateID, ls.DiscountCents, string(units), time.Now()).Error)
		}
		if cr.ShippingCents > 0 {
			must(db.Exec(`INSERT INTO order_line_discounts (order_id, coupon_id, line_no, template_id, discount_cents, returned_discount_cents, units, created_at)
				VALUES (?, ?, -1, ?, ?, 0, NULL, ?)`, order, c.ID, c.TemplateID, cr.ShippingCents, time.Now()).Error)
		}
		must(db.Exec(`UPDATE coupon_use_log SET discount_cents = ? WHERE coupon_id = ? AND order_id = ?`, cr.DiscountCents, c.ID, order).Error)
	}
	return pr
}
