package checkout

import (
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/pricing"

	"gorm.io/gorm"
)

// orderState is what the checkout paths read of an order with lines, once,
// after its row (docs/checkout.md, "The order state and the plan"): its
// cart, the units of each line returned so far, and the stored allocations
// of the coupons that discounted it, by coupon id: live (held or used by
// the order) and settled (refunded off it: their part was paid and stays
// taken). The plan (plan.go) decides on it; nothing else is read to price
// a coupon on the order.
type orderState struct {
	cart     *pricing.Cart
	returned []int64
	live     map[int64][]LineDiscountRow
	settled  map[int64][]LineDiscountRow
	// superseded is the settled rows without took out: the earlier part of
	// a coupon refunded off the order that the request prices again.
	superseded map[int64][]LineDiscountRow
}

// without leaves the coupons out of the state: those a request prices
// again as themselves (a coupon refunded and taken again by the same order
// supersedes its earlier part on it). Their settled rows are kept aside
// (superseded): their part on the units returned before stays (carried).
func (st *orderState) without(ids ...int64) {
	for _, id := range ids {
		if rs := st.settled[id]; len(rs) > 0 {
			if st.superseded == nil {
				st.superseded = map[int64][]LineDiscountRow{}
			}
			st.superseded[id] = rs
		}
		delete(st.live, id)
		delete(st.settled, id)
	}
}

// loadOrderState reads the state of an order with lines inside db (a
// transaction after the order's row lock, or a read outside one): its
// lines with their returned units, then its coupons' line discounts
// (the lock order of docs/checkout.md). Two SELECTs.
func loadOrderState(db *gorm.DB, o *CheckoutOrder) (*orderState, error) {
	cart, returned, err := loadLines(db, o)
	if err != nil {
		return nil, err
	}
	st := &orderState{cart: cart, returned: returned}
	st.live, st.settled, err = stateAllocation(db, o.OrderID, time.Time{})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// loadStateOnCart is loadOrderState for a request that carries the order's
// cart (its hash checked against the order's row): only the returned units
// of its lines are read, then the line discounts of its coupons but those
// of a hold past its time at now (expired for everyone, swept or not:
// docs/checkout.md). Two SELECTs.
func loadStateOnCart(db *gorm.DB, orderID string, cart *pricing.Cart, now time.Time) (*orderState, error) {
	var rows []struct {
		LineNo           int
		ReturnedQuantity int64
	}
	if err := db.Raw(`SELECT line_no, returned_quantity FROM order_lines WHERE order_id = ? AND returned_quantity > 0`,
		orderID).Scan(&rows).Error; err != nil {
		return nil, err
	}
	returned := make([]int64, len(cart.Lines))
	for _, r := range rows {
		if r.LineNo >= 0 && r.LineNo < len(returned) {
			returned[r.LineNo] = r.ReturnedQuantity
		}
	}
	live, settled, err := stateAllocation(db, orderID, now)
	if err != nil {
		return nil, err
	}
	return &orderState{cart: cart, returned: returned, live: live, settled: settled}, nil
}

// stateAllocation reads, in one SELECT, the line discounts of the order's
// coupons by coupon id: live (listed in order_coupons) and settled (a
// coupon refunded off the order keeps its rows: docs/returns.md, "A
// refund"), leaving out the coupons of the order's hold past its time at
// now (the zero time leaves out none).
func stateAllocation(db *gorm.DB, orderID string, now time.Time) (live, settled map[int64][]LineDiscountRow, err error) {
	var rows []struct {
		LineDiscountRow
		Live bool
	}
	if err := db.Raw(`SELECT d.*, CASE WHEN oc.coupon_id IS NULL THEN 0 ELSE 1 END AS live
		FROM order_line_discounts d LEFT JOIN order_coupons oc ON oc.order_id = d.order_id AND oc.coupon_id = d.coupon_id
		WHERE d.order_id = ? AND d.coupon_id NOT IN (SELECT u.id FROM user_coupons u
			WHERE u.order_id = ? AND u.status = ? AND u.hold_expires_at <= ?)
		ORDER BY d.coupon_id, d.line_no`, orderID, orderID, models.CouponHeld, now).Scan(&rows).Error; err != nil {
		return nil, nil, err
	}
	live, settled = map[int64][]LineDiscountRow{}, map[int64][]LineDiscountRow{}
	var parked []LineDiscountRow
	for _, r := range rows {
		switch {
		case r.CouponID < 0:
			parked = append(parked, r.LineDiscountRow)
		case r.Live:
			live[r.CouponID] = append(live[r.CouponID], r.LineDiscountRow)
		default:
			settled[r.CouponID] = append(settled[r.CouponID], r.LineDiscountRow)
		}
	}
	// The rows a coupon held again parked (lines.go) are superseded while
	// its hold holds; once it lapsed they are settled again, for every
	// path at once.
	for _, r := range parked {
		if r.CouponID = -r.CouponID; live[r.CouponID] == nil {
			settled[r.CouponID] = append(settled[r.CouponID], r)
		}
	}
	return live, settled, nil
}

// orderDiscounts is an amount-only order's state, read by readDiscounts:
// what it kept of its amount, the discounts of its used coupons (their
// live use log rows) and of its hold while held, those of the coupons
// refunded off it (settled: paid, they stay taken; an order with lines
// keeps them per unit in its orderState instead), and its currency.
type orderDiscounts struct {
	Kept, Used, Held, Settled int64
	Currency                  string
}

// readDiscounts reads the order's discounts inside db, in one SELECT; the
// settled ones leave out those of the coupons exclude (a request pricing
// them again as themselves).
func readDiscounts(db *gorm.DB, orderID string, now time.Time, exclude []int64) (orderDiscounts, error) {
	var row orderDiscounts
	err := db.Raw(discountsSQL, false, true, append([]int64{0}, exclude...), HoldHeld, now, orderID).Scan(&row).Error
	return row, err
}

// left is what the order leaves for one more coupon's discount: what it
// kept less every discount on it, the settled ones at most what it kept.
func (d orderDiscounts) left() int64 {
	return max(d.Kept-min(d.Settled, d.Kept)-d.Used-d.Held, 0)
}

// discountLeft is what the order leaves for one more coupon's discount,
// read inside tx after the order's row lock was taken (so no other request
// on the order changes it before tx ends): its amount, less its returns,
// less the discounts of its used coupons (their live use log rows), of a
// hold that still holds coupons and of the coupons refunded off it but
// exclude. A coupon redeemed one step at a time is priced on it, so that
// the discounts of an order never sum over its amount (docs/checkout.md,
// "One amount per order").
func discountLeft(tx *gorm.DB, orderID string, now time.Time, exclude []int64) (left, kept int64, currency string, err error) {
	row, err := readDiscounts(tx, orderID, now, exclude)
	if err != nil {
		return 0, 0, "", err
	}
	return row.left(), row.Kept, row.Currency, nil
}

// lockedDiscounts reads the order's discounts inside tx, once, after the
// request took the order's row lock and before its other writes: the
// state the request's coupons must fit on (planFits), the settled ones
// but those of the coupons exclude (the request's own, priced again as
// themselves). The order's hold is then the request's own (a hold's
// takeRoom just wrote it; a confirm's UPDATE just ended it): it is left
// out, and the request adds its discount itself (docs/checkout.md, "The
// order state and the plan").
func lockedDiscounts(tx *gorm.DB, orderID string, now time.Time, exclude []int64) (orderDiscounts, error) {
	d, err := readDiscounts(tx, orderID, now, exclude)
	d.Held = 0
	return d, err
}

// payableAfterAll is what the order pays after every coupon on it, read
// inside db: what it kept of its amount less the discounts of its used
// coupons and of its hold while held. holdCoupons is the number of coupons
// of its hold: an order that carries those alone and no return pays its
// amount less the hold's discount, answered without a read.
func payableAfterAll(db *gorm.DB, o *CheckoutOrder, holdCoupons int, now time.Time) (int64, error) {
	if o.ReturnedCents == 0 && o.Coupons == int64(holdCoupons) {
		return o.AmountCents - o.DiscountCents, nil
	}
	row, err := readDiscounts(db, o.OrderID, now, nil)
	if err != nil {
		return 0, err
	}
	return max(row.Kept-row.Used-row.Held, 0), nil
}

// discountsSQL reads an order's kept amount, the discounts of its used
// coupons (their live use log rows), of the coupons refunded off an
// amount-only order (their undone rows, but those of the coupons listed;
// an order with lines keeps them per unit in its state), and of its hold while
// held and not past its time (a lapsed hold is expired for everyone, swept
// or not: docs/checkout.md), and its currency.
const discountsSQL = `SELECT o.amount_cents - o.returned_cents AS kept,
		COALESCE((SELECT SUM(l.discount_cents) FROM order_coupons oc
			JOIN coupon_use_log l ON l.coupon_id = oc.coupon_id AND l.order_id = oc.order_id AND l.undo_flag = ?
			WHERE oc.order_id = o.order_id), 0) AS used,
		CASE WHEN o.cart_hash IS NULL THEN COALESCE((SELECT SUM(l.discount_cents) FROM coupon_use_log l
			WHERE l.order_id = o.order_id AND l.undo_flag = ? AND l.coupon_id NOT IN ?), 0) ELSE 0 END AS settled,
		CASE WHEN o.hold_state = ? AND o.hold_expires_at > ? THEN o.discount_cents ELSE 0 END AS held,
		COALESCE(o.currency, '') AS currency
		FROM checkout_orders o WHERE o.order_id = ?`
