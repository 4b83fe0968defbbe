package services

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

	"couponsvc/models"

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

// webhookBackoff is the wait after the attempt-th failed try of a delivery;
// rnd in [0, 1) picks the jitter.
func webhookBackoff(attempt int, rnd float64) time.Duration {
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
func (s *Service) RunDispatcher(ctx context.Context) {
	for {
		n, err := s.DispatchOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("webhook dispatch", "err", err)
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
func (s *Service) DispatchOnce(ctx context.Context) (int, error) {
	batch, err := s.leaseDeliveries(ctx)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	sem := make(chan struct{}, s.cfg.WebhookWorkers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range batch {
		sem <- struct{}{}
		wg.Add(1)
		go func(l *leased) {
			defer func() { <-sem; wg.Done() }()
			o := s.send(ctx, l)
			if ctx.Err() != nil {
				return // shutting down: the lease lapses and another pass sends it again
			}
			if err := s.recordAttempt(context.WithoutCancel(ctx), l, o); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(&batch[i])
	}
	wg.Wait()
	return len(batch), firstErr
}

// leaseDeliveries takes the due deliveries for this pass.
func (s *Service) leaseDeliveries(ctx context.Context) ([]leased, error) {
	now := s.now()
	db := s.db.WithContext(ctx)
	var ids []int64
	err := db.Table("webhook_deliveries").
		Joins("JOIN webhook_endpoints ON webhook_endpoints.id = webhook_deliveries.endpoint_id AND webhook_endpoints.enabled = ?", true).
		Where("webhook_deliveries.state = ? AND webhook_deliveries.next_attempt_at <= ?", models.DeliveryPending, now).
		Where("webhook_deliveries.lease_until IS NULL OR webhook_deliveries.lease_until < ?", now).
		Order("webhook_deliveries.id").Limit(dispatchBatch).Pluck("webhook_deliveries.id", &ids).Error
	if err != nil || len(ids) == 0 {
		return nil, dbError("webhook deliveries", err)
	}
	token := rand.Text()
	until := now.Add(s.cfg.WebhookLease)
	if err := db.Exec(`UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?
		WHERE id IN ? AND state = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)`,
		token, until, ids, models.DeliveryPending, now, now).Error; err != nil {
		return nil, dbError("webhook deliveries", err)
	}
	var ds []models.WebhookDelivery
	if err := db.Where("lease_token = ?", token).Order("id").Find(&ds).Error; err != nil {
		return nil, dbError("webhook deliveries", err)
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
		return nil, dbError("events", err)
	}
	var eps []models.WebhookEndpoint
	if err := db.Where("id IN ?", keysOf(epIDs)).Find(&eps).Error; err != nil {
		return nil, dbError("webhooks", err)
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
func (s *Service) send(ctx context.Context, l *leased) (o outcome) {
	o.at = s.now()
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
	req.Header.Set(models.SignatureHeader, models.SignWebhook(l.ep.Secret, o.at, body))
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

// recordAttempt writes an attempt's line in the delivery log and the
// delivery's new state, in one transaction: delivered; or retried after
// webhookBackoff; or, tried for RetryFor, failed. An endpoint that has failed
// every try for RetryFor is disabled, with an audit entry. The updates are
// guarded by the lease, so that a sender whose lease lapsed (and whose
// delivery another took) does not overwrite the other's outcome.
func (s *Service) recordAttempt(ctx context.Context, l *leased, o outcome) error {
	now := s.now()
	at, ok, code, errText := o.at, o.ok, o.code, o.err
	d := l.d
	disabled := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&models.WebhookAttempt{DeliveryID: d.ID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: l.ev.Type,
			AttemptedAt: at, OK: ok, StatusCode: code, DurationMS: o.duration.Milliseconds(), Error: errText}).Error; err != nil {
			return err
		}
		first := at
		if d.FirstAttemptAt != nil {
			first = *d.FirstAttemptAt
		}
		set := map[string]any{"attempts": gorm.Expr("attempts + 1"), "first_attempt_at": first, "last_attempt_at": at,
			"last_status_code": code, "lease_token": nil, "lease_until": nil, "updated_at": now}
		switch {
		case ok:
			set["state"] = models.DeliveryDelivered
		case now.Sub(first) >= s.cfg.WebhookRetryFor:
			set["state"] = models.DeliveryFailed
		default:
			set["next_attempt_at"] = now.Add(webhookBackoff(d.Attempts+1, s.cfg.Rand()))
		}
		r := tx.Model(&models.WebhookDelivery{}).Where("id = ? AND lease_token = ?", d.ID, l.token).Updates(set)
		if r.Error != nil {
			return r.Error
		}
		if ok {
			return tx.Model(&models.WebhookEndpoint{}).Where("id = ? AND failing_since IS NOT NULL", d.EndpointID).
				Update("failing_since", nil).Error
		}
		var ep models.WebhookEndpoint
		if err := tx.First(&ep, d.EndpointID).Error; err != nil {
			return err
		}
		if ep.FailingSince == nil {
			return tx.Model(&models.WebhookEndpoint{}).Where("id = ? AND failing_since IS NULL", ep.ID).Update("failing_since", at).Error
		}
		if !ep.Enabled || now.Sub(*ep.FailingSince) < s.cfg.WebhookRetryFor {
			return nil
		}
		r = tx.Model(&models.WebhookEndpoint{}).Where("id = ? AND enabled = ?", ep.ID, true).
			Updates(map[string]any{"enabled": false, "disabled_at": now, "updated_at": now})
		if r.Error != nil || r.RowsAffected == 0 {
			return r.Error
		}
		disabled = true
		return s.audit(tx, "webhook-dispatcher", "webhook.disable", fmt.Sprintf("webhook:%d", ep.ID),
			fmt.Sprintf("url=%q failing_since=%s last_status_code=%d last_error=%q", ep.URL, formatTime(*ep.FailingSince), code, errText))
	})
	if err != nil {
		return dbError("webhook delivery", err)
	}
	if disabled {
		s.endpoints.forget()
		s.log.Warn("webhook endpoint disabled after failing for the retry period", "webhook", d.EndpointID)
	}
	return nil
}
