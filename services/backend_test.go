package services_test

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/redis/go-redis/v9"
)

// TestEmbeddedRedisExpires checks that keys with a TTL expire on the embedded
// default's in-process Redis, as they would on a real one: locks, idempotency
// keys and rate limits depend on it.
func TestEmbeddedRedisExpires(t *testing.T) {
	ctx := context.Background()
	b, err := core.OpenBackends(ctx, core.BackendConfig{DataDir: t.TempDir()})
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

// TestEmbeddedRedisNeedsPassword checks that the embedded default's Redis
// refuses a connection that does not know the password the service made at
// start, while the service's own client works.
func TestEmbeddedRedisNeedsPassword(t *testing.T) {
	ctx := context.Background()
	b, err := core.OpenBackends(ctx, core.BackendConfig{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	svc := services.New(b, services.Config{})
	defer svc.Close()
	if err := svc.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
	if err := b.Redis.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("the service's client: %v", err)
	}

	// A local process that found the port: every command is refused.
	conn, err := net.Dial("tcp", b.Embedded.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, cmd := range [][]string{{"PING"}, {"GET", "k"}, {"SET", "k", "w"}, {"KEYS", "*"}, {"EVAL", "return 1", "0"}} {
		req := "*" + strconv.Itoa(len(cmd)) + "\r\n"
		for _, a := range cmd {
			req += "$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n"
		}
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line != "-NOAUTH Authentication required.\r\n" {
			t.Errorf("%s without a password: %q, want NOAUTH", cmd, line)
		}
	}
	// A guessed password is refused too.
	other := redis.NewClient(&redis.Options{Addr: b.Embedded.Addr(), Password: "secret"})
	defer other.Close()
	if err := other.Set(ctx, "k", "w", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Errorf("SET with a wrong password: %v, want WRONGPASS", err)
	}
	if v := b.Redis.Get(ctx, "k").Val(); v != "v" {
		t.Fatalf("k = %q after the other clients, want v", v)
	}
}
