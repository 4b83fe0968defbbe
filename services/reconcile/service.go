// Package reconcile compares Redis's counters with the database and
// repairs them: the reconciliation report, the repair pass and its loop,
// and the stale holds it finds (docs/guarantees.md, docs/failures.md).
package reconcile

import (
	"sync/atomic"

	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
)

// Reconciler checks and repairs the counters. It has no settings of its
// own: it runs on core's (DBTimeout, the clock).
type Reconciler struct {
	*core.Core
	checkout *checkout.Checkout
	// returnsDue is when the repair pass of this instance next looks for
	// completing returns cut short (Unix nanoseconds of the clock).
	returnsDue atomic.Int64
}

// New returns the reconciler over c; the stale holds it finds are expired
// through co.
func New(c *core.Core, co *checkout.Checkout) *Reconciler {
	return &Reconciler{Core: c, checkout: co}
}
