package checkout

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
)

// OrderItem is one line of an order with lines as a return shows it: its
// SKU, unit price, units bought and returned, and the discount the coupons
// the order still uses give on it (less what returns took back).
type OrderItem struct {
	LineID, SKU      string
	UnitPriceCents   int64
	Quantity         int64
	ReturnedQuantity int64
	DiscountCents    int64
}

// OrderItems is an order's lines for a return by item; Lined is false for
// an order redeemed for an amount (returned by amount, ReturnPart).
type OrderItems struct {
	OrderID       string
	Currency      string
	Lined         bool
	Items         []OrderItem
	ShippingCents int64
}

// itemDiscount is what a return reads of one coupon's discount on a line.
type itemDiscount struct {
	LineNo                int
	DiscountCents         int64
	ReturnedDiscountCents int64
	Units                 *string
}

// OrderItems reads an order's lines for a return by item (docs/returns.md,
// docs/pages.md), changing nothing. Errors: CodeInvalidRequest (field
// order_id), CodeNotRedeemed (no such order), CodeUnavailable.
func (s *Checkout) OrderItems(ctx context.Context, orderID string) (*OrderItems, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	o, err := s.readReturnableOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	db := s.DB.WithContext(ctx)
	var lines []OrderLine
	if err := db.Where("order_id = ?", orderID).Order("line_no").Find(&lines).Error; err != nil {
		return nil, core.DBError("order lines", err)
	}
	ds, err := s.itemDiscounts(ctx, orderID)
	if err != nil {
		return nil, err
	}
	out := &OrderItems{OrderID: orderID, Currency: s.orderCurrency(&o), Lined: len(lines) > 0, ShippingCents: o.ShippingCents}
	for _, l := range lines {
		it := OrderItem{LineID: l.LineID, SKU: l.SKU, UnitPriceCents: l.UnitPriceCents, Quantity: l.Quantity,
			ReturnedQuantity: l.ReturnedQuantity}
		for _, d := range ds {
			if d.LineNo == l.LineNo {
				it.DiscountCents += d.DiscountCents - d.ReturnedDiscountCents
			}
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// readReturnableOrder reads the order a return or its preview is of: one
// the service never saw has nothing to return (CodeNotRedeemed).
func (s *Checkout) readReturnableOrder(ctx context.Context, orderID string) (CheckoutOrder, error) {
	o, found, err := s.ReadOrder(ctx, orderID)
	if err == nil && !found {
		err = models.Errorf(models.CodeNotRedeemed, "order %s has no redeemed coupons to return", orderID)
	}
	return o, err
}

// itemDiscounts reads the discounts of the coupons the order still uses.
func (s *Checkout) itemDiscounts(ctx context.Context, orderID string) ([]itemDiscount, error) {
	var ds []itemDiscount
	if err := s.DB.WithContext(ctx).Raw(`SELECT d.line_no, d.discount_cents, d.returned_discount_cents, d.units
		FROM order_line_discounts d JOIN coupon_use_log l ON l.coupon_id = d.coupon_id AND l.order_id = d.order_id AND l.undo_flag = ?
		WHERE d.order_id = ? ORDER BY d.coupon_id, d.line_no`, false, orderID).Scan(&ds).Error; err != nil {
		return nil, core.DBError("order line discounts", err)
	}
	return ds, nil
}

// PreviewReturnLines says what ReturnLines would answer for a return of
// these units, changing nothing: the return's own plan (planLinesReturn)
// on the order as it stands, without the write. The cashier reads it
// before recording (docs/pages.md); ReturnLines decides again in its
// transaction. A hold pending refuses it as it refuses the return (409
// held). Errors: as ReturnLines's, without the return id's.
func (s *Checkout) PreviewReturnLines(ctx context.Context, orderID string, lines []ReturnLine) (*ReturnResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	if err := checkReturnLines(lines); err != nil {
		return nil, err
	}
	o, err := s.readReturnableOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	now := s.Clock().Truncate(time.Microsecond)
	if err := holdPending(&o, now); err != nil {
		return nil, err
	}
	db := s.DB.WithContext(ctx)
	rows, err := returnLineRows(db, orderID)
	if err != nil {
		return nil, err
	}
	asks := make([]returnAsk, len(lines))
	asked := make(map[int]int64, len(lines))
	for i, l := range lines {
		k := slices.IndexFunc(rows, func(r returnLineRow) bool { return r.LineID == l.LineID })
		if k < 0 {
			return nil, models.Invalid(fmt.Sprintf("lines[%d].line_id", i), "order %s has no line %q", orderID, l.LineID)
		}
		r := rows[k]
		if left := r.Quantity - r.ReturnedQuantity; l.Quantity > left {
			return nil, exceedsLine(i, orderID, r, left, l.Quantity)
		}
		asks[i] = returnAsk{lineNo: r.LineNo, unitPrice: r.UnitPriceCents, before: r.ReturnedQuantity, n: l.Quantity}
		asked[r.LineNo] = l.Quantity
	}
	full := true
	for _, r := range rows {
		full = full && r.ReturnedQuantity+asked[r.LineNo] >= r.Quantity
	}
	ds, err := returnDiscounts(db, orderID, now)
	if err != nil {
		return nil, core.DBError("order line discounts", err)
	}
	plan, err := planLinesReturn(asks, ds, full)
	if err != nil {
		return nil, core.DBError("order line discounts", err)
	}
	res := &ReturnResult{Lined: true, Currency: s.orderCurrency(&o), Lines: make([]models.ReturnedLine, len(lines)), FullRefund: full,
		ShippingDiscountReturnedCents: plan.shipping}
	for i, a := range asks {
		pl := plan.lines[a.lineNo]
		res.Lines[i] = models.ReturnedLine{LineID: lines[i].LineID, Quantity: a.n, RefundCents: pl.refund, DiscountCents: pl.discount}
		res.RefundCents += pl.refund
	}
	for _, back := range plan.perCoupon {
		res.DiscountReturnedCents += back
	}
	res.ClawbackCents = res.DiscountReturnedCents
	return res, nil
}
