package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CampaignPatch holds what an admin may change on a campaign; nil leaves a
// field as it is.
type CampaignPatch struct {
	Name   *string
	Status *string
	// Currency changes only while the campaign has no template: every
	// template's amounts are in its campaign's currency.
	Currency *string
	// BudgetCents is the new budget (0: none); never below what the
	// campaign's coupons have taken (see changeBudget).
	BudgetCents *int64
	// PerCustomerLimit is the campaign's new per-customer cap (0: none;
	// docs/automatic-offers.md).
	PerCustomerLimit *int64
}

// UpdateCampaign renames, pauses or resumes a campaign (docs/flows.md,
// "Pause a campaign"). A paused campaign's templates take no claims
// (not_claimable, "this coupon's campaign is paused"), whatever their own
// status; resuming gives each template its own rule back. As for a template's
// status, the claim rules of every template of the campaign are written to
// Redis before the commit, under the locks of the campaign's and the
// templates' rows, so that every instance follows the change from the answer
// on; a failed write rolls the change back. The currency changes only
// while the campaign has no template (400 on currency). A budget change moves
// the Redis budget counter as changeBudget says. Each change is audited:
// campaign.pause, campaign.resume, campaign.update, campaign.budget. Errors:
// CodeInvalidRequest (each field at fault), CodeBudgetExhausted (a budget
// below what the coupons have taken), CodeNotFound, CodeUnavailable.
func (s *Admin) UpdateCampaign(ctx context.Context, actor string, id int64, p CampaignPatch) (*models.Campaign, error) {
	var camp models.Campaign
	var ts []models.Template
	sent := false
	var budget budgetChange
	if p.BudgetCents != nil {
		// The load lock keeps reloads of the counters out until the change
		// is committed and its counter moved.
		lock, err := s.LockCampaign(ctx, id, nil)
		if err != nil {
			return nil, err
		}
		defer lock.Release(context.WithoutCancel(ctx))
	}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&camp, id).Error; err != nil {
			return err
		}
		before := camp
		if p.Name != nil {
			camp.Name = *p.Name
		}
		if p.Status != nil {
			camp.Status = strings.TrimSpace(*p.Status)
			if camp.Status == "" {
				return models.Invalid("status", `must be %q or %q`, models.CampaignActive, models.CampaignPaused)
			}
		}
		if p.Currency != nil {
			camp.Currency = strings.TrimSpace(*p.Currency)
			if camp.Currency == "" {
				return models.ValidateCurrency("currency", "")
			}
		}
		if p.BudgetCents != nil {
			camp.BudgetCents = *p.BudgetCents
		}
		if p.PerCustomerLimit != nil {
			camp.PerCustomerLimit = *p.PerCustomerLimit
		}
		if err := camp.Validate(); err != nil {
			return err
		}
		if camp == before {
			return nil
		}
		if camp.BudgetCents != before.BudgetCents {
			var err error
			if budget, err = s.changeBudget(ctx, tx, actor, &before, camp.BudgetCents); err != nil {
				return err
			}
			before.BudgetCents = camp.BudgetCents
			if camp == before {
				return nil
			}
		}
		if camp.Currency != before.Currency {
			var n int64
			if err := tx.Model(&models.Template{}).Where("campaign_id = ?", id).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return models.Invalid("currency", "cannot change: the campaign has %d templates, whose amounts are in %s", n, s.campaignCurrency(&before))
			}
		}
		if err := tx.Model(&camp).Select("name", "status", "currency", "per_customer_limit").Updates(&camp).Error; err != nil {
			return err
		}
		action := "campaign.update"
		switch {
		case camp.Status != before.Status && camp.Status == models.CampaignPaused:
			action = "campaign.pause"
		case camp.Status != before.Status:
			action = "campaign.resume"
		}
		if err := s.Audit(tx, actor, action, fmt.Sprintf("campaign:%d", camp.ID),
			fmt.Sprintf("name=%q status=%s status_was=%s currency=%s per_customer_limit=%d", camp.Name, camp.Status, before.Status,
				camp.Currency, camp.PerCustomerLimit)); err != nil {
			return err
		}
		if camp.Status == before.Status {
			return nil
		}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("campaign_id = ?", id).Order("id").
			Find(&ts).Error; err != nil {
			return err
		}
		sent = true
		for i := range ts {
			if err := s.PublishClaimRule(ctx, &ts[i], camp.Status); err != nil {
				return err
			}
		}
		return nil
	})
	budget.settle(ctx, s, id, err == nil)
	if err != nil {
		if sent {
			// Redis may hold rules that were not committed.
			for i := range ts {
				s.DropClaimRule(ctx, &ts[i])
			}
		}
		return nil, core.DBError(fmt.Sprintf("campaign %d", id), err)
	}
	s.Templates.ForgetCampaign(id) // a new cap binds this instance at once
	return &camp, nil
}
