package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// CreateCampaign validates and stores a campaign; without a currency it
// has the deployment's. Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Admin) CreateCampaign(ctx context.Context, actor string, c models.Campaign) (*models.Campaign, error) {
	if c.Currency == "" {
		c.Currency = s.Cfg.Currency
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.ID = 0
	c.CreatedAt = s.Clock()
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&c).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "campaign.create", fmt.Sprintf("campaign:%d", c.ID),
			fmt.Sprintf("name=%q budget_cents=%d currency=%s", c.Name, c.BudgetCents, c.Currency))
	})
	if err != nil {
		return nil, core.DBError("campaign", err)
	}
	return &c, nil
}

// TemplatePatch holds the fields an admin may change on a template; nil
// leaves a field as it is. ClearClaimEndsAt removes the end of the claim
// window. What a coupon takes off (kind, amounts, applies_to, target, tiers,
// minimums, priority, currency) is not among them, as face_value_cents never
// was: coupons already issued carry the template's value in the campaign's
// budget and held orders were priced by it (docs/pricing.md).
type TemplatePatch struct {
	Name             *string
	Description      *string
	ClaimStartsAt    *time.Time
	ClaimEndsAt      *time.Time
	ClearClaimEndsAt bool
	Status           *string
	// CodeMode and SharedCode switch the template between a code per
	// coupon and a shared code (docs/shared-codes.md).
	CodeMode   *string
	SharedCode *string
	// Stacking is whether the template's coupon may share an order with
	// other combinable coupons. A change binds the holds and redemptions
	// after it; an order already held keeps the coupons it holds
	// (docs/checkout.md).
	Stacking *string
	// Eligibility replaces the template's eligibility rule ("" admits
	// every customer; docs/eligibility.md); the checkouts after the change
	// judge by it.
	Eligibility *string
}

// CreateTemplate validates and stores a template and loads its counters into
// Redis. A template whose coupons would be born expired is refused (see
// models.Template.ValidateIssuable), and so is a shared code another
// template that is not archived has (the database's unique index decides,
// also between two creations at once). Without a currency the template has
// the deployment's; it must be its campaign's (the campaign's row is locked,
// so that its currency does not change meanwhile). Errors:
// CodeInvalidRequest, CodeNotFound (campaign), CodeUnavailable.
func (s *Admin) CreateTemplate(ctx context.Context, actor string, t models.Template) (*models.Template, error) {
	now := s.Clock()
	if t.ClaimStartsAt.IsZero() {
		t.ClaimStartsAt = now
	}
	if t.Currency == "" {
		t.Currency = s.Cfg.Currency
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if t.Status == models.TemplateArchived {
		return nil, models.Invalid("status", "must be %q or %q for a new template", models.TemplateActive, models.TemplatePaused)
	}
	if err := t.ValidateIssuable(now); err != nil {
		return nil, err
	}
	t.ID = 0
	t.CreatedAt, t.UpdatedAt = now, now
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var camps []models.Campaign
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", t.CampaignID).Limit(1).Find(&camps).Error; err != nil {
			return err
		}
		if len(camps) == 0 {
			return &models.Error{Code: models.CodeNotFound, Field: "campaign_id", Message: fmt.Sprintf("campaign %d does not exist", t.CampaignID)}
		}
		if cur := s.campaignCurrency(&camps[0]); t.Currency != cur {
			return models.Invalid("currency", "must be %s, the currency of campaign %d", cur, t.CampaignID)
		}
		if err := tx.Create(&t).Error; err != nil {
			return sharedCodeTaken(err, t.SharedCode)
		}
		return s.Audit(tx, actor, "template.create", fmt.Sprintf("template:%d", t.ID),
			fmt.Sprintf("name=%q kind=%s stock=%d limit=%d code_mode=%s shared_code=%s applies_to=%s priority=%d currency=%s",
				t.Name, t.Kind, t.TotalStock, t.PerUserLimit, t.CodeMode, t.SharedCode, t.AppliesTo, t.Priority, t.Currency))
	})
	if err != nil {
		return nil, core.DBError("template", err)
	}
	// Counters that cannot be loaded now are loaded by the first claim.
	if err := s.EnsureLoaded(ctx, t.CampaignID, t.ID); err != nil {
		s.Log.Warn("load the new template's counters", "template", t.ID, "err", err)
	}
	s.Templates.Forget(t.ID) // a shared code looked up as no template's has one now
	return &t, nil
}

// campaignCurrency is a campaign's currency: an empty one (a row older
// than currencies, not yet filled by core.FillCurrency) is the deployment's.
func (s *Admin) campaignCurrency(c *models.Campaign) string {
	if c.Currency == "" {
		return s.Cfg.Currency
	}
	return c.Currency
}

// ListCampaignTemplates returns the templates of one campaign, oldest
// first, with the stock left. Errors: CodeUnavailable.
func (s *Admin) ListCampaignTemplates(ctx context.Context, campaignID int64) ([]core.TemplateView, error) {
	var ts []models.Template
	if err := s.DB.WithContext(ctx).Where("campaign_id = ?", campaignID).Order("id").Find(&ts).Error; err != nil {
		return nil, core.DBError("templates", err)
	}
	return s.WithRemaining(ctx, ts)
}

// UpdateTemplate changes a template's name, description, claim window,
// status or code mode. Status archived is final: an archived template
// takes no claims, changes no more but for its name and description, and
// its shared code is free for another template (docs/shared-codes.md). A change of status or claim window binds every instance from the
// answer on: the claim rule in Redis is written before the commit (see
// publishClaimRule). A template whose coupons would be born expired is not
// resumed and its claim window not moved (see
// models.Template.ValidateIssuable). Errors: CodeInvalidRequest,
// CodeNotFound, CodeUnavailable.
func (s *Admin) UpdateTemplate(ctx context.Context, actor string, id int64, p TemplatePatch) (*models.Template, error) {
	var t models.Template
	sent := false // the rule went to Redis, or may have
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The campaign's row, then the template's, stay locked until the
		// commit, so that concurrent changes of either reach Redis in the
		// order they commit; UpdateCampaign locks in the same order.
		camp, err := lockTemplateCampaign(tx, id)
		if err != nil {
			return err
		}
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&t, id).Error; err != nil {
			return err
		}
		before := t
		if p.Name != nil {
			t.Name = *p.Name
		}
		if p.Description != nil {
			t.Description = *p.Description
		}
		if p.ClaimStartsAt != nil {
			t.ClaimStartsAt = p.ClaimStartsAt.UTC()
		}
		if p.ClearClaimEndsAt {
			t.ClaimEndsAt = nil
		} else if p.ClaimEndsAt != nil {
			end := p.ClaimEndsAt.UTC()
			t.ClaimEndsAt = &end
		}
		if p.Status != nil {
			t.Status = *p.Status
			if t.Status == "" {
				return models.Invalid("status", `must be "active", "paused" or "archived"`)
			}
		}
		if p.CodeMode != nil {
			t.CodeMode = *p.CodeMode
			if t.CodeMode == models.CodeModeUnique && p.SharedCode == nil {
				t.SharedCode = "" // leaving shared mode drops the code
			}
		}
		if p.SharedCode != nil {
			t.SharedCode = *p.SharedCode
		}
		if p.Stacking != nil {
			t.Stacking = *p.Stacking
			if t.Stacking == "" {
				return models.Invalid("stacking", `must be %q or %q`, models.StackingExclusive, models.StackingCombinable)
			}
		}
		if p.Eligibility != nil {
			t.Eligibility = *p.Eligibility
		}
		if err := t.Validate(); err != nil {
			return err
		}
		if err := archivedFinal(&before, &t); err != nil {
			return err
		}
		// Pausing or renaming never fails on the validity: only a resume or
		// a new claim window must not issue coupons born expired.
		if t.Status == models.TemplateActive && before.Status != models.TemplateActive ||
			!t.ClaimStartsAt.Equal(before.ClaimStartsAt) || !sameTime(t.ClaimEndsAt, before.ClaimEndsAt) {
			if err := t.ValidateIssuable(s.Clock()); err != nil {
				return err
			}
		}
		t.UpdatedAt = s.Clock()
		if err := tx.Save(&t).Error; err != nil {
			return sharedCodeTaken(err, t.SharedCode)
		}
		action := templateAction(before.Status, t.Status)
		detail := fmt.Sprintf("name=%q status=%s code_mode=%s shared_code=%s", t.Name, t.Status, t.CodeMode, t.SharedCode)
		if t.Stacking != before.Stacking {
			detail += " stacking=" + t.Stacking
		}
		if err := s.Audit(tx, actor, action, fmt.Sprintf("template:%d", t.ID), detail); err != nil {
			return err
		}
		if t.Status != before.Status {
			typ := models.EventTemplatePaused
			switch t.Status {
			case models.TemplateActive:
				typ = models.EventTemplateResumed
			case models.TemplateArchived:
				typ = models.EventTemplateArchived
			}
			if err := s.events.EmitEvent(tx, typ, models.TemplateEvent{TemplateID: t.ID, CampaignID: t.CampaignID, Name: t.Name,
				Status: t.Status, TotalStock: t.TotalStock, Actor: actor}); err != nil {
				return err
			}
		}
		sent = true
		return s.PublishClaimRule(ctx, &t, camp.Status)
	})
	if err != nil {
		if sent {
			// Redis may hold a rule that was not committed.
			s.DropClaimRule(ctx, &t)
		}
		return nil, core.DBError(fmt.Sprintf("template %d", id), err)
	}
	s.Templates.Forget(id)
	s.SoldOut.Forget(id)
	return &t, nil
}

// lockTemplateCampaign locks and returns the campaign of template id (a
// template never changes campaign, so reading its campaign_id unlocked first
// is safe).
func lockTemplateCampaign(tx *gorm.DB, id int64) (*models.Campaign, error) {
	var cid int64
	if err := tx.Model(&models.Template{}).Where("id = ?", id).Pluck("campaign_id", &cid).Error; err != nil {
		return nil, err
	}
	if cid == 0 {
		return nil, gorm.ErrRecordNotFound
	}
	var camp models.Campaign
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).First(&camp, cid).Error; err != nil {
		return nil, err
	}
	return &camp, nil
}

// sameTime reports whether two optional times are both absent or equal.
func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

// archivedFinal refuses any change of an archived template but its name and
// description: archived is final.
func archivedFinal(before, after *models.Template) error {
	if before.Status != models.TemplateArchived {
		return nil
	}
	switch {
	case after.Status != models.TemplateArchived:
		return models.Invalid("status", "the template is archived, which is final: it cannot be resumed")
	case after.Stacking != before.Stacking:
		return models.Invalid("stacking", "the template is archived: whether its coupon joins others no longer changes")
	case after.CodeMode != before.CodeMode || after.SharedCode != before.SharedCode:
		return models.Invalid("shared_code", "the template is archived: its code mode and code no longer change")
	case !after.ClaimStartsAt.Equal(before.ClaimStartsAt) || !sameTime(after.ClaimEndsAt, before.ClaimEndsAt):
		return models.Invalid("claim_starts_at", "the template is archived: its claim window no longer changes")
	}
	return nil
}

// sharedCodeTaken translates the unique index on live shared codes into
// the answer naming the field; other errors pass through.
func sharedCodeTaken(err error, code string) error {
	if index, dup := core.UniqueViolation(err); dup && index == core.UniqueSharedCode {
		return models.Invalid("shared_code", "%s is the code of another template that is not archived", code)
	}
	return err
}

// templateAction is the audit action of a template's change from status
// was to status now: template.archive, template.pause, template.resume, or
// template.update when the status stayed.
func templateAction(was, now string) string {
	switch {
	case now == was:
		return "template.update"
	case now == models.TemplateArchived:
		return "template.archive"
	case now == models.TemplatePaused:
		return "template.pause"
	}
	return "template.resume"
}
