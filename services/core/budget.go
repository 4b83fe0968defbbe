package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// DefaultReportBudget bounds the work of one report (Config.ReportBudget):
// below the request's own timeout (10s), so that the answer is the report's
// error, which says what to do.
const DefaultReportBudget = 8 * time.Second

// DefaultExportBudget bounds one coupons export (Config.ExportBudget): below
// the 30 minutes the server gives a stream to be written.
const DefaultExportBudget = 20 * time.Minute

// WithBudget bounds the work of a report or an export by budget.
func WithBudget(ctx context.Context, budget time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, budget, errOverBudget)
}

// BudgetError turns the error of a report or an export whose budget ran out
// into one that says so: 503 unavailable, without Retry-After, since the same
// request again would run out again (docs/reports.md). Other errors are
// returned as they are.
func BudgetError(ctx context.Context, err error, what string, budget time.Duration) error {
	if err == nil || !errors.Is(context.Cause(ctx), errOverBudget) {
		return err
	}
	return &models.Error{Code: models.CodeUnavailable, Err: fmt.Errorf("%w: %w", errOverBudget, err), Message: fmt.Sprintf(
		"the %s took longer than its time budget of %s: ask for a shorter range", what, budget)}
}

// errOverBudget is the cause of a report's or an export's context when its
// time budget ran out.
var errOverBudget = errors.New("over its time budget")

// OverBudget reports the error of a report or an export that ran out of its
// time budget.
func OverBudget(err error) bool { return errors.Is(err, errOverBudget) }
