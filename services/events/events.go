package events

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/services/core"

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
	n, next := listable(after, evs, s.Clock())
	return &EventPage{Events: append([]models.Event{}, evs[:n]...), Next: next}, nil
}

// listable is how many of evs (in increasing id, after the id after) the
// feed lists at now, and the last id listed (after when none): it stops
// before an event that follows a missing id until FeedGapWait has passed
// since that event was written (docs/events.md, Pull feed).
func listable(after int64, evs []models.Event, now time.Time) (n int, last int64) {
	last = after
	for _, e := range evs {
		if e.ID != last+1 && now.Sub(e.CreatedAt) < FeedGapWait {
			break
		}
		n++
		last = e.ID
	}
	return n, last
}

// LatestEventID is where a reader starts the feed "from now": the id after
// which every event still to become visible lands, so that reading on from
// it lists the events committed after this call and skips none (an event of
// a transaction still running may have a lower id than the newest visible
// one: the id stops before such a gap, as ListEvents does, and the few
// visible events above it are listed again). It reads the ids of the events
// written in the last FeedGapWait, newest first, a page at a time, down to
// an older one. Errors: CodeUnavailable.
func (s *Events) LatestEventID(ctx context.Context) (int64, error) {
	now := s.Clock()
	var recent []models.Event // newest first
	anchor, below := int64(0), int64(maxEventID)
	for {
		var evs []models.Event
		if err := s.DB.WithContext(ctx).Select("id", "created_at").Where("id < ?", below).
			Order("id DESC").Limit(MaxFeedLimit).Find(&evs).Error; err != nil {
			return 0, core.DBError("events", err)
		}
		old := slices.IndexFunc(evs, func(e models.Event) bool { return now.Sub(e.CreatedAt) >= FeedGapWait })
		if old >= 0 {
			recent, anchor = append(recent, evs[:old]...), evs[old].ID
			break
		}
		recent = append(recent, evs...)
		if len(evs) < MaxFeedLimit {
			break
		}
		below = evs[len(evs)-1].ID
	}
	slices.Reverse(recent)
	_, last := listable(anchor, recent, now)
	return last, nil
}

// maxEventID is above every event id.
const maxEventID = 1<<63 - 1
