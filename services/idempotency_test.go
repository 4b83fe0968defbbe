package services_test

import (
	"context"
	"testing"

	"couponsvc/services"
	"couponsvc/services/core"
	"couponsvc/services/testenv"
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
