package services

import (
	"context"
	"encoding/json"
	"time"
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

// The Redis keys of the last runs: a note for people, shared by every
// instance, not a state anything depends on.
func (k keys) lastReconcile() string  { return k.prefix + "reconcile:last_full" }
func (k keys) lastRepairPass() string { return k.prefix + "reconcile:last_pass" }

// noteRun records a run; a failure is only logged: the run itself is done.
func (s *Service) noteRun(ctx context.Context, key string, run ReconcileRun) {
	b, _ := json.Marshal(run)
	if err := s.rdb.Set(context.WithoutCancel(ctx), key, b, 0).Err(); err != nil {
		s.log.Warn("record when reconciliation last ran", "err", err)
	}
}

// LastReconcile says when reconciliation and the repair pass last ran.
// Errors: CodeUnavailable.
func (s *Service) LastReconcile(ctx context.Context) (ReconcileRuns, error) {
	var out ReconcileRuns
	vals, err := s.rdb.MGet(ctx, s.keys.lastReconcile(), s.keys.lastRepairPass()).Result()
	if err != nil {
		return out, redisError(err)
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
