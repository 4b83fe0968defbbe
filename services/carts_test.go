package services_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// ln is a cart line of quantity units at price, with a sku and categories.
func ln(id string, qty, price int64, cats ...string) pricing.Line {
	return pricing.Line{ID: id, SKU: "sku-" + id, Quantity: qty, UnitPriceCents: price, CategoryIDs: cats}
}

// retemplate changes a template's rule in the database (kinds and targets
// the template API does not take yet) and reads it again into the cache.
func (f *holdFixture) retemplate(tp *models.Template, edit func(*models.Template)) {
	f.T.Helper()
	edit(tp)
	if err := f.Backends.DB.Save(tp).Error; err != nil {
		f.T.Fatal(err)
	}
	if _, err := f.Core.GetTemplate(f.Ctx, tp.ID); err != nil {
		f.T.Fatal(err)
	}
}

func (f *holdFixture) holdCart(order string, cart checkout.Cart, cs ...*models.Coupon) (*checkout.CheckoutResult, error) {
	codes := make([]string, len(cs))
	for i, c := range cs {
		codes[i] = c.Code
	}
	return f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: order, Cart: cart, CouponCodes: codes, TTLSeconds: 600, Actor: "shop"})
}

// lineCents is each line's discount of an answer.
func lineCents(ls []checkout.LineDiscount) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.DiscountCents
	}
	return out
}

// storedRows reads an order's line discounts, by coupon and line.
func (f *holdFixture) storedRows(order string) []checkout.LineDiscountRow {
	f.T.Helper()
	var rows []checkout.LineDiscountRow
	if err := f.Backends.DB.Where("order_id = ?", order).Order("coupon_id, line_no").Find(&rows).Error; err != nil {
		f.T.Fatal(err)
	}
	return rows
}

func units(t *testing.T, r checkout.LineDiscountRow) []pricing.UnitRun {
	t.Helper()
	u, err := checkout.DecodeUnits(r.Units)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func threeLines() checkout.Cart {
	return checkout.Cart{Lines: []pricing.Line{ln("a", 1, 1000), ln("b", 1, 1000), ln("c", 1, 1000)}}
}

// The worked example: 1,000 off three lines of 1,000 is 334 / 333 / 333 in
// validate, hold (stored), a hold's state and confirm; a service started
// afresh confirms the stored rows as they are, never re-priced.
func TestCartThreeLinesHeldStoredAndConfirmedAfterRestart(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 1000, 0, 0)
	c := f.claim(tp, "u1")
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: threeLines(), CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 1000 || v.PayableCents != 2000 || v.Currency != "USD" {
		t.Fatalf("validate %+v %v", v, err)
	}
	if got := lineCents(v.Lines); !reflect.DeepEqual(got, []int64{334, 333, 333}) || *v.ShippingDiscountCents != 0 {
		t.Fatalf("validate lines %v", got)
	}
	if v.Lines[0].Coupons[0].CouponCode != c.Code || v.Lines[0].Coupons[0].DiscountCents != 334 {
		t.Fatalf("line a's coupons %+v", v.Lines[0].Coupons)
	}
	h, err := f.holdCart("o3", threeLines(), c)
	if err != nil || h.OrderAmountCents != 3000 || !reflect.DeepEqual(lineCents(h.Lines), []int64{334, 333, 333}) {
		t.Fatalf("hold %+v %v", h, err)
	}
	rows := f.storedRows("o3")
	if len(rows) != 3 || rows[0].DiscountCents != 334 || rows[1].DiscountCents != 333 || rows[2].DiscountCents != 333 ||
		rows[0].LineNo != 0 || rows[2].LineNo != 2 || rows[0].TemplateID != tp.ID {
		t.Fatalf("stored rows %+v", rows)
	}
	if u := units(t, rows[0]); !reflect.DeepEqual(u, []pricing.UnitRun{{First: 0, Count: 1, PerUnitCents: 334}}) {
		t.Fatalf("units of line a %+v", u)
	}
	var lines []checkout.OrderLine
	f.Backends.DB.Where("order_id = ?", "o3").Order("line_no").Find(&lines)
	if len(lines) != 3 || lines[1].LineID != "b" || lines[1].SKU != "sku-b" || lines[1].UnitPriceCents != 1000 || !lines[1].Discountable {
		t.Fatalf("order lines %+v", lines)
	}
	o, _, _ := f.Checkout.ReadOrder(f.Ctx, "o3")
	if o.CartHash == nil || len(*o.CartHash) != 64 || o.Currency != "USD" || o.AmountCents != 3000 {
		t.Fatalf("order row %+v", o)
	}
	// The same hold again: duplicate; another cart: idempotency_mismatch on lines.
	if d, err := f.holdCart("o3", threeLines(), c); err != nil || !d.Duplicate || !reflect.DeepEqual(lineCents(d.Lines), []int64{334, 333, 333}) {
		t.Fatalf("hold again %+v %v", d, err)
	}
	other := threeLines()
	other.Lines[2].Quantity = 2
	if _, err := f.holdCart("o3", other, c); !isField(err, models.CodeIdempotencyMismatch, "lines") {
		t.Fatalf("hold of another cart: %v", err)
	}
	// Stored, never re-priced: a row moved by hand is what confirm answers.
	f.Backends.DB.Exec(`UPDATE order_line_discounts SET discount_cents = 333 WHERE order_id = ? AND line_no = 0`, "o3")
	f.Backends.DB.Exec(`UPDATE order_line_discounts SET discount_cents = 334 WHERE order_id = ? AND line_no = 2`, "o3")
	restarted := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
	g, err := restarted.GetHold(f.Ctx, "o3")
	if err != nil || !reflect.DeepEqual(lineCents(g.Lines), []int64{333, 333, 334}) {
		t.Fatalf("hold after restart %+v %v", g, err)
	}
	// A confirm with another cart is refused, nothing changed.
	if _, err := restarted.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o3", Cart: other}); !isField(err, models.CodeIdempotencyMismatch, "lines") {
		t.Fatalf("confirm of another cart: %v", err)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponHeld {
		t.Fatalf("coupon after a refused confirm %+v", got)
	}
	conf, err := restarted.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o3", Cart: threeLines()})
	if err != nil || conf.Result != "redeemed" || !reflect.DeepEqual(lineCents(conf.Lines), []int64{333, 333, 334}) || conf.DiscountCents != 1000 {
		t.Fatalf("confirm %+v %v", conf, err)
	}
	var lg models.UseLog
	f.Backends.DB.Where("coupon_id = ?", c.ID).First(&lg)
	if lg.DiscountCents != 1000 || lg.OrderAmountCents != 3000 {
		t.Fatalf("use log %+v", lg)
	}
	if len(f.storedRows("o3")) != 3 {
		t.Fatal("confirm dropped the rows")
	}
	f.checkInvariants()
}

func isField(err error, code models.Code, field string) bool {
	var e *models.Error
	return errors.As(err, &e) && e.Code == code && e.Field == field
}

// Buy 2 get 1 on units 30, 20, 10, 10: the set's 10 off is spread over its
// units by price (5, 3, 2), the unit in no set pays.
func TestCartBuyTwoGetOne(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 100, 0, 0)
	f.retemplate(tp, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents, tp.BuyQuantity, tp.GetQuantity, tp.GetPercent, tp.MaxDiscountCents = models.KindBuyXGetY, 0, 2, 1, 100, 10_000
	})
	c := f.claim(tp, "u1")
	cart := checkout.Cart{Lines: []pricing.Line{ln("x", 1, 30), ln("y", 1, 20), ln("z", 2, 10)}}
	h, err := f.holdCart("b2g1", cart, c)
	if err != nil || h.DiscountCents != 10 || !reflect.DeepEqual(lineCents(h.Lines), []int64{5, 3, 2}) {
		t.Fatalf("hold %+v %v", h, err)
	}
	rows := f.storedRows("b2g1")
	if len(rows) != 3 || !reflect.DeepEqual(units(t, rows[2]), []pricing.UnitRun{{First: 0, Count: 1, PerUnitCents: 2}}) {
		t.Fatalf("rows %+v", rows)
	}
}

// 20% off shoes, not on sale items: only the boots take a discount; with a
// minimum of 9,000 only the boots count toward it.
func TestCartShoesOnlyNotOnSale(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 100_000, 20, 0)
	f.retemplate(tp, func(tp *models.Template) {
		tp.AppliesTo = models.AppliesToItems
		tp.Target = models.TemplateTarget{CategoryIDs: []string{"shoes"}, ExcludeCategoryIDs: []string{"sale"}}
	})
	c := f.claim(tp, "u1")
	cart := checkout.Cart{Lines: []pricing.Line{ln("boots", 1, 8000, "shoes"), ln("sandals", 1, 3000, "sale", "shoes"), ln("socks", 2, 500)}}
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: cart, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "ok" || v.DiscountCents != 1600 || !reflect.DeepEqual(lineCents(v.Lines), []int64{1600, 0, 0}) {
		t.Fatalf("validate %+v %v", v, err)
	}
	f.retemplate(tp, func(tp *models.Template) { tp.MinOrderCents = 9000 })
	v, err = f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: cart, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "below_minimum" || v.DiscountCents != 0 || v.Coupons[0].Code != models.CodeBelowMinimum {
		t.Fatalf("validate under the minimum %+v %v", v, err)
	}
	// No line it applies to: below_minimum saying so.
	f.retemplate(tp, func(tp *models.Template) { tp.MinOrderCents = 0 })
	socks := checkout.Cart{Lines: []pricing.Line{ln("socks", 2, 500)}}
	_, err = f.holdCart("socks", socks, c)
	if e, ok := err.(*models.Error); !ok || e.Code != models.CodeBelowMinimum || e.Field != "lines" ||
		e.Message != "no line of the cart is one coupon "+c.Code+" applies to" {
		t.Fatalf("hold of socks: %#v", err)
	}
}

// Free shipping over 50, capped at 10: 10 off the shipping, the lines
// untouched; below the minimum nothing.
func TestCartFreeShippingCapped(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 100, 0, 5000)
	f.retemplate(tp, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents, tp.MaxDiscountCents, tp.AppliesTo = models.KindFreeShipping, 0, 1000, models.AppliesToShipping
	})
	c := f.claim(tp, "u1")
	cart := checkout.Cart{Lines: []pricing.Line{ln("a", 1, 4000), ln("b", 1, 2000)}, ShippingCents: 1500}
	h, err := f.holdCart("ship", cart, c)
	if err != nil || h.DiscountCents != 1000 || *h.ShippingDiscountCents != 1000 || h.PayableCents != 6500 ||
		!reflect.DeepEqual(lineCents(h.Lines), []int64{0, 0}) {
		t.Fatalf("hold %+v %v", h, err)
	}
	rows := f.storedRows("ship")
	if len(rows) != 1 || rows[0].LineNo != checkout.ShippingLineNo || rows[0].DiscountCents != 1000 || rows[0].Units != nil {
		t.Fatalf("rows %+v", rows)
	}
	// Released: the rows go.
	if _, err := f.Checkout.Release(f.Ctx, "shop", "ship"); err != nil {
		t.Fatal(err)
	}
	if rows := f.storedRows("ship"); len(rows) != 0 {
		t.Fatalf("rows after release %+v", rows)
	}
	small := checkout.Cart{Lines: []pricing.Line{ln("a", 1, 4000)}, ShippingCents: 1500}
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: small, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "below_minimum" {
		t.Fatalf("validate below the minimum %+v %v", v, err)
	}
}

// A coupon of another currency than the cart: currency_mismatch.
func TestCartCurrencyMismatch(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	f.retemplate(tp, func(tp *models.Template) { tp.Currency = "EUR" })
	c := f.claim(tp, "u1")
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: threeLines(), CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "currency_mismatch" || v.Coupons[0].Code != models.CodeCurrencyMismatch || v.DiscountCents != 0 {
		t.Fatalf("validate %+v %v", v, err)
	}
	if _, err := f.holdCart("eur", threeLines(), c); !models.IsCode(err, models.CodeCurrencyMismatch) {
		t.Fatalf("hold: %v", err)
	}
	_, err = f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "eur", OrderAmountCents: 3000})
	if !models.IsCode(err, models.CodeCurrencyMismatch) {
		t.Fatalf("redeem: %v", err)
	}
	eur := threeLines()
	eur.Currency = "EUR"
	h, err := f.holdCart("eur", eur, c)
	if err != nil || h.DiscountCents != 500 || h.Currency != "EUR" {
		t.Fatalf("hold in EUR %+v %v", h, err)
	}
}

// Bad carts are refused 400 naming the field; an amount with lines must be
// their total.
func TestCartBoundsNameTheField(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 500, 0, 0), "u1")
	many := make([]pricing.Line, checkout.MaxCartLines+1)
	for i := range many {
		many[i] = ln(string(rune('a'+i%26))+string(rune('a'+i/26)), 1, 1)
	}
	long := string(make([]byte, 65))
	for _, tc := range []struct {
		name   string
		cart   checkout.Cart
		amount int64
		field  string
	}{
		{"no lines", checkout.Cart{Lines: []pricing.Line{}}, 0, "lines"},
		{"too many lines", checkout.Cart{Lines: many}, 0, "lines"},
		{"quantity 0", checkout.Cart{Lines: []pricing.Line{ln("a", 1, 1), ln("b", 0, 1)}}, 0, "lines[1].quantity"},
		{"quantity over", checkout.Cart{Lines: []pricing.Line{ln("a", 10_001, 1)}}, 0, "lines[0].quantity"},
		{"price negative", checkout.Cart{Lines: []pricing.Line{ln("a", 1, -1)}}, 0, "lines[0].unit_price_cents"},
		{"line_id twice", checkout.Cart{Lines: []pricing.Line{ln("a", 1, 1), ln("a", 1, 1)}}, 0, "lines[1].line_id"},
		{"line_id empty", checkout.Cart{Lines: []pricing.Line{ln("", 1, 1)}}, 0, "lines[0].line_id"},
		{"line_id not printable", checkout.Cart{Lines: []pricing.Line{ln("a\x01", 1, 1)}}, 0, "lines[0].line_id"},
		{"sku empty", checkout.Cart{Lines: []pricing.Line{{ID: "a", Quantity: 1, UnitPriceCents: 1}}}, 0, "lines[0].sku"},
		{"product_id long", checkout.Cart{Lines: []pricing.Line{{ID: "a", SKU: "s", ProductID: long, Quantity: 1, UnitPriceCents: 1}}}, 0, "lines[0].product_id"},
		{"category empty", checkout.Cart{Lines: []pricing.Line{ln("a", 1, 1, "ok", "")}}, 0, "lines[0].category_ids[1]"},
		{"total over", checkout.Cart{Lines: []pricing.Line{ln("a", 10_000, models.MaxMoneyCents)}}, 0, "lines"},
		{"shipping negative", checkout.Cart{Lines: []pricing.Line{ln("a", 1, 1)}, ShippingCents: -1}, 0, "shipping_cents"},
		{"currency", checkout.Cart{Currency: "XYZ", Lines: []pricing.Line{ln("a", 1, 1)}}, 0, "currency"},
		{"amount not the total", threeLines(), 2999, "order_amount_cents"},
		{"shipping without lines", checkout.Cart{ShippingCents: 100}, 1000, "shipping_cents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: tc.cart, OrderAmountCents: tc.amount, CouponCodes: []string{c.Code}})
			if !isField(err, models.CodeInvalidRequest, tc.field) {
				t.Fatalf("%v, want invalid_request on %s", err, tc.field)
			}
		})
	}
	// The amount equal to the total is fine.
	v, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{Cart: threeLines(), OrderAmountCents: 3000, CouponCodes: []string{c.Code}})
	if err != nil || v.Result != "ok" {
		t.Fatalf("amount and lines agreeing: %+v %v", v, err)
	}
}

// Two one-step redemptions on one order with lines: the second is priced on
// what the first left of each line, and both allocations are stored.
func TestCartTwoRedemptionsOnOneOrder(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fixed := f.tmpl(models.StackingCombinable, 1000, 0, 0)
	half := f.tmpl(models.StackingCombinable, 100_000, 50, 0)
	c1, c2 := f.claim(fixed, "u1"), f.claim(half, "u1")
	cart := checkout.Cart{Lines: []pricing.Line{ln("a", 2, 1000), ln("b", 1, 2000)}}
	r1, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c1.Code, OrderID: "two", Cart: cart})
	if err != nil || r1.DiscountCents != 1000 || !r1.Lined || !reflect.DeepEqual(lineCents(r1.Lines), []int64{500, 500}) || r1.PayableCents != 3000 {
		t.Fatalf("first %+v %v", r1, err)
	}
	r2, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c2.Code, OrderID: "two", Cart: cart})
	if err != nil || r2.DiscountCents != 1500 || !reflect.DeepEqual(lineCents(r2.Lines), []int64{750, 750}) || r2.PayableCents != 1500 {
		t.Fatalf("second %+v %v", r2, err)
	}
	rows := f.storedRows("two")
	if len(rows) != 4 {
		t.Fatalf("rows %+v", rows)
	}
	byCoupon := map[int64][]int64{}
	for _, r := range rows {
		byCoupon[r.CouponID] = append(byCoupon[r.CouponID], r.DiscountCents)
	}
	if !reflect.DeepEqual(byCoupon[c1.ID], []int64{500, 500}) || !reflect.DeepEqual(byCoupon[c2.ID], []int64{750, 750}) {
		t.Fatalf("rows by coupon %v", byCoupon)
	}
	if u := units(t, rows[2]); rows[2].CouponID != c2.ID || !reflect.DeepEqual(u, []pricing.UnitRun{{First: 0, Count: 2, PerUnitCents: 375}}) {
		t.Fatalf("second coupon's units of line a %+v", u)
	}
	// The replay answers the first answer, lines included.
	d, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c1.Code, OrderID: "two", Cart: cart})
	if err != nil || !d.Duplicate || !reflect.DeepEqual(lineCents(d.Lines), []int64{500, 500}) {
		t.Fatalf("replay %+v %v", d, err)
	}
	// Another cart on the order: idempotency_mismatch on lines.
	c3 := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
	other := cart
	other.ShippingCents = 1
	if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c3.Code, OrderID: "two", Cart: other}); !isField(err, models.CodeIdempotencyMismatch, "lines") {
		t.Fatalf("another cart: %v", err)
	}
	var lines int64
	f.Backends.DB.Model(&checkout.OrderLine{}).Where("order_id = ?", "two").Count(&lines)
	if lines != 2 {
		t.Fatalf("%d order lines, want 2", lines)
	}
	f.checkInvariants()
}

// The coupon.held and coupon.redeemed events of an order with lines carry
// the coupon's allocation.
func TestCartEventsCarryTheAllocation(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	c := f.claim(f.tmpl("", 1000, 0, 0), "u1")
	if _, err := f.holdCart("ev", threeLines(), c); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "ev"}); err != nil {
		t.Fatal(err)
	}
	var evs []models.Event
	f.Backends.DB.Where("type IN ?", []string{models.EventCouponHeld, models.EventCouponRedeemed}).Order("id").Find(&evs)
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	for _, ev := range evs {
		var data models.CouponEvent
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		want := []models.EventLine{{LineID: "a", DiscountCents: 334}, {LineID: "b", DiscountCents: 333}, {LineID: "c", DiscountCents: 333}}
		if !reflect.DeepEqual(data.Lines, want) || data.ShippingDiscountCents == nil || *data.ShippingDiscountCents != 0 {
			t.Fatalf("%s: lines %+v shipping %v", ev.Type, data.Lines, data.ShippingDiscountCents)
		}
	}
}

// A hold on an order with lines that carries a coupon redeemed one step at
// a time is priced on what that coupon left of each line, and confirmed so.
func TestCartHoldNextToARedemption(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	fixed := f.tmpl(models.StackingCombinable, 1000, 0, 0)
	half := f.tmpl(models.StackingCombinable, 100_000, 50, 0)
	c1, c2 := f.claim(fixed, "u1"), f.claim(half, "u1")
	cart := checkout.Cart{Lines: []pricing.Line{ln("a", 2, 1000), ln("b", 1, 2000)}}
	if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c1.Code, OrderID: "mix", Cart: cart}); err != nil {
		t.Fatal(err)
	}
	h, err := f.holdCart("mix", cart, c2)
	if err != nil || h.DiscountCents != 1500 || !reflect.DeepEqual(lineCents(h.Lines), []int64{750, 750}) {
		t.Fatalf("hold %+v %v", h, err)
	}
	conf, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "mix"})
	if err != nil || conf.DiscountCents != 1500 || !reflect.DeepEqual(lineCents(conf.Lines), []int64{750, 750}) {
		t.Fatalf("confirm %+v %v", conf, err)
	}
	var lg models.UseLog
	f.Backends.DB.Where("coupon_id = ?", c2.ID).First(&lg)
	if lg.DiscountCents != 1500 {
		t.Fatalf("use log %+v", lg)
	}
	f.checkInvariants()
}
