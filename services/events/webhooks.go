package events

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/couponsvc/couponsvc/services/core"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// WebhookInput is what an admin sets on an endpoint. On an update nil
// fields stay as they are.
type WebhookInput struct {
	URL *string
	// Secret signs the deliveries; at creation an empty one is made.
	Secret      *string
	EventTypes  []string
	Description *string
	Enabled     *bool
}

// CreatedWebhook is a new endpoint and its secret, shown this once.
type CreatedWebhook struct {
	Endpoint models.WebhookEndpoint `json:"endpoint"`
	Secret   string                 `json:"secret" doc:"signs every delivery (Couponsvc-Signature); shown only in this answer"`
}

// normalizeEventTypes checks an endpoint's event types and drops repeats.
func normalizeEventTypes(types []string) (models.EventTypeList, error) {
	seen := map[string]bool{}
	out := models.EventTypeList{}
	for _, t := range types {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		if !models.IsEventType(t) {
			return nil, models.Invalid("event_types", "%q is not an event type (see docs/events.md)", t)
		}
		seen[t] = true
		out = append(out, t)
	}
	return out, nil
}

// MinSecretChars is the least number of characters other than whitespace
// an endpoint's secret holds (docs/events.md).
const MinSecretChars = 16

// MaxSecretChars and MaxDescriptionChars bound an endpoint's secret and its
// description, in characters (as the OpenAPI document's maxLength counts
// them).
const (
	MaxSecretChars      = 200
	MaxDescriptionChars = 200
)

// checkSecret bounds an endpoint's secret: at most MaxSecretChars characters of single-line
// text, no whitespace at either end, and at least MinSecretChars characters
// that are not whitespace, so that a secret of spaces (or "a" and 15 spaces)
// signs nothing anyone could not guess.
func checkSecret(secret string) error {
	if utf8.RuneCountInString(secret) > MaxSecretChars {
		return models.Invalid("secret", "must be at most %d characters", MaxSecretChars)
	}
	if strings.TrimSpace(secret) != secret {
		return models.Invalid("secret", "must not start or end with whitespace")
	}
	n := 0
	for _, r := range secret {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	if n < MinSecretChars {
		return models.Invalid("secret", "must hold at least %d characters that are not whitespace", MinSecretChars)
	}
	return models.CheckText("secret", secret, models.SingleLine)
}

// CreateWebhook registers an endpoint, refusing a private address unless
// COUPON_WEBHOOK_ALLOW_PRIVATE is set (docs/events.md). It receives the
// events committed from now on. Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Events) CreateWebhook(ctx context.Context, actor string, in WebhookInput) (*CreatedWebhook, error) {
	w, err := s.checkWebhook(ctx, in)
	if err != nil {
		return nil, err
	}
	u, secret, types, desc := w.url, w.secret, w.types, w.desc
	now := s.Clock()
	ep := models.WebhookEndpoint{URL: u, Secret: secret, EventTypes: types, Description: desc, Enabled: true,
		CreatedBy: actor, CreatedAt: now, UpdatedAt: now}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&ep).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "webhook.create", fmt.Sprintf("webhook:%d", ep.ID), fmt.Sprintf("url=%q types=%q", u, types))
	})
	if err != nil {
		return nil, core.DBError("webhook", err)
	}
	s.endpoints.forget()
	return &CreatedWebhook{Endpoint: ep, Secret: secret}, nil
}

// checkedWebhook is a new endpoint's input once checked.
type checkedWebhook struct {
	url, secret, desc string
	types             models.EventTypeList
}

// CheckWebhook checks a new endpoint's input as CreateWebhook does, creating
// nothing: the console's form names every mistake in one answer
// (docs/result-codes.md, "fields"). Errors: CodeInvalidRequest, CodeUnavailable.
func (s *Events) CheckWebhook(ctx context.Context, in WebhookInput) error {
	_, err := s.checkWebhook(ctx, in)
	return err
}

// checkWebhook checks every field of a new endpoint, the error naming each
// one at fault; a fault (not a refusal) is returned as it is.
func (s *Events) checkWebhook(ctx context.Context, in WebhookInput) (checkedWebhook, error) {
	var w checkedWebhook
	var errs models.FieldErrors
	if in.URL == nil {
		errs.Add(models.Invalid("url", "is required"))
	} else {
		u, err := checkWebhookURL(ctx, *in.URL, s.cfg.WebhookAllowPrivate, s.cfg.Resolver)
		if err != nil && !models.IsCode(err, models.CodeInvalidRequest) {
			return w, err
		}
		errs.Add(err)
		w.url = u
	}
	w.secret = "whsec_" + rand.Text()
	if in.Secret != nil && *in.Secret != "" {
		err := checkSecret(*in.Secret)
		errs.Add(err)
		w.secret = *in.Secret
	}
	types, err := normalizeEventTypes(in.EventTypes)
	errs.Add(err)
	w.types = types
	if in.Description != nil {
		w.desc = strings.TrimSpace(*in.Description)
		if utf8.RuneCountInString(w.desc) > MaxDescriptionChars {
			errs.Add(models.Invalid("description", "must be at most %d characters", MaxDescriptionChars))
		} else {
			errs.Add(models.CheckText("description", w.desc, models.SingleLine))
		}
	}
	return w, errs.Err()
}

// ListWebhooks returns every endpoint, oldest first. Errors: CodeUnavailable.
func (s *Events) ListWebhooks(ctx context.Context) ([]models.WebhookEndpoint, error) {
	out := []models.WebhookEndpoint{}
	err := s.DB.WithContext(ctx).Order("id").Find(&out).Error
	return out, core.DBError("webhooks", err)
}

// GetWebhook returns one endpoint. Errors: CodeNotFound, CodeUnavailable.
func (s *Events) GetWebhook(ctx context.Context, id int64) (*models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := s.DB.WithContext(ctx).First(&ep, id).Error; err != nil {
		return nil, core.DBError(fmt.Sprintf("webhook %d", id), err)
	}
	return &ep, nil
}

// UpdateWebhook changes an endpoint's URL, secret, event types, description
// or whether it is enabled; enabling it again clears its failure time.
// Errors: CodeInvalidRequest, CodeNotFound, CodeUnavailable.
func (s *Events) UpdateWebhook(ctx context.Context, actor string, id int64, in WebhookInput) (*models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	var err error
	u := ""
	if in.URL != nil {
		if u, err = checkWebhookURL(ctx, *in.URL, s.cfg.WebhookAllowPrivate, s.cfg.Resolver); err != nil {
			return nil, err
		}
	}
	var types models.EventTypeList
	if in.EventTypes != nil {
		if types, err = normalizeEventTypes(in.EventTypes); err != nil {
			return nil, err
		}
	}
	if in.Secret != nil {
		if err := checkSecret(*in.Secret); err != nil {
			return nil, err
		}
	}
	now := s.Clock()
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.First(&ep, id).Error; err != nil {
			return err
		}
		if in.URL != nil {
			ep.URL = u
		}
		if in.EventTypes != nil {
			ep.EventTypes = types
		}
		if in.Secret != nil {
			ep.Secret = *in.Secret
		}
		if in.Description != nil {
			ep.Description = strings.TrimSpace(*in.Description)
			if err := models.CheckText("description", ep.Description, models.SingleLine); err != nil || utf8.RuneCountInString(ep.Description) > MaxDescriptionChars {
				return models.Invalid("description", "must be at most %d characters of text on one line", MaxDescriptionChars)
			}
		}
		if in.Enabled != nil && *in.Enabled != ep.Enabled {
			ep.Enabled = *in.Enabled
			ep.FailingSince = nil
			if ep.Enabled {
				ep.DisabledAt = nil
			} else {
				ep.DisabledAt = &now
			}
		}
		ep.UpdatedAt = now
		if err := tx.Save(&ep).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "webhook.update", fmt.Sprintf("webhook:%d", ep.ID),
			fmt.Sprintf("url=%q types=%q enabled=%t", ep.URL, ep.EventTypes, ep.Enabled))
	})
	if err != nil {
		return nil, core.DBError(fmt.Sprintf("webhook %d", id), err)
	}
	s.endpoints.forget()
	return &ep, nil
}

// DeleteWebhook removes an endpoint with its deliveries and their log.
// Errors: CodeNotFound, CodeUnavailable.
func (s *Events) DeleteWebhook(ctx context.Context, actor string, id int64) error {
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ep models.WebhookEndpoint
		if err := tx.First(&ep, id).Error; err != nil {
			return err
		}
		if err := tx.Where("endpoint_id = ?", id).Delete(&models.WebhookAttempt{}).Error; err != nil {
			return err
		}
		if err := tx.Where("endpoint_id = ?", id).Delete(&models.WebhookDelivery{}).Error; err != nil {
			return err
		}
		if err := tx.Delete(&ep).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "webhook.delete", fmt.Sprintf("webhook:%d", id), fmt.Sprintf("url=%q", ep.URL))
	})
	if err != nil {
		return core.DBError(fmt.Sprintf("webhook %d", id), err)
	}
	s.endpoints.forget()
	return nil
}

// ListWebhookAttempts returns a page of an endpoint's delivery log, newest
// first: the lines whose id is below before (0: from the newest), at most
// limit (1 to 1000; another: 100), and next, the before of the next page (0 on the last;
// docs/paging.md). Errors: CodeNotFound, CodeUnavailable.
func (s *Events) ListWebhookAttempts(ctx context.Context, id, before int64, limit int) (page []models.WebhookAttempt, next int64, err error) {
	if _, err := s.GetWebhook(ctx, id); err != nil {
		return nil, 0, err
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	q := s.DB.WithContext(ctx).Where("endpoint_id = ?", id)
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	page = []models.WebhookAttempt{}
	if err := q.Order("id DESC").Limit(limit + 1).Find(&page).Error; err != nil {
		return nil, 0, core.DBError("delivery log", err)
	}
	if len(page) > limit {
		page = page[:limit]
		next = page[limit-1].ID
	}
	return page, next, nil
}

// ResendDelivery sends a delivery again as soon as a dispatcher is free,
// with the same event (and id), whatever its state: a delivered one is sent
// once more, a failed one is retried for another period. Errors:
// CodeNotFound, CodeUnavailable.
func (s *Events) ResendDelivery(ctx context.Context, actor string, endpointID, deliveryID int64) (*models.WebhookDelivery, error) {
	var d models.WebhookDelivery
	now := s.Clock()
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND endpoint_id = ?", deliveryID, endpointID).First(&d).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.WebhookDelivery{}).Where("id = ?", d.ID).Updates(map[string]any{
			"state": models.DeliveryPending, "next_attempt_at": now, "first_attempt_at": nil, "updated_at": now,
		}).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "webhook.resend", fmt.Sprintf("webhook:%d", endpointID), fmt.Sprintf("delivery=%d event=%d", d.ID, d.EventID))
	})
	if err != nil {
		return nil, core.DBError(fmt.Sprintf("delivery %d", deliveryID), err)
	}
	d.State, d.NextAttemptAt, d.FirstAttemptAt, d.UpdatedAt = models.DeliveryPending, now, nil, now
	return &d, nil
}

// SendTestEvent writes a webhook.test event with one delivery, to endpoint
// id alone (whatever event types it takes, and even while it is disabled:
// the admin asked), sent by the dispatcher like any other, with an audit
// entry. Errors: CodeNotFound, CodeUnavailable.
func (s *Events) SendTestEvent(ctx context.Context, actor string, id int64) (*models.WebhookDelivery, error) {
	now := s.Clock()
	var d models.WebhookDelivery
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var ep models.WebhookEndpoint
		if err := tx.Where("id = ?", id).First(&ep).Error; err != nil {
			return err
		}
		data, err := json.Marshal(models.WebhookTestEvent{EndpointID: id, Actor: actor,
			Message: "A test delivery asked for by " + actor + ": nothing changed."})
		if err != nil {
			return err
		}
		ev := models.Event{Type: models.EventWebhookTest, CreatedAt: now, Data: data}
		if err := tx.Create(&ev).Error; err != nil {
			return err
		}
		d = models.WebhookDelivery{EndpointID: id, EventID: ev.ID, State: models.DeliveryPending,
			NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(&d).Error; err != nil {
			return err
		}
		return s.Audit(tx, actor, "webhook.test", fmt.Sprintf("webhook:%d", id), fmt.Sprintf("delivery=%d event=%d", d.ID, ev.ID))
	})
	if err != nil {
		return nil, core.DBError(fmt.Sprintf("webhook %d", id), err)
	}
	return &d, nil
}

// EventPayloads returns the data of the events ids by id, as sent in their
// deliveries (an event pruned by retention is missing). Errors:
// CodeUnavailable.
func (s *Events) EventPayloads(ctx context.Context, ids []int64) (map[int64]json.RawMessage, error) {
	out := map[int64]json.RawMessage{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []models.Event
	if err := s.DB.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, core.DBError("events", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Data
	}
	return out, nil
}
