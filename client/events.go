package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
)

// Events walks the event feed from after (0: the oldest kept), page by
// page, in id order; it stops at the end of the feed, at the first error
// (yielded), or when the loop breaks. Remember the last id you handled and
// pass it as after next time: the feed never skips an event.
func (c *Client) Events(ctx context.Context, after int64, opts ...CallOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			page, err := c.ListEvents(ctx, ListEventsParams{After: &after}, opts...)
			if err != nil {
				yield(Event{}, err)
				return
			}
			for _, ev := range page.Events {
				if !yield(ev, nil) {
					return
				}
			}
			if len(page.Events) == 0 || page.Next <= after {
				return
			}
			after = page.Next
		}
	}
}

// DecodeData decodes an event's data into its type's struct: *CouponEvent
// for coupon.*, *TemplateEvent for template.*, *BudgetEvent for
// campaign.budget_exhausted, *OrderReturnEvent for order.returned.
func DecodeData(ev Event) (any, error) {
	var v any
	switch {
	case strings.HasPrefix(ev.Type, "coupon."):
		v = &CouponEvent{}
	case strings.HasPrefix(ev.Type, "template."):
		v = &TemplateEvent{}
	case ev.Type == "campaign.budget_exhausted":
		v = &BudgetEvent{}
	case ev.Type == "order.returned":
		v = &OrderReturnEvent{}
	default:
		return nil, fmt.Errorf("client: event type %q is not one this client knows", ev.Type)
	}
	raw, err := json.Marshal(ev.Data)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("client: event %d (%s): %w", ev.ID, ev.Type, err)
	}
	return v, nil
}

// Ptr returns a pointer to v, for the optional fields of a request.
func Ptr[T any](v T) *T { return &v }
