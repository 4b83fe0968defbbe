package services

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

// FormatPendingMember is the member coupon_deduct.lua writes for a
// reservation, as the service makes it.
func FormatPendingMember(tid int64, user string, slot, ordinal, valueCents int64, requestID string) string {
	return pendingMember{TemplateID: tid, UserID: user, Slot: slot, Ordinal: ordinal, ValueCents: valueCents,
		RequestID: requestID}.String()
}
