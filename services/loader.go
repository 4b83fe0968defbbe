package services

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"couponsvc/lua"
	"couponsvc/models"

	"github.com/bsm/redislock"
	"gorm.io/gorm"
)

// Load modes of coupon_load.lua.
const (
	loadMissing = "missing" // fill only counters that Redis lost
	loadForce   = "force"   // rebuild every counter of the campaign from the database
)

// ensureLoaded makes sure the campaign's budget and the given templates'
// counters are in Redis, loading them from the database when missing.
func (s *Service) ensureLoaded(ctx context.Context, cid int64, tids ...int64) error {
	ks := []string{s.keys.budget(cid)}
	for _, tid := range tids {
		ks = append(ks, s.keys.template(cid, tid))
	}
	n, err := s.rdb.Exists(ctx, ks...).Result()
	if err != nil {
		return redisError(err)
	}
	if int(n) == len(ks) {
		return nil
	}
	return s.loadCampaign(ctx, cid, loadMissing)
}

// loadCampaign rebuilds a campaign's Redis counters from the database, the
// authority, under the campaign's load lock so that instances do not load at
// once. In mode loadMissing only lost counters are written. Reservations in
// flight are kept (see coupon_load.lua).
func (s *Service) loadCampaign(ctx context.Context, cid int64, mode string) error {
	lock, err := s.locker.Obtain(ctx, s.keys.loadLock(cid), 30*time.Second, &redislock.Options{
		RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(20*time.Millisecond), 500),
	})
	if err != nil {
		if err == redislock.ErrNotObtained {
			return models.Unavailable("loading the campaign's counters", err)
		}
		return redisError(err)
	}
	defer lock.Release(context.WithoutCancel(ctx))

	snap, err := s.readCampaignSnapshot(ctx, cid)
	if err != nil {
		return err
	}
	ks := []string{s.keys.budget(cid), s.keys.pending(cid), s.keys.recent(cid)}
	args := []any{mode, snap.budgetRemaining}
	for _, t := range snap.templates {
		ks = append(ks, s.keys.template(cid, t.id), s.keys.free(cid, t.id), s.keys.users(cid, t.id))
		args = append(args, t.id, t.total, t.limit, t.value, t.next, t.free, t.users)
	}
	start := time.Now()
	res, err := lua.Load.Run(ctx, s.rdb, ks, args...).Int64Slice()
	observe(ctx, s.metrics.ScriptSeconds.WithLabelValues("load"), "load", start)
	if err != nil {
		return redisError(err)
	}
	if res[0] > 0 || res[1] > 0 {
		s.log.Info("loaded campaign counters from the database", "campaign", cid, "mode", mode,
			"templates", res[0], "budget", res[1] == 1)
	}
	return nil
}

// campaignSnapshot is what the database says a campaign's counters must be.
type campaignSnapshot struct {
	budgetRemaining int64 // -1 = no budget
	templates       []templateSnapshot
}

type templateSnapshot struct {
	id, total, limit, value int64
	next                    int64  // 1 + the highest slot held
	free                    string // comma list of unheld slots below next
	users                   string // "user=1,2;user2=1"
}

// readCampaignSnapshot reads the campaign's state in one transaction, so
// that MySQL answers from one consistent snapshot.
func (s *Service) readCampaignSnapshot(ctx context.Context, cid int64) (*campaignSnapshot, error) {
	snap := &campaignSnapshot{budgetRemaining: -1}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var c models.Campaign
		if err := tx.First(&c, cid).Error; err != nil {
			return err
		}
		var ts []models.Template
		if err := tx.Where("campaign_id = ?", cid).Order("id").Find(&ts).Error; err != nil {
			return err
		}
		if c.BudgetCents > 0 {
			var used int64
			if err := tx.Model(&models.Coupon{}).Where("campaign_id = ? AND slot IS NOT NULL", cid).
				Select("COALESCE(SUM(value_cents), 0)").Scan(&used).Error; err != nil {
				return err
			}
			snap.budgetRemaining = max(c.BudgetCents-used, 0)
		}
		for _, t := range ts {
			tsnap, err := readTemplateSnapshot(tx, &t)
			if err != nil {
				return err
			}
			snap.templates = append(snap.templates, *tsnap)
		}
		return nil
	})
	if err != nil {
		return nil, dbError(fmt.Sprintf("campaign %d", cid), err)
	}
	return snap, nil
}

func readTemplateSnapshot(tx *gorm.DB, t *models.Template) (*templateSnapshot, error) {
	var slots []int64
	if err := tx.Model(&models.Coupon{}).Where("template_id = ? AND slot IS NOT NULL", t.ID).
		Order("slot").Pluck("slot", &slots).Error; err != nil {
		return nil, err
	}
	var holders []struct {
		UserID      string
		UserOrdinal int64
	}
	if err := tx.Model(&models.Coupon{}).Where("template_id = ? AND user_ordinal IS NOT NULL", t.ID).
		Order("user_id, user_ordinal").Select("user_id, user_ordinal").Scan(&holders).Error; err != nil {
		return nil, err
	}
	ts := &templateSnapshot{id: t.ID, total: t.TotalStock, limit: t.PerUserLimit, value: t.ValueCents(), next: 1}
	var free strings.Builder
	for _, slot := range slots {
		for ; ts.next < slot; ts.next++ {
			if free.Len() > 0 {
				free.WriteByte(',')
			}
			free.WriteString(strconv.FormatInt(ts.next, 10))
		}
		ts.next = slot + 1
	}
	ts.free = free.String()
	var users strings.Builder
	for i, h := range holders {
		switch {
		case i == 0:
		case holders[i-1].UserID == h.UserID:
			users.WriteByte(',')
			users.WriteString(strconv.FormatInt(h.UserOrdinal, 10))
			continue
		default:
			users.WriteByte(';')
		}
		users.WriteString(h.UserID + "=" + strconv.FormatInt(h.UserOrdinal, 10))
	}
	ts.users = users.String()
	return ts, nil
}
