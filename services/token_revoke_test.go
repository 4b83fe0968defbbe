package services_test

import (
	"context"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

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

// wantRefusedSoon checks that svc refuses token within a bounded wait: the
// revocation reaches another instance through Redis pub/sub, which is
// asynchronous (a few milliseconds; the bound leaves room for a loaded
// machine).
func wantRefusedSoon(t *testing.T, svc *services.App, token, what string) {
	t.Helper()
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		_, err := svc.AuthenticateToken(context.Background(), token)
		if models.IsCode(err, models.CodeUnauthorized) {
			return
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("%s: %v, want unauthorized within 500ms", what, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRevokeTokenTwoInstances: a token revoked through one instance is
// refused by another that looked it up (and cached it) just before, within
// the time its revocation takes to be published, not seconds later; the
// revoking instance refuses it from the answer on; other tokens still work.
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
	wantToken(t, a, token, false, "the revoked token on instance a at once")
	wantRefusedSoon(t, b, token, "the revoked token on instance b")
	wantToken(t, env.NewService(services.Config{}), token, false, "the revoked token on a new instance")
	wantToken(t, b, other, true, "the other token on instance b after the revocation")

	// A second revocation is a duplicate and changes nothing.
	if _, dup, err := b.RevokeToken(ctx, "admin", rec.ID); err != nil || !dup {
		t.Fatalf("revoke again: %v %v, want a duplicate", dup, err)
	}
	var audits int64
	env.Backends.DB.Model(&models.AuditEntry{}).Where("action = ?", "token.revoke").Count(&audits)
	if audits != 1 {
		t.Fatalf("%d token.revoke audit entries, want 1", audits)
	}
	wantToken(t, b, token, false, "the revoked token on instance b after the duplicate")
}

// TestRevokeTokenRedisDown: an instance that cannot follow the revocations
// channel (Redis is down) refuses bearer tokens as unavailable rather than
// guess, and refuses to revoke, changing nothing; the bootstrap token, which
// cannot be revoked, still works there.
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
		services.Config{CoreConfig: services.CoreConfig{KeyPrefix: env.Prefix, Logger: env.Config.Logger}, AdminConfig: services.AdminConfig{BootstrapToken: "cps_bootstrap-of-the-test"}})
	t.Cleanup(down.Close)

	if _, err := down.AuthenticateToken(ctx, token); !models.IsCode(err, models.CodeUnavailable) {
		t.Fatalf("a token on an instance without Redis: %v, want unavailable", err)
	}
	if p, err := down.AuthenticateToken(ctx, "cps_bootstrap-of-the-test"); err != nil || p.Role != models.RoleAdmin {
		t.Fatalf("the bootstrap token on an instance without Redis: %+v %v, want admin", p, err)
	}
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
}
