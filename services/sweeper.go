package services

import (
	"context"
	"strconv"

	"couponsvc/models"

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
func (s *Service) Sweep(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	var cids []int64
	if err := s.db.WithContext(ctx).Model(&models.Campaign{}).Order("id").Pluck("id", &cids).Error; err != nil {
		return st, dbError("campaigns", err)
	}
	cutoff := s.now().Add(-s.cfg.PendingTimeout).UnixMilli()
	for _, cid := range cids {
		members, err := s.rdb.ZRangeByScore(ctx, s.keys.pending(cid), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: sweepBatch,
		}).Result()
		if err != nil {
			return st, redisError(err)
		}
		for _, m := range members {
			pm, ok := parsePendingMember(m)
			if !ok {
				s.rdb.ZRem(ctx, s.keys.pending(cid), m)
				continue
			}
			tid, requestID := pm.TemplateID, pm.RequestID
			exists, err := s.couponExists(ctx, tid, requestID)
			if err != nil {
				return st, dbError("coupon", err)
			}
			// Count only what this pass settled: another instance may have
			// settled the same reservation a moment before.
			switch {
			case exists && !s.confirm(ctx, cid, requestID, m):
				st.Confirmed++
			case !exists && s.release(ctx, cid, tid, requestID, m):
				st.Released++
			}
		}
	}
	s.metrics.SweeperActions.WithLabelValues("confirmed").Add(float64(st.Confirmed))
	s.metrics.SweeperActions.WithLabelValues("released").Add(float64(st.Released))
	if st.Confirmed+st.Released > 0 {
		s.log.Info("settled stale reservations", "confirmed", st.Confirmed, "released", st.Released)
	}
	return st, nil
}
