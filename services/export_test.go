package services

// SetRedeemHooks makes Redeem call afterDecide with the order id right after
// the redemption is decided, and afterUpdate inside its transaction right
// after the guarded UPDATE (nil: no call), so that a test can pause a request
// there. Call it before s serves any request.
func (s *Service) SetRedeemHooks(afterDecide, afterUpdate func(orderID string)) {
	s.hooks = testHooks{afterRedeemDecide: afterDecide, afterRedeemUpdate: afterUpdate}
}

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
