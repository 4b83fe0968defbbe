package claims

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"
)

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
	details, err := s.latestRevokeDetails(ctx, ids)
	if err != nil {
		return nil, err
	}
	other, _ := models.RevokePublicText(models.RevokeOther)
	out := make(map[int64]string, len(details))
	for id, detail := range details {
		out[id] = other
		if m := revokePublicReason.FindStringSubmatch(detail); m != nil {
			if text, ok := models.RevokePublicText(m[1]); ok {
				out[id] = text
			}
		}
	}
	return out, nil
}

// latestRevokeDetails returns the detail of each given coupon's latest
// revoke audit entry, keyed by coupon id; coupons never revoked are left out.
func (s *Claims) latestRevokeDetails(ctx context.Context, ids []int64) (map[int64]string, error) {
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
		out[id] = r.Detail
	}
	return out, nil
}
