package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/couponsvc/couponsvc/models"
)

// GetTemplate returns a template read from the database.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Core) GetTemplate(ctx context.Context, id int64) (*models.Template, error) {
	t, err := ByID[models.Template](ctx, s.DB, "template", id)
	if err != nil {
		return nil, err
	}
	s.Templates.Put(*t, s.Clock())
	return t, nil
}

// Template returns a template for the hot paths, from the short-lived cache.
func (s *Core) Template(ctx context.Context, id int64) (*models.Template, error) {
	if t, ok := s.Templates.Get(id, s.Clock()); ok {
		return &t, nil
	}
	return s.GetTemplate(ctx, id)
}

// ViewTemplate returns a template with its remaining stock.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Core) ViewTemplate(ctx context.Context, id int64) (*TemplateView, error) {
	t, err := s.GetTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.viewTemplate(ctx, t)
}

// ViewOffer returns a template on offer (see ListTemplates) with its
// remaining stock, and CodeNotFound, as for an unknown id, for one that is
// not: paused (or its campaign), not yet open, closed or past its validity. Errors:
// CodeNotFound, CodeUnavailable.
func (s *Core) ViewOffer(ctx context.Context, id int64) (*TemplateView, error) {
	t, err := s.GetTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Claimable(s.Clock()) != nil {
		return nil, DBError(fmt.Sprintf("template %d", id), gorm.ErrRecordNotFound)
	}
	camp, err := s.GetCampaign(ctx, t.CampaignID)
	if err != nil {
		return nil, err
	}
	if camp.Status == models.CampaignPaused {
		return nil, DBError(fmt.Sprintf("template %d", id), gorm.ErrRecordNotFound)
	}
	return s.viewTemplate(ctx, t)
}

func (s *Core) viewTemplate(ctx context.Context, t *models.Template) (*TemplateView, error) {
	views, err := s.WithRemaining(ctx, []models.Template{*t})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// WithRemaining reads each template's remaining stock from Redis in one round
// trip, loading campaigns whose counters are missing.
func (s *Core) WithRemaining(ctx context.Context, ts []models.Template) ([]TemplateView, error) {
	out := make([]TemplateView, len(ts))
	// Each template's own counters are checked, not only its campaign's: a
	// template added to a loaded campaign has none until it is loaded.
	var cids []int64
	tids := map[int64][]int64{}
	for i := range ts {
		out[i].Template = ts[i]
		cid := ts[i].CampaignID
		if _, seen := tids[cid]; !seen {
			cids = append(cids, cid)
		}
		tids[cid] = append(tids[cid], ts[i].ID)
	}
	for _, cid := range cids {
		if err := s.EnsureLoaded(ctx, cid, tids[cid]...); err != nil {
			return nil, err
		}
	}
	cmds := make([]*redis.StringCmd, len(ts))
	_, err := s.Rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, t := range ts {
			cmds[i] = p.HGet(ctx, s.Keys.Template(t.CampaignID, t.ID), "remaining")
		}
		return nil
	})
	if err != nil && !IsRedisNil(err) {
		return nil, RedisError(err)
	}
	for i, c := range cmds {
		if n, err := c.Int64(); err == nil {
			out[i].Remaining = &n
		}
	}
	return out, nil
}

// ByID reads the row of id afresh (outside any transaction, so that MySQL
// answers from the latest committed state); what names it in a not-found
// error.
func ByID[T any](ctx context.Context, db *gorm.DB, what string, id int64) (*T, error) {
	var row T
	if err := db.WithContext(ctx).First(&row, id).Error; err != nil {
		return nil, DBError(fmt.Sprintf("%s %d", what, id), err)
	}
	return &row, nil
}

// GetCampaign returns one campaign. Errors: CodeNotFound, CodeUnavailable.
func (s *Core) GetCampaign(ctx context.Context, id int64) (*models.Campaign, error) {
	return ByID[models.Campaign](ctx, s.DB, "campaign", id)
}

// ListCampaigns returns every campaign, oldest first.
func (s *Core) ListCampaigns(ctx context.Context) ([]models.Campaign, error) {
	var out []models.Campaign
	err := s.DB.WithContext(ctx).Order("id").Find(&out).Error
	return out, DBError("campaigns", err)
}

// ListTemplates returns templates with the stock left, newest campaign
// first: all of them, or when offeredOnly only those on offer, which take
// claims now as far as the template and its campaign go
// (models.Template.Claimable, the campaign not paused; sold out ones
// included). What is not on offer yet stays hidden from shoppers.
func (s *Core) ListTemplates(ctx context.Context, offeredOnly bool) ([]TemplateView, error) {
	var ts []models.Template
	q := s.DB.WithContext(ctx).Order("campaign_id DESC, id")
	if offeredOnly {
		q = q.Where("status = ?", models.TemplateActive).
			Where("campaign_id NOT IN (?)", s.DB.Model(&models.Campaign{}).Select("id").Where("status = ?", models.CampaignPaused))
	}
	if err := q.Find(&ts).Error; err != nil {
		return nil, DBError("templates", err)
	}
	if offeredOnly {
		now := s.Clock()
		ts = slices.DeleteFunc(ts, func(t models.Template) bool { return t.Claimable(now) != nil })
	}
	return s.WithRemaining(ctx, ts)
}

// TemplateView is a template with the stock left, as Redis counts it.
type TemplateView struct {
	models.Template
	// Remaining is the stock left; nil when Redis cannot tell right now.
	Remaining *int64 `json:"remaining"`
}
