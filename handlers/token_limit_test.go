package handlers_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestBadTokenLimit checks the limit of failed bearer-token look-ups per
// client address: each failed one is a 401 up to the limit, then every bearer
// request from that address is a 429, a valid token's too, while other
// addresses and requests without a token go on as before.
func TestBadTokenLimit(t *testing.T) {
	const limit = 5
	r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{BadTokensPerAddr: limit}})
	list := func(addr, auth string) testsupport.Answer {
		return r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/templates", Addr: addr, Auth: auth})
	}
	const a, b = "198.51.100.40", "198.51.100.41"
	app := testsupport.Bearer(r.Tokens[models.RoleApp])
	testsupport.WantStatus(t, list(a, app), 200, "valid token from a")
	for i := range limit {
		got := list(a, testsupport.Bearer(fmt.Sprint("guess-", i)))
		if got.Status != 401 || got.Body["result"] != "unauthorized" {
			t.Fatalf("bad token %d from a: %v, want 401 unauthorized", i+1, got)
		}
	}
	// A header that is not a bearer token is no look-up.
	testsupport.WantStatus(t, list(a, "Basic dXNlcjpwYXNz"), 401, "basic auth from a")
	testsupport.WantRateLimited(t, list(a, testsupport.Bearer("guess-x")), fmt.Sprintf("bad token %d from a", limit+1))
	testsupport.WantRateLimited(t, list(a, app), "valid token from a over the limit")
	testsupport.WantRateLimited(t, r.Claim("u1", testsupport.Req{Addr: a}), "claim with a valid token from a over the limit")
	// The same IPv6 /64 is one address; requests without a token are not refused.
	testsupport.WantStatus(t, list(a, ""), 200, "anonymous list from a")

	testsupport.WantStatus(t, list(b, app), 200, "valid token from b")
	testsupport.WantStatus(t, list(b, testsupport.Bearer("guess-b")), 401, "bad token from b")
	testsupport.WantStatus(t, r.Claim("u2", testsupport.Req{Addr: b}), 201, "claim from b")
	if got := testsupport.CounterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_token")); got != 3 {
		t.Fatalf("couponsvc_refused_total{reason=rate_limited_token} = %v, want 3", got)
	}

	// Another instance learns the address is over at its first failed
	// look-up, and refuses its valid token from then on.
	other := handlers.NewRouter(r.Env.NewService(r.Env.Config), handlers.Options{Logger: r.Env.Config.Logger, Middleware: testsupport.CheckedAnswers(t),
		Limits: handlers.Limits{BadTokensPerAddr: limit}})
	first := r.Router
	r.Router = other
	testsupport.WantRateLimited(t, list(a, testsupport.Bearer("guess-y")), "bad token from a on another instance")
	testsupport.WantRateLimited(t, list(a, app), "valid token from a on another instance")
	r.Router = first

	// IPv6 addresses share the budget of their /64.
	for i := range limit {
		testsupport.WantStatus(t, list(fmt.Sprintf("2001:db8:1:2::%x", i+1), testsupport.Bearer(fmt.Sprint("v6-", i))), 401, fmt.Sprintf("bad token %d from the /64", i+1))
	}
	testsupport.WantRateLimited(t, list("2001:db8:1:2::ff", app), "valid token from the /64")
	testsupport.WantStatus(t, list("2001:db8:1:3::1", app), 200, "valid token from another /64")
}

// TestBadTokenLimitPasses checks that an address over the limit may use its
// valid token again once the limit lets one more look-up through.
func TestBadTokenLimitPasses(t *testing.T) {
	const limit = 60 // one a second
	r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{BadTokensPerAddr: limit}})
	const addr = "198.51.100.50"
	list := func(auth string) testsupport.Answer {
		return r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/templates", Addr: addr, Auth: auth})
	}
	for i := range limit {
		testsupport.WantStatus(t, list(testsupport.Bearer(fmt.Sprint("guess-", i))), 401, fmt.Sprintf("bad token %d", i+1))
	}
	refused := list(testsupport.Bearer("guess-over"))
	testsupport.WantRateLimited(t, refused, "bad token over the limit")
	wait, _ := strconv.Atoi(refused.Header.Get("Retry-After"))
	if wait != 1 {
		t.Fatalf("Retry-After %d, want 1", wait)
	}
	time.Sleep(time.Duration(wait)*time.Second + 50*time.Millisecond)
	testsupport.WantStatus(t, list(testsupport.Bearer(r.Tokens[models.RoleApp])), 200, "valid token after Retry-After")
}
