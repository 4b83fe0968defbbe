package core

import (
	"encoding/json"
	"fmt"

	"github.com/couponsvc/couponsvc/services/pricing"
)

// ActionPart is one action's part of a coupon's discount on one line (or
// on the shipping), as order_line_discounts.actions keeps it for a coupon
// of several actions: in the template's order of actions, every action
// listed (0 where it took nothing), their parts adding up to the row's
// unit by unit (docs/pricing.md, "Several actions").
type ActionPart struct {
	DiscountCents int64 `json:"discount_cents"`
	// Units is the action's split over the line's units (none for the
	// shipping).
	Units []PartRun `json:"units,omitempty"`
}

// PartRun is a pricing.UnitRun as the actions column keeps it.
type PartRun struct {
	First        int64 `json:"first"`
	Count        int64 `json:"count"`
	PerUnitCents int64 `json:"per_unit_cents"`
}

// shippingLine is the line_no of a coupon's part of the shipping in
// order_line_discounts.
const shippingLine = -1

// EncodeActionParts is the actions column of coupon r's row for line
// (-1: its part of the shipping): nil for a coupon of one
// action, whose part is the row's. carried is the earlier part the row
// keeps on units returned before (a coupon refunded and redeemed again on
// the order: order_line_discounts.carried_cents); it is the first
// action's (the template's own kind), on the units it was on, so that the
// parts add up to the row's discount unit by unit (docs/pricing.md,
// "Several actions").
func EncodeActionParts(r *pricing.CouponResult, line int, carried []pricing.UnitRun) *string {
	if len(r.Actions) == 0 {
		return nil
	}
	parts := make([]ActionPart, len(r.Actions))
	for _, u := range carried {
		parts[0].DiscountCents += u.Count * u.PerUnitCents
		parts[0].Units = append(parts[0].Units, PartRun{First: u.First, Count: u.Count, PerUnitCents: u.PerUnitCents})
	}
	for k := range r.Actions {
		a := &r.Actions[k]
		if line == shippingLine {
			parts[k].DiscountCents = a.ShippingCents
			continue
		}
		for _, ls := range a.Lines {
			if ls.Line != line {
				continue
			}
			parts[k].DiscountCents += ls.DiscountCents
			for _, u := range ls.Units {
				parts[k].Units = append(parts[k].Units, PartRun{First: u.First, Count: u.Count, PerUnitCents: u.PerUnitCents})
			}
		}
	}
	b, _ := json.Marshal(parts) // integers only: it cannot fail
	s := string(b)
	return &s
}

// DecodeActionParts reads the actions column of order_line_discounts:
// nil for a coupon of one action.
func DecodeActionParts(s *string) ([]ActionPart, error) {
	return decodeParts[ActionPart]("order_line_discounts.actions", s)
}

// decodeParts reads a JSON list kept in column: nil when it holds none.
func decodeParts[T any](column string, s *string) ([]T, error) {
	if s == nil || *s == "" {
		return nil, nil
	}
	var out []T
	if err := json.Unmarshal([]byte(*s), &out); err != nil {
		return nil, fmt.Errorf("%s %q: %w", column, *s, err)
	}
	return out, nil
}

// ReturnedOf is the part of an action's discount on a line that came back
// with the line's first returned units (units come back in the line's
// order: docs/pricing.md, "Returns").
func (a *ActionPart) ReturnedOf(returned int64) int64 {
	runs := make([]pricing.UnitRun, len(a.Units))
	for i, u := range a.Units {
		runs[i] = pricing.UnitRun{First: u.First, Count: u.Count, PerUnitCents: u.PerUnitCents}
	}
	return pricing.UnitsDiscountCents(runs, 0, returned)
}
