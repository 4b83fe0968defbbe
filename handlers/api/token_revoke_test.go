package api_test

import (
	"fmt"
	"testing"

	"couponsvc/handlers"
	"couponsvc/internal/testsupport"
	"couponsvc/services"
)

// TestTokenRevokeTwoInstances: two instances over the same database and
// Redis; a token revoked through one is answered 401 by the other at its
// very next request, though the other had just accepted (and cached) it.
func TestTokenRevokeTwoInstances(t *testing.T) {
	a := testsupport.NewAPIEnv(t)
	svcB := a.Env.NewService(services.Config{BootstrapToken: testsupport.AdminToken})
	b := &testsupport.APIEnv{Fixture: &testsupport.Fixture{Env: a.Env, Router: handlers.NewRouter(svcB, handlers.Options{Logger: a.Env.Config.Logger})}}

	created := a.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop backend"}`)
	secret := created["token"].(string)
	id := int64(created["token_info"].(map[string]any)["id"].(float64))
	kept := a.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"app","name":"shop backend 2"}`)["token"].(string)
	for i := range 3 {
		b.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", secret, "")
		b.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", kept, "")
		if i == 0 {
			a.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", secret, "")
		}
	}
	out := a.MustCall(t, 200, "POST", fmt.Sprintf("/api/v1/tokens/%d/revoke", id), testsupport.AdminToken, "")
	if out["result"] != "ok" {
		t.Fatalf("revoke: %v", out)
	}
	for _, e := range []*testsupport.APIEnv{b, a} {
		if got := e.MustCall(t, 401, "GET", "/api/v1/users/alice/coupons", secret, ""); got["result"] != "unauthorized" {
			t.Fatalf("the revoked token: %v", got)
		}
	}
	b.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", kept, "")
}
