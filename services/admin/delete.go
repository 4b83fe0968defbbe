package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// errDeleteRefused marks a refusal decided inside DeleteTemplate's
// transaction, after the claim rule was written back.
var errDeleteRefused = errors.New("delete refused")

// DeleteTemplate deletes a template that never issued a coupon: no coupon
// row (claim, code job, import, shared code), no reservation of a claim
// under way and no code job. Anything else is refused with CodeInUse, whose
// message says to archive it instead (docs/flows.md#delete).
//
// A claim reserves in Redis before it writes its row, so "no rows" alone
// would race with it. Under the campaign's load lock (no load writes the
// template's counters meanwhile) and the rows of the campaign and the
// template (no change of the template publishes its rule meanwhile), the
// delete first closes the template's claim rule, then looks at the pending
// reservations and only then at the rows: a claim that reserved before the
// rule closed is pending until its row is committed, and one after it is
// refused not_claimable. On a refusal the rule is written back before the
// locks are let go. Errors: CodeInUse, CodeNotFound, CodeUnavailable.
func (s *Admin) DeleteTemplate(ctx context.Context, actor string, id int64) error {
	t, err := s.GetTemplate(ctx, id)
	if err != nil {
		return err
	}
	lock, err := s.LockCampaign(ctx, t.CampaignID, nil)
	if err != nil {
		return err
	}
	defer lock.Release(context.WithoutCancel(ctx))

	var refusal error
	closed := false // the rule in Redis may be the closed one
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		camp, err := lockTemplateCampaign(tx, id)
		if err != nil {
			return err
		}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(t, id).Error; err != nil {
			return err
		}
		closed = true
		if err := s.CloseClaimRule(ctx, t); err != nil {
			return err
		}
		if refusal, err = s.templateInUse(ctx, tx, t); err != nil {
			return err
		}
		if refusal != nil {
			closed = false
			if err := s.PublishClaimRule(ctx, t, camp.Status); err != nil {
				closed = true
				return err
			}
			return errDeleteRefused
		}
		if err := tx.Delete(&models.Template{}, id).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "template.delete", fmt.Sprintf("template:%d", id),
			fmt.Sprintf("name=%q campaign=%d", t.Name, t.CampaignID))
	})
	if errors.Is(err, errDeleteRefused) {
		return refusal
	}
	if err != nil {
		if closed {
			// The template stays; its rule is reloaded from the database.
			s.DropClaimRule(ctx, t)
		}
		return core.DBError(fmt.Sprintf("template %d", id), err)
	}
	s.Templates.Forget(id)
	s.SoldOut.Forget(id)
	if err := s.DropTemplateKeys(ctx, t.CampaignID, id); err != nil {
		// The closed rule stays: what is left refuses every claim.
		s.Log.Warn("delete a deleted template's counters", "template", id, "err", err)
	}
	return nil
}

// templateInUse says why template t cannot be deleted, or nil. The
// pending reservations are read before the rows: a claim's reservation
// leaves the pending set only after its row is committed. The rows are read
// with a locking read, which sees the latest committed rows (MySQL's
// snapshot of this transaction may be older).
func (s *Admin) templateInUse(ctx context.Context, tx *gorm.DB, t *models.Template) (error, error) {
	pending, err := s.PendingOf(ctx, t.CampaignID, t.ID)
	if err != nil {
		return nil, err
	}
	if pending > 0 {
		return inUse("template %d has a claim under way: it may issue a coupon; archive it instead", t.ID), nil
	}
	issued, err := templateHasRows(tx.Clauses(clause.Locking{Strength: "UPDATE"}), &models.Coupon{}, t.ID)
	if err != nil {
		return nil, err
	}
	if issued {
		return inUse("template %d has issued coupons: it cannot be deleted; archive it instead", t.ID), nil
	}
	// A locking read as well: a job queued while this delete waited for the
	// template's rows (job creation locks them too) is committed by then,
	// and only a locking read sees it on MySQL.
	jobs, err := templateHasRows(tx.Clauses(clause.Locking{Strength: "UPDATE"}), &models.Job{}, t.ID)
	if err != nil {
		return nil, err
	}
	if jobs {
		return inUse("template %d has code jobs: it cannot be deleted; archive it instead", t.ID), nil
	}
	return nil, nil
}

// DeleteCampaign deletes a campaign without templates. A campaign with
// templates is refused with CodeInUse, also when none of them issued a
// coupon: each template is deleted on its own, under its own guard against
// claims, and a campaign's delete never removes a template the admin did
// not delete (docs/flows.md#delete). Errors: CodeInUse, CodeNotFound,
// CodeUnavailable.
func (s *Admin) DeleteCampaign(ctx context.Context, actor string, id int64) error {
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// CreateTemplate locks the campaign's row too: no template is
		// added between the count and the delete.
		var c models.Campaign
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&c, id).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.Template{}).Where("campaign_id = ?", id).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return inUse("campaign %d has %d template(s): delete those that never issued a coupon first, or archive the campaign's templates instead", id, n)
		}
		if err := tx.Delete(&models.Campaign{}, id).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "campaign.delete", fmt.Sprintf("campaign:%d", id), fmt.Sprintf("name=%q", c.Name))
	})
	if err != nil {
		return core.DBError(fmt.Sprintf("campaign %d", id), err)
	}
	if err := s.DropCampaignKeys(ctx, id); err != nil {
		s.Log.Warn("delete a deleted campaign's counters", "campaign", id, "err", err)
	}
	return nil
}

func inUse(format string, args ...any) error {
	return models.Errorf(models.CodeInUse, format, args...)
}

// TemplateIssued reports whether template id has issued anything that keeps
// it from being deleted for good: a coupon row or a code job. The console
// offers Delete only when it has not (a claim under way is for the delete
// itself to find).
func (s *Admin) TemplateIssued(ctx context.Context, id int64) (bool, error) {
	issued, err := templateHasRows(s.DB.WithContext(ctx), &models.Coupon{}, id)
	if err != nil {
		return false, core.DBError("coupons", err)
	}
	if issued {
		return true, nil
	}
	jobs, err := templateHasRows(s.DB.WithContext(ctx), &models.Job{}, id)
	if err != nil {
		return false, core.DBError("jobs", err)
	}
	return jobs, nil
}

// templateHasRows reports whether a row of model's table (coupons, jobs)
// names template tid. db is a fresh session, with a locking clause when the
// caller needs the latest committed rows.
func templateHasRows(db *gorm.DB, model any, tid int64) (bool, error) {
	var ids []int64
	err := db.Model(model).Where("template_id = ?", tid).Limit(1).Pluck("id", &ids).Error
	return len(ids) > 0, err
}
