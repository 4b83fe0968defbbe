package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"couponsvc/models"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// Reconciliation (docs/flows.md) compares, per template, the Redis counters with
// the database, the authority:
//
//	redis remaining == total_stock − coupons holding a slot − reservations in flight
//
// where a coupon holds a slot while it is issued, used, expired, or revoked
// without its stock returned (slot IS NOT NULL), and a reservation is in flight
// while coupon_deduct.lua took its slot but its row is not in the database yet
// (a member of the campaign's pending or recent zset without a row). Each
// user's ordinals in the users hash are compared the same way.
//
// The comparison is exact while claims continue: the database is read in one
// snapshot first, then Redis in one MULTI, then the members Redis showed are
// looked up in that same snapshot. A claim that reserved before the Redis read
// is either in the snapshot (counted live) or not (counted in flight), never
// both and never neither. Only a return of stock (refund under recycle, revoke
// with return_stock) or a stock addition that lands between the two reads can
// show a drift that is not there; a drift is therefore reported only when it
// is seen reconcileAttempts times in a row.
//
// A repair rebuilds the campaign's counters with loadCampaign(loadForce):
// from the database, keeping the reservations in flight, under the campaign's
// load lock. It never creates stock from nothing (slots held in the database
// or by a reservation in flight stay taken) and never frees a live coupon's
// slot, so it is safe while claims run, and on several instances at once.
// One narrow window remains: a repair that lands between a return's database
// commit and its coupon_return.lua already frees the slot, and if a claim takes
// it before the script runs, the script frees it once more. The database's
// unique slot index then refuses the claim that gets it twice, and the claim
// path rebuilds the counters: a retry, never an oversell. The repair pass
// waits stockChangeGrace before it looks at a return, so that it never races
// one in flight.
//
// The campaign budget has a line of its own (see reconcile_budget.go); a
// repair of either rebuilds all the campaign's counters from the database.

// reconcileAttempts bounds how often a template is compared before a drift is
// believed; reconcileRetryDelay spaces the attempts.
const (
	reconcileAttempts   = 3
	reconcileRetryDelay = 20 * time.Millisecond
)

// inFlightBatch bounds the request ids looked up in one query.
const inFlightBatch = 500

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
)

// stockActions are the audit actions of the writes that give stock to Redis
// after their database commit: a refund under recycle, a revoke with
// return_stock (coupon_return.lua), and a stock addition (coupon_stock.lua).
var stockActions = []string{"coupon.refund", "coupon.revoke", "coupon.return_stock", "template.stock"}

// The keys of reconciliation. reconciled is per campaign (its hash tag); the
// pass's lock and cursors are global.
func (k keys) reconciled(cid int64) string { return k.campaign(cid) + "reconciled" }
func (k keys) repairLock() string          { return k.prefix + "reconcile:lock" }
func (k keys) stockCursor() string         { return k.prefix + "reconcile:stock_cursor" }
func (k keys) campaignCursor() string      { return k.prefix + "reconcile:campaign_cursor" }

// ReconcileRequest asks to compare Redis with the database, and to repair the
// drift found when Repair is set.
type ReconcileRequest struct {
	// TemplateID limits the comparison to one template; 0 compares them all.
	TemplateID int64
	Repair     bool
	// Actor is who asked, for the audit entries of repairs.
	Actor string
}

// TemplateDrift is the comparison of one template's Redis counters with the
// database.
type TemplateDrift struct {
	TemplateID int64 `json:"template_id"`
	CampaignID int64 `json:"campaign_id"`
	TotalStock int64 `json:"total_stock"`
	// RedisRemaining and RedisTotal are nil when Redis has no counters for
	// the template (never loaded, or lost): the loader builds them from the
	// database at the next claim, so that is no drift.
	RedisRemaining *int64 `json:"redis_remaining"`
	RedisTotal     *int64 `json:"redis_total"`
	// DBLive counts the coupons holding a slot (issued, used, expired, or
	// revoked without their stock returned).
	DBLive int64 `json:"db_live"`
	// InFlight counts reservations that took a slot in Redis but whose row
	// is not in the database (yet).
	InFlight int64 `json:"in_flight"`
	// Drift is redis_remaining − (total_stock − db_live − in_flight): above
	// 0 Redis would offer coupons the database refuses, below 0 stock is
	// stuck.
	Drift int64 `json:"drift"`
	// UsersDrifted counts the users whose ordinals in Redis differ from
	// their slot-holding coupons and reservations in flight.
	UsersDrifted int `json:"users_drifted"`
	// Repaired tells that the campaign's counters were rebuilt for this
	// drift (with an audit entry).
	Repaired bool `json:"repaired"`
}

// Drifted reports whether the template's counters disagree with the database.
func (d *TemplateDrift) Drifted() bool {
	if d.RedisRemaining == nil {
		return false
	}
	return d.Drift != 0 || d.UsersDrifted != 0 || *d.RedisTotal != d.TotalStock
}

// ReconcileReport is the answer to a reconciliation: a line per template and
// one per campaign with a budget.
type ReconcileReport struct {
	Templates []TemplateDrift       `json:"templates"`
	Campaigns []CampaignBudgetDrift `json:"campaigns"`
}

// BudgetsDrifted counts the campaigns whose budget counter showed a drift.
func (r *ReconcileReport) BudgetsDrifted() int {
	n := 0
	for i := range r.Campaigns {
		if r.Campaigns[i].Drifted() {
			n++
		}
	}
	return n
}

// Drifted counts the templates that showed a drift.
func (r *ReconcileReport) Drifted() int {
	n := 0
	for i := range r.Templates {
		if r.Templates[i].Drifted() {
			n++
		}
	}
	return n
}

// Reconcile compares every template's Redis counters (or one template's) with
// the database and, with Repair, rebuilds the counters of each campaign that
// drifted and writes one audit entry per repaired template. It is safe while
// claims, redemptions and refunds continue. Errors: CodeInvalidRequest (field
// template_id), CodeNotFound, CodeUnavailable.
func (s *Service) Reconcile(ctx context.Context, req ReconcileRequest) (*ReconcileReport, error) {
	if req.TemplateID < 0 {
		return nil, models.Invalid("template_id", "must be a positive id")
	}
	var ts []models.Template
	q := s.db.WithContext(ctx).Select("id", "campaign_id").Order("campaign_id, id")
	if req.TemplateID > 0 {
		q = q.Where("id = ?", req.TemplateID)
	}
	if err := q.Find(&ts).Error; err != nil {
		return nil, dbError("templates", err)
	}
	if req.TemplateID > 0 && len(ts) == 0 {
		return nil, models.Errorf(models.CodeNotFound, "template %d not found", req.TemplateID)
	}
	report := &ReconcileReport{Templates: []TemplateDrift{}, Campaigns: []CampaignBudgetDrift{}}
	for _, group := range byCampaign(ts) {
		ds, budget, err := s.reconcileCampaign(ctx, group.cid, group.tids, req.Repair, actorName(req.Actor))
		if err != nil {
			return nil, err
		}
		report.Templates = append(report.Templates, ds...)
		if budget != nil {
			report.Campaigns = append(report.Campaigns, *budget)
		}
	}
	return report, nil
}

type campaignTemplates struct {
	cid  int64
	tids []int64
}

// byCampaign groups templates ordered by campaign.
func byCampaign(ts []models.Template) []campaignTemplates {
	var out []campaignTemplates
	for _, t := range ts {
		if n := len(out); n > 0 && out[n-1].cid == t.CampaignID {
			out[n-1].tids = append(out[n-1].tids, t.ID)
			continue
		}
		out = append(out, campaignTemplates{cid: t.CampaignID, tids: []int64{t.ID}})
	}
	return out
}

// reconcileCampaign compares the given templates of one campaign and its
// budget (nil for a campaign without one) and, with repair, rebuilds the
// campaign's counters when any of them drifted.
func (s *Service) reconcileCampaign(ctx context.Context, cid int64, tids []int64, repair bool, actor string) ([]TemplateDrift, *CampaignBudgetDrift, error) {
	out := make([]TemplateDrift, 0, len(tids))
	var drifted []int
	for _, tid := range tids {
		d, err := s.compareTemplate(ctx, cid, tid)
		if models.IsCode(err, models.CodeNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, nil, err
		}
		if d.Drifted() {
			drifted = append(drifted, len(out))
		}
		out = append(out, *d)
	}
	budget, err := s.compareBudget(ctx, cid)
	if err != nil && !models.IsCode(err, models.CodeNotFound) {
		return nil, nil, err
	}
	if !repair || (len(drifted) == 0 && !budget.Drifted()) {
		return out, budget, nil
	}
	// Reservations confirmed and since given back would keep their slot
	// taken through the reload: drop them first.
	if err := s.pruneRecent(ctx, cid); err != nil {
		return nil, nil, err
	}
	if err := s.loadCampaign(ctx, cid, loadForce); err != nil {
		return nil, nil, err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, i := range drifted {
			d := &out[i]
			if err := s.audit(tx, actor, "reconcile.repair", fmt.Sprintf("template:%d", d.TemplateID), d.describe()); err != nil {
				return err
			}
		}
		if budget.Drifted() {
			return s.audit(tx, actor, "reconcile.repair", fmt.Sprintf("campaign:%d", cid), budget.describe())
		}
		return nil
	})
	for _, i := range drifted {
		d := &out[i]
		d.Repaired = err == nil
		s.log.Warn("repaired drifted Redis counters from the database", "campaign", cid, "template", d.TemplateID,
			"actor", actor, "drift", d.Drift, "users_drifted", d.UsersDrifted, "redis_remaining", *d.RedisRemaining,
			"db_live", d.DBLive, "in_flight", d.InFlight, "audited", err == nil)
	}
	if budget.Drifted() {
		budget.Repaired = err == nil
		s.log.Warn("repaired a drifted Redis budget from the database", "campaign", cid, "actor", actor,
			"drift", budget.Drift, "redis_budget_remaining", *budget.RedisBudgetRemaining,
			"expected_budget_remaining", budget.ExpectedRemaining, "audited", err == nil)
	}
	if err != nil {
		return nil, nil, dbError("audit log", err)
	}
	return out, budget, nil
}

// describe is the audit detail of a repair.
func (d *TemplateDrift) describe() string {
	return fmt.Sprintf("drift=%d users_drifted=%d redis_remaining=%d redis_total=%d expected_remaining=%d total_stock=%d db_live=%d in_flight=%d",
		d.Drift, d.UsersDrifted, *d.RedisRemaining, *d.RedisTotal, d.TotalStock-d.DBLive-d.InFlight,
		d.TotalStock, d.DBLive, d.InFlight)
}

// compareTemplate compares a template until it shows no drift, at most
// reconcileAttempts times, and returns the last comparison.
func (s *Service) compareTemplate(ctx context.Context, cid, tid int64) (*TemplateDrift, error) {
	for attempt := 1; ; attempt++ {
		d, err := s.compareTemplateOnce(ctx, cid, tid)
		if err != nil || !d.Drifted() || attempt == reconcileAttempts {
			return d, err
		}
		select {
		case <-ctx.Done():
			return nil, models.Unavailable("the reconciliation", ctx.Err())
		case <-time.After(time.Duration(attempt) * reconcileRetryDelay):
		}
	}
}

// snapshotTx asks MySQL for one consistent snapshot over the whole
// transaction, whatever the server's default isolation. SQLite's transactions
// are serializable already (and take no options).
func (s *Service) snapshotTx() []*sql.TxOptions {
	if s.dialect != DialectMySQL {
		return nil
	}
	return []*sql.TxOptions{{Isolation: sql.LevelRepeatableRead, ReadOnly: true}}
}

// templateCounters is what Redis holds for a template, read in one MULTI.
type templateCounters struct {
	remaining, total *int64
	inFlight         []pendingMember // this template's pending and recent members
	users            map[string]string
}

func (s *Service) compareTemplateOnce(ctx context.Context, cid, tid int64) (*TemplateDrift, error) {
	d := &TemplateDrift{TemplateID: tid, CampaignID: cid}
	expected := map[string]map[int64]bool{} // user → ordinals
	var rc *templateCounters
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// 1. The database, in one snapshot taken at this first read.
		var t models.Template
		if err := tx.Select("id", "campaign_id", "total_stock").First(&t, tid).Error; err != nil {
			return err
		}
		d.CampaignID, d.TotalStock = t.CampaignID, t.TotalStock
		cid = t.CampaignID
		if err := tx.Model(&models.Coupon{}).Where("template_id = ? AND slot IS NOT NULL", tid).
			Count(&d.DBLive).Error; err != nil {
			return err
		}
		var holders []struct {
			UserID      string
			UserOrdinal int64
		}
		if err := tx.Model(&models.Coupon{}).Where("template_id = ? AND user_ordinal IS NOT NULL", tid).
			Select("user_id, user_ordinal").Scan(&holders).Error; err != nil {
			return err
		}
		for _, h := range holders {
			addOrdinal(expected, h.UserID, h.UserOrdinal)
		}
		// 2. Redis, after the snapshot: every reservation whose row the
		// snapshot lacks is still in a zset now, or was given back.
		var err error
		if rc, err = s.readTemplateCounters(ctx, cid, tid); err != nil {
			return err
		}
		if rc.remaining == nil {
			return nil
		}
		// 3. Which of those reservations the snapshot holds.
		rows, err := rowsOf(tx, tid, rc.inFlight)
		if err != nil {
			return err
		}
		for _, m := range rc.inFlight {
			if !rows[m.RequestID] {
				d.InFlight++
				addOrdinal(expected, m.UserID, m.Ordinal)
			}
		}
		return nil
	}, s.snapshotTx()...)
	if err != nil {
		return nil, dbError(fmt.Sprintf("template %d", tid), err)
	}
	if rc.remaining == nil {
		return d, nil
	}
	d.RedisRemaining, d.RedisTotal = rc.remaining, rc.total
	d.Drift = *rc.remaining - (d.TotalStock - d.DBLive - d.InFlight)
	d.UsersDrifted = usersDrifted(expected, rc.users)
	return d, nil
}

// readTemplateCounters reads a template's counters, the campaign's
// reservations in flight and the template's users in one MULTI. remaining is
// nil when the counters are not loaded.
func (s *Service) readTemplateCounters(ctx context.Context, cid, tid int64) (*templateCounters, error) {
	var hm *redis.SliceCmd
	var pending, recent *redis.StringSliceCmd
	var users *redis.MapStringStringCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		hm = p.HMGet(ctx, s.keys.template(cid, tid), "remaining", "total")
		pending = p.ZRange(ctx, s.keys.pending(cid), 0, -1)
		recent = p.ZRange(ctx, s.keys.recent(cid), 0, -1)
		users = p.HGetAll(ctx, s.keys.users(cid, tid))
		return nil
	})
	if err != nil {
		return nil, redisError(err)
	}
	rc := &templateCounters{users: users.Val()}
	vals := hm.Val()
	if len(vals) != 2 || vals[0] == nil || vals[1] == nil {
		return rc, nil
	}
	remaining, err1 := strconv.ParseInt(fmt.Sprint(vals[0]), 10, 64)
	total, err2 := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
	if err1 != nil || err2 != nil {
		// Garbage in the counters is drift of the worst kind: show it as
		// such, so that a repair rebuilds them.
		remaining, total = -1, -1
	}
	rc.remaining, rc.total = &remaining, &total
	seen := map[string]bool{}
	for _, m := range slices.Concat(pending.Val(), recent.Val()) {
		pm, ok := parsePendingMember(m)
		if seen[m] || !ok || pm.TemplateID != tid {
			continue
		}
		seen[m] = true
		rc.inFlight = append(rc.inFlight, pm)
	}
	return rc, nil
}

// rowsOf returns which of the members' request ids have a coupon row of the
// template, in tx's snapshot.
func rowsOf(tx *gorm.DB, tid int64, members []pendingMember) (map[string]bool, error) {
	found := map[string]bool{}
	for batch := range slices.Chunk(members, inFlightBatch) {
		ids := make([]string, len(batch))
		for i, m := range batch {
			ids[i] = m.RequestID
		}
		var have []string
		if err := tx.Model(&models.Coupon{}).Where("template_id = ? AND request_id IN ?", tid, ids).
			Pluck("request_id", &have).Error; err != nil {
			return nil, err
		}
		for _, id := range have {
			found[id] = true
		}
	}
	return found, nil
}

func addOrdinal(m map[string]map[int64]bool, user string, ord int64) {
	if m[user] == nil {
		m[user] = map[int64]bool{}
	}
	m[user][ord] = true
}

// usersDrifted counts the users whose Redis ordinals ("1,3") differ from the
// expected ones.
func usersDrifted(expected map[string]map[int64]bool, inRedis map[string]string) int {
	n := 0
	for user, held := range inRedis {
		got := map[int64]bool{}
		for _, o := range strings.Split(held, ",") {
			if v, err := strconv.ParseInt(strings.TrimSpace(o), 10, 64); err == nil {
				got[v] = true
			} else {
				got[-1] = true // garbage never matches
			}
		}
		want := expected[user]
		if len(got) != len(want) {
			n++
			continue
		}
		for o := range got {
			if !want[o] {
				n++
				break
			}
		}
	}
	for user, want := range expected {
		if _, ok := inRedis[user]; !ok && len(want) > 0 {
			n++
		}
	}
	return n
}

// pruneRecent drops from the campaign's recent zset the reservations confirmed
// longer than recentWindow ago (their rows were committed long before any
// reload can read the database) and those whose coupon has since given its
// slot back (refund under recycle, revoke with return_stock): a reload would
// otherwise keep their slots taken, and the stock would be stuck until the
// window passed.
func (s *Service) pruneRecent(ctx context.Context, cid int64) error {
	key := s.keys.recent(cid)
	cutoff := s.now().Add(-recentWindow).UnixMilli()
	if err := s.rdb.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(cutoff, 10)).Err(); err != nil {
		return redisError(err)
	}
	members, err := s.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return redisError(err)
	}
	byID := map[string]string{}
	ids := make([]string, 0, len(members))
	for _, m := range members {
		if pm, ok := parsePendingMember(m); ok {
			byID[pm.RequestID] = m
			ids = append(ids, pm.RequestID)
		}
	}
	var gone []any
	for batch := range slices.Chunk(ids, inFlightBatch) {
		var returned []string
		err := s.db.WithContext(ctx).Model(&models.Coupon{}).Where("request_id IN ? AND slot IS NULL", batch).
			Pluck("request_id", &returned).Error
		if err != nil {
			return dbError("coupons", err)
		}
		for _, rid := range returned {
			gone = append(gone, byID[rid])
		}
	}
	if len(gone) > 0 {
		if err := s.rdb.ZRem(ctx, key, gone...).Err(); err != nil {
			return redisError(err)
		}
	}
	return nil
}

// RepairStats counts what one repair pass did.
type RepairStats struct {
	// StockChanges counts the audit entries of stock changes looked at.
	StockChanges int
	// Checked counts the templates compared; Repaired those rebuilt.
	Checked, Repaired int
	// BudgetsRepaired counts the campaigns whose budget drifted and was
	// rebuilt.
	BudgetsRepaired int
	// Skipped is set when another instance was running a pass.
	Skipped bool
}

// RunReconciler runs RepairPass every interval until ctx ends.
func (s *Service) RunReconciler(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if _, err := s.RepairPass(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("reconciliation pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
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
func (s *Service) RepairPass(ctx context.Context) (RepairStats, error) {
	var st RepairStats
	lock, err := s.locker.Obtain(ctx, s.keys.repairLock(), repairPassLockTTL, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		st.Skipped = true
		return st, nil
	}
	if err != nil {
		return st, redisError(err)
	}
	defer lock.Release(context.WithoutCancel(ctx))

	budget := maxRepairTemplates
	if err := s.repairStockChanges(ctx, &st, &budget); err != nil {
		return st, err
	}
	if err := s.checkDueCampaigns(ctx, &st, &budget); err != nil {
		return st, err
	}
	if st.Repaired > 0 || st.BudgetsRepaired > 0 {
		s.log.Warn("reconciliation pass repaired drifted counters", "checked", st.Checked, "repaired", st.Repaired,
			"budgets_repaired", st.BudgetsRepaired)
	}
	return st, nil
}

// repairStockChanges is step 1 of RepairPass.
func (s *Service) repairStockChanges(ctx context.Context, st *RepairStats, budget *int) error {
	now := s.now()
	cursor, err := s.rdb.Get(ctx, s.keys.stockCursor()).Int64()
	haveCursor := err == nil
	if err != nil && !isRedisNil(err) {
		return redisError(err)
	}
	q := s.db.WithContext(ctx).Where("action IN ? AND created_at <= ?", stockActions, now.Add(-stockChangeGrace))
	if haveCursor {
		q = q.Where("id > ?", cursor)
	} else {
		q = q.Where("created_at >= ?", now.Add(-stockChangeLookback))
	}
	var entries []models.AuditEntry
	if err := q.Order("id").Limit(stockChangeBatch).Find(&entries).Error; err != nil {
		return dbError("audit log", err)
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
		if err := s.db.WithContext(ctx).Select("id", "template_id", "campaign_id").
			Where("id IN ? AND slot IS NULL", batch).Find(&rows).Error; err != nil {
			return dbError("coupons", err)
		}
		for _, c := range rows {
			couponTemplate[c.ID] = models.Template{ID: c.TemplateID, CampaignID: c.CampaignID}
		}
	}
	templateByID := map[int64]models.Template{}
	if len(templateIDs) > 0 {
		var rows []models.Template
		if err := s.db.WithContext(ctx).Select("id", "campaign_id").Where("id IN ?", templateIDs).
			Find(&rows).Error; err != nil {
			return dbError("templates", err)
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
	if err := s.rdb.Set(ctx, s.keys.stockCursor(), last, 0).Err(); err != nil {
		return redisError(err)
	}
	return nil
}

// reconcileTemplates compares and repairs templates, campaign by campaign.
func (s *Service) reconcileTemplates(ctx context.Context, ts []models.Template, st *RepairStats, budget *int) error {
	slices.SortFunc(ts, func(a, b models.Template) int {
		if a.CampaignID != b.CampaignID {
			return int(a.CampaignID - b.CampaignID)
		}
		return int(a.ID - b.ID)
	})
	for _, group := range byCampaign(ts) {
		ds, money, err := s.reconcileCampaign(ctx, group.cid, group.tids, true, repairActor)
		if err != nil {
			return err
		}
		*budget -= len(group.tids)
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
func (s *Service) checkDueCampaigns(ctx context.Context, st *RepairStats, budget *int) error {
	now := s.now()
	after, err := s.rdb.Get(ctx, s.keys.campaignCursor()).Int64()
	if err != nil && !isRedisNil(err) {
		return redisError(err)
	}
	var cids []int64
	err = s.db.WithContext(ctx).Model(&models.Template{}).Distinct("campaign_id").
		Where("campaign_id > ? AND (claim_ends_at IS NULL OR claim_ends_at > ?)", after, now).
		Order("campaign_id").Limit(campaignBatch).Pluck("campaign_id", &cids).Error
	if err != nil {
		return dbError("templates", err)
	}
	next := int64(0) // wrap around when this batch reaches the end
	if len(cids) == campaignBatch {
		next = cids[len(cids)-1]
	}
	var open []models.Template
	if len(cids) > 0 {
		err = s.db.WithContext(ctx).Select("id", "campaign_id").Where("campaign_id IN ?", cids).
			Order("campaign_id, id").Find(&open).Error
		if err != nil {
			return dbError("templates", err)
		}
	}
	groups := byCampaign(open)
	marks := make([]*redis.StringCmd, len(groups))
	loaded := make([]*redis.IntCmd, len(groups))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, g := range groups {
			marks[i] = p.Get(ctx, s.keys.reconciled(g.cid))
			loaded[i] = p.Exists(ctx, s.keys.budget(g.cid))
		}
		return nil
	})
	if err != nil && !isRedisNil(err) {
		return redisError(err)
	}
	settle := 2 * s.cfg.DBTimeout
	for i, g := range groups {
		if loaded[i].Val() == 0 {
			continue // not loaded: the loader reads the database at the next claim
		}
		mark, err := marks[i].Result()
		switch {
		case isRedisNil(err):
			// Never checked, the mark expired, or Redis lost it (and
			// the counters were reloaded since): due after settling.
			due := markDue + strconv.FormatInt(now.Add(settle).UnixMilli(), 10)
			if err := s.rdb.SetNX(ctx, s.keys.reconciled(g.cid), due, checkedTTL).Err(); err != nil {
				return redisError(err)
			}
			continue
		case err != nil:
			return redisError(err)
		case !strings.HasPrefix(mark, markDue):
			continue
		}
		at, err := strconv.ParseInt(strings.TrimPrefix(mark, markDue), 10, 64)
		if err == nil && now.UnixMilli() < at {
			continue
		}
		if *budget <= 0 {
			next = g.cid - 1 // this campaign first in the next pass
			break
		}
		ts := make([]models.Template, len(g.tids))
		for j, tid := range g.tids {
			ts[j] = models.Template{ID: tid, CampaignID: g.cid}
		}
		if err := s.reconcileTemplates(ctx, ts, st, budget); err != nil {
			return err
		}
		if err := s.rdb.Set(ctx, s.keys.reconciled(g.cid), markChecked, checkedTTL).Err(); err != nil {
			return redisError(err)
		}
	}
	if err := s.rdb.Set(ctx, s.keys.campaignCursor(), next, 0).Err(); err != nil {
		return redisError(err)
	}
	return nil
}
