package checkout

import (
	"context"
	"slices"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// ListUpcomingOffers returns the active templates whose claims open later,
// soonest first, with their stock: the shop lists them after the open ones,
// saying when they open. Errors: CodeUnavailable.
func (s *Checkout) ListUpcomingOffers(ctx context.Context) ([]core.TemplateView, error) {
	var ts []models.Template
	now := s.Clock()
	err := s.DB.WithContext(ctx).Where("status = ? AND claim_starts_at > ?", models.TemplateActive, now).
		Order("claim_starts_at, id").Find(&ts).Error
	if err != nil {
		return nil, core.DBError("templates", err)
	}
	ts = slices.DeleteFunc(ts, func(t models.Template) bool {
		reason, _ := t.ClaimRefusal(now)
		return reason != models.RefusedNotYet
	})
	return s.WithRemaining(ctx, ts)
}
