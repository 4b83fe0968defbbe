package reports

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"
)

// DiscountAction is one action of one template in the discount report
// (docs/reports.md): the discount its coupons' action took, on the lines
// and on the shipping and off amount-only orders, and the part of it
// returned. A template of one
// action has one, its action 0.
type DiscountAction struct {
	TemplateID            int64  `json:"template_id"`
	Action                int    `json:"action" doc:"0: the template's own kind; 1, 2, ...: its actions, in order"`
	Kind                  string `json:"kind" schema:"template_kind"`
	DiscountCents         int64  `json:"discount_cents"`
	ReturnedDiscountCents int64  `json:"returned_discount_cents" doc:"what came back with returned units (each action's part of them), and the shipping's with a full return; on an amount-only order, what its returns by amount took back of the action"`
	NetDiscountCents      int64  `json:"net_discount_cents" doc:"discount_cents − returned_discount_cents"`
}

// actionRow is one stored discount as discountActions reads it.
type actionRow struct {
	TemplateID            int64
	LineNo                int
	DiscountCents         int64
	ReturnedDiscountCents int64
	Parts                 *string
	ReturnedQuantity      int64
	Kind                  string
	TemplateActions       *string
}

// discountActions splits the report's discounts by template and action:
// those of orders with lines (order_line_discounts) and those of
// amount-only orders (amountOnlyActions). A coupon of one action's row is its action 0's; a coupon of several
// keeps each action's part (order_line_discounts.actions), and a line's
// returned units give back each action its own part of them. The
// shipping's part comes back whole with the order's last units, so each
// action's part of it is back when the row's is.
func (s *Reports) discountActions(ctx context.Context, q DiscountQuery) ([]DiscountAction, error) {
	stmt := `SELECT d.template_id, d.line_no, d.discount_cents, d.returned_discount_cents, d.actions,
			COALESCE(ol.returned_quantity, 0), t.kind, t.actions
		FROM order_line_discounts d
		JOIN coupon_use_log l ON l.coupon_id = d.coupon_id AND l.order_id = d.order_id AND l.undo_flag = ?
		LEFT JOIN order_lines ol ON ol.order_id = d.order_id AND ol.line_no = d.line_no
		JOIN templates t ON t.id = d.template_id
		JOIN checkout_orders o ON o.order_id = d.order_id
		WHERE l.used_at >= ? AND l.used_at < ? AND o.currency = ?`
	stmt, args := q.narrow(stmt, []any{false, q.Range.Start, q.Range.End, q.Currency})
	rows, err := s.DB.WithContext(ctx).Raw(stmt, args...).Rows()
	if err != nil {
		return nil, core.DBError("order lines", err)
	}
	defer rows.Close()
	type key struct {
		template int64
		action   int
	}
	by := map[key]*DiscountAction{}
	add := func(r *actionRow, k int, discount, returned int64) error {
		a := by[key{r.TemplateID, k}]
		if a == nil {
			kind, err := actionKind(r, k)
			if err != nil {
				return err
			}
			a = &DiscountAction{TemplateID: r.TemplateID, Action: k, Kind: kind}
			by[key{r.TemplateID, k}] = a
		}
		a.DiscountCents += discount
		a.ReturnedDiscountCents += returned
		a.NetDiscountCents += discount - returned
		return nil
	}
	for rows.Next() {
		var r actionRow
		if err := rows.Scan(&r.TemplateID, &r.LineNo, &r.DiscountCents, &r.ReturnedDiscountCents, &r.Parts,
			&r.ReturnedQuantity, &r.Kind, &r.TemplateActions); err != nil {
			return nil, core.DBError("order lines", err)
		}
		parts, err := core.DecodeActionParts(r.Parts)
		if err != nil {
			return nil, core.DBError("order lines", err)
		}
		if parts == nil {
			if err := add(&r, 0, r.DiscountCents, r.ReturnedDiscountCents); err != nil {
				return nil, err
			}
			continue
		}
		for k := range parts {
			back := parts[k].ReturnedOf(r.ReturnedQuantity)
			if r.LineNo < 0 {
				back = 0
				if r.ReturnedDiscountCents >= r.DiscountCents {
					back = parts[k].DiscountCents
				}
			}
			if err := add(&r, k, parts[k].DiscountCents, back); err != nil {
				return nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, core.DBError("order lines", err)
	}
	if err := s.amountOnlyActions(ctx, q, add); err != nil {
		return nil, err
	}
	out := make([]DiscountAction, 0, len(by)) // [] rather than null in the answer
	for _, a := range by {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b DiscountAction) int {
		return cmp.Or(cmp.Compare(a.TemplateID, b.TemplateID), cmp.Compare(a.Action, b.Action))
	})
	return out, nil
}

// amountOnlyActions adds to the split the coupons of amount-only orders
// redeemed within the range and still used: each action's part as its use
// log row keeps it (coupon_use_log.actions), what it took and what came
// back with the order's returns by amount (docs/reports.md). Rows written
// before the parts were kept have none and are left out.
func (s *Reports) amountOnlyActions(ctx context.Context, q DiscountQuery, add func(r *actionRow, k int, discount, returned int64) error) error {
	stmt := `SELECT l.template_id, l.actions, t.kind, t.actions
		FROM coupon_use_log l
		JOIN templates t ON t.id = l.template_id
		JOIN checkout_orders o ON o.order_id = l.order_id
		WHERE l.undo_flag = ? AND l.actions IS NOT NULL AND l.used_at >= ? AND l.used_at < ? AND o.currency = ?`
	stmt, args := q.narrow(stmt, []any{false, q.Range.Start, q.Range.End, q.Currency})
	rows, err := s.DB.WithContext(ctx).Raw(stmt, args...).Rows()
	if err != nil {
		return core.DBError("use log", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r actionRow
		if err := rows.Scan(&r.TemplateID, &r.Parts, &r.Kind, &r.TemplateActions); err != nil {
			return core.DBError("use log", err)
		}
		parts, err := core.DecodeUseLogActions(r.Parts)
		if err != nil {
			return core.DBError("use log", err)
		}
		for k, p := range parts {
			if err := add(&r, k, p.DiscountCents, p.ReturnedCents()); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return core.DBError("use log", err)
	}
	return nil
}

// actionKind is the kind of a row's template's action k.
func actionKind(r *actionRow, k int) (string, error) {
	if k == 0 {
		return r.Kind, nil
	}
	var actions []models.TemplateAction
	if r.TemplateActions != nil && *r.TemplateActions != "" {
		if err := json.Unmarshal([]byte(*r.TemplateActions), &actions); err != nil {
			return "", core.DBError("templates", err)
		}
	}
	if k > len(actions) {
		return "", nil
	}
	return actions[k-1].Kind, nil
}
