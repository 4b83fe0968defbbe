package checkout

import (
	"context"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
)

// PreviewReturnPart says what ReturnPart would do with a return of returned
// cents of the order, changing nothing: the amount the customer keeps, the
// discount the order's coupons still give on it and the discount taken back
// (ClawbackCents), and whether it completes the order (FullRefund). The
// cashier reads it before confirming (docs/returns.md); ReturnPart decides
// again in its transaction, so a return recorded meanwhile by another till
// changes the figures it answers, never the money's sums. A hold pending
// refuses it as it refuses the return (409 held).
//
// Errors: as ReturnPart's, without the return id's.
func (s *Checkout) PreviewReturnPart(ctx context.Context, orderID string, returned int64) (*ReturnResult, error) {
	if err := core.ValidateOrderID(orderID); err != nil {
		return nil, err
	}
	if returned < 1 || returned > models.MaxMoneyCents {
		return nil, models.Invalid("returned_amount_cents", "must be between 1 and %d", int64(models.MaxMoneyCents))
	}
	o, found, err := s.ReadOrder(ctx, orderID)
	if err != nil {
		return nil, err
	}
	if err := holdPending(&o, s.Clock()); err != nil {
		return nil, err // refused as the return is (409 held)
	}
	cs, ts, err := s.returnedCoupons(ctx, orderID, found)
	if err != nil {
		return nil, err
	}
	kept := o.AmountCents - o.ReturnedCents - returned
	if kept < 0 {
		return nil, models.Errorf(models.CodeReturnExceedsOrder, "returns of order %s would exceed its amount of %d cents", orderID, o.AmountCents)
	}
	var sums struct{ Given, Settled int64 }
	if err := s.DB.WithContext(ctx).Model(&models.UseLog{}).Where("order_id = ?", orderID).
		Select("COALESCE(SUM(CASE WHEN undo_flag = ? THEN 0 ELSE discount_cents END), 0) AS given, "+
			"COALESCE(SUM(CASE WHEN undo_flag = ? THEN discount_cents ELSE 0 END), 0) AS settled", true, true).
		Scan(&sums).Error; err != nil {
		return nil, core.DBError("use log", err)
	}
	pr, settledBack := planAmountReturn(kept+returned, kept, sums.Settled, keptCoupons(cs, ts))
	return &ReturnResult{KeptAmountCents: kept, DiscountKeptCents: pr.DiscountCents,
		ClawbackCents: sums.Given - pr.DiscountCents + settledBack, FullRefund: kept == 0}, nil
}
