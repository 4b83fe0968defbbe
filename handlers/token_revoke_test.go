package handlers_test

import (
	"fmt"
	"testing"

	"couponsvc/handlers"
	"couponsvc/services"
)

// TestTokenRevokeTwoInstances: two instances over the same database and
// Redis; a token revoked through one is answered 401 by the other at its
// very next request, though the other had just accepted (and cached) it.
func TestTokenRevokeTwoInstances(t *testing.T) {
	a := newAPIEnv(t)
	svcB := a.Env.NewService(services.Config{BootstrapToken: adminToken})
	b := &apiEnv{&fixture{Env: a.Env, router: handlers.NewRouter(svcB, handlers.Options{Logger: a.Env.Config.Logger, Middleware: checkedAnswers(t)})}}

	created := a.mustCall(t, 201, "POST", "/api/v1/tokens", adminToken, `{"role":"app","name":"shop backend"}`)
	secret := created["token"].(string)
	id := int64(created["token_info"].(map[string]any)["id"].(float64))
	kept := a.mustCall(t, 201, "POST", "/api/v1/tokens", adminToken, `{"role":"app","name":"shop backend 2"}`)["token"].(string)
	for i := range 3 {
		b.mustCall(t, 200, "GET", "/api/v1/users/alice/coupons", secret, "")
		b.mustCall(t, 200, "GET", "/api/v1/users/alice/coupons", kept, "")
		if i == 0 {
			a.mustCall(t, 200, "GET", "/api/v1/users/alice/coupons", secret, "")
		}
	}
	out := a.mustCall(t, 200, "POST", fmt.Sprintf("/api/v1/tokens/%d/revoke", id), adminToken, "")
	if out["result"] != "ok" {
		t.Fatalf("revoke: %v", out)
	}
	for _, e := range []*apiEnv{b, a} {
		if got := e.mustCall(t, 401, "GET", "/api/v1/users/alice/coupons", secret, ""); got["result"] != "unauthorized" {
			t.Fatalf("the revoked token: %v", got)
		}
	}
	b.mustCall(t, 200, "GET", "/api/v1/users/alice/coupons", kept, "")
}
