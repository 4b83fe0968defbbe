package services_test

import (
	"context"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// TestIdempotentAnswerLifecycle: the first Begin runs; a second sees it
// running; once finished, a Begin sees the answer; after an abort (a
// fault) the next Begin runs again. Another instance sees the same.
func TestIdempotentAnswerLifecycle(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	a, b := env.Service, env.NewService(services.Config{})

	if prev, began, err := a.BeginIdempotent(ctx, "scope-1", "hash-1"); err != nil || !began || prev != nil {
		t.Fatalf("first begin: %v %v %v, want began", prev, began, err)
	}
	if prev, began, err := b.BeginIdempotent(ctx, "scope-1", "hash-1"); err != nil || began || prev == nil || prev.Done || prev.Hash != "hash-1" {
		t.Fatalf("begin while running: %+v %v %v, want the running one", prev, began, err)
	}
	answer := core.IdempotentAnswer{Hash: "hash-1", Status: 201, ContentType: "application/json", Body: []byte(`{"code":0,"result":"ok"}`)}
	if err := a.FinishIdempotent(ctx, "scope-1", answer); err != nil {
		t.Fatal(err)
	}
	prev, began, err := b.BeginIdempotent(ctx, "scope-1", "hash-1")
	if err != nil || began || !prev.Done || prev.Status != 201 || string(prev.Body) != string(answer.Body) || prev.ContentType != "application/json" {
		t.Fatalf("begin after finish: %+v %v %v, want the answer", prev, began, err)
	}

	if _, began, _ := a.BeginIdempotent(ctx, "scope-2", "hash-2"); !began {
		t.Fatal("another scope did not begin")
	}
	if err := a.AbortIdempotent(ctx, "scope-2"); err != nil {
		t.Fatal(err)
	}
	if prev, began, err := b.BeginIdempotent(ctx, "scope-2", "hash-2"); err != nil || !began || prev != nil {
		t.Fatalf("begin after an abort: %+v %v %v, want began again", prev, began, err)
	}
	ttl, err := env.Backends.Redis.TTL(ctx, a.Keys.IdempotentAnswer("scope-1")).Result()
	if err != nil || ttl <= core.IdempotentAnswerTTL-core.IdempotentAnswerTTL/100 || ttl > core.IdempotentAnswerTTL {
		t.Fatalf("ttl %v (%v), want about %v", ttl, err, core.IdempotentAnswerTTL)
	}
}

// TestIdempotentLease: the running marker lives one lease; a request that
// keeps running renews it (another instance sees it running past several
// leases); a marker left by a crashed request (begun, never kept, finished
// or aborted) is free within the lease, where it used to answer
// in_progress for a day; a finished answer lives its full TTL.
func TestIdempotentLease(t *testing.T) {
	const lease = 600 * time.Millisecond
	env := testenv.New(t, services.Config{CoreConfig: services.CoreConfig{IdempotencyLease: lease}})
	ctx := context.Background()
	a, b := env.Service, env.NewService(services.Config{CoreConfig: services.CoreConfig{IdempotencyLease: lease}})
	// wait lets d pass on either backend: miniredis counts time only when told.
	wait := func(d time.Duration) {
		time.Sleep(d)
		if env.Mini != nil {
			env.Mini.FastForward(d)
		}
	}

	// A crash: the marker as Begin writes it, and nothing after.
	if _, began, err := a.BeginIdempotent(ctx, "crashed", "hash-1"); err != nil || !began {
		t.Fatalf("first begin: %v %v", began, err)
	}
	ttl, err := env.Backends.Redis.PTTL(ctx, a.Keys.IdempotentAnswer("crashed")).Result()
	if err != nil || ttl <= 0 || ttl > lease {
		t.Fatalf("the running marker's ttl: %v (%v), want at most the lease %v", ttl, err, lease)
	}
	if prev, began, err := b.BeginIdempotent(ctx, "crashed", "hash-1"); err != nil || began || prev.Done {
		t.Fatalf("begin within the lease: %+v %v %v, want running", prev, began, err)
	}
	wait(lease + 100*time.Millisecond)
	if prev, began, err := b.BeginIdempotent(ctx, "crashed", "hash-1"); err != nil || !began || prev != nil {
		t.Fatalf("begin after the lease of a crashed request: %+v %v %v, want began", prev, began, err)
	}

	// A long request: kept past three leases, then finished.
	if _, began, err := a.BeginIdempotent(ctx, "long", "hash-2"); err != nil || !began {
		t.Fatalf("begin: %v %v", began, err)
	}
	stop := a.KeepIdempotent(ctx, "long")
	for range 3 * lease / (100 * time.Millisecond) {
		wait(100 * time.Millisecond)
	}
	if prev, began, err := b.BeginIdempotent(ctx, "long", "hash-2"); err != nil || began || prev.Done {
		stop()
		t.Fatalf("begin while a kept request runs past its lease: %+v %v %v, want running", prev, began, err)
	}
	stop()
	answer := core.IdempotentAnswer{Hash: "hash-2", Status: 201, ContentType: "application/json", Body: []byte(`{"code":0,"result":"held"}`)}
	if err := a.FinishIdempotent(ctx, "long", answer); err != nil {
		t.Fatal(err)
	}
	wait(lease + 100*time.Millisecond)
	if prev, began, err := b.BeginIdempotent(ctx, "long", "hash-2"); err != nil || began || !prev.Done || string(prev.Body) != string(answer.Body) {
		t.Fatalf("begin after the finish: %+v %v %v, want the answer", prev, began, err)
	}
	if ttl, err := env.Backends.Redis.TTL(ctx, a.Keys.IdempotentAnswer("long")).Result(); err != nil || ttl <= core.IdempotentAnswerTTL-time.Minute {
		t.Fatalf("the answer's ttl: %v (%v), want about %v", ttl, err, core.IdempotentAnswerTTL)
	}
}
