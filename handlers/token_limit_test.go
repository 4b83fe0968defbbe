package handlers_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"couponsvc/handlers"
	"couponsvc/models"
)

// TestBadTokenLimit checks the limit of failed bearer-token look-ups per
// client address: each failed one is a 401 up to the limit, then every bearer
// request from that address is a 429, a valid token's too, while other
// addresses and requests without a token go on as before.
func TestBadTokenLimit(t *testing.T) {
	const limit = 5
	r := newRig(t, handlers.Options{Limits: handlers.Limits{BadTokensPerAddr: limit}})
	list := func(addr, auth string) answer {
		return r.do(req{method: "GET", target: "/api/v1/templates", addr: addr, auth: auth})
	}
	const a, b = "198.51.100.40", "198.51.100.41"
	app := bearer(r.tokens[models.RoleApp])
	wantStatus(t, list(a, app), 200, "valid token from a")
	for i := range limit {
		got := list(a, bearer(fmt.Sprint("guess-", i)))
		if got.status != 401 || got.body["result"] != "unauthorized" {
			t.Fatalf("bad token %d from a: %v, want 401 unauthorized", i+1, got)
		}
	}
	// A header that is not a bearer token is no look-up.
	wantStatus(t, list(a, "Basic dXNlcjpwYXNz"), 401, "basic auth from a")
	wantRateLimited(t, list(a, bearer("guess-x")), fmt.Sprintf("bad token %d from a", limit+1))
	wantRateLimited(t, list(a, app), "valid token from a over the limit")
	wantRateLimited(t, r.claim("u1", req{addr: a}), "claim with a valid token from a over the limit")
	// The same IPv6 /64 is one address; requests without a token are not refused.
	wantStatus(t, list(a, ""), 200, "anonymous list from a")

	wantStatus(t, list(b, app), 200, "valid token from b")
	wantStatus(t, list(b, bearer("guess-b")), 401, "bad token from b")
	wantStatus(t, r.claim("u2", req{addr: b}), 201, "claim from b")
	if got := counterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_token")); got != 3 {
		t.Fatalf("couponsvc_refused_total{reason=rate_limited_token} = %v, want 3", got)
	}

	// Another instance learns the address is over at its first failed
	// look-up, and refuses its valid token from then on.
	other := handlers.NewRouter(r.Env.NewService(r.Env.Config), handlers.Options{Logger: r.Env.Config.Logger, Middleware: checkedAnswers(t),
		Limits: handlers.Limits{BadTokensPerAddr: limit}})
	first := r.router
	r.router = other
	wantRateLimited(t, list(a, bearer("guess-y")), "bad token from a on another instance")
	wantRateLimited(t, list(a, app), "valid token from a on another instance")
	r.router = first

	// IPv6 addresses share the budget of their /64.
	for i := range limit {
		wantStatus(t, list(fmt.Sprintf("2001:db8:1:2::%x", i+1), bearer(fmt.Sprint("v6-", i))), 401, fmt.Sprintf("bad token %d from the /64", i+1))
	}
	wantRateLimited(t, list("2001:db8:1:2::ff", app), "valid token from the /64")
	wantStatus(t, list("2001:db8:1:3::1", app), 200, "valid token from another /64")
}

// TestBadTokenLimitPasses checks that an address over the limit may use its
// valid token again once the limit lets one more look-up through.
func TestBadTokenLimitPasses(t *testing.T) {
	const limit = 60 // one a second
	r := newRig(t, handlers.Options{Limits: handlers.Limits{BadTokensPerAddr: limit}})
	const addr = "198.51.100.50"
	list := func(auth string) answer {
		return r.do(req{method: "GET", target: "/api/v1/templates", addr: addr, auth: auth})
	}
	for i := range limit {
		wantStatus(t, list(bearer(fmt.Sprint("guess-", i))), 401, fmt.Sprintf("bad token %d", i+1))
	}
	refused := list(bearer("guess-over"))
	wantRateLimited(t, refused, "bad token over the limit")
	wait, _ := strconv.Atoi(refused.header.Get("Retry-After"))
	if wait != 1 {
		t.Fatalf("Retry-After %d, want 1", wait)
	}
	time.Sleep(time.Duration(wait)*time.Second + 50*time.Millisecond)
	wantStatus(t, list(bearer(r.tokens[models.RoleApp])), 200, "valid token after Retry-After")
}
