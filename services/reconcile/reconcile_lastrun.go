package reconcile

import (
	"context"
	"encoding/json"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
)

// ReconcileRun says when a reconciliation last ran, who or what ran it and
// what it found (docs/failures.md, "When it last ran").
type ReconcileRun struct {
	At time.Time `json:"at"`
	// By is the admin, "cli", or "reconciler" for the background pass.
	By string `json:"by"`
	// Repair tells a run that repaired from one that only compared.
	Repair   bool `json:"repair"`
	Checked  int  `json:"checked"`
	Drifted  int  `json:"drifted"`
	Repaired int  `json:"repaired"`
}

// ReconcileRuns are the last full reconciliation (Reconcile: the console,
// the API, the command line) and the last background repair pass
// (RepairPass); nil when none ran since Redis last lost its data.
type ReconcileRuns struct {
	Full *ReconcileRun `json:"full"`
	Pass *ReconcileRun `json:"pass"`
}

// noteRun records a run; a failure is only logged: the run itself is done.
func (s *Reconciler) noteRun(ctx context.Context, key string, run ReconcileRun) {
	b, _ := json.Marshal(run)
	if err := s.Rdb.Set(context.WithoutCancel(ctx), key, b, 0).Err(); err != nil {
		s.Log.Warn("record when reconciliation last ran", "err", err)
	}
}

// LastReconcile says when reconciliation and the repair pass last ran.
// Errors: CodeUnavailable.
func (s *Reconciler) LastReconcile(ctx context.Context) (ReconcileRuns, error) {
	var out ReconcileRuns
	vals, err := s.Rdb.MGet(ctx, s.Keys.LastReconcile(), s.Keys.LastRepairPass()).Result()
	if err != nil {
		return out, core.RedisError(err)
	}
	for i, dst := range []**ReconcileRun{&out.Full, &out.Pass} {
		str, ok := vals[i].(string)
		if !ok {
			continue
		}
		var run ReconcileRun
		if json.Unmarshal([]byte(str), &run) == nil {
			*dst = &run
		}
	}
	return out, nil
}
