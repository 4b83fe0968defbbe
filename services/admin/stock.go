package admin

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// AddStock raises a template's total_stock by delta (> 0), with the reason in
// the audit log. The database commits first; the Redis counters follow (a
// failure there leaves less stock on sale than there is, never more, and
// reconciliation repairs it). Errors: CodeInvalidRequest, CodeNotFound,
// CodeUnavailable.
func (s *Admin) AddStock(ctx context.Context, actor string, id, delta int64, reason string) (*models.Template, error) {
	reason = strings.TrimSpace(reason)
	if delta < 1 || delta > models.MaxTotalStock {
		return nil, models.Invalid("delta", "must be between 1 and %d", models.MaxTotalStock)
	}
	if reason == "" || utf8.RuneCountInString(reason) > models.MaxReasonRunes {
		return nil, models.Invalid("reason", "is required (at most %d characters)", models.MaxReasonRunes)
	}
	if err := models.CheckText("reason", reason, models.SingleLine); err != nil {
		return nil, err
	}
	var t models.Template
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.Template{}).
			Where("id = ? AND total_stock + ? <= ?", id, delta, models.MaxTotalStock).
			Updates(map[string]any{"total_stock": gorm.Expr("total_stock + ?", delta), "updated_at": s.Clock()})
		if res.Error != nil {
			return res.Error
		}
		if err := tx.First(&t, id).Error; err != nil {
			return err
		}
		if res.RowsAffected == 0 {
			return models.Invalid("delta", "would take total_stock over %d", models.MaxTotalStock)
		}
		return s.Audit(tx, actor, "template.stock", fmt.Sprintf("template:%d", id),
			fmt.Sprintf("delta=%d total_stock=%d reason=%q", delta, t.TotalStock, reason))
	})
	if err != nil {
		return nil, core.DBError(fmt.Sprintf("template %d", id), err)
	}
	s.Templates.Forget(id)
	defer s.SoldOut.Forget(id)
	if err := lua.AddStock.Run(ctx, s.Rdb, []string{s.Keys.Template(t.CampaignID, t.ID)}, delta, t.TotalStock).Err(); err != nil {
		s.Log.Error("add stock to the Redis counters; reconcile will repair", "template", id, "delta", delta, "err", err)
	}
	return &t, nil
}
