package checkout

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"

	"gorm.io/gorm"
)

// ShippingLineNo is the line_no of a coupon's part of the shipping in
// order_line_discounts.
const ShippingLineNo = -1

// OrderLine is one line of an order with lines (table order_lines), written
// once with the order's first hold or one-step redemption; line_no is its
// index in the cart.
type OrderLine struct {
	OrderID          string `gorm:"primaryKey"`
	LineNo           int    `gorm:"primaryKey"`
	LineID           string
	SKU              string `gorm:"column:sku"`
	ProductID        string
	CategoryIDs      *string `gorm:"column:category_ids"`
	Quantity         int64
	UnitPriceCents   int64
	Discountable     bool
	ReturnedQuantity int64
	// CompareAtPriceCents is the line's compare-at price (0: none), kept
	// so that the order's cart is the one priced.
	CompareAtPriceCents int64
}

func (OrderLine) TableName() string { return "order_lines" }

// LineDiscountRow is one coupon's discount on one line of an order (table
// order_line_discounts; LineNo ShippingLineNo is its part of the shipping),
// with its split over the line's units. Written with the hold or the
// one-step redemption, kept by confirm, never re-priced.
type LineDiscountRow struct {
	OrderID               string `gorm:"primaryKey"`
	CouponID              int64  `gorm:"primaryKey"`
	LineNo                int    `gorm:"primaryKey"`
	TemplateID            int64
	DiscountCents         int64
	ReturnedDiscountCents int64
	// CarriedCents is the part of DiscountCents (and of
	// ReturnedDiscountCents) an earlier use of the coupon on the order
	// left on units returned before it was redeemed again (writeAllocation):
	// the coupon's own discount on the line is the rest.
	CarriedCents int64
	// Units is JSON [{"first":0,"count":2,"per_unit_cents":334}], NULL for
	// the shipping.
	Units     *string
	CreatedAt time.Time
}

func (LineDiscountRow) TableName() string { return "order_line_discounts" }

// unitRun is a pricing.UnitRun as order_line_discounts.units keeps it.
type unitRun struct {
	First        int64 `json:"first"`
	Count        int64 `json:"count"`
	PerUnitCents int64 `json:"per_unit_cents"`
}

// EncodeUnits is the units column of a coupon's share of a line: the JSON
// [{"first":0,"count":2,"per_unit_cents":334}] that DecodeUnits reads,
// written digit by digit (it is only integers), byte for byte what
// encoding/json gives.
func EncodeUnits(runs []pricing.UnitRun) string {
	b := make([]byte, 0, 2+len(runs)*48)
	b = append(b, '[')
	for i, u := range runs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"first":`...)
		b = strconv.AppendInt(b, u.First, 10)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, u.Count, 10)
		b = append(b, `,"per_unit_cents":`...)
		b = strconv.AppendInt(b, u.PerUnitCents, 10)
		b = append(b, '}')
	}
	b = append(b, ']')
	return string(b)
}

// DecodeUnits reads the units column of order_line_discounts.
func DecodeUnits(s *string) ([]pricing.UnitRun, error) {
	if s == nil || *s == "" {
		return nil, nil
	}
	var in []unitRun
	if err := json.Unmarshal([]byte(*s), &in); err != nil {
		return nil, fmt.Errorf("order_line_discounts.units %q: %w", *s, err)
	}
	out := make([]pricing.UnitRun, len(in))
	for i, u := range in {
		out[i] = pricing.UnitRun{First: u.First, Count: u.Count, PerUnitCents: u.PerUnitCents}
	}
	return out, nil
}

// orderLineColumns are the columns writeLines gives each order_lines row.
const orderLineColumns = `(order_id, line_no, line_id, sku, product_id, category_ids, quantity, unit_price_cents, discountable, returned_quantity, compare_at_price_cents)`

// writeLines writes the order's lines inside tx, after its row was taken,
// unless they are there: an order's lines are written once, with its first
// hold or one-step redemption (a later one carries the same cart, which the
// row's cart_hash guard checked). fresh says tx inserted the order's row:
// an order seen without a row has no lines (they are only written after
// its row, and neither is ever deleted), so they go in without a look.
// One multi-row INSERT, whatever the number of lines.
func writeLines(tx *gorm.DB, orderID string, oc orderCart, fresh bool) error {
	if !oc.lined() {
		return nil
	}
	if !fresh {
		var n int64
		if err := tx.Model(&OrderLine{}).Where("order_id = ?", orderID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
	lines := oc.cart.Lines
	// The integers are written into the statement, the strings passed as
	// arguments: each argument costs gorm, database/sql and the driver a
	// conversion, the digits nothing (docs/statements.md, "What a request
	// costs the service").
	q := make([]byte, 0, len(orderLineColumns)+40+len(lines)*48)
	q = append(q, "INSERT INTO order_lines "...)
	q = append(q, orderLineColumns...)
	q = append(q, " VALUES "...)
	args := make([]any, 0, len(lines)*5)
	for i := range lines {
		l := &lines[i]
		if i > 0 {
			q = append(q, ',')
		}
		q = append(q, "(?,"...)
		q = strconv.AppendInt(q, int64(i), 10)
		q = append(q, ",?,?,?,?,"...)
		q = strconv.AppendInt(q, l.Quantity, 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, l.UnitPriceCents, 10)
		if l.NotDiscountable {
			q = append(q, ",0,0,"...)
		} else {
			q = append(q, ",1,0,"...)
		}
		q = strconv.AppendInt(q, l.CompareAtPriceCents, 10)
		q = append(q, ')')
		args = append(args, orderID, l.ID, l.SKU, l.ProductID, categoriesJSON(l.CategoryIDs))
	}
	return tx.Exec(string(q), args...).Error
}

// loadLines reads the cart of an order with lines (its lines, shipping and
// currency) and the units of each line returned so far, in one SELECT.
// The rows are scanned by hand, not by gorm's reflection of the model (the
// SELECT still goes through gorm's chain: docs/statements.md).
func loadLines(db *gorm.DB, o *CheckoutOrder) (*pricing.Cart, []int64, error) {
	rs, err := db.Raw(`SELECT line_no, line_id, sku, product_id, category_ids, quantity, unit_price_cents, discountable, returned_quantity, compare_at_price_cents
		FROM order_lines WHERE order_id = ? ORDER BY line_no`, o.OrderID).Rows()
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	c := &pricing.Cart{Currency: o.Currency, ShippingCents: o.ShippingCents}
	var returned []int64
	for rs.Next() {
		var r OrderLine
		if err := rs.Scan(&r.LineNo, &r.LineID, &r.SKU, &r.ProductID, &r.CategoryIDs, &r.Quantity, &r.UnitPriceCents, &r.Discountable,
			&r.ReturnedQuantity, &r.CompareAtPriceCents); err != nil {
			return nil, nil, err
		}
		returned = append(returned, r.ReturnedQuantity)
		l := pricing.Line{ID: r.LineID, SKU: r.SKU, ProductID: r.ProductID, Quantity: r.Quantity,
			UnitPriceCents: r.UnitPriceCents, NotDiscountable: !r.Discountable, CompareAtPriceCents: r.CompareAtPriceCents}
		if r.CategoryIDs != nil && *r.CategoryIDs != "" {
			if err := json.Unmarshal([]byte(*r.CategoryIDs), &l.CategoryIDs); err != nil {
				return nil, nil, fmt.Errorf("order_lines.category_ids of order %s line %d: %w", o.OrderID, r.LineNo, err)
			}
		}
		c.Lines = append(c.Lines, l)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	if c.Lines == nil {
		c.Lines, returned = []pricing.Line{}, []int64{}
	}
	return c, returned, nil
}

// writeAllocation writes a coupon's discount on the order's lines (and its
// shipping) inside tx: one row per line it discounts, in one multi-row
// INSERT. With replace (an order that existed before the request), in
// place of the rows an earlier use of the coupon on the order left (a
// coupon refunded and redeemed again on the same order supersedes its
// earlier discount there: docs/returns.md, "A refund"); a new order has
// none, and no DELETE runs. carry is, by line, the earlier part the
// coupon keeps on units returned before (orderState.carried): written in
// the same rows, counted as carried and as returned.
func writeAllocation(tx *gorm.DB, orderID string, c *models.Coupon, r *pricing.CouponResult, now time.Time, replace bool,
	carry map[int][]pricing.UnitRun) error {
	if r == nil {
		return nil
	}
	if replace {
		if err := dropAllocation(tx, orderID, []int64{c.ID}); err != nil {
			return err
		}
	}
	// As writeLines: the integers in the statement, the strings and the
	// time as arguments.
	var q []byte
	args := make([]any, 0, (len(r.Lines)+1)*4)
	row := func(line int, discount int64, kept []pricing.UnitRun, units *string) {
		carried := runsCents(kept)
		if len(args) == 0 {
			q = make([]byte, 0, 180+(len(r.Lines)+1)*56)
			q = append(q, `INSERT INTO order_line_discounts (order_id, coupon_id, line_no, template_id, discount_cents, returned_discount_cents, carried_cents, units, actions, created_at) VALUES `...)
		} else {
			q = append(q, ',')
		}
		q = append(q, "(?,"...)
		q = strconv.AppendInt(q, c.ID, 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, int64(line), 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, c.TemplateID, 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, discount+carried, 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, carried, 10)
		q = append(q, ',')
		q = strconv.AppendInt(q, carried, 10)
		q = append(q, ",?,?,?)"...)
		args = append(args, orderID, units, core.EncodeActionParts(r, line, kept), now)
	}
	for _, ls := range r.Lines {
		kept := carry[ls.Line]
		if ls.DiscountCents == 0 && len(kept) == 0 {
			continue
		}
		units := EncodeUnits(append(slices.Clip(kept), ls.Units...))
		row(ls.Line, ls.DiscountCents, kept, &units)
	}
	for _, line := range slices.Sorted(maps.Keys(carry)) {
		if !slices.ContainsFunc(r.Lines, func(ls pricing.LineShare) bool { return ls.Line == line }) {
			units := EncodeUnits(carry[line])
			row(line, 0, carry[line], &units)
		}
	}
	if r.ShippingCents > 0 {
		row(ShippingLineNo, r.ShippingCents, nil, nil)
	}
	if len(args) == 0 {
		return nil
	}
	return tx.Exec(string(q), args...).Error
}

// dropAllocation deletes the line discounts of coupons leaving the order
// (a released or expired hold), inside tx.
func dropAllocation(tx *gorm.DB, orderID string, couponIDs []int64) error {
	if len(couponIDs) == 0 {
		return nil
	}
	return tx.Exec(`DELETE FROM order_line_discounts WHERE order_id = ? AND coupon_id IN ?`, orderID, couponIDs).Error
}

// A coupon refunded off an order and held on it again parks its earlier
// rows while its hold is pending (parkAllocation): they stay under the
// negated coupon id, out of every reader's way, until the hold ends. A
// released or expired hold puts them back (restoreAllocation: the order
// still counts them, settled); a confirm drops them (dropParked: the
// confirmed rows supersede them, carrying their part on the units returned
// before). docs/returns.md, "A refund". A hold parks a coupon's rows only
// when the order's state showed some (CheckoutRequest.park), and says so
// on the order's row (hold_parked): a hold that parked none ends without
// the UPDATE that puts them back (docs/checkout.md).

// parkAllocation parks the coupon's rows on the order inside tx, in place
// of the DELETE of writeAllocation's replace: the order's earlier rows of
// a coupon it holds again.
func parkAllocation(tx *gorm.DB, orderID string, couponID int64) error {
	return tx.Exec(`UPDATE order_line_discounts SET coupon_id = ? WHERE order_id = ? AND coupon_id = ?`, -couponID, orderID, couponID).Error
}

// restoreAllocation puts back, inside tx, the rows the coupons of a hold
// that ends parked on the order.
func restoreAllocation(tx *gorm.DB, orderID string, couponIDs []int64) error {
	if len(couponIDs) == 0 {
		return nil
	}
	return tx.Exec(`UPDATE order_line_discounts SET coupon_id = -coupon_id WHERE order_id = ? AND coupon_id IN ?`,
		orderID, negated(couponIDs)).Error
}

// dropParked deletes, inside tx, the rows the coupons of a confirmed hold
// parked on the order.
func dropParked(tx *gorm.DB, orderID string, couponIDs []int64) error {
	return dropAllocation(tx, orderID, negated(couponIDs))
}

// negated is the ids, negated: the coupon ids of parked rows.
func negated(ids []int64) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = -id
	}
	return out
}

// parkedIn says whether rows read by coupon id hold parked ones.
func parkedIn(rows map[int64][]LineDiscountRow) bool {
	for id := range rows {
		if id < 0 {
			return true
		}
	}
	return false
}

// liveAllocation reads the line discounts of the order's live coupons
// (those in order_coupons), by coupon id, and the rows they parked (by
// the negated id).
func liveAllocation(db *gorm.DB, orderID string) (map[int64][]LineDiscountRow, error) {
	return allocationWhere(db, "order_id = ? AND (coupon_id IN (SELECT coupon_id FROM order_coupons WHERE order_id = ?) OR -coupon_id IN (SELECT coupon_id FROM order_coupons WHERE order_id = ?))",
		orderID, orderID, orderID)
}

// allocationWhere reads the order_line_discounts rows the condition
// selects, by coupon id, in one SELECT.
// The rows are scanned by hand, as loadLines'.
func allocationWhere(db *gorm.DB, cond string, args ...any) (map[int64][]LineDiscountRow, error) {
	rs, err := db.Raw(`SELECT order_id, coupon_id, line_no, template_id, discount_cents, returned_discount_cents, carried_cents, units, created_at
		FROM order_line_discounts WHERE `+cond+` ORDER BY coupon_id, line_no`, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[int64][]LineDiscountRow{}
	for rs.Next() {
		var r LineDiscountRow
		if err := rs.Scan(&r.OrderID, &r.CouponID, &r.LineNo, &r.TemplateID, &r.DiscountCents, &r.ReturnedDiscountCents, &r.CarriedCents,
			&r.Units, &r.CreatedAt); err != nil {
			return nil, err
		}
		out[r.CouponID] = append(out[r.CouponID], r)
	}
	return out, rs.Err()
}

// LineDiscount is one line of an answer with lines: the line's discount and
// each coupon's part of it.
type LineDiscount struct {
	LineID        string       `json:"line_id"`
	DiscountCents int64        `json:"discount_cents"`
	Coupons       []LineCoupon `json:"coupons"`
}

// LineCoupon is one coupon's part of a line's discount.
type LineCoupon struct {
	CouponCode    string `json:"coupon_code"`
	DiscountCents int64  `json:"discount_cents"`
}

// allocation is what the coupons of an order take off it: per coupon (in
// the order of the request or the hold), and for an order with lines per
// line and on the shipping.
type allocation struct {
	perCoupon []int64
	// shares holds each coupon's pricing result (nil when read back from
	// the database).
	shares   []*pricing.CouponResult
	lined    bool
	currency string
	lines    []LineDiscount
	shipping int64
	total    int64
	// rows are the stored rows read back, by coupon id (a parked row by
	// the negated id).
	rows map[int64][]LineDiscountRow
	// carry is what the coupons keep of their earlier part on the order
	// (a late confirm's, orderState.carriedAll), by coupon id.
	carry map[int64]map[int][]pricing.UnitRun
}

// allocationOf is the allocation a pricing result gives.
func allocationOf(r *pricing.Result, cart *pricing.Cart, lined bool) *allocation {
	a := &allocation{perCoupon: make([]int64, len(r.Coupons)), shares: make([]*pricing.CouponResult, len(r.Coupons)),
		lined: lined, currency: cart.Currency, shipping: r.ShippingDiscountCents, total: r.DiscountCents}
	for i := range r.Coupons {
		a.perCoupon[i] = r.Coupons[i].DiscountCents
		a.shares[i] = &r.Coupons[i]
	}
	if lined {
		a.lines = make([]LineDiscount, len(r.Lines))
		for i, l := range r.Lines {
			ld := LineDiscount{LineID: l.ID, DiscountCents: l.DiscountCents, Coupons: make([]LineCoupon, len(l.Coupons))}
			for k, cp := range l.Coupons {
				ld.Coupons[k] = LineCoupon{CouponCode: cp.Code, DiscountCents: cp.DiscountCents}
			}
			a.lines[i] = ld
		}
	}
	return a
}

// storedAllocation is the allocation of the coupons (in their order) as
// stored for an order with lines.
func storedAllocation(db *gorm.DB, o *CheckoutOrder, cs []*models.Coupon) (*allocation, error) {
	var ids []string
	if err := db.Raw(`SELECT line_id FROM order_lines WHERE order_id = ? ORDER BY line_no`, o.OrderID).Scan(&ids).Error; err != nil {
		return nil, err
	}
	rows, err := liveAllocation(db, o.OrderID)
	if err != nil {
		return nil, err
	}
	return allocationOfRows(o, cs, ids, rows)
}

// heldAllocation is storedAllocation for a confirm of a held order that
// carries the order's cart (its hash checked): the lines are the cart's,
// and the coupons' stored rows, held by the order, are read in one SELECT
// of what the answer shows (no units). Never re-priced (docs/checkout.md,
// "Where a cart is kept").
func heldAllocation(db *gorm.DB, o *CheckoutOrder, cs []*models.Coupon, cart *pricing.Cart) (*allocation, error) {
	couponIDs := make([]int64, 0, 2*len(cs))
	for _, c := range cs {
		couponIDs = append(couponIDs, c.ID, -c.ID) // and the rows it parked
	}
	// Scanned by hand, not by gorm's reflection of the model (it still goes
	// through gorm's chain: docs/statements.md).
	rs, err := db.Raw(`SELECT coupon_id, line_no, discount_cents, carried_cents FROM order_line_discounts WHERE order_id = ? AND coupon_id IN ? ORDER BY coupon_id, line_no`,
		o.OrderID, couponIDs).Rows()
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	rows := make(map[int64][]LineDiscountRow, len(cs))
	for rs.Next() {
		r := LineDiscountRow{OrderID: o.OrderID}
		if err := rs.Scan(&r.CouponID, &r.LineNo, &r.DiscountCents, &r.CarriedCents); err != nil {
			return nil, err
		}
		rows[r.CouponID] = append(rows[r.CouponID], r)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	ids := make([]string, len(cart.Lines))
	for i, l := range cart.Lines {
		ids[i] = l.ID
	}
	return allocationOfRows(o, cs, ids, rows)
}

// allocationOfRows is the allocation of the coupons (in their order) on
// the order's lines (their line_ids, by line_no) from their stored rows.
func allocationOfRows(o *CheckoutOrder, cs []*models.Coupon, lineIDs []string, rows map[int64][]LineDiscountRow) (*allocation, error) {
	a := &allocation{perCoupon: make([]int64, len(cs)), shares: make([]*pricing.CouponResult, len(cs)), lined: true,
		currency: o.Currency, lines: make([]LineDiscount, len(lineIDs)), rows: rows}
	for i, id := range lineIDs {
		a.lines[i] = LineDiscount{LineID: id, Coupons: []LineCoupon{}}
	}
	for i, c := range cs {
		for _, r := range rows[c.ID] {
			r.DiscountCents -= r.CarriedCents // the coupon's own part
			if r.DiscountCents == 0 {
				continue
			}
			a.perCoupon[i] += r.DiscountCents
			a.total += r.DiscountCents
			if r.LineNo == ShippingLineNo {
				a.shipping += r.DiscountCents
				continue
			}
			if r.LineNo < 0 || r.LineNo >= len(a.lines) {
				return nil, fmt.Errorf("order %s: a line discount of coupon %d names line %d of %d", o.OrderID, c.ID, r.LineNo, len(a.lines))
			}
			ld := &a.lines[r.LineNo]
			ld.DiscountCents += r.DiscountCents
			ld.Coupons = append(ld.Coupons, LineCoupon{CouponCode: c.Code, DiscountCents: r.DiscountCents})
		}
	}
	return a, nil
}

// zeroLines is the lines of a cart with no discount (a refused request).
func zeroLines(cart *pricing.Cart) []LineDiscount {
	out := make([]LineDiscount, len(cart.Lines))
	for i, l := range cart.Lines {
		out[i] = LineDiscount{LineID: l.ID, Coupons: []LineCoupon{}}
	}
	return out
}

// eventOf is the allocation of the i-th coupon (c) as its events carry
// it: nil for an amount-only order.
func (a *allocation) eventOf(i int, c *models.Coupon) ([]models.EventLine, *int64) {
	if a == nil || !a.lined {
		return nil, nil
	}
	out := []models.EventLine{}
	if r := a.shares[i]; r != nil {
		for _, ls := range r.Lines {
			out = append(out, models.EventLine{LineID: a.lines[ls.Line].LineID, DiscountCents: ls.DiscountCents})
		}
		return out, ptrTo(r.ShippingCents)
	}
	var ship int64
	for _, r := range a.rows[c.ID] {
		if r.LineNo == ShippingLineNo {
			ship += r.DiscountCents
		} else if own := r.DiscountCents - r.CarriedCents; own != 0 && r.LineNo >= 0 && r.LineNo < len(a.lines) {
			out = append(out, models.EventLine{LineID: a.lines[r.LineNo].LineID, DiscountCents: own})
		}
	}
	return out, &ship
}
