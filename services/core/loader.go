package core

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// Load modes of coupon_load.lua.
const (
	LoadMissing = "missing" // fill only counters that Redis lost
	LoadForce   = "force"   // rebuild every counter of the campaign from the database
)

// EnsureLoaded makes sure the campaign's budget and the given templates'
// counters are in Redis, loading them from the database when missing.
func (s *Core) EnsureLoaded(ctx context.Context, cid int64, tids ...int64) error {
	if loaded, err := s.countersLoaded(ctx, cid, tids); err != nil || loaded {
		return err
	}
	return s.LoadCampaign(ctx, cid, LoadMissing, tids...)
}

// countersLoaded reports whether the campaign's budget and the given
// templates' counters and claim rules are all in Redis.
func (s *Core) countersLoaded(ctx context.Context, cid int64, tids []int64) (bool, error) {
	ks := []string{s.Keys.Budget(cid)}
	for _, tid := range tids {
		ks = append(ks, s.Keys.Template(cid, tid), s.Keys.rule(cid, tid))
	}
	n, err := s.Rdb.Exists(ctx, ks...).Result()
	if err != nil {
		return false, RedisError(err)
	}
	return int(n) == len(ks), nil
}

// LoadCampaign rebuilds a campaign's Redis counters from the database, the
// authority, under the campaign's load lock so that instances do not load at
// once. In mode loadMissing only lost counters are written, and not at all
// when the budget and the templates tids (if given) were loaded by the time
// the lock is held. Reservations in flight are kept (see coupon_load.lua).
func (s *Core) LoadCampaign(ctx context.Context, cid int64, mode string, tids ...int64) error {
	// After a flush every claim finds the counters missing at once: the first
	// to hold the lock loads them; the others stop waiting as soon as they
	// see them loaded, and never read the database.
	var loaded func() (bool, error)
	if mode == LoadMissing && len(tids) > 0 {
		loaded = func() (bool, error) { return s.countersLoaded(ctx, cid, tids) }
	}
	return s.load(ctx, cid, mode, loaded)
}

// Resync rebuilds the campaign's counters from the database after it refused
// a slot or ordinal that Redis handed out. Claims refused at once share one
// rebuild: a rebuild that began after the refusal read the database with the
// row that caused it, and makes another one needless.
func (s *Core) Resync(ctx context.Context, cid int64) error {
	var running *redis.IntCmd
	var gen *redis.StringCmd
	_, err := s.Rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		running = p.Exists(ctx, s.Keys.loadLock(cid))
		gen = p.Get(ctx, s.loadGenKey(cid))
		return nil
	})
	if err != nil && !IsRedisNil(err) {
		return RedisError(err)
	}
	gen0, _ := gen.Int64()
	// A rebuild running now may have read the database before the refusal:
	// only the one after it counts.
	want := gen0 + 1 + running.Val()
	return s.load(ctx, cid, LoadForce, func() (bool, error) {
		g, err := s.Rdb.Get(ctx, s.loadGenKey(cid)).Int64()
		if err != nil && !IsRedisNil(err) {
			return false, RedisError(err)
		}
		return g >= want, nil
	})
}

// loadGenKey counts the campaign's forced rebuilds (see resync).
func (s *Core) loadGenKey(cid int64) string { return s.Keys.Campaign(cid) + "loadgen" }

// load runs coupon_load.lua in mode under the campaign's load lock, unless
// done (if not nil) reports, while waiting for the lock or once it is held,
// that another load did the work.
func (s *Core) load(ctx context.Context, cid int64, mode string, done func() (bool, error)) error {
	lock, err := s.LockCampaign(ctx, cid, done)
	if err != nil || lock == nil {
		return err
	}
	defer lock.Release(context.WithoutCancel(ctx))
	if done != nil {
		if ok, err := done(); err != nil || ok {
			return err
		}
	}

	snap, err := s.readCampaignSnapshot(ctx, cid)
	if err != nil {
		return err
	}
	ks := []string{s.Keys.Budget(cid), s.Keys.Pending(cid), s.Keys.Recent(cid)}
	args := []any{mode, snap.budgetRemaining}
	for _, t := range snap.templates {
		ks = append(ks, s.Keys.Template(cid, t.id), s.Keys.Free(cid, t.id), s.Keys.Users(cid, t.id), s.Keys.rule(cid, t.id))
		args = append(args, t.id, t.total, t.limit, t.value, t.next, t.free, t.users, t.rule)
	}
	start := time.Now()
	res, err := lua.Load.Run(ctx, s.Rdb, ks, args...).Int64Slice()
	Observe(ctx, s.Meter.ScriptSeconds.WithLabelValues("load"), "load", start)
	if err != nil {
		return RedisError(err)
	}
	if res[0] > 0 || res[1] > 0 {
		s.Log.Info("loaded campaign counters from the database", "campaign", cid, "mode", mode,
			"templates", res[0], "budget", res[1] == 1)
	}
	if mode == LoadForce {
		if err := s.Rdb.Incr(ctx, s.loadGenKey(cid)).Err(); err != nil {
			return RedisError(err)
		}
	}
	return nil
}

// LockCampaign takes the campaign's load lock. While another load holds it,
// it tries again after growing, jittered pauses, so that a thousand claims
// waiting at once do not flood Redis; between tries, done (if not nil) may
// report that the other load did the work, and lockCampaign then returns a nil
// lock and no error. It waits at most twice DBTimeout: a load is mostly a
// read of the database.
func (s *Core) LockCampaign(ctx context.Context, cid int64, done func() (bool, error)) (*redislock.Lock, error) {
	deadline := time.Now().Add(2 * s.Cfg.DBTimeout)
	pause := 5 * time.Millisecond
	for {
		lock, err := s.Locker.Obtain(ctx, s.Keys.loadLock(cid), 30*time.Second, nil)
		if err == nil {
			return lock, nil
		}
		if !errors.Is(err, redislock.ErrNotObtained) {
			return nil, RedisError(err)
		}
		if time.Now().After(deadline) {
			return nil, models.Unavailable("loading the campaign's counters", err)
		}
		select {
		case <-ctx.Done():
			return nil, RedisError(ctx.Err())
		case <-time.After(pause/2 + rand.N(pause)):
		}
		pause = min(2*pause, 200*time.Millisecond)
		if done != nil {
			if ok, err := done(); err != nil || ok {
				return nil, err
			}
		}
	}
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
	rule                    string // see claimRule
}

// readCampaignSnapshot reads the campaign's state in one transaction, so
// that MySQL answers from one consistent snapshot.
func (s *Core) readCampaignSnapshot(ctx context.Context, cid int64) (*campaignSnapshot, error) {
	snap := &campaignSnapshot{budgetRemaining: -1}
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
			tsnap, err := readTemplateSnapshot(tx, &t, c.Status)
			if err != nil {
				return err
			}
			snap.templates = append(snap.templates, *tsnap)
		}
		return nil
	})
	if err != nil {
		return nil, DBError(fmt.Sprintf("campaign %d", cid), err)
	}
	return snap, nil
}

func readTemplateSnapshot(tx *gorm.DB, t *models.Template, campaignStatus string) (*templateSnapshot, error) {
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
	ts := &templateSnapshot{id: t.ID, total: t.TotalStock, limit: t.PerUserLimit, value: t.ValueCents(), next: 1,
		rule: claimRule(t, campaignStatus)}
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

type campaignTemplates struct {
	Cid  int64
	Tids []int64
}

// ByCampaign groups templates ordered by campaign.
func ByCampaign(ts []models.Template) []campaignTemplates {
	var out []campaignTemplates
	for _, t := range ts {
		if n := len(out); n > 0 && out[n-1].Cid == t.CampaignID {
			out[n-1].Tids = append(out[n-1].Tids, t.ID)
			continue
		}
		out = append(out, campaignTemplates{Cid: t.CampaignID, Tids: []int64{t.ID}})
	}
	return out
}
