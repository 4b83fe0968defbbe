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

// LiveOffers returns the live automatic offers of a cart in currency (any,
// for ""), in their order, as a checkout weighs them (offersIn): the pages
// list each beside a priced cart, applied or not as the checkout's answer
// says (docs/automatic-offers.md). Errors: CodeUnavailable.
func (s *Checkout) LiveOffers(ctx context.Context, currency string) ([]models.Template, error) {
	all, err := s.AutomaticOffers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]models.Template, 0, len(all))
	for _, t := range offersIn(all, currency) {
		out = append(out, *t)
	}
	return out, nil
}

// ClaimRefused says err is a claim's refusal (the claim rule, the
// campaign's budget, the stock, the user's limit or the campaign's
// per-customer cap), not a fault. A checkout with no code answers it when
// its only automatic offer's claim was refused: the pages then show the
// offer not applied, with that reason (docs/automatic-offers.md).
func ClaimRefused(err error) bool { return claimRefused(err) }
