package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
)

// walk yields the items of every page from after: page reads the page
// after a cursor and returns its items and the next cursor (0 or the
// cursor itself at the end). A list read newest first has cursors that
// go down.
func walk[T any](page func(after int64) ([]T, int64, error), after int64) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := page(after)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if len(items) == 0 || next == 0 || next == after {
				return
			}
			after = next
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Events walks the event feed from after (0: the oldest kept), page by
// page, in id order (ListEventsAll). Remember the last id you handled and
// pass it as after next time: the feed never skips an event.
func (c *Client) Events(ctx context.Context, after int64, opts ...CallOption) iter.Seq2[Event, error] {
	return c.ListEventsAll(ctx, ListEventsParams{After: &after}, opts...)
}

// LatestEventID is the id to read the feed on from to start "from now"
// (GET /api/v1/events?from=latest): the events committed after this call
// come after it, none skipped. Keep it as the after of Events.
func (c *Client) LatestEventID(ctx context.Context, opts ...CallOption) (int64, error) {
	page, err := c.ListEvents(ctx, ListEventsParams{From: Ptr("latest")}, opts...)
	if err != nil {
		return 0, err
	}
	return page.Next, nil
}

// EventsFromLatest walks the event feed from now on (LatestEventID, then
// Events): the events committed after the call, up to the feed's end.
func (c *Client) EventsFromLatest(ctx context.Context, opts ...CallOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		after, err := c.LatestEventID(ctx, opts...)
		if err != nil {
			yield(Event{}, err)
			return
		}
		for ev, err := range c.Events(ctx, after, opts...) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// DecodeData decodes an event's data into its type's struct: *CouponEvent
// for coupon.*, *TemplateEvent for template.*, *BudgetEvent for
// campaign.budget_exhausted, *OrderReturnEvent for order.returned,
// *WebhookTestEvent for webhook.test.
func DecodeData(ev Event) (any, error) {
	var v any
	switch {
	case strings.HasPrefix(string(ev.Type), "coupon."):
		v = &CouponEvent{}
	case strings.HasPrefix(string(ev.Type), "template."):
		v = &TemplateEvent{}
	case ev.Type == EventTypeCampaignBudgetExhausted:
		v = &BudgetEvent{}
	case ev.Type == EventTypeOrderReturned:
		v = &OrderReturnEvent{}
	case ev.Type == EventTypeWebhookTest:
		v = &WebhookTestEvent{}
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
