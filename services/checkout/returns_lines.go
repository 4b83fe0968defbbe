package checkout

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// ReturnLine asks to return Quantity units of the order's line LineID.
type ReturnLine struct {
	LineID   string
	Quantity int64
}

// returnLineRow is what a return by line reads of an order's line
// (table order_lines).
type returnLineRow struct {
	LineNo           int
	LineID           string
	Quantity         int64
	UnitPriceCents   int64
	ReturnedQuantity int64
}

// returnDiscountRow is one live coupon's discount on one line of an order
// (table order_line_discounts; line_no -1 is the shipping).
type returnDiscountRow struct {
	CouponID              int64
	LineNo                int
	DiscountCents         int64
	ReturnedDiscountCents int64
	Units                 *string
	Live                  bool
}

// checkReturnLines checks the lines of a return by line before anything is
// read: 1..MaxCartLines lines, each naming a line once with
// 1..MaxLineQuantity units (a cart's bounds). Errors name the field (lines, lines[i].line_id, lines[i].quantity).
func checkReturnLines(lines []ReturnLine) error {
	if len(lines) == 0 || len(lines) > MaxCartLines {
		return models.Invalid("lines", "must list 1 to %d lines", MaxCartLines)
	}
	seen := make(map[string]int, len(lines))
	for i, l := range lines {
		field := fmt.Sprintf("lines[%d].line_id", i)
		switch {
		case l.LineID == "":
			return models.Invalid(field, "is required")
		case len(l.LineID) > MaxCartIDLen:
			return models.Invalid(field, "must be 1 to %d characters", MaxCartIDLen)
		}
		if j, ok := seen[l.LineID]; ok {
			return models.Invalid(field, "names line %q, as lines[%d] does: a return names each line once", l.LineID, j)
		}
		seen[l.LineID] = i
		if l.Quantity < 1 || l.Quantity > MaxLineQuantity {
			return models.Invalid(fmt.Sprintf("lines[%d].quantity", i), "must be between 1 and %d", MaxLineQuantity)
		}
	}
	return nil
}

// ReturnLines records a return of units of an order's lines, under the
// caller's return id (docs/returns.md). Units come back in each line's
// order: a line of which r units came back before returns units r ..
// r+n-1, whose stored discount (per coupon, pricing.UnitsDiscountCents over
// its order_line_discounts row) goes back to the campaign and whose price
// less that discount (pricing.Return) is what the shopper gets back.
//
// One transaction takes the order's row first (docs/checkout.md, "Lock
// order"), then adds each line's units by a guarded UPDATE of order_lines
// (`... WHERE returned_quantity + ? <= quantity`, a CHECK backs it), adds
// the returned discount to each coupon's order_line_discounts row, lowers
// each coupon's coupon_use_log.discount_cents by it (the campaign's spent
// figure), adds the returned price to checkout_orders.returned_cents and
// keeps the return once in order_returns with its answer. Only coupons the
// order still uses (a live use log row) count. The return that brings every
// line to its quantity completes the order: the coupons' discount of the
// shipping comes back with it (so that returning everything gives back
// exactly the whole discount), the shipping joins returned_cents, and after
// the commit each coupon is refunded as Refund does (restore or recycle by
// its template). The same return_id with the same lines again → duplicate
// with the first answer (and a completion cut short is finished then); with
// other lines → idempotency_mismatch. Each return writes an order.returned
// event and an order.return audit entry in its transaction.
//
// Errors: CodeInvalidRequest (field order_id, return_id, lines,
// lines[i].line_id (also an unknown line) or lines[i].quantity),
// CodeNotRedeemed (no order, or no used coupons on it),
// CodeReturnExceedsOrder (naming the line), CodeIdempotencyMismatch (field
// lines), CodeBusy, CodeUnavailable.
func (s *Checkout) ReturnLines(ctx context.Context, actor, orderID, returnID string, lines []ReturnLine) (*ReturnResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	if err := models.ValidateOrderID("return_id", returnID); err != nil {
		return nil, err
	}
	if err := checkReturnLines(lines); err != nil {
		return nil, err
	}
	return s.runReturn(ctx, actor, orderID, func() (*ReturnResult, error) {
		return s.returnLinesOnce(ctx, core.ActorName(actor), orderID, returnID, lines)
	})
}

// sameReturnLines reports whether two returns name the same units of the
// same lines, in any order.
func sameReturnLines(a []ReturnLine, b []models.ReturnedLine) bool {
	if len(a) != len(b) {
		return false
	}
	want := make(map[string]int64, len(b))
	for _, l := range b {
		want[l.LineID] = l.Quantity
	}
	for _, l := range a {
		if q, ok := want[l.LineID]; !ok || q != l.Quantity {
			return false
		}
	}
	return true
}

// replayReturn answers a return_id already recorded for the order.
func replayReturn(prev *orderReturn, orderID, returnID string, lines []ReturnLine) (*ReturnResult, error) {
	if prev.ReturnLines == nil {
		return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "lines",
			Message: fmt.Sprintf("return %s of order %s was recorded for %d cents, not by line: a return_id names one return", returnID, orderID, prev.ReturnedAmountCents)}
	}
	var kept returnAnswer
	if err := json.Unmarshal([]byte(*prev.ReturnLines), &kept); err != nil {
		return nil, models.Unavailable("the database", fmt.Errorf("return %s of order %s: %w", returnID, orderID, err))
	}
	if !sameReturnLines(lines, kept.Lines) {
		return nil, &models.Error{Code: models.CodeIdempotencyMismatch, Field: "lines",
			Message: fmt.Sprintf("return %s of order %s was recorded for other lines: a return_id names one return", returnID, orderID)}
	}
	res := prev.result()
	res.Duplicate = true
	res.Lined, res.Lines = true, kept.Lines
	res.RefundCents, res.ShippingDiscountReturnedCents = kept.RefundCents, kept.ShippingDiscountReturnedCents
	res.DiscountReturnedCents = prev.ClawbackCents
	return res, nil
}

// returnAnswer is what order_returns.return_lines keeps of a return by
// line, with the row's own columns the rest of its answer.
type returnAnswer struct {
	Lines                         []models.ReturnedLine `json:"lines"`
	RefundCents                   int64                 `json:"refund_cents"`
	ShippingDiscountReturnedCents int64                 `json:"shipping_discount_returned_cents"`
}

// returnLinesOnce decides and writes one return by line (ReturnLines) on
// a fresh read: a replay answers the first return; the lines' units, the
// plan of what each gives back (planLineReturn) and every write in one
// transaction under the order's row lock.
func (s *Checkout) returnLinesOnce(ctx context.Context, actor, orderID, returnID string, lines []ReturnLine) (*ReturnResult, error) {
	db := s.DB.WithContext(ctx)
	var prev orderReturn
	if err := db.Where("order_id = ? AND return_id = ?", orderID, returnID).Limit(1).Find(&prev).Error; err != nil {
		return nil, core.DBError("return", err)
	}
	if prev.ID != 0 {
		return replayReturn(&prev, orderID, returnID, lines)
	}
	o, err := s.readReturnableOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	now := s.Clock().Truncate(time.Microsecond)
	if err := s.holdBeforeReturn(ctx, &o, now); err != nil {
		return nil, err
	}
	rows, err := returnLineRows(db, orderID)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]returnLineRow, len(rows))
	for _, r := range rows {
		byID[r.LineID] = r
	}
	// The lines in the order's line order: each order_lines row is taken in
	// one order by every return (the order's row serialises them anyway).
	type asked struct {
		idx int // in the request
		row returnLineRow
		n   int64
	}
	todo := make([]asked, len(lines))
	for i, l := range lines {
		r, ok := byID[l.LineID]
		if !ok {
			return nil, models.Invalid(fmt.Sprintf("lines[%d].line_id", i), "order %s has no line %q", orderID, l.LineID)
		}
		todo[i] = asked{idx: i, row: r, n: l.Quantity}
	}
	slices.SortFunc(todo, func(a, b asked) int { return cmp.Compare(a.row.LineNo, b.row.LineNo) })

	res := &ReturnResult{Lined: true, Lines: make([]models.ReturnedLine, len(lines))}
	err = db.Transaction(func(tx *gorm.DB) error {
		// The order's row first: every flow on the order queues here. Its
		// guard refuses a hold taken since the read (decided again).
		if r := tx.Exec(`UPDATE checkout_orders SET updated_at = ? WHERE order_id = ?
			AND NOT (COALESCE(hold_state, '') = ? AND hold_expires_at > ?)`, now, orderID, HoldHeld, now); r.Error != nil {
			return r.Error
		} else if r.RowsAffected == 0 {
			return core.ErrRaced
		}
		// Under the order's lock: a racing request with the same return_id
		// that committed first makes this one a replay.
		if err := returnRecorded(tx, orderID, returnID); err != nil {
			return err
		}
		var price int64
		before := make(map[int]int64, len(todo)) // line_no → units returned before this return
		for _, a := range todo {
			r := tx.Exec(`UPDATE order_lines SET returned_quantity = returned_quantity + ?
				WHERE order_id = ? AND line_no = ? AND returned_quantity + ? <= quantity`, a.n, orderID, a.row.LineNo, a.n)
			if r.Error != nil {
				return r.Error
			}
			if r.RowsAffected == 0 {
				var left int64
				if err := tx.Raw(`SELECT quantity - returned_quantity FROM order_lines WHERE order_id = ? AND line_no = ?`,
					orderID, a.row.LineNo).Scan(&left).Error; err != nil {
					return err
				}
				return exceedsLine(a.idx, orderID, a.row, left, a.n)
			}
			var after int64
			if err := tx.Raw(`SELECT returned_quantity FROM order_lines WHERE order_id = ? AND line_no = ?`,
				orderID, a.row.LineNo).Scan(&after).Error; err != nil {
				return err
			}
			before[a.row.LineNo] = after - a.n
			price += a.n * a.row.UnitPriceCents
		}
		ds, err := returnDiscounts(tx, orderID, now)
		if err != nil {
			return err
		}
		var live int64
		if err := tx.Raw(`SELECT COUNT(*) FROM coupon_use_log WHERE order_id = ? AND undo_flag = ?`, orderID, false).Scan(&live).Error; err != nil {
			return err
		}
		if live == 0 {
			return models.Errorf(models.CodeNotRedeemed, "order %s has no redeemed coupons to return", orderID)
		}
		var left int64
		if err := tx.Raw(`SELECT COUNT(*) FROM order_lines WHERE order_id = ? AND returned_quantity < quantity`, orderID).Scan(&left).Error; err != nil {
			return err
		}
		res.FullRefund = left == 0
		asks := make([]returnAsk, len(todo))
		for i, a := range todo {
			asks[i] = returnAsk{lineNo: a.row.LineNo, unitPrice: a.row.UnitPriceCents, before: before[a.row.LineNo], n: a.n}
		}
		plan, err := planLinesReturn(asks, ds, res.FullRefund)
		if err != nil {
			return err
		}
		res.ShippingDiscountReturnedCents = plan.shipping
		perCoupon, backOf, plans := plan.perCoupon, plan.rows, plan.lines
		keys := make([]discountKey, 0, len(backOf))
		for k := range backOf {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b discountKey) int {
			return cmp.Or(cmp.Compare(a.coupon, b.coupon), cmp.Compare(a.line, b.line))
		})
		for _, k := range keys {
			if backOf[k] == 0 {
				continue
			}
			if err := tx.Exec(`UPDATE order_line_discounts SET returned_discount_cents = returned_discount_cents + ?
				WHERE order_id = ? AND coupon_id = ? AND line_no = ?`, backOf[k], orderID, k.coupon, k.line).Error; err != nil {
				return err
			}
		}
		coupons := make([]int64, 0, len(perCoupon))
		for id := range perCoupon {
			coupons = append(coupons, id)
		}
		slices.Sort(coupons)
		for _, id := range coupons {
			if err := tx.Exec(`UPDATE coupon_use_log SET discount_cents = discount_cents - ? WHERE coupon_id = ? AND order_id = ? AND undo_flag = ?`,
				perCoupon[id], id, orderID, false).Error; err != nil {
				return err
			}
			res.DiscountReturnedCents += perCoupon[id]
		}
		for _, a := range todo {
			pl := plans[a.row.LineNo]
			res.Lines[a.idx] = models.ReturnedLine{LineID: a.row.LineID, Quantity: a.n, RefundCents: pl.refund, DiscountCents: pl.discount}
			res.RefundCents += pl.refund
		}
		var cur CheckoutOrder
		if err := tx.Where("order_id = ?", orderID).First(&cur).Error; err != nil {
			return err
		}
		var shipping int64
		if res.FullRefund {
			shipping = cur.ShippingCents
		}
		returned := price + shipping
		r := tx.Exec(`UPDATE checkout_orders SET returned_cents = returned_cents + ? WHERE order_id = ? AND returned_cents + ? <= amount_cents`,
			returned, orderID, returned)
		if r.Error != nil {
			return r.Error
		}
		if r.RowsAffected == 0 {
			// The lines' guarded UPDATEs passed: the order's amount is not
			// its cart's total, a row written by hand.
			return models.Errorf(models.CodeReturnExceedsOrder, "returns of order %s would exceed its amount of %d cents", orderID, cur.AmountCents)
		}
		if err := tx.Raw(`SELECT COALESCE(SUM(discount_cents), 0) FROM coupon_use_log WHERE order_id = ? AND undo_flag = ?`,
			orderID, false).Scan(&res.DiscountKeptCents).Error; err != nil {
			return err
		}
		total := cur.ReturnedCents + returned
		res.KeptAmountCents = cur.AmountCents - total
		res.Currency = s.orderCurrency(&cur)
		res.ClawbackCents = res.DiscountReturnedCents
		kept, err := json.Marshal(returnAnswer{Lines: res.Lines, RefundCents: res.RefundCents,
			ShippingDiscountReturnedCents: res.ShippingDiscountReturnedCents})
		if err != nil {
			return err
		}
		answer := string(kept)
		if err := tx.Create(&orderReturn{OrderID: orderID, ReturnID: returnID, ReturnedAmountCents: returned,
			KeptAmountCents: res.KeptAmountCents, DiscountKeptCents: res.DiscountKeptCents, ClawbackCents: res.ClawbackCents,
			FullRefund: res.FullRefund, ReturnLines: &answer, CreatedAt: now}).Error; err != nil {
			if index, dup := core.UniqueViolation(err); dup && (index == core.UniqueReturn || index == "") {
				return core.ErrRaced // the same return committed first: answered as a duplicate
			}
			return err
		}
		if err := s.Audit(tx, actor, "order.return", "order:"+orderID, fmt.Sprintf(
			"return_id=%s lines=%q refund_cents=%d discount_returned_cents=%d shipping_discount_returned_cents=%d kept_amount_cents=%d discount_kept_cents=%d full=%t",
			returnID, auditLines(res.Lines), res.RefundCents, res.DiscountReturnedCents, res.ShippingDiscountReturnedCents,
			res.KeptAmountCents, res.DiscountKeptCents, res.FullRefund)); err != nil {
			return err
		}
		return s.events.EmitEvent(tx, models.EventOrderReturned, models.OrderReturnEvent{OrderID: orderID, ReturnID: returnID,
			ReturnedAmountCents: returned, OrderAmountCents: cur.AmountCents, ReturnedTotalCents: total,
			KeptAmountCents: res.KeptAmountCents, DiscountKeptCents: res.DiscountKeptCents, ClawbackCents: res.ClawbackCents,
			FullRefund: res.FullRefund, Actor: actor, Currency: res.Currency, Lines: res.Lines, RefundCents: res.RefundCents,
			DiscountReturnedCents: res.DiscountReturnedCents, ShippingDiscountReturnedCents: res.ShippingDiscountReturnedCents})
	})
	if err := core.TxOutcome("order", err); err != nil {
		return nil, err
	}
	return res, nil
}

// returnLineRows reads the order's lines for a return by line, in one
// SELECT; an order of none was redeemed for an amount (invalid_request).
func returnLineRows(db *gorm.DB, orderID string) ([]returnLineRow, error) {
	var rows []returnLineRow
	if err := db.Raw(`SELECT line_no, line_id, quantity, unit_price_cents, returned_quantity FROM order_lines
		WHERE order_id = ? ORDER BY line_no`, orderID).Scan(&rows).Error; err != nil {
		return nil, core.DBError("order lines", err)
	}
	if len(rows) == 0 {
		return nil, models.Invalid("lines", "order %s was redeemed for an amount, not a cart of lines: return it by returned_amount_cents", orderID)
	}
	return rows, nil
}

// exceedsLine refuses the i-th line of a return: n units of line r asked
// where left are left to return.
func exceedsLine(i int, orderID string, r returnLineRow, left, n int64) error {
	return &models.Error{Code: models.CodeReturnExceedsOrder, Field: fmt.Sprintf("lines[%d].quantity", i),
		Message: fmt.Sprintf("line %s of order %s has %d of its %d units left to return, not %d", r.LineID, orderID, left, r.Quantity, n)}
}

// returnDiscounts reads every stored discount of the order, in one SELECT:
// those of the coupons it still uses (Live) go back to their campaigns; a
// refunded or parked coupon's part was given too, and lowers the refund
// (planLinesReturn). The rows of a hold past its time at now are left out
// (expired for everyone, swept or not: a return ends it first, its preview
// reads the order as that would leave it).
func returnDiscounts(db *gorm.DB, orderID string, now time.Time) ([]returnDiscountRow, error) {
	var ds []returnDiscountRow
	err := db.Raw(`SELECT d.coupon_id, d.line_no, d.discount_cents, d.returned_discount_cents, d.units,
		CASE WHEN l.coupon_id IS NULL THEN 0 ELSE 1 END AS live
		FROM order_line_discounts d LEFT JOIN coupon_use_log l ON l.coupon_id = d.coupon_id AND l.order_id = d.order_id AND l.undo_flag = ?
		WHERE d.order_id = ? AND d.coupon_id NOT IN (SELECT u.id FROM user_coupons u
			WHERE u.order_id = ? AND u.status = ? AND u.hold_expires_at <= ?)
		ORDER BY d.coupon_id, d.line_no`, false, orderID, orderID, models.CouponHeld, now).Scan(&ds).Error
	return ds, err
}

// holdBeforeReturn settles the order's hold before a return: a hold past
// its time (expired for everyone, swept or not) ends now and the return is
// decided again (core.ErrRetry), so that its coupons' parts count for no
// one and a late confirm prices them on what the order kept; a hold still
// pending refuses the return (holdPending).
func (s *Checkout) holdBeforeReturn(ctx context.Context, o *CheckoutOrder, now time.Time) error {
	if err := s.endLapsedOrder(ctx, o, now); err != nil {
		return err
	}
	return holdPending(o, now)
}

// holdPending refuses a return of an order whose hold still holds coupons
// (held, not past its time): their allocation, stored with the hold and
// confirmed as held, covers what the return would take back, and the
// shopper has not paid for it yet. The hold is confirmed or released
// first (docs/returns.md, "A return while a hold is pending").
func holdPending(o *CheckoutOrder, now time.Time) error {
	if o.HoldState == nil || *o.HoldState != HoldHeld || o.HoldExpiresAt == nil || !now.Before(*o.HoldExpiresAt) {
		return nil
	}
	codes := ""
	if o.HoldCodes != nil {
		codes = *o.HoldCodes
	}
	return models.Errorf(models.CodeHeld, "order %s has a hold of %s pending until %s: confirm or release it before a return",
		o.OrderID, codes, core.FormatTime(*o.HoldExpiresAt))
}

// auditLines writes the returned lines as the audit entry keeps them:
// line_id:quantity pairs joined by commas.
func auditLines(ls []models.ReturnedLine) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%s:%d", l.LineID, l.Quantity)
	}
	return strings.Join(parts, ",")
}
