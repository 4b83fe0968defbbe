package services

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// SetRedeemHooks makes Redeem call afterDecide with the order id right after
// the redemption is decided, and afterUpdate inside its transaction right
// after the guarded UPDATE (nil: no call), so that a test can pause a request
// there. Call it before s serves any request.
func (s *Service) SetRedeemHooks(afterDecide, afterUpdate func(orderID string)) {
	s.hooks = testHooks{afterRedeemDecide: afterDecide, afterRedeemUpdate: afterUpdate}
}

// SetBeforeCouponWrite makes the coupon writer call fn before each batch's
// transaction begins (a transaction holds SQLite's one connection, so a
// test holding rows back must hold them before it). Call it before s serves
// any request.
func (s *Service) SetBeforeCouponWrite(fn func()) { s.writer.beforeWrite = fn }

// SetCheckoutHooks makes Confirm call afterConfirm, and ExpireHolds
// afterExpire, with the order id inside the transaction right after the
// guarded UPDATE of the order's row (nil: no call), so that a test can hold
// one of them there while the other runs. Call it before s serves any
// request.
func (s *Service) SetCheckoutHooks(afterConfirm, afterExpire func(orderID string)) {
	s.hooks.afterConfirmOrder, s.hooks.afterExpireOrder = afterConfirm, afterExpire
}

// FormatPendingMember is the member coupon_deduct.lua writes for a
// reservation, as the service makes it.
func FormatPendingMember(tid int64, user string, slot, ordinal, valueCents int64, requestID string) string {
	return pendingMember{TemplateID: tid, UserID: user, Slot: slot, Ordinal: ordinal, ValueCents: valueCents,
		RequestID: requestID}.String()
}

// SoldOutLearnt reports whether s remembers template tid as sold out with
// the users who may replay a claim of it learnt, so that it answers the
// others without Redis.
func (s *Service) SoldOutLearnt(tid int64) bool {
	s.soldOut.mu.Lock()
	defer s.soldOut.mu.Unlock()
	e := s.soldOut.items[tid]
	return e != nil && e.holders != nil
}

// SetJobHook makes every job runner of s call afterBatch after each
// committed batch; when it returns true the runner stops there without any
// clean-up, its lease left to run out, as a killed process would.
func (s *Service) SetJobHook(afterBatch func(jobID, done int64) bool) {
	s.hooks.afterJobBatch = afterBatch
}

// SetJobCommitHook makes every generate and import batch of s call
// beforeCommit after it took its stock, right before the transaction that
// writes its coupons.
func (s *Service) SetJobCommitHook(beforeCommit func(jobID int64)) {
	s.hooks.beforeJobCommit = beforeCommit
}

// EmitRolledBack writes an event of type typ in a transaction that then
// rolls back, as a change failing after its event was written does.
func (s *Service) EmitRolledBack(ctx context.Context, typ string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.emitEvent(tx, typ, map[string]string{"test": "rolled back"}); err != nil {
			return err
		}
		return errors.New("rolled back on purpose")
	})
}

// WebhookBackoff is the wait after the attempt-th failed try of a delivery.
func WebhookBackoff(attempt int, rnd float64) time.Duration { return webhookBackoff(attempt, rnd) }
