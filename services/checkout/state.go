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
// of its live (held or used) coupons, by coupon id. The plan (plan.go)
// decides on it; nothing else is read to price a coupon on the order.
type orderState struct {
	cart     *pricing.Cart
	returned []int64
	live     map[int64][]LineDiscountRow
}

// loadOrderState reads the state of an order with lines inside db (a
// transaction after the order's row lock, or a read outside one): its
// lines with their returned units, then its live coupons' line discounts
// (the lock order of docs/checkout.md). Two SELECTs.
func loadOrderState(db *gorm.DB, o *CheckoutOrder) (*orderState, error) {
	cart, returned, err := loadLines(db, o)
	if err != nil {
		return nil, err
	}
	return stateOn(db, o.OrderID, cart, returned)
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
	live, err := liveAllocationAt(db, orderID, now)
	if err != nil {
		return nil, err
	}
	return &orderState{cart: cart, returned: returned, live: live}, nil
}

func stateOn(db *gorm.DB, orderID string, cart *pricing.Cart, returned []int64) (*orderState, error) {
	live, err := liveAllocation(db, orderID)
	if err != nil {
		return nil, err
	}
	return &orderState{cart: cart, returned: returned, live: live}, nil
}

// liveAllocationAt is liveAllocation without the coupons of a hold past its
// time at now.
func liveAllocationAt(db *gorm.DB, orderID string, now time.Time) (map[int64][]LineDiscountRow, error) {
	return allocationWhere(db, `order_id = ? AND coupon_id IN (SELECT oc.coupon_id FROM order_coupons oc JOIN user_coupons u ON u.id = oc.coupon_id
		WHERE oc.order_id = ? AND (u.status <> ? OR u.hold_expires_at > ?))`, orderID, orderID, models.CouponHeld, now)
}

// discountLeft is what the order leaves for one more coupon's discount,
// read inside tx after the order's row lock was taken (so no other request
// on the order changes it before tx ends): its amount, less its returns,
// less the discounts of its used coupons (their live use log rows) and of a
// hold that still holds coupons. A coupon redeemed one step at a time is
// priced on it, so that the discounts of an order never sum over its amount
// (docs/checkout.md, "One amount per order").
func discountLeft(tx *gorm.DB, orderID string, now time.Time) (left, kept int64, currency string, err error) {
	var row struct {
		Kept, Used, Held int64
		Currency         string
	}
	err = tx.Raw(discountsSQL, false, HoldHeld, now, orderID).Scan(&row).Error
	if err != nil {
		return 0, 0, "", err
	}
	return max(row.Kept-row.Used-row.Held, 0), row.Kept, row.Currency, nil
}

// checkDiscounts refuses, inside tx after the order's row lock was taken,
// a hold or a confirm that would bring the order's discounts (its used
// coupons' and its held hold's) over what it kept of its amount: a hold or
// a late confirm next to coupons redeemed one step at a time
// (docs/checkout.md, "One amount per order").
func checkDiscounts(tx *gorm.DB, orderID string, now time.Time) error {
	var row struct{ Kept, Used, Held int64 }
	if err := tx.Raw(discountsSQL, false, HoldHeld, now, orderID).Scan(&row).Error; err != nil {
		return err
	}
	if over := row.Used + row.Held - row.Kept; over > 0 {
		return models.Errorf(models.CodeNotCombinable,
			"the coupons of order %s would discount %d cents of its %d: those redeemed on it already leave too little", orderID, row.Used+row.Held, row.Kept)
	}
	return nil
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
	var row struct{ Kept, Used, Held int64 }
	if err := db.Raw(discountsSQL, false, HoldHeld, now, o.OrderID).Scan(&row).Error; err != nil {
		return 0, err
	}
	return max(row.Kept-row.Used-row.Held, 0), nil
}

// discountsSQL reads an order's kept amount, the discounts of its used
// coupons (their live use log rows) and of its hold while held and not past
// its time (a lapsed hold is expired for everyone, swept or not:
// docs/checkout.md), and its currency.
const discountsSQL = `SELECT o.amount_cents - o.returned_cents AS kept,
		COALESCE((SELECT SUM(l.discount_cents) FROM order_coupons oc
			JOIN coupon_use_log l ON l.coupon_id = oc.coupon_id AND l.order_id = oc.order_id AND l.undo_flag = ?
			WHERE oc.order_id = o.order_id), 0) AS used,
		CASE WHEN o.hold_state = ? AND o.hold_expires_at > ? THEN o.discount_cents ELSE 0 END AS held,
		COALESCE(o.currency, '') AS currency
		FROM checkout_orders o WHERE o.order_id = ?`
