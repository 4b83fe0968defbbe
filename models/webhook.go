package models

import (
	"crypto/hmac"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WebhookEndpoint is a receiver admins registered (docs/events.md). An empty
// EventTypes takes every type.
type WebhookEndpoint struct {
	ID          int64         `gorm:"primaryKey" json:"id"`
	URL         string        `gorm:"column:url" json:"url"`
	Secret      string        `json:"-"`
	EventTypes  EventTypeList `json:"event_types" doc:"the event types the endpoint takes; empty = every type"`
	Description string        `json:"description"`
	Enabled     bool          `json:"enabled"`
	// FailingSince is the time of the first failed delivery since the last
	// success; an endpoint failing for the retry period is disabled.
	FailingSince *time.Time `json:"failing_since,omitempty"`
	DisabledAt   *time.Time `json:"disabled_at,omitempty"`
	CreatedBy    string     `json:"created_by"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// EventTypeList is a list of event types: a JSON array in the API (in and
// out), one comma-joined column in the database.
type EventTypeList []string

// Value stores the list as its comma-joined types.
func (l EventTypeList) Value() (driver.Value, error) { return strings.Join(l, ","), nil }

// Scan reads the comma-joined column.
func (l *EventTypeList) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("event_types: cannot read %T", src)
	}
	*l = EventTypeList{} // every type: [] in JSON, never null
	if s != "" {
		*l = strings.Split(s, ",")
	}
	return nil
}

// String is the list as the pages show it: "a, b".
func (l EventTypeList) String() string { return strings.Join(l, ", ") }

// Wants reports whether the endpoint takes events of type typ.
func (e *WebhookEndpoint) Wants(typ string) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, typ)
}

// The states of a webhook delivery (docs/events.md).
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed" // retried for the whole retry period, given up
)

// WebhookDelivery is one event on its way to one endpoint: written in the
// event's transaction, leased by one dispatcher at a time.
type WebhookDelivery struct {
	ID             int64      `gorm:"primaryKey" json:"id"`
	EndpointID     int64      `json:"endpoint_id"`
	EventID        int64      `json:"event_id"`
	State          string     `json:"state"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  time.Time  `json:"next_attempt_at"`
	FirstAttemptAt *time.Time `json:"first_attempt_at,omitempty"`
	LastAttemptAt  *time.Time `json:"last_attempt_at,omitempty"`
	LastStatusCode int        `json:"last_status_code"`
	LeaseToken     *string    `json:"-"`
	LeaseUntil     *time.Time `json:"-"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// WebhookAttempt is one try of a delivery: a line of the delivery log.
type WebhookAttempt struct {
	ID          int64     `gorm:"primaryKey" json:"id"`
	DeliveryID  int64     `json:"delivery_id"`
	EndpointID  int64     `json:"endpoint_id"`
	EventID     int64     `json:"event_id"`
	EventType   string    `json:"event_type"`
	AttemptedAt time.Time `json:"attempted_at"`
	OK          bool      `gorm:"column:ok" json:"ok"`
	StatusCode  int       `json:"status_code" doc:"the receiver's HTTP status; 0 when it did not answer"`
	DurationMS  int64     `gorm:"column:duration_ms" json:"duration_ms"`
	Error       string    `json:"error,omitempty"`
}

// SignatureHeader is the header that carries a delivery's signature.
const SignatureHeader = "Couponsvc-Signature"

// VerifyWebhook checks a Couponsvc-Signature header against body and secret
// and that its time is within tolerance of now, as a receiver does (the
// README shows the same steps without this package). The service signs with
// client/webhook's Sign; this is the tests' independent check of it.
func VerifyWebhook(secret, header string, body []byte, now time.Time, tolerance time.Duration) bool {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}
