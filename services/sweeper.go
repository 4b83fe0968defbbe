package services

import (
	"context"
	"strconv"
	"time"

	"couponsvc/models"

	"github.com/redis/go-redis/v9"
)

// sweepBatch bounds the reservations one pass settles per campaign.
const sweepBatch = 200

// RunSweeper settles stale reservations and releases expired holds every
// SweepInterval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context) {
	s.runEvery(ctx, s.cfg.SweepInterval, "sweep stale reservations", func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		if _, herr := s.ExpireHolds(ctx); err == nil {
			err = herr
		}
		return err
	})
}

// runEvery runs pass at once and then every interval until ctx ends; a pass
// that fails is logged as what, and the next one runs on time.
func (s *Service) runEvery(ctx context.Context, every time.Duration, what string, pass func(context.Context) error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn(what, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

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
