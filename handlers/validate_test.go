package handlers_test

import (
	"context"
	"strings"
	"testing"

	"couponsvc/handlers"
	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/core"

	"github.com/redis/go-redis/v9"
)

// validate asks POST /api/v1/checkout/validate for the codes, for user
// (left out when empty), as q's caller (the app token when q has none).
func (r *rig) validate(user string, q req, codes ...string) answer {
	r.t.Helper()
	q.method, q.target = "POST", "/api/v1/checkout/validate"
	if q.auth == "" && q.shopper == "" {
		q.auth = bearer(r.tokens[models.RoleApp])
	}
	body := `{"order_amount_cents":5000,"coupon_codes":["` + strings.Join(codes, `","`) + `"]`
	if user != "" {
		body += `,"user_id":"` + user + `"`
	}
	q.body = body + "}"
	return r.do(q)
}

// TestValidateRateLimits: validation counts each code it checks against the
// caller's budget (per API token) and the user's (whoever sends), in Redis
// shared by all instances; over either, 429 rate_limited with Retry-After, as
// a claim over its limit. Unknown codes count too: guessing is bounded.
func TestValidateRateLimits(t *testing.T) {
	t.Run("PerUserCountsCodes", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ValidatesPerUser: 6}})
		c1, c2, c3 := r.coupon("u1"), r.coupon("u1"), r.coupon("u1")
		wantStatus(t, r.validate("u1", req{}, c1, c2, c3), 200, "3 codes of u1")
		wantStatus(t, r.validate("u1", req{}, c1, c2, c3), 200, "3 more codes of u1")
		wantRateLimited(t, r.validate("u1", req{}, c1), "7th code of u1")
		// The same user through another token or their own session shares
		// the budget; another user has their own.
		wantRateLimited(t, r.validate("u1", req{auth: bearer(r.tokens[models.RoleCashier])}, c1), "u1 through the cashier token")
		wantRateLimited(t, r.validate("", req{shopper: "u1"}, c1), "u1 as a shopper")
		wantStatus(t, r.validate("u2", req{}, r.coupon("u2")), 200, "a code of u2")
		// Without a user_id only the caller's budget counts (off here).
		wantStatus(t, r.validate("", req{}, c1), 200, "c1 without a user")
		if got := counterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_validate_user")); got != 3 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_validate_user} = %v, want 3", got)
		}
	})

	t.Run("PerTokenBoundsGuesses", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ValidatesPerCaller: 5}})
		for i := range 5 {
			a := r.validate("", req{}, models.NewCouponCode())
			if a.status != 404 || a.body["result"] != "not_found" {
				t.Fatalf("guess %d: %v, want 404 not_found", i+1, a)
			}
		}
		wantRateLimited(t, r.validate("", req{}, models.NewCouponCode()), "6th guess of the app token")
		// A real code is refused too once the token's budget is spent.
		code := r.coupon("u1")
		wantRateLimited(t, r.validate("u1", req{}, code), "a real code after the guesses")
		// Each token has its own budget, and so does a page session.
		wantStatus(t, r.validate("u1", req{auth: bearer(r.tokens[models.RoleCashier])}, code), 200, "the cashier token")
		second, _, err := r.Env.Service.CreateToken(context.Background(), "test", models.RoleApp, "rig-app")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, r.validate("u1", req{auth: bearer(second)}, code), 200, "a second app token of the same name")
		wantStatus(t, r.validate("", req{shopper: "u1"}, code), 200, "u1's session")
		if got := counterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_validate_caller")); got != 2 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_validate_caller} = %v, want 2", got)
		}
	})

	t.Run("CartOfFiveCountsFive", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ValidatesPerCaller: 7}})
		codes := []string{r.coupon("u1"), r.coupon("u1"), r.coupon("u1"), r.coupon("u1"), r.coupon("u1")}
		wantStatus(t, r.validate("u1", req{}, codes...), 200, "a cart of five")
		wantStatus(t, r.validate("u1", req{}, codes[:2]...), 200, "two more")
		wantRateLimited(t, r.validate("u1", req{}, codes[0]), "the 8th code")
	})

	t.Run("RedisDownIsUnavailableNotALimit", func(t *testing.T) {
		r := newRig(t, handlers.Options{})
		code := r.coupon("u1")
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { dead.Close() })
		down := services.New(&core.Backends{DB: r.Env.Backends.DB, Dialect: r.Env.Backends.Dialect, Redis: dead},
			services.Config{KeyPrefix: r.Env.Prefix, Logger: r.Env.Config.Logger})
		r.router = handlers.NewRouter(down, handlers.Options{Logger: r.Env.Config.Logger, SessionPrincipal: testShopperSession, Middleware: checkedAnswers(t),
			Limits: handlers.Limits{ValidatesPerCaller: 100, ValidatesPerUser: 100}})
		for _, q := range []req{{}, {shopper: "u1"}} {
			a := r.validate("u1", q, code)
			if a.status != 503 || a.code() != int(models.CodeUnavailable) || a.header.Get("Retry-After") == "" {
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
	r := newRig(t, handlers.Options{})
	alices, bobs := r.coupon("alice"), r.coupon("bob")
	unknown := models.NewCouponCode()
	same := func(what string, a, b answer, codeA, codeB string) {
		t.Helper()
		if a.status != 404 || a.body["result"] != "not_found" || a.code() != int(models.CodeNotFound) {
			t.Fatalf("%s: %v, want 404 not_found", what, a)
		}
		rawA := strings.ReplaceAll(a.raw, codeA, "<code>")
		rawB := strings.ReplaceAll(b.raw, codeB, "<code>")
		if a.status != b.status || rawA != rawB || !strings.Contains(a.raw, codeA) ||
			a.header.Get("Content-Type") != b.header.Get("Content-Type") || a.header.Get("Retry-After") != b.header.Get("Retry-After") {
			t.Fatalf("%s: another user's coupon answered\n%v\nand an unknown code\n%v", what, a, b)
		}
		var keysA, keysB []string
		for k := range a.body {
			keysA = append(keysA, k)
		}
		for k := range b.body {
			keysB = append(keysB, k)
		}
		if len(keysA) != len(keysB) {
			t.Fatalf("%s: body fields %v and %v", what, keysA, keysB)
		}
	}
	for _, caller := range []struct {
		name string
		q    req
		user string
	}{
		{"app token", req{}, "bob"},
		{"cashier token", req{auth: bearer(r.tokens[models.RoleCashier])}, "bob"},
		{"bob's session", req{shopper: "bob"}, ""},
	} {
		theirs := r.validate(caller.user, caller.q, alices)
		none := r.validate(caller.user, caller.q, unknown)
		same(caller.name, theirs, none, alices, unknown)
		// In a cart, the first such code is answered, whichever kind.
		same(caller.name+", in a cart", r.validate(caller.user, caller.q, bobs, alices, unknown),
			r.validate(caller.user, caller.q, bobs, unknown, alices), alices, unknown)
		// bob's own coupon still validates.
		if a := r.validate(caller.user, caller.q, bobs); a.status != 200 || a.body["result"] != "ok" {
			t.Fatalf("%s: bob's own coupon: %v", caller.name, a)
		}
	}
	// Without a user_id a token prices any coupon (the till).
	if a := r.validate("", req{}, alices); a.status != 200 || a.body["result"] != "ok" {
		t.Fatalf("alice's coupon without a user_id: %v", a)
	}
}
