package admin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// MaxAuditPage bounds the entries of one page of the audit log.
const MaxAuditPage = 200

// AuditPage is one page of audit entries, newest first.
type AuditPage struct {
	Entries []models.AuditEntry `json:"entries"`
	// Older is the before-id of the next (older) page; 0 when there is none.
	Older int64 `json:"older"`
	// Codes gives the code of each coupon the entries name ("coupon:<id>"
	// targets), so that people read the code they know, not a row id.
	Codes map[int64]string `json:"codes,omitempty"`
}

// AuditFilter selects audit entries; empty fields select everything.
type AuditFilter struct {
	// Actor is who acted, exactly.
	Actor string
	// Action is an action ("coupon.revoke"), or all of a kind of object
	// when it ends with a dot ("coupon.").
	Action string
	// Target is an object ("coupon:3", "template:5", "order:A-1") or a
	// coupon's code, which stands for its coupon.
	Target string
	// Since and Until bound the time of the entries: Since included, Until
	// excluded; zero is unbounded.
	Since, Until time.Time
	// Before starts the page below this entry id (keyset paging); 0 is the
	// newest.
	Before int64
	// Limit is the size of the page, 1..MaxAuditPage (50 otherwise).
	Limit int
}

// SearchAudit lists the audit entries that match f, newest first, one page
// at a time (docs/flows.md, "The audit log"). Errors: CodeInvalidRequest
// (target: neither an object nor a coupon code; actor, action too long),
// CodeUnavailable.
func (s *Admin) SearchAudit(ctx context.Context, f AuditFilter) (AuditPage, error) {
	if f.Limit <= 0 || f.Limit > MaxAuditPage {
		f.Limit = 50
	}
	var errs models.FieldErrors
	f.Actor, f.Action, f.Target = strings.TrimSpace(f.Actor), strings.TrimSpace(f.Action), strings.TrimSpace(f.Target)
	if len(f.Actor) > 100 {
		errs.Add(models.Invalid("actor", "must be at most 100 characters"))
	}
	if len(f.Action) > 50 {
		errs.Add(models.Invalid("action", "must be at most 50 characters"))
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		errs.Add(models.Invalid("until", "must be after since"))
	}
	target, err := s.auditTarget(ctx, f.Target)
	errs.Add(err)
	if err := errs.Err(); err != nil {
		return AuditPage{}, err
	}
	q := s.DB.WithContext(ctx).Model(&models.AuditEntry{})
	if f.Actor != "" {
		q = q.Where("actor = ?", f.Actor)
	}
	if prefix, ok := strings.CutSuffix(f.Action, "."); ok && prefix != "" {
		// Every action that starts with "prefix.": '/' follows '.' in ASCII.
		q = q.Where("action >= ? AND action < ?", prefix+".", prefix+"/")
	} else if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if target != "" {
		q = q.Where("target = ?", target)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("created_at < ?", f.Until.UTC())
	}
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	var out []models.AuditEntry
	// One more than asked tells whether an older page exists.
	if err := q.Order("id DESC").Limit(f.Limit + 1).Find(&out).Error; err != nil {
		return AuditPage{}, core.DBError("audit log", err)
	}
	page := AuditPage{Entries: out}
	if len(out) > f.Limit {
		page.Entries = out[:f.Limit]
		page.Older = out[f.Limit-1].ID
	}
	page.Codes, err = s.couponCodes(ctx, page.Entries)
	return page, err
}

// auditTarget reads the target of a filter: an object as written in the
// log, or a coupon code, which stands for "coupon:<id>".
func (s *Admin) auditTarget(ctx context.Context, target string) (string, error) {
	if target == "" || strings.Contains(target, ":") {
		if len(target) > 100 {
			return "", models.Invalid("target", "must be at most 100 characters")
		}
		return target, nil
	}
	code, err := models.ParseCouponCode("target", target)
	if err != nil {
		return "", models.Invalid("target", "must be an object such as template:5, or a coupon code")
	}
	c, err := s.CouponByCode(ctx, code)
	if models.IsCode(err, models.CodeNotFound) {
		return "", models.Invalid("target", "no coupon has the code %s", code)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("coupon:%d", c.ID), nil
}

// couponCodes reads the codes of the coupons the entries name, in one query.
func (s *Admin) couponCodes(ctx context.Context, entries []models.AuditEntry) (map[int64]string, error) {
	var ids []int64
	for _, e := range entries {
		if v, ok := strings.CutPrefix(e.Target, "coupon:"); ok {
			if id, err := strconv.ParseInt(v, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []struct {
		ID   int64
		Code string
	}
	if err := s.DB.WithContext(ctx).Model(&models.Coupon{}).Where("id IN ?", ids).Select("id, code").Scan(&rows).Error; err != nil {
		return nil, core.DBError("coupons", err)
	}
	codes := make(map[int64]string, len(rows))
	for _, r := range rows {
		codes[r.ID] = r.Code
	}
	return codes, nil
}

// ListTemplateAudit lists the audit entries of one template (created,
// changed, stock added, repaired), newest first: at most limit of them
// (1..MaxAuditPage, 50 otherwise), older than the entry beforeID when it is
// above 0.
func (s *Admin) ListTemplateAudit(ctx context.Context, templateID int64, limit int, beforeID int64) (AuditPage, error) {
	return s.SearchAudit(ctx, AuditFilter{Target: fmt.Sprintf("template:%d", templateID), Before: beforeID, Limit: limit})
}

// ListAudit returns the newest audit entries first, at most limit.
func (s *Admin) ListAudit(ctx context.Context, limit int) ([]models.AuditEntry, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	var out []models.AuditEntry
	err := s.DB.WithContext(ctx).Order("id DESC").Limit(limit).Find(&out).Error
	return out, core.DBError("audit log", err)
}
