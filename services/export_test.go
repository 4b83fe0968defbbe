package services

import (
	"context"
	"errors"

	"github.com/couponsvc/couponsvc/services/core"

	"gorm.io/gorm"
)

// SetRedeemHooks makes Redeem call afterDecide with the order id right after
// the redemption is decided, and afterUpdate inside its transaction right
// after the guarded UPDATE (nil: no call), so that a test can pause a request
// there. Call it before s serves any request.
func (s *App) SetRedeemHooks(afterDecide, afterUpdate func(orderID string)) {
	s.Hooks = core.TestHooks{AfterRedeemDecide: afterDecide, AfterRedeemUpdate: afterUpdate}
}

// SetBeforeCouponWrite makes the coupon writer call fn before each batch's
// transaction begins (a transaction holds SQLite's one connection, so a
// test holding rows back must hold them before it). Call it before s serves
// any request.
func (s *App) SetBeforeCouponWrite(fn func()) { s.Hooks.BeforeCouponWrite = fn }

// SetCheckoutHooks makes Confirm call afterConfirm, and ExpireHolds
// afterExpire, with the order id inside the transaction right after the
// guarded UPDATE of the order's row (nil: no call), so that a test can hold
// one of them there while the other runs. Call it before s serves any
// request.
func (s *App) SetCheckoutHooks(afterConfirm, afterExpire func(orderID string)) {
	s.Hooks.AfterConfirmOrder, s.Hooks.AfterExpireOrder = afterConfirm, afterExpire
}

// SetBeforeRelease makes Release call fn with the order id once it decided
// to release the hold it read, right before its transaction, so that a
// test can end the hold there. Call it before s serves any request.
func (s *App) SetBeforeRelease(fn func(orderID string)) { s.Hooks.BeforeReleaseOrder = fn }

// SetReturnHook makes a return that completed its order call afterCommit
// right after its commit, before it refunds the order's coupons; when it
// returns true the return stops there, as a killed process would.
func (s *App) SetReturnHook(afterCommit func(orderID string) bool) {
	s.Hooks.AfterReturnCommit = afterCommit
}

// FormatPendingMember is the member coupon_deduct.lua writes for a
// reservation, as the service makes it.
func FormatPendingMember(tid int64, user string, slot, ordinal, valueCents int64, requestID string) string {
	return core.PendingMember{TemplateID: tid, UserID: user, Slot: slot, Ordinal: ordinal, ValueCents: valueCents,
		RequestID: requestID}.String()
}

// SetJobHook makes every job runner of s call afterBatch after each
// committed batch; when it returns true the runner stops there without any
// clean-up, its lease left to run out, as a killed process would.
func (s *App) SetJobHook(afterBatch func(jobID, done int64) bool) {
	s.Hooks.AfterJobBatch = afterBatch
}

// SetJobCommitHook makes every generate and import batch of s call
// beforeCommit after it took its stock, right before the transaction that
// writes its coupons.
func (s *App) SetJobCommitHook(beforeCommit func(jobID int64)) {
	s.Hooks.BeforeJobCommit = beforeCommit
}

// SetJobCreateHooks makes every code job's creation on s call before right
// before its transaction and locked inside it once it holds the template's
// rows (nil: no call).
func (s *App) SetJobCreateHooks(before, locked func(templateID int64)) {
	s.Hooks.BeforeJobCreate, s.Hooks.JobTemplateLocked = before, locked
}

// EmitRolledBack writes an event of type typ in a transaction that then
// rolls back, as a change failing after its event was written does.
func (s *App) EmitRolledBack(ctx context.Context, typ string) error {
	return s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.EmitEvent(tx, typ, map[string]string{"test": "rolled back"}); err != nil {
			return err
		}
		return errors.New("rolled back on purpose")
	})
}
