package reconcile

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// The repair pass: the service comparing and repairing its own counters in
// the background, with Reconcile's comparison (reconcile.go).

// Bounds and timings of the repair pass (RepairPass).
const (
	// repairActor is who the audit log names for the pass's repairs.
	repairActor = "reconciler"
	// repairPassLockTTL is the lifetime of the pass's lock: one instance
	// runs a pass at a time.
	repairPassLockTTL = 2 * time.Minute
	// maxRepairTemplates bounds the templates one pass compares.
	maxRepairTemplates = 50
	// stockChangeBatch bounds the audit entries one pass reads.
	stockChangeBatch = 500
	// stockChangeGrace is how old a stock change must be before the pass
	// looks at it: its Redis part runs right after the commit, so one still
	// missing after this long was lost (the process died, Redis failed).
	stockChangeGrace = 10 * time.Second
	// stockChangeLookback is how far back the pass reads when it has no
	// cursor (first start, or Redis lost it).
	stockChangeLookback = 10 * time.Minute
	// campaignBatch bounds the campaigns one pass looks at for a due check.
	campaignBatch = 200
	// checkedTTL is how long a campaign stays checked: every loaded campaign
	// open for claims is compared (and repaired) at least this often.
	checkedTTL = time.Hour
	// returnsCheckEvery is how often an instance's pass looks for completing
	// returns cut short: the search reads every completing return, so it
	// runs seldom; a full check (Reconcile) always runs it.
	returnsCheckEvery = 10 * time.Minute
)

// stockActions are the audit actions of the writes that give stock to Redis
// after their database commit: a refund under recycle, a revoke with
// return_stock (coupon_return.lua), and a stock addition (coupon_stock.lua).
var stockActions = []string{"coupon.refund", "coupon.revoke", "coupon.return_stock", "template.stock"}

// RepairStats counts what one repair pass did.
type RepairStats struct {
	// StockChanges counts the audit entries of stock changes looked at.
	StockChanges int
	// Checked counts the templates compared; Repaired those rebuilt.
	Checked, Repaired int
	// BudgetsRepaired counts the campaigns whose budget drifted and was
	// rebuilt.
	BudgetsRepaired int
	// ReturnsFinished counts the orders returned in full whose coupons the
	// pass refunded (a completing return cut short).
	ReturnsFinished int
	// Skipped is set when another instance was running a pass.
	Skipped bool
}

// RunReconciler runs RepairPass every interval until ctx ends.
func (s *Reconciler) RunReconciler(ctx context.Context, every time.Duration) {
	s.RunEvery(ctx, every, "reconciliation pass", func(ctx context.Context) error {
		_, err := s.RepairPass(ctx)
		return err
	})
}

// RepairPass is the service repairing itself after a crash or a Redis failure
// (see docs/failures.md), bounded in work and safe on several instances (one
// runs a pass at a time, under a lock; the others skip). It compares, and
// repairs when they drifted, at most maxRepairTemplates templates:
//
//  1. Those of the stock changes (refund under recycle, revoke with
//     return_stock, stock added) older than stockChangeGrace, read from the
//     audit log after a cursor kept in Redis. Their database commit is done
//     and their Redis part (coupon_return.lua, coupon_stock.lua) runs right
//     after it; one that never ran leaves less stock on sale than there is,
//     and the comparison finds and repairs it. The audit log is the outbox:
//     its entry is written in the same transaction as the change, so a change
//     is never missed, and no table or write path had to be added.
//  2. Those of campaigns whose check is due: each loaded campaign open for
//     claims is marked checked in Redis for checkedTTL. A missing mark means
//     the check is due, or Redis lost its data and the claim path reloaded the
//     counters: a reservation in flight at that moment may have committed
//     after the reload read the database. The mark is then set to "due" a
//     settling time (two DBTimeouts: every claim in flight at the loss has
//     committed or failed by then) ahead, and the campaign is compared then.
//  3. Every returnsCheckEvery, the orders returned in full that still use
//     coupons (at most checkout.ReturnFinishBatch, their completing return
//     older than checkout.ReturnFinishGrace): a crash cut the refunds short;
//     they are refunded as the client's replay of the return would
//     (docs/returns.md, "A completing return cut short").
func (s *Reconciler) RepairPass(ctx context.Context) (RepairStats, error) {
	var st RepairStats
	lock, err := s.Locker.Obtain(ctx, s.Keys.RepairLock(), repairPassLockTTL, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		st.Skipped = true
		return st, nil
	}
	if err != nil {
		return st, core.RedisError(err)
	}
	defer lock.Release(context.WithoutCancel(ctx))

	budget := maxRepairTemplates
	if err := s.repairStockChanges(ctx, &st, &budget); err != nil {
		return st, err
	}
	if err := s.checkDueCampaigns(ctx, &st, &budget); err != nil {
		return st, err
	}
	if err := s.finishReturns(ctx, &st); err != nil {
		return st, err
	}
	s.noteRun(ctx, s.Keys.LastRepairPass(), ReconcileRun{At: s.Clock().UTC(), By: repairActor, Repair: true,
		Checked: st.Checked, Drifted: st.Repaired + st.BudgetsRepaired, Repaired: st.Repaired + st.BudgetsRepaired})
	if st.Repaired > 0 || st.BudgetsRepaired > 0 {
		s.Log.Warn("reconciliation pass repaired drifted counters", "checked", st.Checked, "repaired", st.Repaired,
			"budgets_repaired", st.BudgetsRepaired)
	}
	return st, nil
}

// repairStockChanges is step 1 of RepairPass.
func (s *Reconciler) repairStockChanges(ctx context.Context, st *RepairStats, budget *int) error {
	now := s.Clock()
	cursor, err := s.Rdb.Get(ctx, s.Keys.StockCursor()).Int64()
	haveCursor := err == nil
	if err != nil && !core.IsRedisNil(err) {
		return core.RedisError(err)
	}
	q := s.DB.WithContext(ctx).Where("action IN ? AND created_at <= ?", stockActions, now.Add(-stockChangeGrace))
	if haveCursor {
		q = q.Where("id > ?", cursor)
	} else {
		q = q.Where("created_at >= ?", now.Add(-stockChangeLookback))
	}
	var entries []models.AuditEntry
	if err := q.Order("id").Limit(stockChangeBatch).Find(&entries).Error; err != nil {
		return core.DBError("audit log", err)
	}
	if len(entries) == 0 {
		return nil
	}
	// The templates the entries touched: a coupon's when its slot was given
	// back (a refund under restore, a revoke keeping the stock touch none).
	var couponIDs, templateIDs []int64
	for _, e := range entries {
		kind, id, ok := parseTarget(e.Target)
		switch {
		case !ok:
		case kind == "coupon":
			couponIDs = append(couponIDs, id)
		case kind == "template":
			templateIDs = append(templateIDs, id)
		}
	}
	couponTemplate := map[int64]models.Template{} // coupon id → its template's ids
	for batch := range slices.Chunk(couponIDs, inFlightBatch) {
		var rows []models.Coupon
		if err := s.DB.WithContext(ctx).Select("id", "template_id", "campaign_id").
			Where("id IN ? AND slot IS NULL", batch).Find(&rows).Error; err != nil {
			return core.DBError("coupons", err)
		}
		for _, c := range rows {
			couponTemplate[c.ID] = models.Template{ID: c.TemplateID, CampaignID: c.CampaignID}
		}
	}
	templateByID := map[int64]models.Template{}
	if len(templateIDs) > 0 {
		var rows []models.Template
		if err := s.DB.WithContext(ctx).Select("id", "campaign_id").Where("id IN ?", templateIDs).
			Find(&rows).Error; err != nil {
			return core.DBError("templates", err)
		}
		for _, t := range rows {
			templateByID[t.ID] = t
		}
	}
	// In audit order, as many templates as the budget allows; the cursor
	// moves past the entries covered.
	var todo []models.Template
	seen := map[int64]bool{}
	last := entries[0].ID - 1
	for _, e := range entries {
		kind, id, _ := parseTarget(e.Target)
		t, ok := couponTemplate[id]
		if kind == "template" {
			t, ok = templateByID[id]
		}
		if ok && !seen[t.ID] {
			if len(todo) == *budget {
				break
			}
			seen[t.ID] = true
			todo = append(todo, t)
		}
		last = e.ID
		st.StockChanges++
	}
	if err := s.reconcileTemplates(ctx, todo, st, budget); err != nil {
		return err
	}
	if err := s.Rdb.Set(ctx, s.Keys.StockCursor(), last, 0).Err(); err != nil {
		return core.RedisError(err)
	}
	return nil
}

// reconcileTemplates compares and repairs templates, campaign by campaign.
func (s *Reconciler) reconcileTemplates(ctx context.Context, ts []models.Template, st *RepairStats, budget *int) error {
	slices.SortFunc(ts, func(a, b models.Template) int {
		if a.CampaignID != b.CampaignID {
			return int(a.CampaignID - b.CampaignID)
		}
		return int(a.ID - b.ID)
	})
	for _, group := range core.ByCampaign(ts) {
		ds, money, err := s.reconcileCampaign(ctx, group.Cid, group.Tids, true, repairActor)
		if err != nil {
			return err
		}
		*budget -= len(group.Tids)
		st.Checked += len(ds)
		for _, d := range ds {
			if d.Repaired {
				st.Repaired++
			}
		}
		if money != nil && money.Repaired {
			st.BudgetsRepaired++
		}
	}
	return nil
}

// parseTarget splits an audit target "coupon:12".
func parseTarget(target string) (kind string, id int64, ok bool) {
	kind, num, found := strings.Cut(target, ":")
	if !found {
		return "", 0, false
	}
	id, err := strconv.ParseInt(num, 10, 64)
	return kind, id, err == nil
}

// The values of a campaign's reconciled mark.
const (
	markChecked = "ok"
	markDue     = "due:" // followed by the unix ms from which the check is due
)

// checkDueCampaigns is step 2 of RepairPass.
func (s *Reconciler) checkDueCampaigns(ctx context.Context, st *RepairStats, budget *int) error {
	now := s.Clock()
	after, err := s.Rdb.Get(ctx, s.Keys.CampaignCursor()).Int64()
	if err != nil && !core.IsRedisNil(err) {
		return core.RedisError(err)
	}
	var cids []int64
	err = s.DB.WithContext(ctx).Model(&models.Template{}).Distinct("campaign_id").
		Where("campaign_id > ? AND (claim_ends_at IS NULL OR claim_ends_at > ?)", after, now).
		Order("campaign_id").Limit(campaignBatch).Pluck("campaign_id", &cids).Error
	if err != nil {
		return core.DBError("templates", err)
	}
	next := int64(0) // wrap around when this batch reaches the end
	if len(cids) == campaignBatch {
		next = cids[len(cids)-1]
	}
	var open []models.Template
	if len(cids) > 0 {
		err = s.DB.WithContext(ctx).Select("id", "campaign_id").Where("campaign_id IN ?", cids).
			Order("campaign_id, id").Find(&open).Error
		if err != nil {
			return core.DBError("templates", err)
		}
	}
	groups := core.ByCampaign(open)
	marks := make([]*redis.StringCmd, len(groups))
	loaded := make([]*redis.IntCmd, len(groups))
	_, err = s.Rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, g := range groups {
			marks[i] = p.Get(ctx, s.Keys.Reconciled(g.Cid))
			loaded[i] = p.Exists(ctx, s.Keys.Budget(g.Cid))
		}
		return nil
	})
	if err != nil && !core.IsRedisNil(err) {
		return core.RedisError(err)
	}
	settle := 2 * s.Cfg.DBTimeout
	for i, g := range groups {
		if loaded[i].Val() == 0 {
			continue // not loaded: the loader reads the database at the next claim
		}
		mark, err := marks[i].Result()
		switch {
		case core.IsRedisNil(err):
			// Never checked, the mark expired, or Redis lost it (and
			// the counters were reloaded since): due after settling.
			due := markDue + strconv.FormatInt(now.Add(settle).UnixMilli(), 10)
			if err := s.Rdb.SetNX(ctx, s.Keys.Reconciled(g.Cid), due, checkedTTL).Err(); err != nil {
				return core.RedisError(err)
			}
			continue
		case err != nil:
			return core.RedisError(err)
		case !strings.HasPrefix(mark, markDue):
			continue
		}
		at, err := strconv.ParseInt(strings.TrimPrefix(mark, markDue), 10, 64)
		if err == nil && now.UnixMilli() < at {
			continue
		}
		if *budget <= 0 {
			next = g.Cid - 1 // this campaign first in the next pass
			break
		}
		ts := make([]models.Template, len(g.Tids))
		for j, tid := range g.Tids {
			ts[j] = models.Template{ID: tid, CampaignID: g.Cid}
		}
		if err := s.reconcileTemplates(ctx, ts, st, budget); err != nil {
			return err
		}
		if err := s.Rdb.Set(ctx, s.Keys.Reconciled(g.Cid), markChecked, checkedTTL).Err(); err != nil {
			return core.RedisError(err)
		}
	}
	if err := s.Rdb.Set(ctx, s.Keys.CampaignCursor(), next, 0).Err(); err != nil {
		return core.RedisError(err)
	}
	return nil
}

// finishReturns is step 3 of RepairPass, at most every returnsCheckEvery on
// an instance.
func (s *Reconciler) finishReturns(ctx context.Context, st *RepairStats) error {
	now := s.Clock()
	if due := s.returnsDue.Load(); due != 0 && now.UnixNano() < due {
		return nil
	}
	finished, err := s.unfinishedReturns(ctx, true, repairActor)
	if err != nil {
		return err
	}
	s.returnsDue.Store(now.Add(returnsCheckEvery).UnixNano())
	st.ReturnsFinished = len(finished)
	if st.ReturnsFinished > 0 {
		s.Log.Warn("reconciliation pass finished returns cut short", "orders", st.ReturnsFinished)
	}
	return nil
}
