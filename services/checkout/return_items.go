package checkout

import (
	"context"
	"fmt"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing"
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
	o, found, err := s.ReadOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, models.Errorf(models.CodeNotRedeemed, "order %s has no redeemed coupons to return", orderID)
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
// these units, changing nothing: per line the money to hand back and the
// discount taken back (each unit's stored discount,
// pricing.UnitsDiscountCents, as ReturnLines takes it back), and, when the
// return completes the order, the coupons' discount of the shipping. The
// cashier reads it before recording (docs/pages.md); ReturnLines decides
// again in its transaction. Errors: as ReturnLines's, without the return
// id's.
func (s *Checkout) PreviewReturnLines(ctx context.Context, orderID string, lines []ReturnLine) (*ReturnResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	if err := checkReturnLines(lines); err != nil {
		return nil, err
	}
	items, err := s.OrderItems(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if !items.Lined {
		return nil, models.Invalid("lines", "order %s was redeemed for an amount, not a cart of lines: return it by returned_amount_cents", orderID)
	}
	var rows []OrderLine
	if err := s.DB.WithContext(ctx).Where("order_id = ?", orderID).Order("line_no").Find(&rows).Error; err != nil {
		return nil, core.DBError("order lines", err)
	}
	ds, err := s.itemDiscounts(ctx, orderID)
	if err != nil {
		return nil, err
	}
	res := &ReturnResult{Lined: true, Currency: items.Currency, Lines: make([]models.ReturnedLine, len(lines))}
	asked := make(map[int]int64, len(lines))
	for i, l := range lines {
		row := -1
		for j := range rows {
			if rows[j].LineID == l.LineID {
				row = j
			}
		}
		if row < 0 {
			return nil, models.Invalid(fmt.Sprintf("lines[%d].line_id", i), "order %s has no line %q", orderID, l.LineID)
		}
		r := rows[row]
		if left := r.Quantity - r.ReturnedQuantity; l.Quantity > left {
			return nil, &models.Error{Code: models.CodeReturnExceedsOrder, Field: fmt.Sprintf("lines[%d].quantity", i),
				Message: fmt.Sprintf("line %s of order %s has %d of its %d units left to return, not %d",
					r.LineID, orderID, left, r.Quantity, l.Quantity)}
		}
		var back int64
		for _, d := range ds {
			if d.LineNo != r.LineNo {
				continue
			}
			runs, err := DecodeUnits(d.Units)
			if err != nil {
				return nil, core.DBError("order line discounts", err)
			}
			back += pricing.UnitsDiscountCents(runs, r.ReturnedQuantity, l.Quantity)
		}
		asked[r.LineNo] = l.Quantity
		refund := l.Quantity*r.UnitPriceCents - back
		res.Lines[i] = models.ReturnedLine{LineID: r.LineID, Quantity: l.Quantity, RefundCents: refund, DiscountCents: back}
		res.RefundCents += refund
		res.DiscountReturnedCents += back
	}
	res.FullRefund = true
	for _, r := range rows {
		if r.ReturnedQuantity+asked[r.LineNo] < r.Quantity {
			res.FullRefund = false
		}
	}
	if res.FullRefund {
		for _, d := range ds {
			if d.LineNo == ShippingLineNo {
				res.ShippingDiscountReturnedCents += d.DiscountCents - d.ReturnedDiscountCents
			}
		}
		res.DiscountReturnedCents += res.ShippingDiscountReturnedCents
	}
	res.ClawbackCents = res.DiscountReturnedCents
	return res, nil
}
