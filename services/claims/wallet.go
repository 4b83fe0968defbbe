package claims

import (
	"context"
	"couponsvc/services/core"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"couponsvc/models"
)

// revokeReason finds the reason of a revoke in its audit entry's detail,
// where Revoke writes it quoted (reason="...").
var revokeReason = regexp.MustCompile(`reason=("(?:[^"\\]|\\.)*")`)

// revokePublicReason finds the public reason of a revoke in its audit
// entry's detail (public_reason=key); revokes made before there was one have
// none.
var revokePublicReason = regexp.MustCompile(`(?:^| )public_reason=([a-z_]+)`)

// PublicRevokeReasons returns what each of the given coupons' shoppers is
// told about its revoke: the words of the public reason the admin chose
// (models.RevokePublicReasons), never the admin's note; a revoke that chose
// none says "it can no longer be used". Keyed by coupon id; coupons never
// revoked are left out. Errors: CodeUnavailable.
func (s *Claims) PublicRevokeReasons(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	targets := make([]string, len(ids))
	for i, id := range ids {
		targets[i] = fmt.Sprintf("coupon:%d", id)
	}
	var rows []models.AuditEntry
	// Oldest first: the latest revoke of a coupon says its reason.
	err := s.DB.WithContext(ctx).Where("action = ? AND target IN ?", "coupon.revoke", targets).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, core.DBError("audit log", err)
	}
	other, _ := models.RevokePublicText(models.RevokeOther)
	for _, r := range rows {
		id, err := strconv.ParseInt(strings.TrimPrefix(r.Target, "coupon:"), 10, 64)
		if err != nil {
			continue
		}
		out[id] = other
		if m := revokePublicReason.FindStringSubmatch(r.Detail); m != nil {
			if text, ok := models.RevokePublicText(m[1]); ok {
				out[id] = text
			}
		}
	}
	return out, nil
}

// RevokeReasons returns why each of the given coupons was revoked: the reason
// the admin gave, read from the revoke's audit entry, keyed by coupon id, so
// that a shopper's wallet can say it. Coupons never revoked are left out.
// Errors: CodeUnavailable.
func (s *Claims) RevokeReasons(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	targets := make([]string, len(ids))
	for i, id := range ids {
		targets[i] = fmt.Sprintf("coupon:%d", id)
	}
	var rows []models.AuditEntry
	// Oldest first: a coupon revoked, refunded back and revoked again says the
	// latest reason.
	err := s.DB.WithContext(ctx).Where("action = ? AND target IN ?", "coupon.revoke", targets).
		Order("id").Find(&rows).Error
	if err != nil {
		return nil, core.DBError("audit log", err)
	}
	for _, r := range rows {
		id, err := strconv.ParseInt(strings.TrimPrefix(r.Target, "coupon:"), 10, 64)
		if err != nil {
			continue
		}
		if m := revokeReason.FindStringSubmatch(r.Detail); m != nil {
			if reason, err := strconv.Unquote(m[1]); err == nil {
				out[id] = reason
			}
		}
	}
	return out, nil
}
