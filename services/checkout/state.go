package checkout

import (
	"time"

	"couponsvc/models"
	"couponsvc/services/pricing"

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
