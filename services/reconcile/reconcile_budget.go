package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// The campaign budget is reconciled on its own line, as the stock is per
// template:
//
//	redis budget remaining == max(budget_cents − value of the coupons holding a slot − value of the reservations in flight, 0)
//
// read the same way as a template (the database in one snapshot, then Redis
// in one MULTI, then the reservations Redis showed looked up in that
// snapshot), and repaired the same way: the campaign's counters are rebuilt
// from the database by coupon_load.lua under the load lock, which keeps the
// reservations in flight, so a repair never races a claim's DECRBY.

// CampaignBudgetDrift is the comparison of a campaign's Redis budget counter
// with the database. Only campaigns with a budget are compared.
type CampaignBudgetDrift struct {
	CampaignID  int64 `json:"campaign_id"`
	BudgetCents int64 `json:"budget_cents"`
	// Currency is the campaign's, of every amount.
	Currency string `json:"currency" schema:"currency"`
	// RedisBudgetRemaining is nil when Redis has no budget counter for the
	// campaign (never loaded, or lost): the loader builds it from the
	// database at the next claim, so that is no drift.
	RedisBudgetRemaining *int64 `json:"redis_budget_remaining"`
	// DBBudgetUsed is the value of the campaign's coupons holding a slot
	// (issued, used, expired, or revoked without their stock returned).
	DBBudgetUsed int64 `json:"db_budget_used"`
	// InFlightCents is the value of the reservations that took budget in
	// Redis but whose row is not in the database (yet).
	InFlightCents int64 `json:"in_flight_cents"`
	// ExpectedRemaining is max(budget_cents − db_budget_used −
	// in_flight_cents, 0), what Redis should hold.
	ExpectedRemaining int64 `json:"expected_budget_remaining"`
	// Drift is redis_budget_remaining − expected_budget_remaining: above 0
	// Redis would hand out value the budget does not have, below 0 budget
	// is stuck.
	Drift int64 `json:"drift"`
	// Repaired tells that the campaign's counters were rebuilt for this
	// drift (with an audit entry).
	Repaired bool `json:"repaired"`
}

// Drifted reports whether the campaign's budget counter disagrees with the
// database.
func (d *CampaignBudgetDrift) Drifted() bool {
	return d != nil && d.RedisBudgetRemaining != nil && d.Drift != 0
}

// describe is the audit detail of a budget repair.
func (d *CampaignBudgetDrift) describe() string {
	return fmt.Sprintf("budget drift=%d redis_budget_remaining=%d expected_budget_remaining=%d budget_cents=%d db_budget_used=%d in_flight_cents=%d",
		d.Drift, *d.RedisBudgetRemaining, d.ExpectedRemaining, d.BudgetCents, d.DBBudgetUsed, d.InFlightCents)
}

// compareBudget compares a campaign's budget until it shows no drift, at most
// reconcileAttempts times (a return of stock between the two reads shows a
// drift that is not there), and returns the last comparison; nil for a
// campaign without a budget.
func (s *Reconciler) compareBudget(ctx context.Context, cid int64) (*CampaignBudgetDrift, error) {
	return compareUntilSettled(ctx, func() (*CampaignBudgetDrift, error) { return s.compareBudgetOnce(ctx, cid) })
}

// errNoBudget ends the snapshot of a campaign without a budget.
var errNoBudget = errors.New("no budget")

func (s *Reconciler) compareBudgetOnce(ctx context.Context, cid int64) (*CampaignBudgetDrift, error) {
	d := &CampaignBudgetDrift{CampaignID: cid}
	var budget *redis.StringCmd
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// 1. The database, in one snapshot taken at this first read.
		var c models.Campaign
		if err := tx.Select("id", "budget_cents", "currency").First(&c, cid).Error; err != nil {
			return err
		}
		if c.BudgetCents <= 0 {
			return errNoBudget
		}
		d.BudgetCents, d.Currency = c.BudgetCents, c.Currency
		if err := tx.Model(&models.Coupon{}).Where("campaign_id = ? AND slot IS NOT NULL", cid).
			Select("COALESCE(SUM(value_cents), 0)").Scan(&d.DBBudgetUsed).Error; err != nil {
			return err
		}
		// 2. Redis, after the snapshot.
		var pending, recent *redis.StringSliceCmd
		_, err := s.Rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			budget = p.Get(ctx, s.Keys.Budget(cid))
			pending = p.ZRange(ctx, s.Keys.Pending(cid), 0, -1)
			recent = p.ZRange(ctx, s.Keys.Recent(cid), 0, -1)
			return nil
		})
		if err != nil && !core.IsRedisNil(err) {
			return core.RedisError(err)
		}
		if core.IsRedisNil(budget.Err()) {
			return nil
		}
		// 3. Which of the reservations the snapshot holds a row of.
		values := map[string]int64{} // request id → value
		for _, m := range slices.Concat(pending.Val(), recent.Val()) {
			if pm, ok := core.ParsePendingMember(m); ok {
				values[pm.RequestID] = pm.ValueCents
			}
		}
		ids := make([]string, 0, len(values))
		for id := range values {
			ids = append(ids, id)
		}
		for batch := range slices.Chunk(ids, inFlightBatch) {
			var have []string
			if err := tx.Model(&models.Coupon{}).Where("campaign_id = ? AND request_id IN ?", cid, batch).
				Pluck("request_id", &have).Error; err != nil {
				return err
			}
			for _, id := range have {
				delete(values, id)
			}
		}
		for _, v := range values {
			d.InFlightCents += v
		}
		return nil
	}, s.snapshotTx()...)
	if errors.Is(err, errNoBudget) {
		return nil, nil
	}
	if err != nil {
		return nil, core.DBError(fmt.Sprintf("campaign %d", cid), err)
	}
	d.ExpectedRemaining = max(d.BudgetCents-d.DBBudgetUsed-d.InFlightCents, 0)
	if budget == nil || core.IsRedisNil(budget.Err()) {
		return d, nil
	}
	remaining, err := strconv.ParseInt(budget.Val(), 10, 64)
	if err != nil {
		// Garbage in the counter is drift of the worst kind: show it as
		// such, so that a repair rebuilds it.
		remaining = -1
	}
	d.RedisBudgetRemaining = &remaining
	d.Drift = remaining - d.ExpectedRemaining
	return d, nil
}
