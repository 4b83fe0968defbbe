package faulttest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/models"
)

// TestKillMidDelivery: couponsvc is killed with SIGKILL while webhook
// deliveries are in flight (the receiver holds its first answers back).
// Nothing is lost: after the restart, once the dead instance's leases lapse,
// every event of the outbox reaches the receiver at least once, each with a
// valid signature.
func TestKillMidDelivery(t *testing.T) {
	ps := newProcs(t, "COUPON_WEBHOOK_ALLOW_PRIVATE=1", "COUPON_WEBHOOK_LEASE=15s")

	var mu sync.Mutex
	got := map[int64]int{}
	badSig := 0
	secret := ""
	held := make(chan struct{}, 100)
	release := make(chan struct{})
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case held <- struct{}{}:
			<-release // in flight when the service dies
		default:
		}
		var ev models.Event
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		if !models.VerifyWebhook(secret, r.Header.Get(models.SignatureHeader), body, time.Now(), 5*time.Minute) {
			badSig++
		}
		got[ev.ID]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	// Only the first few answers are held: the rest are answered at once.
	for range cap(held) - 4 {
		held <- struct{}{}
	}

	p1, admin := ps.start("couponsvc#1")
	status := 0
	hook, err := admin.CreateWebhook(context.Background(), client.CreateWebhookRequest{URL: rcv.URL + "/hook"}, client.Status(&status))
	wantStatus(t, "create the webhook", status, err, 201)
	mu.Lock()
	secret = hook.Secret
	mu.Unlock()
	tmpls := []*tmplSpec{{stock: 40, limit: 1, policy: models.RefundRestore}}
	app := setUp(t, admin, 0, tmpls)
	claimEach(t, app, tmpls[0].id, 30, "kw")
	// Wait until deliveries hang in flight, then kill.
	deadline := time.Now().Add(30 * time.Second)
	for len(held) < cap(held) {
		if time.Now().After(deadline) {
			t.Fatalf("no delivery reached the receiver within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p1.kill()
	close(release)
	mu.Lock()
	before := len(got)
	mu.Unlock()

	restart := time.Now()
	_, admin2 := ps.start("couponsvc#2")
	feed, err := admin2.ListEvents(context.Background(), client.ListEventsParams{After: client.Ptr[int64](0), Limit: client.Ptr[int64](1000)},
		client.Status(&status))
	wantStatus(t, "the events", status, err, 200)
	var ids []int64
	for _, e := range feed.Events {
		ids = append(ids, e.ID)
	}
	if len(ids) != 30 {
		t.Fatalf("the outbox holds %d events, want the 30 claims", len(ids))
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		missing := 0
		for _, id := range ids {
			if got[id] == 0 {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never delivered after the restart", missing, len(ids))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	repeats := 0
	for _, n := range got {
		repeats += n - 1
	}
	if badSig != 0 || len(got) != len(ids) {
		t.Fatalf("%d bad signatures, %d distinct events received; want 0 and %d", badSig, len(got), len(ids))
	}
	report(t, "events=%d received_before_kill=%d delivered_after_restart_within=%s repeats=%d",
		len(ids), before, time.Since(restart).Round(100*time.Millisecond), repeats)
}
