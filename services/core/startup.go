package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/couponsvc/couponsvc/models"
)

// LoadMissingCounters loads, before the service takes claims, the Redis
// counters of every campaign with a template open for claims (no claim end, or
// one still ahead) whose counters Redis does not hold: after a restart of the
// embedded default, or of a Redis without persistence, the first shoppers of a
// flash sale then find the counters ready instead of queueing behind the
// load. A campaign whose counters are present is left as it is. It returns
// how many campaigns it loaded. The claim path still loads a campaign found
// missing later, so an error here (Redis or the database down) only delays the
// load: the caller logs it and serves.
func (s *Core) LoadMissingCounters(ctx context.Context) (int, error) {
	var open []models.Template
	err := s.DB.WithContext(ctx).Select("id", "campaign_id").
		Where("claim_ends_at IS NULL OR claim_ends_at > ?", s.Clock()).
		Order("campaign_id, id").Find(&open).Error
	if err != nil {
		return 0, DBError("templates", err)
	}
	loaded := 0
	var errs []error
	for _, g := range ByCampaign(open) {
		if err := ctx.Err(); err != nil {
			errs = append(errs, models.Unavailable("loading the counters", err))
			break
		}
		ok, err := s.countersLoaded(ctx, g.Cid, g.Tids)
		if err != nil {
			errs = append(errs, err)
			break // Redis is down: the claim path loads when it is back
		}
		if ok {
			continue
		}
		if err := s.LoadCampaign(ctx, g.Cid, LoadMissing); err != nil {
			errs = append(errs, fmt.Errorf("campaign %d: %w", g.Cid, err))
			continue
		}
		loaded++
	}
	return loaded, errors.Join(errs...)
}

// FillCurrency writes the deployment's currency (Config.Currency) into the
// campaigns and templates whose currency is empty: the rows written before
// they had one. Run at start, after the migrations; it touches nothing
// once every row has a currency, so that every instance may run it, and
// leaves updated_at alone (the rows did not change in meaning). It
// returns how many rows it filled. Errors: CodeUnavailable.
func (s *Core) FillCurrency(ctx context.Context) (int64, error) {
	var n int64
	for _, m := range []any{&models.Campaign{}, &models.Template{}} {
		res := s.DB.WithContext(ctx).Model(m).Where("currency = ?", "").UpdateColumn("currency", s.Cfg.Currency)
		if res.Error != nil {
			return n, DBError("the currency of older rows", res.Error)
		}
		n += res.RowsAffected
	}
	return n, nil
}
