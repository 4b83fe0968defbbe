package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/redis/go-redis/v9"
)

// TestValidateRateLimits: validation counts each code it checks against the
// caller's budget (per API token) and the user's (whoever sends), in Redis
// shared by all instances; over either, 429 rate_limited with Retry-After, as
// a claim over its limit. Unknown codes count too: guessing is bounded.
func TestValidateRateLimits(t *testing.T) {
	t.Run("PerUserCountsCodes", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ValidatesPerUser: 6}})
		c1, c2, c3 := r.Coupon("u1"), r.Coupon("u1"), r.Coupon("u1")
		testsupport.WantStatus(t, r.Validate("u1", testsupport.Req{}, c1, c2, c3), 200, "3 codes of u1")
		testsupport.WantStatus(t, r.Validate("u1", testsupport.Req{}, c1, c2, c3), 200, "3 more codes of u1")
		testsupport.WantRateLimited(t, r.Validate("u1", testsupport.Req{}, c1), "7th code of u1")
		// The same user through another token or their own session shares
		// the budget; another user has their own.
		testsupport.WantRateLimited(t, r.Validate("u1", testsupport.Req{Auth: testsupport.Bearer(r.Tokens[models.RoleCashier])}, c1), "u1 through the cashier token")
		testsupport.WantRateLimited(t, r.Validate("", testsupport.Req{Shopper: "u1"}, c1), "u1 as a shopper")
		testsupport.WantStatus(t, r.Validate("u2", testsupport.Req{}, r.Coupon("u2")), 200, "a code of u2")
		// Without a user_id only the caller's budget counts (off here).
		testsupport.WantStatus(t, r.Validate("", testsupport.Req{}, c1), 200, "c1 without a user")
		if got := testsupport.CounterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_validate_user")); got != 3 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_validate_user} = %v, want 3", got)
		}
	})

	t.Run("PerTokenBoundsGuesses", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ValidatesPerCaller: 5}})
		for i := range 5 {
			a := r.Validate("", testsupport.Req{}, models.NewCouponCode())
			if a.Status != 200 || a.Body["result"] != "not_found" {
				t.Fatalf("guess %d: %v, want 200 not_found", i+1, a)
			}
		}
		testsupport.WantRateLimited(t, r.Validate("", testsupport.Req{}, models.NewCouponCode()), "6th guess of the app token")
		// A real code is refused too once the token's budget is spent.
		code := r.Coupon("u1")
		testsupport.WantRateLimited(t, r.Validate("u1", testsupport.Req{}, code), "a real code after the guesses")
		// Each token has its own budget, and so does a page session.
		testsupport.WantStatus(t, r.Validate("u1", testsupport.Req{Auth: testsupport.Bearer(r.Tokens[models.RoleCashier])}, code), 200, "the cashier token")
		second, _, err := r.Env.Service.CreateToken(context.Background(), "test", models.RoleApp, "rig-app")
		if err != nil {
			t.Fatal(err)
		}
		testsupport.WantStatus(t, r.Validate("u1", testsupport.Req{Auth: testsupport.Bearer(second)}, code), 200, "a second app token of the same name")
		testsupport.WantStatus(t, r.Validate("", testsupport.Req{Shopper: "u1"}, code), 200, "u1's session")
		if got := testsupport.CounterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_validate_caller")); got != 2 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_validate_caller} = %v, want 2", got)
		}
	})

	t.Run("CartOfFiveCountsFive", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ValidatesPerCaller: 7}})
		codes := []string{r.Coupon("u1"), r.Coupon("u1"), r.Coupon("u1"), r.Coupon("u1"), r.Coupon("u1")}
		testsupport.WantStatus(t, r.Validate("u1", testsupport.Req{}, codes...), 200, "a cart of five")
		testsupport.WantStatus(t, r.Validate("u1", testsupport.Req{}, codes[:2]...), 200, "two more")
		testsupport.WantRateLimited(t, r.Validate("u1", testsupport.Req{}, codes[0]), "the 8th code")
	})

	t.Run("RedisDownIsUnavailableNotALimit", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{})
		code := r.Coupon("u1")
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { dead.Close() })
		down := services.New(&core.Backends{DB: r.Env.Backends.DB, Dialect: r.Env.Backends.Dialect, Redis: dead},
			services.Config{CoreConfig: services.CoreConfig{KeyPrefix: r.Env.Prefix, Logger: r.Env.Config.Logger}})
		r.Router = handlers.NewRouter(down, handlers.Options{Logger: r.Env.Config.Logger, SessionPrincipal: testsupport.TestShopperSession,
			Limits: handlers.Limits{ValidatesPerCaller: 100, ValidatesPerUser: 100}})
		for _, q := range []testsupport.Req{{}, {Shopper: "u1"}} {
			a := r.Validate("u1", q, code)
			if a.Status != 503 || a.Code() != int(models.CodeUnavailable) || a.Header.Get("Retry-After") == "" {
				t.Fatalf("validate with Redis down: %v, want 503 unavailable with Retry-After", a)
			}
		}
	})
}

// TestValidateOtherUsersCouponAnswersAsUnknown: with a user_id (or as a
// shopper), another user's coupon and a code no coupon has get the same
// answer: status, headers that matter, and body field by field, the code
// named aside. Validation is no oracle of which codes exist.
func TestValidateOtherUsersCouponAnswersAsUnknown(t *testing.T) {
	r := testsupport.NewRig(t, handlers.Options{})
	alices, bobs := r.Coupon("alice"), r.Coupon("bob")
	unknown := models.NewCouponCode()
	same := func(what string, a, b testsupport.Answer, codeA, codeB string) {
		t.Helper()
		if a.Status != 200 || a.Body["result"] != "not_found" || !strings.Contains(a.Raw, `"result":"not_found","code":10`) {
			t.Fatalf("%s: %v, want 200 not_found with a not_found line", what, a)
		}
		rawA := strings.ReplaceAll(a.Raw, codeA, "<code>")
		rawB := strings.ReplaceAll(b.Raw, codeB, "<code>")
		if a.Status != b.Status || rawA != rawB || !strings.Contains(a.Raw, codeA) ||
			a.Header.Get("Content-Type") != b.Header.Get("Content-Type") || a.Header.Get("Retry-After") != b.Header.Get("Retry-After") {
			t.Fatalf("%s: another user's coupon answered\n%v\nand an unknown code\n%v", what, a, b)
		}
		var keysA, keysB []string
		for k := range a.Body {
			keysA = append(keysA, k)
		}
		for k := range b.Body {
			keysB = append(keysB, k)
		}
		if len(keysA) != len(keysB) {
			t.Fatalf("%s: body fields %v and %v", what, keysA, keysB)
		}
	}
	for _, caller := range []struct {
		name string
		q    testsupport.Req
		user string
	}{
		{"app token", testsupport.Req{}, "bob"},
		{"cashier token", testsupport.Req{Auth: testsupport.Bearer(r.Tokens[models.RoleCashier])}, "bob"},
		{"bob's session", testsupport.Req{Shopper: "bob"}, ""},
	} {
		theirs := r.Validate(caller.user, caller.q, alices)
		none := r.Validate(caller.user, caller.q, unknown)
		same(caller.name, theirs, none, alices, unknown)
		// In a cart, such a code's line is the same, whichever kind, and
		// bob's own coupon keeps its line.
		same(caller.name+", in a cart", r.Validate(caller.user, caller.q, bobs, alices),
			r.Validate(caller.user, caller.q, bobs, unknown), alices, unknown)
		// bob's own coupon still validates.
		if a := r.Validate(caller.user, caller.q, bobs); a.Status != 200 || a.Body["result"] != "ok" {
			t.Fatalf("%s: bob's own coupon: %v", caller.name, a)
		}
	}
	// Without a user_id a token prices any coupon (the till).
	if a := r.Validate("", testsupport.Req{}, alices); a.Status != 200 || a.Body["result"] != "ok" {
		t.Fatalf("alice's coupon without a user_id: %v", a)
	}
}
