package services_test

import (
	"context"
	"testing"
	"time"

	"couponsvc/services"
)

// TestEmbeddedRedisExpires checks that keys with a TTL expire on the embedded
// default's in-process Redis, as they would on a real one: locks, idempotency
// keys and rate limits depend on it.
func TestEmbeddedRedisExpires(t *testing.T) {
	ctx := context.Background()
	b, err := services.OpenBackends(ctx, services.BackendConfig{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Redis.Set(ctx, "lock", "1", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	if n := b.Redis.Exists(ctx, "lock").Val(); n != 1 {
		t.Fatalf("key missing right after SET: %d", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Redis.Exists(ctx, "lock").Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("a key with a 300 ms TTL still exists after 5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
