package core

import (
	"context"
	"slices"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// offerList is the live automatic offers as read at fetched.
type offerList struct {
	ts      []models.Template
	fetched time.Time
	ok      bool
}

// CampaignCap is a campaign's per-customer cap and the templates it counts
// (docs/automatic-offers.md).
type CampaignCap struct {
	// Limit is the most coupons one user holds of the campaign's templates
	// together; 0: no cap.
	Limit int64
	// TemplateIDs are every template of the campaign, archived ones
	// included: their coupons count.
	TemplateIDs []int64
}

type cachedCap struct {
	cap     CampaignCap
	fetched time.Time
}

// AutomaticOffers returns the automatic offers that may apply now: code mode
// automatic, active, in an active campaign, taking claims at now
// (models.Template.Claimable), lower priority first, then older first. The
// list is read from the database at most once per TemplateCacheTTL of the
// service's clock on an instance, and again at once after a change of any
// template on it (docs/automatic-offers.md). One request reads a stale
// list again while the others answer from the old one; with no list at
// all they wait for that read. Errors: CodeUnavailable.
func (s *Core) AutomaticOffers(ctx context.Context) ([]models.Template, error) {
	list, err := s.cachedOffers(ctx)
	if err != nil {
		return nil, err
	}
	at := s.Clock()
	out := make([]models.Template, 0, len(list.ts))
	for _, t := range list.ts {
		if t.Claimable(at) == nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// cachedOffers is the instance's list of offers, read again when it is older
// than the TTL by one request at a time (single flight).
func (s *Core) cachedOffers(ctx context.Context) (offerList, error) {
	c := &s.Templates
	for {
		now := s.Cfg.Now()
		c.mu.Lock()
		list, wait := c.offers, c.refresh
		if list.ok && now.Sub(list.fetched) <= c.ttl {
			c.mu.Unlock()
			return list, nil
		}
		if wait != nil {
			c.mu.Unlock()
			if list.ok {
				return list, nil // another request is reading it again
			}
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return offerList{}, DBError("templates", ctx.Err())
			}
		}
		done, forgot := make(chan struct{}), c.forgot
		c.refresh = done
		c.mu.Unlock()
		ts, err := s.readOffers(ctx)
		c.mu.Lock()
		c.refresh = nil
		close(done)
		if err == nil {
			list = offerList{ts: ts, fetched: now, ok: true}
			if c.forgot == forgot { // no change since the read began
				c.offers = list
			}
		}
		c.mu.Unlock()
		return list, err
	}
}

// readOffers reads the automatic offers that are active in active
// campaigns, in their order, in one statement. Errors: CodeUnavailable.
func (s *Core) readOffers(ctx context.Context) ([]models.Template, error) {
	var ts []models.Template
	err := s.DB.WithContext(ctx).Select("templates.*").
		Joins("JOIN campaigns ON campaigns.id = templates.campaign_id AND campaigns.status <> ?", models.CampaignPaused).
		Where("templates.code_mode = ? AND templates.status = ?", models.CodeModeAutomatic, models.TemplateActive).
		Order("templates.priority, templates.id").Find(&ts).Error
	if err != nil {
		return nil, DBError("templates", err)
	}
	return ts, nil
}

// dropOffers drops the list of offers after a change; c.mu is held.
func (c *templateCache) dropOffers() {
	c.offers = offerList{}
	c.forgot++
}

// CampaignCapOf returns the campaign's per-customer cap and its templates,
// read at most once per TemplateCacheTTL on an instance (and again at once
// after a change of a template or campaign on it). Errors: CodeNotFound,
// CodeUnavailable.
func (s *Core) CampaignCapOf(ctx context.Context, cid int64) (CampaignCap, error) {
	now := s.Clock() // the service's clock: a test sets it (docs/automatic-offers.md)
	c := &s.Templates
	c.mu.Lock()
	it, ok := c.caps[cid]
	c.mu.Unlock()
	if ok && now.Sub(it.fetched) <= c.ttl {
		return it.cap, nil
	}
	camp, err := s.GetCampaign(ctx, cid)
	if err != nil {
		return CampaignCap{}, err
	}
	cc := CampaignCap{Limit: camp.PerCustomerLimit}
	if cc.Limit > 0 {
		if err := s.DB.WithContext(ctx).Model(&models.Template{}).Where("campaign_id = ?", cid).Order("id").
			Pluck("id", &cc.TemplateIDs).Error; err != nil {
			return CampaignCap{}, DBError("templates", err)
		}
	}
	c.mu.Lock()
	if c.caps == nil || len(c.caps) > 10_000 {
		c.caps = map[int64]cachedCap{}
	}
	c.caps[cid] = cachedCap{cap: cc, fetched: now}
	c.mu.Unlock()
	return cc, nil
}

// ForgetCampaign drops what the instance keeps of a campaign's cap and the
// automatic offers, after a change of the campaign.
func (c *templateCache) ForgetCampaign(cid int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.caps, cid)
	c.dropOffers()
}

// CapKeys are the keys coupon_deduct.lua reads after its own seven for a
// campaign cap: each other template's hash and users hash.
func (k Keys) CapKeys(cid, tid int64, cc CampaignCap) []string {
	out := make([]string, 0, 2*len(cc.TemplateIDs))
	for _, id := range cc.TemplateIDs {
		if id != tid {
			out = append(out, k.Template(cid, id), k.Users(cid, id))
		}
	}
	return out
}

// HeldInCampaign counts the ordinals the user holds of every template of
// the cap, as coupon_deduct.lua counts them for the campaign cap: a
// validation's reading (ClaimCounters.CampaignHeld). Errors: CodeUnavailable.
func (s *Core) HeldInCampaign(ctx context.Context, cid int64, cc CampaignCap, user string) (int64, error) {
	var n int64
	for _, id := range slices.Clip(cc.TemplateIDs) {
		v, err := s.Rdb.HGet(ctx, s.Keys.Users(cid, id), user).Result()
		if err != nil && !IsRedisNil(err) {
			return 0, RedisError(err)
		}
		n += CountOrdinals(v)
	}
	return n, nil
}

// CountOrdinals counts the ordinals of a users hash value ("1,3").
func CountOrdinals(list string) int64 {
	if list == "" {
		return 0
	}
	n := int64(1)
	for i := 0; i < len(list); i++ {
		if list[i] == ',' {
			n++
		}
	}
	return n
}
