package claims

import (
	"context"
	"strconv"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"github.com/redis/go-redis/v9"
)

// sweepBatch bounds the reservations one pass settles per campaign.
const sweepBatch = 200

// SweepStats counts what one sweep did.
type SweepStats struct {
	Confirmed, Released int
}

// Sweep settles reservations older than PendingTimeout that were neither
// confirmed nor given back (their process died, or Redis or the database failed
// at the wrong moment): the coupon row is there → confirm; absent → give back.
// Safe on several instances at once: both scripts act only on a pending
// reservation, once. The age bound, well above DBTimeout, ensures no claim is
// still writing the row.
func (s *Claims) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	var cids []int64
	if err := s.DB.WithContext(ctx).Model(&models.Campaign{}).Order("id").Pluck("id", &cids).Error; err != nil {
		return st, core.DBError("campaigns", err)
	}
	cutoff := s.Clock().Add(-s.cfg.PendingTimeout).UnixMilli()
	for _, cid := range cids {
		members, err := s.Rdb.ZRangeByScore(ctx, s.Keys.Pending(cid), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: sweepBatch,
		}).Result()
		if err != nil {
			return st, core.RedisError(err)
		}
		for _, m := range members {
			pm, ok := core.ParsePendingMember(m)
			if !ok {
				s.Rdb.ZRem(ctx, s.Keys.Pending(cid), m)
				continue
			}
			tid, requestID := pm.TemplateID, pm.RequestID
			exists, err := s.couponExists(ctx, tid, requestID)
			if err != nil {
				return st, core.DBError("coupon", err)
			}
			// Count only what this pass settled: another instance may have
			// settled the same reservation a moment before.
			switch {
			case exists && !s.confirm(ctx, cid, requestID, m):
				st.Confirmed++
			case !exists && s.ReleaseReservation(ctx, cid, tid, requestID, m):
				st.Released++
			}
		}
	}
	s.Meter.SweeperActions.WithLabelValues("confirmed").Add(float64(st.Confirmed))
	s.Meter.SweeperActions.WithLabelValues("released").Add(float64(st.Released))
	if st.Confirmed+st.Released > 0 {
		s.Log.Info("settled stale reservations", "confirmed", st.Confirmed, "released", st.Released)
	}
	return st, nil
}
