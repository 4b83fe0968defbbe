package codes

import (
	"context"
	"errors"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// mintRefusal returns nil when coupons of t may be made at now, by any job
// (docs/jobs.md, "Only a live template makes coupons"): the template is not
// archived, and its coupons would not be born expired (an absolute
// valid_until that has passed). Else a CodeNotClaimable error that says why.
func mintRefusal(t *models.Template, now time.Time) error {
	switch {
	case t.Status == models.TemplateArchived:
		return models.Errorf(models.CodeNotClaimable, "the template is archived: it makes no more coupons")
	case t.ValidDays == 0 && t.ValidUntil != nil && !now.Before(*t.ValidUntil):
		return models.Errorf(models.CodeNotClaimable, "the template's coupons stopped being valid at %s: any coupon made now would be born expired",
			t.ValidUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// liveTemplate reads the template a new job makes coupons of, refused by
// mintRefusal when it may make none now. Errors: CodeNotFound,
// CodeNotClaimable, CodeUnavailable.
func (s *Codes) liveTemplate(ctx context.Context, tid int64) (*models.Template, error) {
	t, err := s.GetTemplate(ctx, tid)
	if err != nil {
		return nil, err
	}
	if err := mintRefusal(t, s.Clock()); err != nil {
		return nil, err
	}
	return t, nil
}

// notLive turns a mintRefusal into the error that ends a running job as
// failed (RunJobOnce), its message the job's.
func notLive(refusal error) error {
	var e *models.Error
	if errors.As(refusal, &e) {
		return models.Errorf(e.Code, "%s; the job stopped and makes nothing more", e.Message)
	}
	return refusal
}

// isNotLive reports the error of notLive: the only CodeNotClaimable a
// batch returns (a claim's refusal is a row's result, never returned).
func isNotLive(err error) bool { return models.IsCode(err, models.CodeNotClaimable) }

// checkLive re-reads the job's template from the database at the start of a
// batch: a template archived while its job runs stops the job before the
// batch takes any stock.
func (s *Codes) checkLive(ctx context.Context, run *jobRun) error {
	t, err := core.ByID[models.Template](ctx, s.DB, "template", run.t.ID)
	if err != nil {
		return err
	}
	if err := mintRefusal(t, s.Clock()); err != nil {
		return notLive(err)
	}
	return nil
}

// lockLive reads the job's template inside tx, the transaction that writes
// a batch's coupons, under a shared lock of its row: an archive (which
// updates the row under an exclusive lock, services/campaigns.go) either
// commits before, and the batch sees it and rolls back, or waits for the
// batch's commit. No coupon is written after the archive committed.
func (s *Codes) lockLive(tx *gorm.DB, run *jobRun) error {
	q := "SELECT status, valid_days, valid_until FROM templates WHERE id = ?"
	if s.Dialect == core.DialectMySQL {
		q += " LOCK IN SHARE MODE"
	}
	var t models.Template
	res := tx.Raw(q, run.t.ID).Scan(&t)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return notLive(models.Errorf(models.CodeNotClaimable, "the template is gone"))
	}
	if err := mintRefusal(&t, s.Clock()); err != nil {
		return notLive(err)
	}
	return nil
}

// beforeJobCommit lets a test act between a batch's checks and its commit.
func (s *Codes) beforeJobCommit(job int64) {
	if h := s.Hooks.BeforeJobCommit; h != nil {
		h(job)
	}
}
