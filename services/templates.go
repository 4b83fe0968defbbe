package services

import (
	"context"
	"couponsvc/models"
	"fmt"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
	"time"
)

// GetTemplate returns a template read from the database.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Service) GetTemplate(ctx context.Context, id int64) (*models.Template, error) {
	t, err := byID[models.Template](ctx, s.db, "template", id)
	if err != nil {
		return nil, err
	}
	s.templates.put(*t, time.Now())
	return t, nil
}

// template returns a template for the hot paths, from the short-lived cache.
func (s *Service) template(ctx context.Context, id int64) (*models.Template, error) {
	if t, ok := s.templates.get(id, time.Now()); ok {
		return &t, nil
	}
	return s.GetTemplate(ctx, id)
}

// ViewTemplate returns a template with its remaining stock.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Service) ViewTemplate(ctx context.Context, id int64) (*TemplateView, error) {
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
func (s *Service) ViewOffer(ctx context.Context, id int64) (*TemplateView, error) {
	t, err := s.GetTemplate(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Claimable(s.now()) != nil {
		return nil, dbError(fmt.Sprintf("template %d", id), gorm.ErrRecordNotFound)
	}
	camp, err := s.GetCampaign(ctx, t.CampaignID)
	if err != nil {
		return nil, err
	}
	if camp.Status == models.CampaignPaused {
		return nil, dbError(fmt.Sprintf("template %d", id), gorm.ErrRecordNotFound)
	}
	return s.viewTemplate(ctx, t)
}

func (s *Service) viewTemplate(ctx context.Context, t *models.Template) (*TemplateView, error) {
	views, err := s.withRemaining(ctx, []models.Template{*t})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// withRemaining reads each template's remaining stock from Redis in one round
// trip, loading campaigns whose counters are missing.
func (s *Service) withRemaining(ctx context.Context, ts []models.Template) ([]TemplateView, error) {
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
		if err := s.ensureLoaded(ctx, cid, tids[cid]...); err != nil {
			return nil, err
		}
	}
	cmds := make([]*redis.StringCmd, len(ts))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, t := range ts {
			cmds[i] = p.HGet(ctx, s.keys.template(t.CampaignID, t.ID), "remaining")
		}
		return nil
	})
	if err != nil && !isRedisNil(err) {
		return nil, redisError(err)
	}
	for i, c := range cmds {
		if n, err := c.Int64(); err == nil {
			out[i].Remaining = &n
		}
	}
	return out, nil
}
