package services

import (
	"context"
	"fmt"

	"couponsvc/models"
)

// MaxAuditPage bounds the entries of one page of a template's history.
const MaxAuditPage = 200

// AuditPage is one page of audit entries, newest first.
type AuditPage struct {
	Entries []models.AuditEntry `json:"entries"`
	// Older is the before-id of the next (older) page; 0 when there is none.
	Older int64 `json:"older"`
}

// ListTemplateAudit lists the audit entries of one template (created,
// changed, stock added, repaired), newest first: at most limit of them
// (1..MaxAuditPage, 50 otherwise), older than the entry beforeID when it is
// above 0.
func (s *Service) ListTemplateAudit(ctx context.Context, templateID int64, limit int, beforeID int64) (AuditPage, error) {
	if limit <= 0 || limit > MaxAuditPage {
		limit = 50
	}
	q := s.db.WithContext(ctx).Where("target = ?", fmt.Sprintf("template:%d", templateID))
	if beforeID > 0 {
		q = q.Where("id < ?", beforeID)
	}
	var out []models.AuditEntry
	// One more than asked tells whether an older page exists.
	if err := q.Order("id DESC").Limit(limit + 1).Find(&out).Error; err != nil {
		return AuditPage{}, dbError("audit log", err)
	}
	page := AuditPage{Entries: out}
	if len(out) > limit {
		page.Entries = out[:limit]
		page.Older = out[limit-1].ID
	}
	return page, nil
}
