package services_test

import (
	"fmt"
	"reflect"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"

	"pgregory.net/rapid"
)

// The invariants of TestCheckoutMoneyModel, held after every step against
// the database and the model (docs/guarantees.md, "Money over any
// sequence").

// moneySnapshot is every row of the sequence's orders and coupons.
type moneySnapshot map[string][]map[string]any

// snapshot reads every row a checkout operation may write for the
// sequence's orders and coupons (audit entries and events apart).
func (m *moneyModel) snapshot(rt *rapid.T) moneySnapshot {
	rt.Helper()
	orders, ids := m.ids()
	queries := map[string][]any{
		"SELECT * FROM checkout_orders WHERE order_id IN ? ORDER BY order_id":                          {orders},
		"SELECT * FROM order_lines WHERE order_id IN ? ORDER BY order_id, line_no":                     {orders},
		"SELECT * FROM order_line_discounts WHERE order_id IN ? ORDER BY order_id, coupon_id, line_no": {orders},
		"SELECT * FROM order_coupons WHERE order_id IN ? ORDER BY order_id, coupon_id":                 {orders},
		"SELECT * FROM order_returns WHERE order_id IN ? ORDER BY order_id, return_id":                 {orders},
		"SELECT * FROM coupon_use_log WHERE coupon_id IN ? ORDER BY id":                                {ids},
		"SELECT * FROM user_coupons WHERE id IN ? ORDER BY id":                                         {ids},
	}
	out := moneySnapshot{}
	for q, args := range queries {
		var rows []map[string]any
		if err := m.f.Backends.DB.Raw(q, args...).Scan(&rows).Error; err != nil {
			rt.Fatalf("%s: %v", q, err)
		}
		out[q] = rows
	}
	return out
}

// sameSnapshot fails when any row changed since before.
func (m *moneyModel) sameSnapshot(rt *rapid.T, what string, before moneySnapshot) {
	rt.Helper()
	after := m.snapshot(rt)
	for q, rows := range before {
		if !reflect.DeepEqual(rows, after[q]) {
			rt.Logf("rows of %q:\nbefore %v\nafter  %v", q, rows, after[q])
			rt.Fatalf("the %s changed rows of %q", what, q)
		}
	}
}

// ids are the sequence's order ids and coupon ids (never empty: the
// statements use them in IN lists, by their indexes).
func (m *moneyModel) ids() (orders []string, coupons []int64) {
	orders, coupons = []string{""}, []int64{0}
	for _, o := range m.orders {
		orders = append(orders, o.id)
	}
	for _, c := range m.coupons {
		coupons = append(coupons, c.id)
	}
	return orders, coupons
}

// moneyRow is one coupon's stored part of one line of an order.
type moneyRow struct {
	OrderID               string
	CouponID              int64
	LineNo                int
	DiscountCents         int64
	ReturnedDiscountCents int64
	CarriedCents          int64
	Units                 *string
}

// moneyLine is what an order's line keeps of its returns.
type moneyLine struct {
	OrderID          string
	ReturnedQuantity int64
}

// moneyRead is what checkMoney reads of the run's orders, in three
// statements whatever the number of orders: every line, every stored
// allocation row and every live use log row.
type moneyRead struct {
	returned map[string][]int64
	rows     map[string][]moneyRow
	logs     []models.UseLog
}

func (m *moneyModel) read(rt *rapid.T) moneyRead {
	rt.Helper()
	db := m.f.Backends.DB
	orders, ids := m.ids()
	out := moneyRead{returned: map[string][]int64{}, rows: map[string][]moneyRow{}}
	var lines []moneyLine
	if err := db.Raw("SELECT order_id, returned_quantity FROM order_lines WHERE order_id IN ? ORDER BY order_id, line_no", orders).
		Scan(&lines).Error; err != nil {
		rt.Fatal(err)
	}
	for _, l := range lines {
		out.returned[l.OrderID] = append(out.returned[l.OrderID], l.ReturnedQuantity)
	}
	var rows []moneyRow
	if err := db.Raw("SELECT * FROM order_line_discounts WHERE order_id IN ?", orders).Scan(&rows).Error; err != nil {
		rt.Fatal(err)
	}
	for _, r := range rows {
		out.rows[r.OrderID] = append(out.rows[r.OrderID], r)
	}
	if err := db.Where("coupon_id IN ? AND undo_flag = ?", ids, false).Find(&out.logs).Error; err != nil {
		rt.Fatal(err)
	}
	return out
}

// checkMoney holds the database and the model to the invariants.
func (m *moneyModel) checkMoney(rt *rapid.T) {
	rt.Helper()
	got := m.read(rt)
	m.checkCoupons(rt, got.logs)
	for _, o := range m.orders {
		m.checkOrder(rt, o, got)
	}
}

// checkCoupons: each coupon is in the state the answers said, and used on
// at most one order, with one live use log row there.
func (m *moneyModel) checkCoupons(rt *rapid.T, logs []models.UseLog) {
	rt.Helper()
	if len(m.coupons) == 0 {
		return
	}
	ids := make([]int64, len(m.coupons))
	for i, c := range m.coupons {
		ids[i] = c.id
	}
	var rows []models.Coupon
	if err := m.f.Backends.DB.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		rt.Fatal(err)
	}
	now := m.f.Clock.Now()
	for _, c := range m.coupons {
		var row *models.Coupon
		for i := range rows {
			if rows[i].ID == c.id {
				row = &rows[i]
			}
		}
		if row == nil {
			rt.Fatalf("coupon %s has no row", c.name)
		}
		order := ""
		if row.OrderID != nil {
			order = *row.OrderID
		}
		lapsed := row.Status == models.CouponHeld && row.HoldExpiresAt != nil && !row.HoldExpiresAt.After(now)
		switch {
		case c.status == mIssued && lapsed:
		case row.Status != c.status:
			rt.Fatalf("coupon %s is %s, the answers made it %s", c.name, row.Status, c.status)
		case (c.status == mHeld || c.status == mUsed) && order != c.order:
			rt.Logf("coupon %s is %s by order %q, the answers say %q", c.name, c.status, order, c.order)
			rt.Fatalf("coupon %s is %s by another order than the answers say", c.name, c.status)
		}
		var live []string
		for _, l := range logs {
			if l.CouponID == c.id {
				live = append(live, l.OrderID)
			}
		}
		if (c.status == mUsed) != (len(live) == 1) || len(live) > 1 || (len(live) == 1 && live[0] != c.order) {
			rt.Logf("coupon %s is %s on %q with live use log rows on %v", c.name, c.status, c.order, live)
			rt.Fatalf("coupon %s is %s with %d live use log rows", c.name, c.status, len(live))
		}
	}
}

// checkOrder holds one order to the invariants of money.
func (m *moneyModel) checkOrder(rt *rapid.T, o *moneyOrder, got moneyRead) {
	rt.Helper()
	live := map[int64]*moneyCoupon{}
	for _, c := range m.coupons {
		if c.order != o.id || !(c.status == mUsed || (c.status == mHeld && m.live(o))) {
			continue
		}
		live[c.id] = c
		if cur := c.tp.Currency; cur != o.cart.Currency {
			rt.Fatalf("coupon %s in %s is on order %s in %s", c.name, cur, o.name, o.cart.Currency)
		}
	}
	if o.lined && o.started {
		m.checkAllocation(rt, o, live, got)
	}
	if !o.settled {
		return
	}
	if o.paid() < 0 {
		rt.Fatalf("order %s: discounts %d over its total %d", o.name, o.discounted, o.total)
	}
	if o.refunds > o.paid() {
		rt.Fatalf("order %s refunded %d, paid %d (total %d less %d of discounts)", o.name, o.refunds, o.paid(), o.total, o.discounted)
	}
	if o.allReturned() && o.refunds != o.paid() {
		rt.Fatalf("order %s is returned whole: refunded %d, paid %d (total %d less %d of discounts)", o.name, o.refunds, o.paid(), o.total, o.discounted)
	}
}

// checkAllocation: the lines returned are those the answers said; each
// live coupon's stored rows sum to its discount (its use log's, less what
// returns took, for a used one), over the units kept when it was priced;
// no unit is discounted below 0 or above its price, nor the shipping
// above itself.
func (m *moneyModel) checkAllocation(rt *rapid.T, o *moneyOrder, live map[int64]*moneyCoupon, got moneyRead) {
	rt.Helper()
	if returned := got.returned[o.id]; fmt.Sprint(returned) != fmt.Sprint(o.returned) {
		rt.Fatalf("order %s: units returned %v, the answers say %v", o.name, returned, o.returned)
	}
	perUnit := make([][]int64, len(o.cart.Lines))
	for i, l := range o.cart.Lines {
		perUnit[i] = make([]int64, l.Quantity)
	}
	sums, kept, carried, shipping := map[int64]int64{}, map[int64]int64{}, map[int64]int64{}, int64(0)
	for _, r := range got.rows[o.id] {
		c := live[r.CouponID]
		if c == nil {
			continue
		}
		sums[r.CouponID] += r.DiscountCents - r.CarriedCents
		carried[r.CouponID] += r.CarriedCents
		kept[r.CouponID] += r.DiscountCents - r.ReturnedDiscountCents
		if r.LineNo < 0 {
			shipping += r.DiscountCents
			continue
		}
		m.checkRuns(rt, o, c, r, perUnit[r.LineNo])
	}
	for i, units := range perUnit {
		for u, cents := range units {
			if price := o.cart.Lines[i].UnitPriceCents; cents > price {
				rt.Fatalf("order %s: unit %d of line %s (price %d) is discounted %d", o.name, u, o.cart.Lines[i].ID, price, cents)
			}
		}
	}
	if shipping > o.cart.ShippingCents {
		rt.Fatalf("order %s: shipping %d discounted %d", o.name, o.cart.ShippingCents, shipping)
	}
	for id, c := range live {
		if sums[id] != c.discount {
			rt.Fatalf("order %s: coupon %s answered %d off, its stored lines sum to %d", o.name, c.name, c.discount, sums[id])
		}
		if carried[id] != c.carried {
			rt.Fatalf("order %s: coupon %s carries %d of its earlier part, the model %d", o.name, c.name, carried[id], c.carried)
		}
		if c.status != mUsed {
			continue
		}
		for _, l := range got.logs {
			if l.CouponID == id && l.OrderID == o.id && l.DiscountCents != kept[id] {
				rt.Fatalf("order %s: coupon %s logs %d off, its stored lines keep %d", o.name, c.name, l.DiscountCents, kept[id])
			}
		}
	}
}

// checkRuns adds a coupon's runs of one line to the line's units, after
// checking that they cover units of the line, each at 0 or more, over the
// units kept when the coupon was priced, and sum to the row.
func (m *moneyModel) checkRuns(rt *rapid.T, o *moneyOrder, c *moneyCoupon, r moneyRow, units []int64) {
	rt.Helper()
	runs, err := checkout.DecodeUnits(r.Units)
	if err != nil {
		rt.Fatal(err)
	}
	line := o.cart.Lines[r.LineNo].ID
	var sum, carried int64
	for _, u := range runs {
		if u.PerUnitCents < 0 || u.Count < 0 || u.First < 0 || u.First+u.Count > int64(len(units)) {
			rt.Fatalf("order %s: coupon %s has run %+v on line %s of %d units", o.name, c.name, u, line, len(units))
		}
		if u.First+u.Count <= c.keptFrom[r.LineNo] && carried+u.Count*u.PerUnitCents <= r.CarriedCents {
			// Its earlier part, kept on units returned before it was
			// taken again (docs/returns.md, "A refund").
			carried += u.Count * u.PerUnitCents
		} else if u.Count > 0 && u.PerUnitCents > 0 && u.First < c.keptFrom[r.LineNo] {
			rt.Fatalf("order %s: coupon %s discounts unit %d of line %s, returned before it was priced (%d returned)",
				o.name, c.name, u.First, line, c.keptFrom[r.LineNo])
		}
		for k := u.First; k < u.First+u.Count; k++ {
			units[k] += u.PerUnitCents
		}
		sum += u.Count * u.PerUnitCents
	}
	if sum != r.DiscountCents || carried != r.CarriedCents {
		rt.Fatalf("order %s: coupon %s's units on line %s sum to %d (%d carried), the row says %d (%d carried)", o.name, c.name,
			line, sum, carried, r.DiscountCents, r.CarriedCents)
	}
}

// carried is what coupon c, taken again by the order o it was refunded off,
// keeps of its earlier part there: its stored runs on the units returned
// before (0 for any other coupon or order).
func (m *moneyModel) carried(rt *rapid.T, o *moneyOrder, c *moneyCoupon) int64 {
	rt.Helper()
	if c.refundedFrom != o.id || !o.lined {
		return 0
	}
	var rows []moneyRow
	if err := m.f.Backends.DB.Raw("SELECT * FROM order_line_discounts WHERE order_id = ? AND coupon_id = ?", o.id, c.id).
		Scan(&rows).Error; err != nil {
		rt.Fatal(err)
	}
	var sum int64
	for _, r := range rows {
		if r.LineNo < 0 {
			continue
		}
		runs, err := checkout.DecodeUnits(r.Units)
		if err != nil {
			rt.Fatal(err)
		}
		sum += pricing.UnitsDiscountCents(runs, 0, o.returned[r.LineNo])
	}
	return sum
}
