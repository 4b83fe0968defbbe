package events

import (
	"context"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// pruneBatch bounds the rows one DELETE removes, so that pruning a large
// backlog never holds long locks next to the claims.
const pruneBatch = 1000

// RunPruner deletes what is older than Retention, at once and then every
// PruneInterval, until ctx ends. Every instance may run it: deletes of old
// rows do not conflict with anything.
func (s *Events) RunPruner(ctx context.Context) {
	for {
		if _, err := s.Prune(ctx, s.Clock().Add(-s.cfg.Retention)); err != nil && ctx.Err() == nil {
			s.Log.Warn("prune old events and deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.PruneInterval):
		}
	}
}

// Pruned counts what one Prune removed.
type Pruned struct {
	Attempts, Deliveries, Events, Jobs int64
}

// Prune deletes what is older than before (docs/events.md, Retention): the
// delivery log's lines; deliveries last changed before it that are done
// (delivered or failed) or whose endpoint is disabled or gone; events
// created before it that no delivery still carries; jobs finished before it.
// An event still on its way to an enabled endpoint is kept until its
// delivery ends, however old.
// Errors: CodeUnavailable.
func (s *Events) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	var p Pruned
	db := s.DB.WithContext(ctx)
	var err error
	if p.Attempts, err = pruneIDs(db, &models.WebhookAttempt{}, "attempted_at < ?", before); err != nil {
		return p, core.DBError("delivery log", err)
	}
	if p.Deliveries, err = pruneIDs(db, &models.WebhookDelivery{},
		`updated_at < ? AND (state <> ? OR NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = webhook_deliveries.endpoint_id AND e.enabled = ?))`,
		before, models.DeliveryPending, true); err != nil {
		return p, core.DBError("webhook deliveries", err)
	}
	if p.Events, err = pruneIDs(db, &models.Event{},
		"created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)", before); err != nil {
		return p, core.DBError("events", err)
	}
	// Finished jobs (with their input and result) go by the same cutoff
	// (docs/jobs.md).
	if p.Jobs, err = s.PruneJobs(ctx, before); err != nil {
		return p, err
	}
	if p.Attempts+p.Deliveries+p.Events+p.Jobs > 0 {
		s.Log.Info("pruned old events, deliveries and jobs", "events", p.Events, "deliveries", p.Deliveries, "attempts", p.Attempts, "jobs", p.Jobs)
	}
	return p, nil
}

// pruneIDs deletes the rows of model matching where, pruneBatch at a time,
// and returns how many it deleted.
func pruneIDs(db *gorm.DB, model any, where string, args ...any) (int64, error) {
	var total int64
	for {
		var ids []int64
		if err := db.Model(model).Where(where, args...).Order("id").Limit(pruneBatch).Pluck("id", &ids).Error; err != nil {
			return total, err
		}
		if len(ids) == 0 {
			return total, nil
		}
		r := db.Where("id IN ?", ids).Delete(model)
		if r.Error != nil {
			return total, r.Error
		}
		total += r.RowsAffected
		if len(ids) < pruneBatch {
			return total, nil
		}
	}
}

// PruneJobs deletes the finished jobs (done or failed) that finished before
// the cutoff, with their stored input and result, and returns how many.
// Running and queued jobs are never pruned. Errors: CodeUnavailable.
func (s *Events) PruneJobs(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	for {
		var ids []int64
		err := s.DB.WithContext(ctx).Model(&models.Job{}).
			Where("state IN ? AND finished_at < ?", []string{models.JobDone, models.JobFailed}, before.UTC()).
			Order("id").Limit(500).Pluck("id", &ids).Error
		if err != nil {
			return n, core.DBError("jobs", err)
		}
		if len(ids) == 0 {
			return n, nil
		}
		err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Where("job_id IN ?", ids).Delete(&models.JobChunk{}).Error; err != nil {
				return err
			}
			return tx.Where("id IN ?", ids).Delete(&models.Job{}).Error
		})
		if err != nil {
			return n, core.DBError("jobs", err)
		}
		n += int64(len(ids))
	}
}
