package services_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/redis/go-redis/v9"
)

// allowN calls allow n times and counts the claims let through and refused;
// any other answer fails the test.
func allowN(t *testing.T, n int, allow func() error) (passed, limited int, last error) {
	t.Helper()
	for range n {
		err := allow()
		switch {
		case err == nil:
			passed++
		case models.IsCode(err, models.CodeRateLimited):
			limited++
			last = err
		default:
			t.Fatalf("limiter answered %v", err)
		}
	}
	return passed, limited, last
}

func TestRateLimiter(t *testing.T) {
	ctx := context.Background()
	env := testenv.New(t, services.Config{})

	t.Run("UserLimitHitsAtTheCount", func(t *testing.T) {
		l := env.Service.NewRateLimiter(core.ClaimLimits{PerUser: 5})
		passed, limited, last := allowN(t, 6, func() error { return l.AllowUser(ctx, "user-exact") })
		if passed != 5 || limited != 1 {
			t.Fatalf("5/min: %d passed, %d limited; want 5 and 1", passed, limited)
		}
		var e *models.Error
		if !errors.As(last, &e) || e.RetryAfterSeconds < 1 || e.RetryAfterSeconds > 12 {
			t.Fatalf("refusal %v: want Retry-After between 1 and 12 s (one claim every 12 s)", last)
		}
		if err := l.AllowUser(ctx, "user-other"); err != nil {
			t.Fatalf("another user shares the budget: %v", err)
		}
	})

	t.Run("AddrLimitHitsAtTheCount", func(t *testing.T) {
		l := env.Service.NewRateLimiter(core.ClaimLimits{PerAddr: 3})
		passed, limited, _ := allowN(t, 10, func() error { return l.AllowAddr(ctx, "192.0.2.7") })
		if passed != 3 || limited != 7 {
			t.Fatalf("3/min: %d passed, %d limited; want 3 and 7", passed, limited)
		}
		if err := l.AllowAddr(ctx, "192.0.2.8"); err != nil {
			t.Fatalf("another address shares the budget: %v", err)
		}
	})

	t.Run("IPv6SharesItsSlash64", func(t *testing.T) {
		l := env.Service.NewRateLimiter(core.ClaimLimits{PerAddr: 2})
		for i, addr := range []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"} {
			if err := l.AllowAddr(ctx, addr); err != nil {
				t.Fatalf("claim %d from %s: %v", i+1, addr, err)
			}
		}
		if err := l.AllowAddr(ctx, "2001:db8:1:2:abcd::1"); !models.IsCode(err, models.CodeRateLimited) {
			t.Fatalf("third claim from the same /64: %v, want rate_limited", err)
		}
		if err := l.AllowAddr(ctx, "2001:db8:1:3::1"); err != nil {
			t.Fatalf("another /64 shares the budget: %v", err)
		}
	})

	t.Run("ZeroTurnsALimitOff", func(t *testing.T) {
		l := env.Service.NewRateLimiter(core.ClaimLimits{PerUser: 0, PerAddr: 2})
		passed, _, _ := allowN(t, 100, func() error { return l.AllowUser(ctx, "user-unlimited") })
		if passed != 100 {
			t.Fatalf("limit 0: %d of 100 passed", passed)
		}
		before := len(env.Keys(t))
		_ = l.AllowUser(ctx, "user-unlimited")
		if after := len(env.Keys(t)); after != before {
			t.Fatalf("an unlimited claim wrote %d Redis keys", after-before)
		}
	})

	t.Run("KeysCarryTheServicePrefix", func(t *testing.T) {
		l := env.Service.NewRateLimiter(core.ClaimLimits{PerUser: 5})
		if err := l.AllowUser(ctx, "user-keyed"); err != nil {
			t.Fatal(err)
		}
		key := "rate:" + env.Prefix + "rl:claim:user:user-keyed"
		n, err := env.Backends.Redis.Exists(ctx, key).Result()
		if err != nil || n != 1 {
			t.Fatalf("key %s: exists=%d err=%v", key, n, err)
		}
		ttl, err := env.Backends.Redis.PTTL(ctx, key).Result()
		if err != nil || ttl <= 0 || ttl.Seconds() > 60 {
			t.Fatalf("key %s: TTL %v (%v), want at most a minute", key, ttl, err)
		}
		// Another deployment (another prefix) on the same Redis counts apart.
		other := services.New(env.Backends, services.Config{CoreConfig: services.CoreConfig{KeyPrefix: env.Prefix + "other:"}}).
			NewRateLimiter(core.ClaimLimits{PerUser: 1})
		if err := other.AllowUser(ctx, "user-keyed"); err != nil {
			t.Fatalf("another prefix shares the counter: %v", err)
		}
	})

	t.Run("SharedByInstances", func(t *testing.T) {
		a := env.Service.NewRateLimiter(core.ClaimLimits{PerUser: 4})
		b := env.NewService(services.Config{}).NewRateLimiter(core.ClaimLimits{PerUser: 4})
		passed, limited, _ := allowN(t, 6, func() error {
			if err := a.AllowUser(ctx, "user-two-instances"); err != nil {
				return err
			}
			return b.AllowUser(ctx, "user-two-instances")
		})
		// Each round takes one claim on each instance: rounds 1 and 2 pass,
		// round 3 is refused by a, and so on.
		if passed != 2 || limited != 4 {
			t.Fatalf("two instances: %d rounds passed, %d refused; want 2 and 4", passed, limited)
		}
	})

	t.Run("ExactUnderConcurrency", func(t *testing.T) {
		const limit, n = 20, 100
		l := env.Service.NewRateLimiter(core.ClaimLimits{PerUser: limit})
		var passed, limited atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range n {
			wg.Go(func() {
				<-start
				switch err := l.AllowUser(ctx, "user-race"); {
				case err == nil:
					passed.Add(1)
				case models.IsCode(err, models.CodeRateLimited):
					limited.Add(1)
				default:
					t.Errorf("limiter answered %v", err)
				}
			})
		}
		began := time.Now()
		close(start)
		wg.Wait()
		// GCRA gives one claim back every minute/limit: a run slower than
		// that (race detector, loaded machine) has earned a few more.
		earned := int64(time.Since(began) / (time.Minute / limit))
		t.Logf("%d concurrent claims in %v, limit %d/min: %d passed, %d rate_limited (%d earned back meanwhile)",
			n, time.Since(began).Round(time.Millisecond), limit, passed.Load(), limited.Load(), earned)
		if passed.Load() < limit || passed.Load() > limit+earned || passed.Load()+limited.Load() != n {
			t.Fatalf("%d passed and %d limited; want %d (+%d earned) passed, the rest limited", passed.Load(), limited.Load(), limit, earned)
		}
	})
}

// TestRateLimiterUnavailable checks the choice documented on RateLimiter:
// with Redis unreachable the limiter answers unavailable (503), neither a
// limit nor a pass.
func TestRateLimiterUnavailable(t *testing.T) {
	env := testenv.New(t, services.Config{})
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { dead.Close() })
	svc := services.New(&core.Backends{DB: env.Backends.DB, Dialect: env.Backends.Dialect, Redis: dead},
		services.Config{CoreConfig: services.CoreConfig{KeyPrefix: env.Prefix}})
	l := svc.NewRateLimiter(core.ClaimLimits{PerUser: 1, PerAddr: 1})
	for i := range 3 {
		for name, err := range map[string]error{
			"user": l.AllowUser(context.Background(), "user-down"),
			"addr": l.AllowAddr(context.Background(), "192.0.2.1"),
		} {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeUnavailable || e.RetryAfterSeconds < 1 {
				t.Fatalf("%s claim %d with Redis down: %v, want unavailable with Retry-After", name, i+1, err)
			}
		}
	}
	// Off is off, Redis or not.
	if err := svc.NewRateLimiter(core.ClaimLimits{}).AllowUser(context.Background(), "user-down"); err != nil {
		t.Fatalf("limit off with Redis down: %v", err)
	}
}

func TestAddrKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"2001:db8::1", "2001:db8::/64"},
		{"2001:db8:0:0:1:2:3:4", "2001:db8::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
		{"", ""},
	} {
		if got := core.AddrKey(tc.in); got != tc.want {
			t.Errorf("AddrKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
