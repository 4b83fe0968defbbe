package client

import (
	"context"
	"errors"
)

// RefundCoupon (POST /api/v1/refunds) answers three shapes in one
// RefundAnswer, most of whose fields only some shapes carry. The methods
// below call it for one shape each and answer that shape's type, whose
// fields are all present.

// Refunded is what every shape of a refund carries.
type Refunded struct {
	// Result is ResultRefunded, or ResultDuplicate for a return whose
	// return id was returned before; Replayed is true when the answer is a
	// replay of the first answer of the call's Idempotency-Key.
	Result   string
	Replayed bool
	// Currency is the currency of every amount of the answer.
	Currency string
}

// WholeRefund is the answer of RefundWhole.
type WholeRefund struct {
	Refunded
	// Coupon is the coupon after the refund; StockReturned is true when it
	// went back to the template's pool (policy recycle).
	Coupon        CouponView
	StockReturned bool
}

// AmountReturn is the answer of ReturnAmount.
type AmountReturn struct {
	Refunded
	// KeptAmountCents is the order amount less every return so far,
	// DiscountKeptCents the discount the order's coupons give on it, and
	// DiscountReturnedCents the discount given back by this return.
	KeptAmountCents, DiscountKeptCents, DiscountReturnedCents int64
	// FullRefund is true when the return completed the order: its coupons
	// were refunded by their templates' policy.
	FullRefund bool
}

// LineReturn is the answer of ReturnLines.
type LineReturn struct {
	AmountReturn
	// Lines are the returned lines: units, what the shopper gets back and
	// their stored discount; RefundCents is what the shopper gets back in
	// all, ShippingDiscountReturnedCents the shipping's discount given back
	// by the return that completes the order.
	Lines                         []ReturnedLine
	RefundCents                   int64
	ShippingDiscountReturnedCents int64
}

// errShape is the error of an answer that lacks a field its shape carries.
var errShape = errors.New("couponsvc: the refund's answer lacks a field of its shape")

// RefundWhole refunds a coupon's use by a cancelled order (docs/returns.md).
func (c *Client) RefundWhole(ctx context.Context, orderID, couponCode string, opts ...CallOption) (*WholeRefund, error) {
	a, err := c.RefundCoupon(ctx, RefundRequest{OrderID: orderID, CouponCode: &couponCode}, opts...)
	if err != nil {
		return nil, err
	}
	if a.Coupon == nil {
		return nil, errShape
	}
	return &WholeRefund{Refunded: refunded(a), Coupon: *a.Coupon, StockReturned: deref(a.StockReturned)}, nil
}

// ReturnAmount returns part of an order redeemed for an amount: its id
// returnID (a replay by it answers the first answer), returnedCents of it.
func (c *Client) ReturnAmount(ctx context.Context, orderID, returnID string, returnedCents int64, opts ...CallOption) (*AmountReturn, error) {
	a, err := c.RefundCoupon(ctx, RefundRequest{OrderID: orderID, ReturnID: &returnID, ReturnedAmountCents: &returnedCents}, opts...)
	if err != nil {
		return nil, err
	}
	return amountReturn(a)
}

// ReturnLines returns units of the lines of an order redeemed with a cart.
func (c *Client) ReturnLines(ctx context.Context, orderID, returnID string, lines []ReturnLineRequest, opts ...CallOption) (*LineReturn, error) {
	a, err := c.RefundCoupon(ctx, RefundRequest{OrderID: orderID, ReturnID: &returnID, Lines: lines}, opts...)
	if err != nil {
		return nil, err
	}
	r, err := amountReturn(a)
	if err != nil || a.RefundCents == nil {
		return nil, errShape
	}
	return &LineReturn{AmountReturn: *r, Lines: a.Lines, RefundCents: *a.RefundCents,
		ShippingDiscountReturnedCents: deref(a.ShippingDiscountReturnedCents)}, nil
}

func refunded(a *RefundAnswer) Refunded {
	return Refunded{Result: a.Result, Replayed: deref(a.Duplicate), Currency: a.Currency}
}

func amountReturn(a *RefundAnswer) (*AmountReturn, error) {
	if a.KeptAmountCents == nil || a.DiscountKeptCents == nil || a.DiscountReturnedCents == nil {
		return nil, errShape
	}
	return &AmountReturn{Refunded: refunded(a), KeptAmountCents: *a.KeptAmountCents, DiscountKeptCents: *a.DiscountKeptCents,
		DiscountReturnedCents: *a.DiscountReturnedCents, FullRefund: deref(a.FullRefund)}, nil
}
