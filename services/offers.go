package services

import (
	"context"
	"slices"

	"couponsvc/models"
)

// ListUpcomingOffers returns the active templates whose claims open later,
// soonest first, with their stock: the shop lists them after the open ones,
// saying when they open. Errors: CodeUnavailable.
func (s *Service) ListUpcomingOffers(ctx context.Context) ([]TemplateView, error) {
	var ts []models.Template
	now := s.now()
	err := s.db.WithContext(ctx).Where("status = ? AND claim_starts_at > ?", models.TemplateActive, now).
		Order("claim_starts_at, id").Find(&ts).Error
	if err != nil {
		return nil, dbError("templates", err)
	}
	ts = slices.DeleteFunc(ts, func(t models.Template) bool {
		reason, _ := t.ClaimRefusal(now)
		return reason != models.RefusedNotYet
	})
	return s.withRemaining(ctx, ts)
}
