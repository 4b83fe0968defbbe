package reconcile

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

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

// ExpectedRemaining is the stock Redis should have left by the database:
// total_stock − db_live − in_flight.
func (d TemplateDrift) ExpectedRemaining() int64 { return d.TotalStock - d.DBLive - d.InFlight }

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
	// StaleHolds lists the holds past their time that are still held (the
	// sweeper has not released them: it is not running, or failing). Held
	// coupons keep their slots, so they count as live in the templates'
	// lines. A repair releases them as the sweeper does.
	StaleHolds []StaleHold `json:"stale_holds,omitempty"`
	// UnfinishedReturns lists the orders returned in full that still use
	// coupons: a completing return whose refunds a crash cut short. A
	// repair refunds them as the client's replay of that return would.
	UnfinishedReturns []UnfinishedReturn `json:"unfinished_returns,omitempty"`
}

// UnfinishedReturn is an order returned in full that still uses coupons;
// Finished says the repair refunded them.
type UnfinishedReturn struct {
	OrderID string `json:"order_id"`
	// ReturnID is the order's completing return.
	ReturnID string `json:"return_id"`
	// Coupons counts the coupons the order still used when listed.
	Coupons  int64 `json:"coupons"`
	Finished bool  `json:"finished"`
}

// StaleHold is a hold past its time that is still held.
type StaleHold struct {
	OrderID   string    `json:"order_id"`
	ExpiresAt time.Time `json:"expires_at"`
	Released  bool      `json:"released"`
}

// BudgetsDrifted counts the campaigns whose budget counter showed a drift.
func (r *ReconcileReport) BudgetsDrifted() int { return countDrifted(r.Campaigns) }

// Drifted counts the templates that showed a drift.
func (r *ReconcileReport) Drifted() int { return countDrifted(r.Templates) }

// countDrifted counts the lines of a report that show a drift.
func countDrifted[T any, P interface {
	*T
	Drifted() bool
}](lines []T) int {
	n := 0
	for i := range lines {
		if P(&lines[i]).Drifted() {
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
func (s *Reconciler) Reconcile(ctx context.Context, req ReconcileRequest) (*ReconcileReport, error) {
	if req.TemplateID < 0 {
		return nil, models.Invalid("template_id", "must be a positive id")
	}
	var ts []models.Template
	q := s.DB.WithContext(ctx).Select("id", "campaign_id").Order("campaign_id, id")
	if req.TemplateID > 0 {
		q = q.Where("id = ?", req.TemplateID)
	}
	if err := q.Find(&ts).Error; err != nil {
		return nil, core.DBError("templates", err)
	}
	if req.TemplateID > 0 && len(ts) == 0 {
		return nil, models.Errorf(models.CodeNotFound, "template %d not found", req.TemplateID)
	}
	report := &ReconcileReport{Templates: []TemplateDrift{}, Campaigns: []CampaignBudgetDrift{}}
	for _, group := range core.ByCampaign(ts) {
		ds, budget, err := s.reconcileCampaign(ctx, group.Cid, group.Tids, req.Repair, core.ActorName(req.Actor))
		if err != nil {
			return nil, err
		}
		report.Templates = append(report.Templates, ds...)
		if budget != nil {
			report.Campaigns = append(report.Campaigns, *budget)
		}
	}
	stale, err := s.staleHolds(ctx, req.Repair)
	if err != nil {
		return nil, err
	}
	report.StaleHolds = stale
	if report.UnfinishedReturns, err = s.unfinishedReturns(ctx, req.Repair, core.ActorName(req.Actor)); err != nil {
		return nil, err
	}
	run := ReconcileRun{At: s.Clock().UTC(), By: core.ActorName(req.Actor), Repair: req.Repair, Checked: len(report.Templates),
		Drifted: report.Drifted() + report.BudgetsDrifted()}
	for _, d := range report.Templates {
		if d.Repaired {
			run.Repaired++
		}
	}
	for _, d := range report.Campaigns {
		if d.Repaired {
			run.Repaired++
		}
	}
	if req.TemplateID == 0 {
		s.noteRun(ctx, s.Keys.LastReconcile(), run)
	}
	return report, nil
}

// staleHolds lists the holds past their time still held and, with repair,
// releases them (ExpireHolds).
func (s *Reconciler) staleHolds(ctx context.Context, repair bool) ([]StaleHold, error) {
	var os []checkout.CheckoutOrder
	if err := s.DB.WithContext(ctx).Where("hold_state = ? AND hold_expires_at <= ?", checkout.HoldHeld, s.Clock()).
		Order("hold_expires_at").Limit(checkout.HoldExpiryBatch).Find(&os).Error; err != nil {
		return nil, core.DBError("holds", err)
	}
	out := make([]StaleHold, 0, len(os))
	for _, o := range os {
		out = append(out, StaleHold{OrderID: o.OrderID, ExpiresAt: *o.HoldExpiresAt})
	}
	if repair && len(out) > 0 {
		if _, err := s.checkout.ExpireHolds(ctx); err != nil {
			return nil, err
		}
		for i := range out {
			if o, _, err := s.checkout.ReadOrder(ctx, out[i].OrderID); err == nil && o.HoldState != nil && *o.HoldState != checkout.HoldHeld {
				out[i].Released = true
			}
		}
	}
	return out, nil
}

// unfinishedReturns lists the orders returned in full that still use
// coupons and, with repair, refunds their coupons (Checkout.FinishReturn)
// in the actor's name.
func (s *Reconciler) unfinishedReturns(ctx context.Context, repair bool, actor string) ([]UnfinishedReturn, error) {
	list, err := s.checkout.UnfinishedReturns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]UnfinishedReturn, len(list))
	for i, u := range list {
		out[i] = UnfinishedReturn{OrderID: u.OrderID, ReturnID: u.ReturnID, Coupons: u.Coupons}
		if !repair {
			continue
		}
		if _, err := s.checkout.FinishReturn(ctx, actor, u.OrderID); err != nil {
			return nil, err
		}
		out[i].Finished = true
	}
	return out, nil
}

// reconcileCampaign compares the given templates of one campaign and its
// budget (nil for a campaign without one) and, with repair, rebuilds the
// campaign's counters when any of them drifted.
func (s *Reconciler) reconcileCampaign(ctx context.Context, cid int64, tids []int64, repair bool, actor string) ([]TemplateDrift, *CampaignBudgetDrift, error) {
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
	if err := s.LoadCampaign(ctx, cid, core.LoadForce); err != nil {
		return nil, nil, err
	}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, i := range drifted {
			d := &out[i]
			if err := s.Audit(tx, actor, "reconcile.repair", fmt.Sprintf("template:%d", d.TemplateID), d.describe()); err != nil {
				return err
			}
		}
		if budget.Drifted() {
			return s.Audit(tx, actor, "reconcile.repair", fmt.Sprintf("campaign:%d", cid), budget.describe())
		}
		return nil
	})
	for _, i := range drifted {
		d := &out[i]
		d.Repaired = err == nil
		s.Log.Warn("repaired drifted Redis counters from the database", "campaign", cid, "template", d.TemplateID,
			"actor", actor, "drift", d.Drift, "users_drifted", d.UsersDrifted, "redis_remaining", *d.RedisRemaining,
			"db_live", d.DBLive, "in_flight", d.InFlight, "audited", err == nil)
	}
	if budget.Drifted() {
		budget.Repaired = err == nil
		s.Log.Warn("repaired a drifted Redis budget from the database", "campaign", cid, "actor", actor,
			"drift", budget.Drift, "redis_budget_remaining", *budget.RedisBudgetRemaining,
			"expected_budget_remaining", budget.ExpectedRemaining, "audited", err == nil)
	}
	if err != nil {
		return nil, nil, core.DBError("audit log", err)
	}
	return out, budget, nil
}

// describe is the audit detail of a repair.
func (d *TemplateDrift) describe() string {
	return fmt.Sprintf("drift=%d users_drifted=%d redis_remaining=%d redis_total=%d expected_remaining=%d total_stock=%d db_live=%d in_flight=%d",
		d.Drift, d.UsersDrifted, *d.RedisRemaining, *d.RedisTotal, d.ExpectedRemaining(),
		d.TotalStock, d.DBLive, d.InFlight)
}

// compareTemplate compares a template until it shows no drift, at most
// reconcileAttempts times, and returns the last comparison.
func (s *Reconciler) compareTemplate(ctx context.Context, cid, tid int64) (*TemplateDrift, error) {
	return compareUntilSettled(ctx, func() (*TemplateDrift, error) { return s.compareTemplateOnce(ctx, cid, tid) })
}

// compareUntilSettled runs a comparison until it shows no drift, at most
// reconcileAttempts times with a growing pause, and returns the last one: a
// claim or return between the comparison's two reads shows a drift that is
// not there, and is gone at the next try.
func compareUntilSettled[D interface{ Drifted() bool }](ctx context.Context, once func() (D, error)) (D, error) {
	for attempt := 1; ; attempt++ {
		d, err := once()
		if err != nil || !d.Drifted() || attempt == reconcileAttempts {
			return d, err
		}
		select {
		case <-ctx.Done():
			var none D
			return none, models.Unavailable("the reconciliation", ctx.Err())
		case <-time.After(time.Duration(attempt) * reconcileRetryDelay):
		}
	}
}

// snapshotTx asks MySQL for one consistent snapshot over the whole
// transaction, whatever the server's default isolation. SQLite's transactions
// are serializable already (and take no options).
func (s *Reconciler) snapshotTx() []*sql.TxOptions {
	if s.Dialect != core.DialectMySQL {
		return nil
	}
	return []*sql.TxOptions{{Isolation: sql.LevelRepeatableRead, ReadOnly: true}}
}

// templateCounters is what Redis holds for a template, read in one MULTI.
type templateCounters struct {
	remaining, total *int64
	inFlight         []core.PendingMember // this template's pending and recent members
	users            map[string]string
}

func (s *Reconciler) compareTemplateOnce(ctx context.Context, cid, tid int64) (*TemplateDrift, error) {
	d := &TemplateDrift{TemplateID: tid, CampaignID: cid}
	expected := map[string]map[int64]bool{} // user → ordinals
	var rc *templateCounters
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
				if m.Ordinal > 0 { // an anonymous claim holds none (docs/shared-codes.md)
					addOrdinal(expected, m.UserID, m.Ordinal)
				}
			}
		}
		return nil
	}, s.snapshotTx()...)
	if err != nil {
		return nil, core.DBError(fmt.Sprintf("template %d", tid), err)
	}
	if rc.remaining == nil {
		return d, nil
	}
	d.RedisRemaining, d.RedisTotal = rc.remaining, rc.total
	d.Drift = *rc.remaining - d.ExpectedRemaining()
	d.UsersDrifted = usersDrifted(expected, rc.users)
	return d, nil
}

// readTemplateCounters reads a template's counters, the campaign's
// reservations in flight and the template's users in one MULTI. remaining is
// nil when the counters are not loaded.
func (s *Reconciler) readTemplateCounters(ctx context.Context, cid, tid int64) (*templateCounters, error) {
	var hm *redis.SliceCmd
	var pending, recent *redis.StringSliceCmd
	var users *redis.MapStringStringCmd
	_, err := s.Rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		hm = p.HMGet(ctx, s.Keys.Template(cid, tid), "remaining", "total")
		pending = p.ZRange(ctx, s.Keys.Pending(cid), 0, -1)
		recent = p.ZRange(ctx, s.Keys.Recent(cid), 0, -1)
		users = p.HGetAll(ctx, s.Keys.Users(cid, tid))
		return nil
	})
	if err != nil {
		return nil, core.RedisError(err)
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
		pm, ok := core.ParsePendingMember(m)
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
func rowsOf(tx *gorm.DB, tid int64, members []core.PendingMember) (map[string]bool, error) {
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
func (s *Reconciler) pruneRecent(ctx context.Context, cid int64) error {
	key := s.Keys.Recent(cid)
	cutoff := s.Clock().Add(-core.RecentWindow).UnixMilli()
	if err := s.Rdb.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(cutoff, 10)).Err(); err != nil {
		return core.RedisError(err)
	}
	members, err := s.Rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return core.RedisError(err)
	}
	byID := map[string]string{}
	ids := make([]string, 0, len(members))
	for _, m := range members {
		if pm, ok := core.ParsePendingMember(m); ok {
			byID[pm.RequestID] = m
			ids = append(ids, pm.RequestID)
		}
	}
	var gone []any
	for batch := range slices.Chunk(ids, inFlightBatch) {
		var returned []string
		err := s.DB.WithContext(ctx).Model(&models.Coupon{}).Where("request_id IN ? AND slot IS NULL", batch).
			Pluck("request_id", &returned).Error
		if err != nil {
			return core.DBError("coupons", err)
		}
		for _, rid := range returned {
			gone = append(gone, byID[rid])
		}
	}
	if len(gone) > 0 {
		if err := s.Rdb.ZRem(ctx, key, gone...).Err(); err != nil {
			return core.RedisError(err)
		}
	}
	return nil
}
