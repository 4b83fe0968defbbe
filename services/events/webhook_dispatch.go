package events

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/client/webhook"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"gorm.io/gorm"
)

// The retry schedule of a failed delivery (docs/events.md, Retries): the
// n-th failure waits webhookBackoffBase·2^(n-1), at most webhookBackoffMax,
// of which a random half (jitter) so that the retries of many deliveries
// spread out; retried until RetryFor after its first try.
const (
	webhookBackoffBase = 30 * time.Second
	webhookBackoffMax  = 6 * time.Hour
	// dispatchBatch bounds the deliveries one pass leases.
	dispatchBatch = 100
	// answerLogBytes bounds what is read of a receiver's answer.
	answerLogBytes = 1024
)

// WebhookBackoff is the wait after the attempt-th failed try of a delivery;
// rnd in [0, 1) picks the jitter.
func WebhookBackoff(attempt int, rnd float64) time.Duration {
	d := webhookBackoffMax
	if attempt < 20 {
		if e := webhookBackoffBase << (attempt - 1); e < d {
			d = e
		}
	}
	return d/2 + time.Duration(rnd*float64(d/2))
}

// RunDispatcher sends the due webhook deliveries until ctx ends: at once
// after a pass that found work, else every DispatchInterval. Every instance
// runs one; leases keep them from sending one delivery twice.
func (s *Events) RunDispatcher(ctx context.Context) {
	for {
		n, err := s.DispatchOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("webhook dispatch", "err", err)
		}
		if n > 0 && err == nil && ctx.Err() == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.DispatchInterval):
		}
	}
}

// leased is one delivery this pass holds, with its event and endpoint.
type leased struct {
	d     models.WebhookDelivery
	ev    models.Event
	ep    models.WebhookEndpoint
	token string
}

// DispatchOnce leases the due deliveries of enabled endpoints (at most
// dispatchBatch), sends them, WebhookWorkers at a time, and records each
// outcome. It returns how many it sent. A delivery is leased with a guarded
// UPDATE (state pending, due, lease free or lapsed), so that of several
// instances exactly one takes it; a lease lapses after WebhookLease, so
// that a delivery whose sender died is sent again. Errors: CodeUnavailable.
func (s *Events) DispatchOnce(ctx context.Context) (int, error) {
	batch, err := s.leaseDeliveries(ctx)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	outs := make([]outcome, len(batch))
	sem := make(chan struct{}, s.cfg.WebhookWorkers)
	var wg sync.WaitGroup
	for i := range batch {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			outs[i] = s.send(ctx, &batch[i])
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0, nil // shutting down: the leases lapse and another pass sends them again
	}
	return len(batch), s.recordOutcomes(context.WithoutCancel(ctx), batch, outs)
}

// leaseDeliveries takes the due deliveries for this pass.
func (s *Events) leaseDeliveries(ctx context.Context) ([]leased, error) {
	now := s.Clock()
	db := s.DB.WithContext(ctx)
	var ids []int64
	err := db.Table("webhook_deliveries").
		Joins("JOIN webhook_endpoints ON webhook_endpoints.id = webhook_deliveries.endpoint_id AND webhook_endpoints.enabled = ?", true).
		Where("webhook_deliveries.state = ? AND webhook_deliveries.next_attempt_at <= ?", models.DeliveryPending, now).
		Where("webhook_deliveries.lease_until IS NULL OR webhook_deliveries.lease_until < ?", now).
		Order("webhook_deliveries.id").Limit(dispatchBatch).Pluck("webhook_deliveries.id", &ids).Error
	if err != nil || len(ids) == 0 {
		return nil, core.DBError("webhook deliveries", err)
	}
	token := rand.Text()
	until := now.Add(s.cfg.WebhookLease)
	if err := db.Exec(`UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?
		WHERE id IN ? AND state = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)`,
		token, until, ids, models.DeliveryPending, now, now).Error; err != nil {
		return nil, core.DBError("webhook deliveries", err)
	}
	var ds []models.WebhookDelivery
	if err := db.Where("lease_token = ?", token).Order("id").Find(&ds).Error; err != nil {
		return nil, core.DBError("webhook deliveries", err)
	}
	if len(ds) == 0 {
		return nil, nil
	}
	evIDs := make([]int64, 0, len(ds))
	epIDs := map[int64]bool{}
	for _, d := range ds {
		evIDs = append(evIDs, d.EventID)
		epIDs[d.EndpointID] = true
	}
	var evs []models.Event
	if err := db.Where("id IN ?", evIDs).Find(&evs).Error; err != nil {
		return nil, core.DBError("events", err)
	}
	var eps []models.WebhookEndpoint
	if err := db.Where("id IN ?", keysOf(epIDs)).Find(&eps).Error; err != nil {
		return nil, core.DBError("webhooks", err)
	}
	evByID := map[int64]models.Event{}
	for _, e := range evs {
		evByID[e.ID] = e
	}
	epByID := map[int64]models.WebhookEndpoint{}
	for _, e := range eps {
		epByID[e.ID] = e
	}
	out := make([]leased, 0, len(ds))
	for _, d := range ds {
		ev, okEv := evByID[d.EventID]
		ep, okEp := epByID[d.EndpointID]
		if !okEv || !okEp {
			continue // pruned or deleted meanwhile: nothing to send
		}
		out = append(out, leased{d: d, ev: ev, ep: ep, token: token})
	}
	return out, nil
}

func keysOf(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// outcome is how one try of a delivery went.
type outcome struct {
	at       time.Time // the service's clock when it was sent
	ok       bool
	code     int // the receiver's status, 0 when it did not answer
	duration time.Duration
	err      string
}

// send posts the event to the endpoint, signed, and says how it went: a 2xx
// answer within WebhookTimeout is a success.
func (s *Events) send(ctx context.Context, l *leased) (o outcome) {
	o.at = s.Clock()
	start := time.Now()
	defer func() { o.duration = time.Since(start) }()
	body, err := json.Marshal(l.ev)
	if err != nil {
		o.err = err.Error()
		return o
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.ep.URL, bytes.NewReader(body))
	if err != nil {
		o.err = truncate(err.Error(), 500)
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "couponsvc-webhooks/1")
	// The receivers' own signer (client/webhook), so that what is sent is
	// what they verify (docs/events.md).
	req.Header.Set(webhook.Header, webhook.Sign(l.ep.Secret, o.at, body))
	resp, err := s.webhookClient.Do(req)
	if err != nil {
		o.err = truncate(err.Error(), 500)
		return o
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, answerLogBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	o.code = resp.StatusCode
	o.ok = resp.StatusCode >= 200 && resp.StatusCode < 300
	if !o.ok {
		o.err = truncate(fmt.Sprintf("answered %s: %s", resp.Status, answer), 500)
	}
	return o
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// recordOutcomes writes a pass's tries in the delivery log and each
// delivery's new state, in one transaction (one commit for the whole pass,
// so that webhooks cost the claims little): delivered; or retried after
// WebhookBackoff; or, tried for RetryFor, failed. An endpoint that has
// failed every try for RetryFor is disabled, with an audit entry. The
// updates are guarded by the lease, so that a sender whose lease lapsed (and
// whose delivery another took) does not overwrite the other's outcome.
func (s *Events) recordOutcomes(ctx context.Context, batch []leased, outs []outcome) error {
	now := s.Clock()
	token := batch[0].token
	var disabled []int64
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		log := make([]*models.WebhookAttempt, len(batch))
		delivered := map[int][]int64{} // answer code → deliveries
		// Per endpoint: the time of its first failure this pass, and whether
		// any try succeeded.
		failedAt := map[int64]time.Time{}
		succeeded := map[int64]bool{}
		for i, l := range batch {
			o := outs[i]
			log[i] = &models.WebhookAttempt{DeliveryID: l.d.ID, EndpointID: l.d.EndpointID, EventID: l.d.EventID, EventType: l.ev.Type,
				AttemptedAt: o.at, OK: o.ok, StatusCode: o.code, DurationMS: o.duration.Milliseconds(), Error: o.err}
			if o.ok {
				delivered[o.code] = append(delivered[o.code], l.d.ID)
				succeeded[l.d.EndpointID] = true
				continue
			}
			if t, seen := failedAt[l.d.EndpointID]; !seen || o.at.Before(t) {
				failedAt[l.d.EndpointID] = o.at
			}
			first := o.at
			if l.d.FirstAttemptAt != nil {
				first = *l.d.FirstAttemptAt
			}
			set := map[string]any{"attempts": gorm.Expr("attempts + 1"), "first_attempt_at": first, "last_attempt_at": o.at,
				"last_status_code": o.code, "lease_token": nil, "lease_until": nil, "updated_at": now}
			if now.Sub(first) >= s.cfg.WebhookRetryFor {
				set["state"] = models.DeliveryFailed
			} else {
				set["next_attempt_at"] = now.Add(WebhookBackoff(l.d.Attempts+1, s.cfg.Jitter()))
			}
			if err := tx.Model(&models.WebhookDelivery{}).Where("id = ? AND lease_token = ?", l.d.ID, token).Updates(set).Error; err != nil {
				return err
			}
		}
		if err := tx.Create(&log).Error; err != nil {
			return err
		}
		// One statement per answer code (usually one) for the successes.
		for code, ids := range delivered {
			if err := tx.Exec(`UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1,
				first_attempt_at = COALESCE(first_attempt_at, ?), last_attempt_at = ?, last_status_code = ?,
				lease_token = NULL, lease_until = NULL, updated_at = ? WHERE id IN ? AND lease_token = ?`,
				models.DeliveryDelivered, now, now, code, now, ids, token).Error; err != nil {
				return err
			}
		}
		for id := range succeeded {
			if err := tx.Model(&models.WebhookEndpoint{}).Where("id = ? AND failing_since IS NOT NULL", id).
				Update("failing_since", nil).Error; err != nil {
				return err
			}
		}
		for id, at := range failedAt {
			if succeeded[id] {
				continue
			}
			off, err := s.endpointFailed(tx, id, at, now)
			if err != nil {
				return err
			}
			if off {
				disabled = append(disabled, id)
			}
		}
		return nil
	})
	if err != nil {
		return core.DBError("webhook deliveries", err)
	}
	if len(disabled) > 0 {
		s.endpoints.forget()
		s.Log.Warn("webhook endpoints disabled after failing for the retry period", "webhooks", disabled)
	}
	return nil
}

// endpointFailed notes a failed try of endpoint id at at, inside tx: the
// start of its failures, or, when it has failed for RetryFor, its disabling
// with an audit entry. It reports whether it disabled the endpoint.
func (s *Events) endpointFailed(tx *gorm.DB, id int64, at, now time.Time) (bool, error) {
	var ep models.WebhookEndpoint
	if err := tx.First(&ep, id).Error; err != nil {
		return false, err
	}
	if ep.FailingSince == nil {
		return false, tx.Model(&models.WebhookEndpoint{}).Where("id = ? AND failing_since IS NULL", id).Update("failing_since", at).Error
	}
	if !ep.Enabled || now.Sub(*ep.FailingSince) < s.cfg.WebhookRetryFor {
		return false, nil
	}
	r := tx.Model(&models.WebhookEndpoint{}).Where("id = ? AND enabled = ?", id, true).
		Updates(map[string]any{"enabled": false, "disabled_at": now, "updated_at": now})
	if r.Error != nil || r.RowsAffected == 0 {
		return false, r.Error
	}
	return true, s.Audit(tx, "webhook-dispatcher", "webhook.disable", fmt.Sprintf("webhook:%d", id),
		fmt.Sprintf("url=%q failing_since=%s", ep.URL, core.FormatTime(*ep.FailingSince)))
}
