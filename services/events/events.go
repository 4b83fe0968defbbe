package events

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/couponsvc/couponsvc/services/core"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// NewEvent is an event waiting to be written by emitEvents: its type and its
// data (a models.*Event struct), marshalled there.
type NewEvent struct {
	Typ  string
	Data any
}

// EmitEvent writes one event to the outbox inside tx, the transaction of the
// change it tells of, with a delivery row for every enabled webhook endpoint
// that takes its type (docs/events.md). Every flow that changes something an
// integrator hears of calls it (or emitEvents) once per event, in its own
// transaction: the event then exists exactly when the change committed.
func (s *Events) EmitEvent(tx *gorm.DB, typ string, data any) error {
	return s.EmitEvents(tx, []NewEvent{{Typ: typ, Data: data}})
}

// EmitEvents writes several events in one multi-row INSERT (the claim's
// batch writes one per coupon), then their delivery rows in another. The
// ids of a multi-row insert are the rows' own when the database hands them
// out consecutively (SQLite; MariaDB's default); otherwise each event is
// inserted alone, as the coupon writer reads its ids back (couponwriter.go).
func (s *Events) EmitEvents(tx *gorm.DB, evs []NewEvent) error {
	if len(evs) == 0 {
		return nil
	}
	now := s.Clock()
	rows := make([]*models.Event, len(evs))
	for i, e := range evs {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("event %s: %w", e.Typ, err)
		}
		rows[i] = &models.Event{Type: e.Typ, CreatedAt: now, Data: data}
	}
	switch {
	case len(rows) == 1:
		// The one event of a hold, confirm or redemption: written out,
		// without gorm's reflection (core.InsertRow).
		if err := core.InsertEvent(tx, rows[0]); err != nil {
			return err
		}
	case !s.RereadIDs:
		if err := tx.Create(&rows).Error; err != nil {
			return err
		}
	default:
		for _, r := range rows {
			if err := tx.Create(r).Error; err != nil {
				return err
			}
		}
	}
	eps, err := s.endpoints.get(tx, time.Now())
	if err != nil {
		return err
	}
	var ds []*models.WebhookDelivery
	for _, r := range rows {
		for i := range eps {
			if eps[i].Wants(r.Type) {
				ds = append(ds, &models.WebhookDelivery{EndpointID: eps[i].ID, EventID: r.ID, State: models.DeliveryPending,
					NextAttemptAt: now, CreatedAt: now, UpdatedAt: now})
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	return tx.Create(&ds).Error
}

// endpointCacheTTL is how long the enabled endpoints read by emitEvents are
// reused: an endpoint created or changed on another instance takes that
// long at most to receive its events from there (docs/events.md).
const endpointCacheTTL = time.Second

// endpointCache keeps the enabled webhook endpoints, so that a flash sale's
// transactions do not each read them.
type endpointCache struct {
	mu      sync.Mutex
	fetched time.Time
	loaded  bool
	items   []models.WebhookEndpoint
}

// get returns the enabled endpoints, read through tx (SQLite has one
// connection, held by tx) when the copy is older than endpointCacheTTL by
// the wall clock (not the service's, which tests stop).
func (c *endpointCache) get(tx *gorm.DB, now time.Time) ([]models.WebhookEndpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded && now.Sub(c.fetched) < endpointCacheTTL && !now.Before(c.fetched) {
		return c.items, nil
	}
	var eps []models.WebhookEndpoint
	if err := tx.Where("enabled = ?", true).Order("id").Find(&eps).Error; err != nil {
		return nil, err
	}
	c.items, c.fetched, c.loaded = eps, now, true
	return eps, nil
}

// forget drops the copy after a change on this instance.
func (c *endpointCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = false
}

// FeedGapWait is how long the pull feed waits for a missing id below a
// listed one before it lists past it: an id is missing while the
// transaction that took it runs, and for ever when it rolled back
// (docs/events.md, Pull feed). It is longer than any transaction runs.
const FeedGapWait = 2 * time.Minute

// MaxFeedLimit bounds one page of the pull feed.
const MaxFeedLimit = 1000

// EventPage is one page of the pull feed.
type EventPage struct {
	Events []models.Event `json:"events"`
	// Next is the after of the next page: the last id listed, or the
	// request's after when nothing was.
	Next int64 `json:"next" doc:"pass as after to read on"`
}

// ListEvents returns the events after id after, oldest first, at most limit
// (default 100). It stops before an id that follows a gap younger than
// FeedGapWait, so that a reader going on from Next never skips an event
// whose transaction commits later. Errors: CodeInvalidRequest,
// CodeUnavailable.
func (s *Events) ListEvents(ctx context.Context, after int64, limit int) (*EventPage, error) {
	if after < 0 {
		return nil, models.Invalid("after", "must be 0 or a positive event id")
	}
	if limit == 0 {
		limit = 100
	}
	if limit < 0 || limit > MaxFeedLimit {
		return nil, models.Invalid("limit", "must be 1 to %d", MaxFeedLimit)
	}
	var evs []models.Event
	if err := s.DB.WithContext(ctx).Where("id > ?", after).Order("id").Limit(limit).Find(&evs).Error; err != nil {
		return nil, core.DBError("events", err)
	}
	now := s.Clock()
	page := &EventPage{Events: []models.Event{}, Next: after}
	prev := after
	for _, e := range evs {
		if e.ID != prev+1 && now.Sub(e.CreatedAt) < FeedGapWait {
			break
		}
		page.Events = append(page.Events, e)
		prev = e.ID
	}
	page.Next = prev
	return page, nil
}
