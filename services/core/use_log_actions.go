package core

import (
	"encoding/json"
	"fmt"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// UseLogAction is one action's part of an amount-only order's coupon, as
// coupon_use_log.actions keeps it (docs/pricing.md, "Several actions"): the
// discount the action took when the coupon was redeemed, and what it keeps
// after the order's returns by amount (the plan of the return prices the
// coupon again on the kept amount, each action on what the earlier left).
// The list is in the template's order of actions, every action listed;
// the kept parts add up to the row's discount_cents, the parts taken to
// the discount the coupon was redeemed with.
type UseLogAction struct {
	DiscountCents int64 `json:"discount_cents"`
	KeptCents     int64 `json:"kept_cents"`
}

// ReturnedCents is what of the action's part came back with returns.
func (a UseLogAction) ReturnedCents() int64 { return a.DiscountCents - a.KeptCents }

// actionDiscounts is each action's discount in r: one for a coupon of one
// action (its whole discount), n for a coupon of several. A coupon of
// several actions that took nothing (below its minimum: r.Actions is
// empty) keeps 0 on each of its n actions; a discount without actions is
// the first action's, so that the parts always add up to r's.
func actionDiscounts(r *pricing.CouponResult, n int) []int64 {
	if len(r.Actions) > 0 {
		out := make([]int64, len(r.Actions))
		for k := range r.Actions {
			out[k] = r.Actions[k].DiscountCents
		}
		return out
	}
	out := make([]int64, max(n, 1))
	out[0] = r.DiscountCents
	return out
}

// EncodeUseLogActions is the actions column of the use log row of coupon
// r redeemed on an amount-only order: each action's part of the plan,
// taken and kept alike.
func EncodeUseLogActions(r *pricing.CouponResult) *string {
	ds := actionDiscounts(r, 1)
	parts := make([]UseLogAction, len(ds))
	for k, d := range ds {
		parts[k] = UseLogAction{DiscountCents: d, KeptCents: d}
	}
	return encodeUseLogActions(parts)
}

// KeepUseLogActions is the actions column stored after a return by amount
// priced the coupon again as r: the parts taken as stored, the parts kept
// r's. nil (a row without the column) stays nil.
func KeepUseLogActions(stored *string, r *pricing.CouponResult) (*string, error) {
	parts, err := DecodeUseLogActions(stored)
	if err != nil || parts == nil {
		return nil, err
	}
	ds := actionDiscounts(r, len(parts))
	if len(ds) != len(parts) {
		return nil, fmt.Errorf("coupon_use_log.actions %q: %d actions, the plan priced %d", *stored, len(parts), len(ds))
	}
	for k, d := range ds {
		parts[k].KeptCents = d
	}
	return encodeUseLogActions(parts), nil
}

// DecodeUseLogActions reads coupon_use_log.actions: nil when the row has
// none.
func DecodeUseLogActions(s *string) ([]UseLogAction, error) {
	return decodeParts[UseLogAction]("coupon_use_log.actions", s)
}

func encodeUseLogActions(parts []UseLogAction) *string {
	b, _ := json.Marshal(parts) // integers only: it cannot fail
	s := string(b)
	return &s
}
