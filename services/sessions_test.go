package services_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/testenv"
)

func TestSessions(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	if _, err := env.Service.CreateUser(ctx, "test", "ann", "ann's password", models.RoleCashier); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		sid, u, err := env.Service.Login(ctx, admin.LoginRequest{Username: "ann", Password: "ann's password", Addr: "192.0.2.1"})
		if err != nil || u.Username != "ann" || len(sid) < 40 {
			t.Fatalf("Login = %q, %v, %v", sid, u, err)
		}
		sess, err := env.Service.LookupSession(ctx, sid)
		if err != nil || sess == nil || sess.Username != "ann" || sess.Role != models.RoleCashier {
			t.Fatalf("LookupSession = %+v, %v", sess, err)
		}
		if p := sess.Principal(); p.Name != "ann" || p.Role != models.RoleCashier || p.UserID != "" {
			t.Fatalf("principal %+v", p)
		}
		for _, k := range env.Keys(t) {
			if bytes.Contains([]byte(k), []byte(sid)) {
				t.Fatalf("the Redis key %q holds the session id", k)
			}
		}
		if err := env.Service.Logout(ctx, sid); err != nil {
			t.Fatal(err)
		}
		if sess, err := env.Service.LookupSession(ctx, sid); sess != nil || err != nil {
			t.Fatalf("after logout LookupSession = %+v, %v", sess, err)
		}
		if err := env.Service.Logout(ctx, sid); err != nil {
			t.Fatalf("logout twice: %v", err)
		}
	})
	t.Run("ErrUnknownSession", func(t *testing.T) {
		for _, sid := range []string{"", "nope", string(make([]byte, 500))} {
			if sess, err := env.Service.LookupSession(ctx, sid); sess != nil || err != nil {
				t.Errorf("LookupSession(%q) = %+v, %v", sid, sess, err)
			}
		}
	})
	t.Run("ErrWrongPassword", func(t *testing.T) {
		_, _, err := env.Service.Login(ctx, admin.LoginRequest{Username: "ann", Password: "wrong", Addr: "192.0.2.2"})
		if !models.IsCode(err, models.CodeUnauthorized) {
			t.Fatalf("wrong password: %v", err)
		}
	})
	t.Run("ErrRateLimitedPerAddress", func(t *testing.T) {
		// A limit of 5 a minute refills one attempt every 12 s: far slower
		// than even a race-instrumented bcrypt on a busy machine, so the 6th
		// attempt is the one refused.
		env := testenv.New(t, services.Config{AdminConfig: services.AdminConfig{LoginsPerAddress: 5}})
		if _, err := env.Service.CreateUser(ctx, "test", "ann", "ann's password", models.RoleShopper); err != nil {
			t.Fatal(err)
		}
		limitedAt := 0
		for i := range 8 {
			_, _, err := env.Service.Login(ctx, admin.LoginRequest{Username: "user" + string(rune('a'+i)),
				Password: "x", Addr: "192.0.2.200"})
			if models.IsCode(err, models.CodeRateLimited) {
				limitedAt = i + 1
				break
			}
			if !models.IsCode(err, models.CodeUnauthorized) {
				t.Fatalf("attempt %d: %v", i+1, err)
			}
		}
		if limitedAt != 6 {
			t.Fatalf("one address was limited at attempt %d, want 6 (limit 5 a minute)", limitedAt)
		}
		if _, _, err := env.Service.Login(ctx, admin.LoginRequest{Username: "ann", Password: "ann's password", Addr: "192.0.2.201"}); err != nil {
			t.Fatalf("another address is held up: %v", err)
		}
	})
}

// TestLoginLimitsPerAccount checks that guesses lock out the address that
// makes them from that account only, and that guesses spread over many
// addresses slow the account down without locking its owner out.
func TestLoginLimitsPerAccount(t *testing.T) {
	ctx := context.Background()
	login := func(env *testenv.Env, user, password, addr string) (time.Duration, error) {
		start := time.Now()
		_, _, err := env.Service.Login(ctx, admin.LoginRequest{Username: user, Password: password, Addr: addr})
		return time.Since(start), err
	}
	addUsers := func(t *testing.T, env *testenv.Env) {
		for _, u := range []string{"ben", "ann"} {
			if _, err := env.Service.CreateUser(ctx, "test", u, u+"'s password", models.RoleAdmin); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("AnAddressLocksOnlyItself", func(t *testing.T) {
		env := testenv.New(t, services.Config{AdminConfig: services.AdminConfig{LoginsPerAccount: 3}})
		addUsers(t, env)
		const a, b = "198.51.100.1", "198.51.100.2"
		for i := range 3 {
			if _, err := login(env, "ben", "guess", a); !models.IsCode(err, models.CodeUnauthorized) {
				t.Fatalf("guess %d from A: %v, want unauthorized", i+1, err)
			}
		}
		// The right password from A is refused now: A is locked out of ben,
		// until the window gives an attempt back (15 min / 3 = 300 s).
		_, err := login(env, "ben", "ben's password", a)
		var e *models.Error
		if !models.IsCode(err, models.CodeRateLimited) || !asErr(err, &e) || e.RetryAfterSeconds < 290 || e.RetryAfterSeconds > 300 {
			t.Fatalf("4th attempt from A, right password: %v, want rate limited for about 300 s", err)
		}
		// The owner at B logs in; A may still log in to another account.
		if _, err := login(env, "ben", "ben's password", b); err != nil {
			t.Fatalf("ben from B: %v, want logged in", err)
		}
		if _, err := login(env, "ann", "ann's password", a); err != nil {
			t.Fatalf("ann from A: %v, want logged in", err)
		}
		// Accounts are counted byte for byte: BEN is another name, unknown
		// here, and A's guesses at ben do not limit it.
		if _, err := login(env, "BEN", "ben's password", a); !models.IsCode(err, models.CodeUnauthorized) {
			t.Fatalf("BEN from A: %v, want unauthorized", err)
		}
		// An IPv6 client counts as its /64.
		for i := range 3 {
			if _, err := login(env, "ann", "guess", fmt.Sprintf("2001:db8:1:2::%x", i+1)); !models.IsCode(err, models.CodeUnauthorized) {
				t.Fatalf("IPv6 guess %d: %v", i+1, err)
			}
		}
		if _, err := login(env, "ann", "ann's password", "2001:db8:1:2::ffff"); !models.IsCode(err, models.CodeRateLimited) {
			t.Fatalf("4th attempt from the same /64: %v, want rate limited", err)
		}
	})

	t.Run("SuccessClearsTheAddress", func(t *testing.T) {
		env := testenv.New(t, services.Config{AdminConfig: services.AdminConfig{LoginsPerAccount: 3}})
		addUsers(t, env)
		const c = "198.51.100.3"
		for round := range 3 {
			for i := range 2 {
				if _, err := login(env, "ben", "typo", c); !models.IsCode(err, models.CodeUnauthorized) {
					t.Fatalf("round %d, typo %d: %v, want unauthorized", round+1, i+1, err)
				}
			}
			if _, err := login(env, "ben", "ben's password", c); err != nil {
				t.Fatalf("round %d, right password: %v, want logged in", round+1, err)
			}
		}
	})

	t.Run("SpreadGuessesSlowNotLock", func(t *testing.T) {
		const after, step, most = 5, 100 * time.Millisecond, 400 * time.Millisecond
		env := testenv.New(t, services.Config{AdminConfig: services.AdminConfig{LoginsPerAccount: 3, LoginSlowAfter: after, LoginSlowStep: step, LoginSlowMax: most}})
		addUsers(t, env)
		// 24 guesses on ben, each address trying twice: far more than the
		// old lockout's 10, none of them refused by a limit.
		var slowest time.Duration
		for i := range 24 {
			took, err := login(env, "ben", "guess", fmt.Sprintf("203.0.113.%d", i/2+1))
			if !models.IsCode(err, models.CodeUnauthorized) {
				t.Fatalf("spread guess %d: %v, want unauthorized", i+1, err)
			}
			if i >= after+4 { // 5 failures beyond: 500 ms, capped at 400 ms
				if took < most {
					t.Fatalf("guess %d took %v, want at least %v", i+1, took, most)
				}
			}
			slowest = max(slowest, took)
		}
		n, err := env.Backends.Redis.Get(ctx, failKey(t, env)).Int()
		if err != nil || n != 24 {
			t.Fatalf("ben's failure count is %d (%v), want 24", n, err)
		}
		// The owner, from an address that made no guess, logs in with the
		// right password, at most LoginSlowMax late; so does ann, untouched.
		took, err := login(env, "ben", "ben's password", "192.0.2.50")
		if err != nil || took < most {
			t.Fatalf("ben during the attack: %v after %v, want logged in after at least %v", err, took, most)
		}
		if _, err := login(env, "ann", "ann's password", "192.0.2.50"); err != nil {
			t.Fatalf("ann during the attack: %v", err)
		}
		// An address that guessed is still locked out by its own count only.
		if _, err := login(env, "ben", "guess", "203.0.113.1"); !models.IsCode(err, models.CodeUnauthorized) {
			t.Fatalf("third guess from an address: %v, want unauthorized", err)
		}
		if _, err := login(env, "ben", "ben's password", "203.0.113.1"); !models.IsCode(err, models.CodeRateLimited) {
			t.Fatalf("fourth attempt from an address: %v, want rate limited", err)
		}
		t.Logf("slowest guess %v", slowest)
	})
}

// failKey finds the one failure counter of the test's Redis.
func failKey(t *testing.T, env *testenv.Env) string {
	t.Helper()
	var found []string
	for _, k := range env.Keys(t) {
		if strings.Contains(k, "login:fail:") {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		t.Fatalf("failure counters %q, want one", found)
	}
	return found[0]
}

func asErr(err error, target **models.Error) bool {
	e, ok := err.(*models.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestPageSecret(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	a, err := env.Service.PageSecret(ctx)
	if err != nil || len(a) != 32 {
		t.Fatalf("PageSecret = %x, %v", a, err)
	}
	// Another instance over the same database gets the same key.
	b, err := env.NewService(services.Config{}).PageSecret(ctx)
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("a second instance got %x, %v; want %x", b, err, a)
	}
}
