package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

// MaxCouponPage bounds the coupons of one page of the coupon list.
const MaxCouponPage = 200

// CouponFilter selects coupons for the console's list; empty fields select
// everything.
type CouponFilter struct {
	TemplateID int64
	UserID     string
	// Status is an effective status: issued (and still valid), expired,
	// held, used or revoked.
	Status string
	// Code is a coupon's code (with or without dashes, any case).
	Code string
	// Before starts the page below this coupon id (keyset paging); 0 is the
	// newest. Limit is the size of the page, 1..MaxCouponPage (50 otherwise).
	Before int64
	Limit  int
}

// CouponPage is one page of coupons, newest first.
type CouponPage struct {
	Coupons []models.CouponView `json:"coupons"`
	// Older is the before-id of the next (older) page; 0 when there is none.
	Older int64 `json:"older"`
}

// ListCoupons lists the coupons that match f, newest first, one page at a
// time. Errors: CodeInvalidRequest (each field at fault), CodeUnavailable.
func (s *Admin) ListCoupons(ctx context.Context, f CouponFilter) (CouponPage, error) {
	if f.Limit <= 0 || f.Limit > MaxCouponPage {
		f.Limit = 50
	}
	var errs models.FieldErrors
	if f.UserID = strings.TrimSpace(f.UserID); f.UserID != "" {
		errs.Add(models.ValidateUserID("user_id", f.UserID))
	}
	if f.Code = strings.TrimSpace(f.Code); f.Code != "" {
		code, err := models.ParseCouponCode("code", f.Code)
		errs.Add(err)
		f.Code = code
	}
	switch f.Status {
	case "", models.CouponIssued, models.CouponExpired, models.CouponHeld, models.CouponUsed, models.CouponRevoked:
	default:
		errs.Add(models.Invalid("status", "must be issued, expired, held, used or revoked"))
	}
	if f.TemplateID < 0 {
		errs.Add(models.Invalid("template_id", "must be a positive id"))
	}
	if err := errs.Err(); err != nil {
		return CouponPage{}, err
	}
	now := s.Clock()
	q := s.DB.WithContext(ctx).Model(&models.Coupon{})
	if f.TemplateID > 0 {
		q = q.Where("template_id = ?", f.TemplateID)
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.Code != "" {
		q = q.Where("code = ?", f.Code)
	}
	switch f.Status {
	case models.CouponIssued:
		q = q.Where("status = ? AND valid_until > ?", models.CouponIssued, now)
	case models.CouponExpired:
		q = q.Where("status = ? AND valid_until <= ?", models.CouponIssued, now)
	case "":
	default:
		q = q.Where("status = ?", f.Status)
	}
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	var cs []models.Coupon
	if err := q.Order("id DESC").Limit(f.Limit + 1).Find(&cs).Error; err != nil {
		return CouponPage{}, core.DBError("coupons", err)
	}
	var page CouponPage
	if len(cs) > f.Limit {
		cs = cs[:f.Limit]
		page.Older = cs[f.Limit-1].ID
	}
	currencies, err := s.TemplateCurrencies(ctx, cs)
	if err != nil {
		return CouponPage{}, err
	}
	page.Coupons = make([]models.CouponView, len(cs))
	for i := range cs {
		page.Coupons[i] = cs[i].View(now, currencies[cs[i].TemplateID])
	}
	return page, nil
}

// CouponHistory is a coupon with everything that happened to it: its audit
// entries and its uses by orders, newest first, and why it was revoked.
type CouponHistory struct {
	core.CouponDetail
	Audit []models.AuditEntry `json:"audit"`
	Uses  []models.UseLog     `json:"uses"`
	// Revocation is the audit entry of its revocation, for a revoked coupon
	// revoked by an admin (nil for one revoked by a refund under recycle);
	// RevokeReason is the reason given there.
	Revocation   *models.AuditEntry `json:"revocation,omitempty"`
	RevokeReason string             `json:"revoke_reason,omitempty"`
}

// maxCouponHistory bounds the audit entries and uses a coupon's history
// shows: a coupon changes a few times in its life.
const maxCouponHistory = 200

// GetCouponHistory returns the coupon with that code and its history.
// Errors: CodeInvalidRequest, CodeNotFound, CodeUnavailable.
func (s *Admin) GetCouponHistory(ctx context.Context, code string) (*CouponHistory, error) {
	d, err := s.GetCoupon(ctx, code)
	if err != nil {
		return nil, err
	}
	h := &CouponHistory{CouponDetail: *d}
	db := s.DB.WithContext(ctx)
	if err := db.Where("target = ?", fmt.Sprintf("coupon:%d", d.Coupon.ID)).Order("id DESC").
		Limit(maxCouponHistory).Find(&h.Audit).Error; err != nil {
		return nil, core.DBError("audit log", err)
	}
	if err := db.Where("coupon_id = ?", d.Coupon.ID).Order("used_at DESC, id DESC").
		Limit(maxCouponHistory).Find(&h.Uses).Error; err != nil {
		return nil, core.DBError("redemptions", err)
	}
	if d.Coupon.Status == models.CouponRevoked {
		h.Revocation, h.RevokeReason = revocationOf(h.Audit)
	}
	return h, nil
}

// revocationOf finds the newest revocation among a coupon's audit entries
// (newest first) and its reason.
func revocationOf(entries []models.AuditEntry) (*models.AuditEntry, string) {
	for i := range entries {
		if entries[i].Action == "coupon.revoke" {
			reason, _ := models.DetailValue(models.ParseAuditDetail(entries[i].Detail), "reason")
			return &entries[i], reason
		}
	}
	return nil, ""
}

// alreadyRevoked is the refusal of a second revocation: when, by whom and
// why the coupon was revoked, as its audit entry says.
func (s *Admin) alreadyRevoked(ctx context.Context, c *models.Coupon) error {
	var entries []models.AuditEntry
	err := s.DB.WithContext(ctx).Where("target = ? AND action = ?", fmt.Sprintf("coupon:%d", c.ID), "coupon.revoke").
		Order("id DESC").Limit(1).Find(&entries).Error
	if err != nil {
		return core.DBError("audit log", err)
	}
	e, reason := revocationOf(entries)
	if e == nil {
		return models.Errorf(models.CodeRevoked, "this coupon was already revoked (its order was refunded and the coupon put back on offer)")
	}
	return models.Errorf(models.CodeRevoked, "this coupon was already revoked on %s by %s: %s",
		e.CreatedAt.UTC().Format(time.RFC3339), e.Actor, reason)
}
