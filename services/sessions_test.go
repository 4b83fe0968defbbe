package services_test

import (
	"bytes"
	"context"
	"testing"

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/testenv"
)

func TestSessions(t *testing.T) {
	env := testenv.New(t, services.Config{})
	ctx := context.Background()
	if _, err := env.Service.CreateUser(ctx, "test", "ann", "ann's password", models.RoleCashier); err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		sid, u, err := env.Service.Login(ctx, services.LoginRequest{Username: "ann", Password: "ann's password", Addr: "192.0.2.1"})
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
		_, _, err := env.Service.Login(ctx, services.LoginRequest{Username: "ann", Password: "wrong", Addr: "192.0.2.2"})
		if !models.IsCode(err, models.CodeUnauthorized) {
			t.Fatalf("wrong password: %v", err)
		}
	})
	t.Run("ErrRateLimitedPerAccount", func(t *testing.T) {
		if _, err := env.Service.CreateUser(ctx, "test", "ben", "ben's password", models.RoleShopper); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			_, _, err := env.Service.Login(ctx, services.LoginRequest{Username: "ben", Password: "guess", Addr: "198.51.100." + string(rune('1'+i%9))})
			if !models.IsCode(err, models.CodeUnauthorized) {
				t.Fatalf("attempt %d: %v", i+1, err)
			}
		}
		_, _, err := env.Service.Login(ctx, services.LoginRequest{Username: "ben", Password: "ben's password", Addr: "203.0.113.9"})
		var e *models.Error
		if !models.IsCode(err, models.CodeRateLimited) || !asErr(err, &e) || e.RetryAfterSeconds < 1 {
			t.Fatalf("the 11th attempt, from another address, right password: %v", err)
		}
	})
	t.Run("ErrRateLimitedPerAddress", func(t *testing.T) {
		// A limit of 5 a minute refills one attempt every 12 s: far slower
		// than even a race-instrumented bcrypt on a busy machine, so the 6th
		// attempt is the one refused.
		env := testenv.New(t, services.Config{LoginsPerAddress: 5})
		if _, err := env.Service.CreateUser(ctx, "test", "ann", "ann's password", models.RoleShopper); err != nil {
			t.Fatal(err)
		}
		limitedAt := 0
		for i := range 8 {
			_, _, err := env.Service.Login(ctx, services.LoginRequest{Username: "user" + string(rune('a'+i)),
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
		if _, _, err := env.Service.Login(ctx, services.LoginRequest{Username: "ann", Password: "ann's password", Addr: "192.0.2.201"}); err != nil {
			t.Fatalf("another address is held up: %v", err)
		}
	})
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
