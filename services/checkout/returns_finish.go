package checkout

import (
	"context"
	"errors"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
)

// Bounds of the search for completing returns cut short (UnfinishedReturns).
const (
	// ReturnFinishBatch bounds the orders one search lists.
	ReturnFinishBatch = 100
	// ReturnFinishGrace is how old a completing return must be before it is
	// listed: its refunds run right after its commit, so coupons still used
	// after this long were left by a process that died in between.
	ReturnFinishGrace = 10 * time.Second
)

// errCutShort is what a return stopped by the AfterReturnCommit test hook
// answers, as a killed process would answer nothing.
var errCutShort = errors.New("checkout: return cut short by a test hook")

// UnfinishedReturn is an order returned in full (its completing return
// recorded) that still uses coupons: the refunds that follow the return's
// commit did not all run (docs/returns.md, "A completing return cut short").
type UnfinishedReturn struct {
	OrderID  string `json:"order_id"`
	ReturnID string `json:"return_id"`
	// Coupons counts the coupons the order still uses.
	Coupons int64 `json:"coupons"`
}

// UnfinishedReturns lists, oldest first and at most ReturnFinishBatch, the
// orders whose completing return (order_returns.full_refund) is older than
// ReturnFinishGrace while the order still uses coupons. Errors:
// CodeUnavailable.
func (s *Checkout) UnfinishedReturns(ctx context.Context) ([]UnfinishedReturn, error) {
	used := `FROM order_coupons oc JOIN user_coupons c ON c.id = oc.coupon_id WHERE oc.order_id = r.order_id AND c.status = ?`
	var out []UnfinishedReturn
	err := s.DB.WithContext(ctx).Raw(`SELECT r.order_id, r.return_id, (SELECT COUNT(*) `+used+`) AS coupons
		FROM order_returns r WHERE r.full_refund = ? AND r.created_at <= ? AND EXISTS (SELECT 1 `+used+`)
		ORDER BY r.id LIMIT ?`, models.CouponUsed, true, s.Clock().Add(-ReturnFinishGrace), models.CouponUsed, ReturnFinishBatch).
		Scan(&out).Error
	if err != nil {
		return nil, core.DBError("returns", err)
	}
	return out, nil
}

// FinishReturn refunds the coupons an order returned in full still uses, by
// their templates' policy, as the replay of its completing return does
// (refundOrder), in the actor's name; it answers the refunds done. Again,
// or when the client's replay finished first, it refunds nothing. Errors:
// those of Refund.
func (s *Checkout) FinishReturn(ctx context.Context, actor, orderID string) ([]*RefundResult, error) {
	res := &ReturnResult{}
	if err := s.refundOrder(ctx, actor, orderID, res); err != nil {
		return nil, err
	}
	return res.Refunds, nil
}
