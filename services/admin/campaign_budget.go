package admin

import (
	"context"
	"fmt"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"gorm.io/gorm"
)

// budgetChange is what a budget change left to do on the Redis counter once
// the transaction ends (see settle).
type budgetChange struct {
	// moved: the counter was moved before the commit; dropped if the
	// change does not commit.
	moved bool
	// drop: the counter is deleted after the commit (from or to "no
	// budget", or not loaded), and the loader rebuilds it from the database.
	drop bool
}

// changeBudget writes camp's new budget and audits it (campaign.budget),
// refusing a budget below what the campaign's coupons have taken
// (docs/flows.md, "Change a campaign's budget"): the coupons' values in the
// database and, when the counter is loaded, the reservations in flight too,
// which only Redis knows. Between two budgets the counter moves by the
// difference before the commit (coupon_budget.lua); from or to no budget it is
// dropped after the commit and rebuilt by the loader. The caller holds the
// campaign's load lock. Errors: CodeBudgetExhausted, database errors.
func (s *Admin) changeBudget(ctx context.Context, tx *gorm.DB, actor string, before *models.Campaign, budget int64) (budgetChange, error) {
	was := before.BudgetCents
	var used int64
	if err := tx.Model(&models.Coupon{}).Where("campaign_id = ? AND slot IS NOT NULL", before.ID).
		Select("COALESCE(SUM(value_cents), 0)").Scan(&used).Error; err != nil {
		return budgetChange{}, err
	}
	if budget > 0 && budget < used {
		return budgetChange{}, budgetBelowUsed(budget, used)
	}
	if err := tx.Model(&models.Campaign{}).Where("id = ?", before.ID).Update("budget_cents", budget).Error; err != nil {
		return budgetChange{}, err
	}
	if err := s.Audit(tx, actor, "campaign.budget", fmt.Sprintf("campaign:%d", before.ID),
		fmt.Sprintf("budget_cents=%d budget_was_cents=%d used_cents=%d", budget, was, used)); err != nil {
		return budgetChange{}, err
	}
	if was == 0 || budget == 0 {
		return budgetChange{drop: true}, nil
	}
	res, err := lua.Budget.Run(ctx, s.Rdb, []string{s.Keys.Budget(before.ID)}, was, budget).Int64Slice()
	if err != nil {
		return budgetChange{}, core.RedisError(err)
	}
	switch res[0] {
	case lua.BudgetBelowUsed:
		return budgetChange{}, budgetBelowUsed(budget, res[1])
	case lua.BudgetNotLoaded:
		return budgetChange{drop: true}, nil
	}
	return budgetChange{moved: true}, nil
}

// budgetBelowUsed is the refusal of a budget below what was taken.
func budgetBelowUsed(budget, taken int64) error {
	return &models.Error{Code: models.CodeBudgetExhausted, Field: "budget_cents", Message: fmt.Sprintf(
		"cannot be %d: the campaign's coupons have already taken %d", budget, taken)}
}

// settle finishes a budget change on the counter: deleted when the loader
// must rebuild it, or when a counter moved before the commit belongs to a
// change that did not commit. A failed delete is logged; reconcile finds the
// drift and repairs it (docs/guarantees.md).
func (c budgetChange) settle(ctx context.Context, s *Admin, cid int64, committed bool) {
	if !(c.drop && committed) && !(c.moved && !committed) {
		return
	}
	if err := s.Rdb.Del(context.WithoutCancel(ctx), s.Keys.Budget(cid)).Err(); err != nil {
		s.Log.Error("drop the budget counter after a budget change; reconcile will repair", "campaign", cid, "err", err)
	}
}
