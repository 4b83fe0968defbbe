package checkout

import (
	"context"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// CouponCodes returns the codes of the coupons with the given ids, keyed by
// id; unknown ids are left out. The cashier's page uses it to offer a refund
// of each recent redemption. Errors: CodeUnavailable.
func (s *Checkout) CouponCodes(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   int64
		Code string
	}
	err := s.DB.WithContext(ctx).Model(&models.Coupon{}).Select("id, code").Where("id IN ?", ids).Scan(&rows).Error
	if err != nil {
		return nil, core.DBError("coupons", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Code
	}
	return out, nil
}
