package services_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/core"
	"couponsvc/services/testenv"

	"github.com/redis/go-redis/v9"
)

// wantToken checks that svc accepts token (ok) or refuses it as unauthorized.
func wantToken(t *testing.T, svc *services.App, token string, ok bool, what string) {
	t.Helper()
	p, err := svc.AuthenticateToken(context.Background(), token)
	switch {
	case ok && (err != nil || p == nil):
		t.Fatalf("%s: %v, want the token accepted", what, err)
	case !ok && !models.IsCode(err, models.CodeUnauthorized):
		t.Fatalf("%s: %+v %v, want unauthorized", what, p, err)
	}
}

// TestRevokeTokenTwoInstances: a token revoked through one instance is
// refused by another that looked it up (and cached it) just before, from
// the revocation's answer on, not some seconds later; other tokens still
// work there.
func TestRevokeTokenTwoInstances(t *testing.T) {
	ctx := context.Background()
	env := testenv.New(t, services.Config{})
	a, b := env.Service, env.NewService(services.Config{})
	token, rec, err := a.CreateToken(ctx, "test", models.RoleApp, "shop")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := a.CreateToken(ctx, "test", models.RoleCashier, "till")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantToken(t, b, token, true, "the token on instance b before the revocation")
		wantToken(t, b, other, true, "the other token on instance b")
	}
	p, err := b.AuthenticateToken(ctx, token)
	if err != nil || p.TokenID != rec.ID || p.Role != models.RoleApp || p.Name != "token:shop" {
		t.Fatalf("principal %+v %v, want token %d", p, err, rec.ID)
	}

	v, dup, err := a.RevokeToken(ctx, "admin", rec.ID)
	if err != nil || dup || v.RevokedAt == nil {
		t.Fatalf("revoke: %+v %v %v", v, dup, err)
	}
	wantToken(t, b, token, false, "the revoked token on instance b at once")
	wantToken(t, a, token, false, "the revoked token on instance a")
	wantToken(t, env.NewService(services.Config{}), token, false, "the revoked token on a new instance")
	wantToken(t, b, other, true, "the other token on instance b after the revocation")

	// Once the marker lapses the database, the authority, still refuses it.
	env.Backends.Redis.Del(ctx, revokedMarker(env, rec.ID))
	wantToken(t, b, token, false, "the revoked token on instance b without its marker")
	wantToken(t, env.NewService(services.Config{}), token, false, "the revoked token on a new instance without its marker")

	// A second revocation is a duplicate and writes the marker again.
	if _, dup, err := b.RevokeToken(ctx, "admin", rec.ID); err != nil || !dup {
		t.Fatalf("revoke again: %v %v, want a duplicate", dup, err)
	}
	ttl := env.Backends.Redis.TTL(ctx, revokedMarker(env, rec.ID)).Val()
	if ttl <= 55*time.Minute || ttl > time.Hour {
		t.Fatalf("the revoked marker lives %s, want an hour", ttl)
	}
}

// TestRevokeTokenRedisDown: a revocation that cannot write its marker is
// refused (unavailable) and changes nothing, so that no instance keeps a
// token the database says is revoked; an instance that cannot ask Redis
// answers from the database.
func TestRevokeTokenRedisDown(t *testing.T) {
	ctx := context.Background()
	env := testenv.New(t, services.Config{})
	token, rec, err := env.Service.CreateToken(ctx, "test", models.RoleAdmin, "ops")
	if err != nil {
		t.Fatal(err)
	}
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { dead.Close() })
	down := services.New(&core.Backends{DB: env.Backends.DB, Dialect: env.Backends.Dialect, Redis: dead},
		services.Config{KeyPrefix: env.Prefix, Logger: env.Config.Logger})
	t.Cleanup(down.Close)

	wantToken(t, down, token, true, "the token on an instance without Redis")
	_, _, err = down.RevokeToken(ctx, "admin", rec.ID)
	if !models.IsCode(err, models.CodeUnavailable) {
		t.Fatalf("revoke without Redis: %v, want unavailable", err)
	}
	var row models.APIToken
	if err := env.Backends.DB.First(&row, rec.ID).Error; err != nil || row.RevokedAt != nil {
		t.Fatalf("the token after a failed revocation: %+v %v, want it live", row, err)
	}
	var audits int64
	env.Backends.DB.Model(&models.AuditEntry{}).Where("action = ?", "token.revoke").Count(&audits)
	if audits != 0 {
		t.Fatalf("a failed revocation wrote %d audit entries", audits)
	}
	wantToken(t, env.Service, token, true, "the token after a failed revocation")

	if _, _, err := env.Service.RevokeToken(ctx, "admin", rec.ID); err != nil {
		t.Fatal(err)
	}
	wantToken(t, down, token, false, "the revoked token on an instance without Redis")
}

// revokedMarker is the Redis key of token id's revoked marker.
func revokedMarker(env *testenv.Env, id int64) string {
	return env.Prefix + "token:revoked:" + strconv.FormatInt(id, 10)
}
