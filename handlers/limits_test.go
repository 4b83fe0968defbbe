package handlers_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/redis/go-redis/v9"
)

func TestClaimRateLimits(t *testing.T) {
	t.Run("PerUserHitsAtTheCount", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerUser: 5}})
		for i := range 5 {
			testsupport.WantStatus(t, r.Claim("u1", testsupport.Req{}), 201, fmt.Sprintf("claim %d of u1", i+1))
		}
		testsupport.WantRateLimited(t, r.Claim("u1", testsupport.Req{}), "6th claim of u1")
		// The same user through a page session shares the budget.
		testsupport.WantRateLimited(t, r.Claim("", testsupport.Req{Shopper: "u1"}), "claim of u1 as a shopper")
		testsupport.WantStatus(t, r.Claim("u2", testsupport.Req{}), 201, "claim of u2")
		// A refused claim took nothing.
		var n int64
		r.Env.Backends.DB.Table("user_coupons").Where("user_id = ?", "u1").Count(&n)
		if n != 5 {
			t.Fatalf("u1 holds %d coupons, want 5", n)
		}
		if got := testsupport.CounterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_user")); got != 2 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_user} = %v, want 2", got)
		}
	})

	t.Run("ReplayAnsweredOverTheLimit", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerUser: 3}})
		key := func(k string) testsupport.Req {
			return testsupport.Req{Headers: map[string]string{"Idempotency-Key": k}}
		}
		var codes []string
		for i := range 3 {
			a := r.Claim("u1", key(fmt.Sprint("first-", i)))
			testsupport.WantStatus(t, a, 201, fmt.Sprintf("claim %d of u1", i+1))
			codes = append(codes, a.Body["coupon"].(map[string]any)["code"].(string))
		}
		testsupport.WantRateLimited(t, r.Claim("u1", key("new-1")), "4th claim of u1")
		for i, code := range codes {
			a := r.Claim("u1", key(fmt.Sprint("first-", i)))
			if a.Status != 200 || a.Body["result"] != "duplicate" || a.Code() != int(models.CodeDuplicate) {
				t.Fatalf("replay of claim %d over the limit: %v, want 200 duplicate", i+1, a)
			}
			if got := a.Body["coupon"].(map[string]any)["code"]; got != code {
				t.Fatalf("replay of claim %d: coupon %v, want %s", i+1, got, code)
			}
		}
		testsupport.WantRateLimited(t, r.Claim("u1", key("new-2")), "new claim of u1 after the replays")
		// A key of another user is no replay of u1's.
		testsupport.WantRateLimited(t, r.Claim("u1", key("other")), "claim of u1 before u2's")
		testsupport.WantStatus(t, r.Claim("u2", key("u2-1")), 201, "claim of u2")
		testsupport.WantRateLimited(t, r.Claim("u1", key("u2-1")), "claim of u1 under u2's key")
		var n int64
		r.Env.Backends.DB.Table("user_coupons").Where("user_id = ?", "u1").Count(&n)
		if n != 3 {
			t.Fatalf("u1 holds %d coupons, want 3", n)
		}
		m := r.Env.Service.Metrics()
		if got := testsupport.CounterValue(t, m.Refused.WithLabelValues("rate_limited_user")); got != 4 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_user} = %v, want 4", got)
		}
		if got := testsupport.CounterValue(t, m.Claims.WithLabelValues("duplicate")); got != 3 {
			t.Fatalf("couponsvc_claims_total{result=duplicate} = %v, want 3", got)
		}
	})

	t.Run("PerAddrHitsAtTheCount", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerAddr: 5}})
		const addr = "198.51.100.7"
		for i := range 5 {
			testsupport.WantStatus(t, r.Claim("", testsupport.Req{Shopper: fmt.Sprintf("s%d", i), Addr: addr}), 201, fmt.Sprintf("claim %d from %s", i+1, addr))
		}
		testsupport.WantRateLimited(t, r.Claim("", testsupport.Req{Shopper: "s9", Addr: addr}), "6th claim from "+addr)
		// X-Forwarded-For is not believed from a peer that is not a trusted proxy.
		testsupport.WantRateLimited(t, r.Claim("", testsupport.Req{Shopper: "s9", Addr: addr, Headers: map[string]string{"X-Forwarded-For": "203.0.113.50"}}),
			"claim with a forged X-Forwarded-For")
		testsupport.WantStatus(t, r.Claim("", testsupport.Req{Shopper: "s9", Addr: "198.51.100.8"}), 201, "claim from another address")
	})

	t.Run("AnonymousCounted", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerAddr: 3}})
		anon := testsupport.Req{Method: "POST", Target: fmt.Sprintf("/api/v1/templates/%d/claim", r.TemplateID), Addr: "198.51.100.20",
			Headers: map[string]string{"Idempotency-Key": "k"}}
		for i := range 3 {
			testsupport.WantStatus(t, r.Do(anon), 401, fmt.Sprintf("anonymous claim %d", i+1))
		}
		testsupport.WantRateLimited(t, r.Do(anon), "4th anonymous claim")
	})

	t.Run("TokensNotLimitedPerAddr", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerAddr: 2, ClaimsPerUser: 3}})
		for i := range 20 {
			testsupport.WantStatus(t, r.Claim(fmt.Sprintf("shop-user-%d", i), testsupport.Req{Addr: "10.0.0.1"}), 201, fmt.Sprintf("app claim %d", i+1))
		}
		// The per-user limit still holds for the app's users.
		for i := range 2 {
			testsupport.WantStatus(t, r.Claim("shop-user-0", testsupport.Req{Addr: "10.0.0.1"}), 201, fmt.Sprintf("claim %d of shop-user-0", i+2))
		}
		testsupport.WantRateLimited(t, r.Claim("shop-user-0", testsupport.Req{Addr: "10.0.0.1"}), "4th claim of shop-user-0")
	})

	t.Run("ZeroDisables", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{}})
		for i := range 30 {
			testsupport.WantStatus(t, r.Claim("", testsupport.Req{Shopper: "busy", Addr: "198.51.100.30"}), 201, fmt.Sprintf("claim %d", i+1))
		}
		if keys := r.Env.Keys(t); len(keys) > 0 {
			for _, k := range keys {
				if strings.Contains(k, "rl:") {
					t.Fatalf("limits off, yet a rate key was written: %s", k)
				}
			}
		}
	})

	t.Run("TrustedProxy", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{TrustedProxies: []string{"10.0.0.0/8"}, Limits: handlers.Limits{ClaimsPerAddr: 1}})
		via := func(client, shopper string) testsupport.Answer {
			return r.Claim("", testsupport.Req{Shopper: shopper, Addr: "10.1.2.3", Headers: map[string]string{"X-Forwarded-For": client}})
		}
		testsupport.WantStatus(t, via("203.0.113.1", "p1"), 201, "first claim of client 1")
		testsupport.WantRateLimited(t, via("203.0.113.1", "p2"), "second claim of client 1")
		testsupport.WantStatus(t, via("203.0.113.2", "p3"), 201, "first claim of client 2")
	})

	t.Run("BadRequestsStillAnsweredByTheHandler", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerUser: 1}})
		for _, body := range []string{`{"user_id":`, `{"user_id":"bad id!"}`, `{"user_id":"u1","extra":1}`, `[]`} {
			testsupport.WantStatus(t, r.Claim("", testsupport.Req{Body: body}), 400, "claim with body "+body)
		}
		testsupport.WantStatus(t, r.Claim("u1", testsupport.Req{}), 201, "first good claim of u1")
		testsupport.WantRateLimited(t, r.Claim("u1", testsupport.Req{}), "second claim of u1")
	})

	t.Run("RedisDownIsUnavailableNotALimit", func(t *testing.T) {
		r := testsupport.NewRig(t, handlers.Options{})
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { dead.Close() })
		down := services.New(&core.Backends{DB: r.Env.Backends.DB, Dialect: r.Env.Backends.Dialect, Redis: dead},
			services.Config{CoreConfig: services.CoreConfig{KeyPrefix: r.Env.Prefix, Logger: r.Env.Config.Logger}})
		r.Router = handlers.NewRouter(down, handlers.Options{Logger: r.Env.Config.Logger, SessionPrincipal: testsupport.TestShopperSession,
			Limits: handlers.Limits{ClaimsPerUser: 1, ClaimsPerAddr: 1, MaxInflightClaims: 4}})
		for i := range 3 {
			for _, q := range []testsupport.Req{{}, {Shopper: "s1"}} {
				a := r.Claim("u1", q)
				if a.Status != 503 || a.Code() != int(models.CodeUnavailable) || a.Header.Get("Retry-After") == "" {
					t.Fatalf("claim %d with Redis down: %v, want 503 unavailable with Retry-After", i+1, a)
				}
			}
		}
	})
}

// signalReader is a request body that tells when the server starts reading
// it and then waits for its content.
type signalReader struct {
	once    sync.Once
	reading chan struct{}
	r       *io.PipeReader
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.reading) })
	return s.r.Read(p)
}

func TestMaxInflightClaims(t *testing.T) {
	for _, limits := range []handlers.Limits{
		{MaxInflightClaims: 2},
		{MaxInflightClaims: 2, ClaimsPerUser: 100, ClaimsPerAddr: 100},
	} {
		t.Run(fmt.Sprintf("RateLimits%t", limits.ClaimsPerUser > 0), func(t *testing.T) {
			r := testsupport.NewRig(t, handlers.Options{Limits: limits})
			// Two claims whose bodies are slow to come hold the two slots.
			type held struct {
				w    *io.PipeWriter
				done chan testsupport.Answer
			}
			var slow []held
			for i := range 2 {
				pr, pw := io.Pipe()
				body := &signalReader{reading: make(chan struct{}), r: pr}
				h := held{w: pw, done: make(chan testsupport.Answer, 1)}
				go func() {
					h.done <- r.Claim("", testsupport.Req{BodyReader: body, Headers: map[string]string{"Idempotency-Key": fmt.Sprint("slow-", i)}})
				}()
				select {
				case <-body.reading:
				case <-time.After(10 * time.Second):
					t.Fatal("the slow claim never started reading its body")
				}
				slow = append(slow, h)
			}
			// A third claim is refused at once, for any caller.
			for _, q := range []testsupport.Req{{}, {Shopper: "s1"}} {
				start := time.Now()
				a := r.Claim("u3", q)
				if elapsed := time.Since(start); elapsed > time.Second {
					t.Fatalf("the refusal took %v: queued rather than refused", elapsed)
				}
				if a.Status != 503 || a.Code() != int(models.CodeUnavailable) || a.Header.Get("Retry-After") != "1" {
					t.Fatalf("third claim in flight: %v, want 503 unavailable with Retry-After 1", a)
				}
			}
			// Other requests are not bounded by the claims in flight.
			testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "GET", Target: "/api/v1/templates"}), 200, "list templates")
			for i, h := range slow {
				fmt.Fprintf(h.w, `{"user_id":"slow-%d"}`, i)
				h.w.Close()
				testsupport.WantStatus(t, <-h.done, 201, fmt.Sprintf("slow claim %d", i+1))
			}
			// The slots are free again.
			for i := range 3 {
				testsupport.WantStatus(t, r.Claim(fmt.Sprint("after-", i), testsupport.Req{}), 201, "claim after the slow ones")
			}
		})
	}
}

// TestBodyLimits checks the 64 KiB bound of a JSON body at its edge.
func TestBodyLimits(t *testing.T) {
	r := testsupport.NewRig(t, handlers.Options{})
	admin := testsupport.Bearer(r.Tokens[models.RoleAdmin])
	const maxBody = 64 << 10
	pad := func(n int) string {
		body := `{"name":"padded","budget_cents":0}`
		return body + strings.Repeat(" ", n-len(body))
	}
	testsupport.WantStatus(t, r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/campaigns", Auth: admin, Body: pad(maxBody)}), 201, "a body of exactly 64 KiB")
	a := r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/campaigns", Auth: admin, Body: pad(maxBody + 1)})
	if a.Status != 413 || a.Body["field"] != "body" {
		t.Fatalf("a body of 64 KiB + 1: %v, want 413 naming the body", a)
	}
	a = r.Do(testsupport.Req{Method: "POST", Target: "/api/v1/campaigns", Auth: admin, Body: pad(10 << 20)})
	if a.Status != 413 || a.Body["field"] != "body" {
		t.Fatalf("a body of 10 MiB: %v, want 413 naming the body", a)
	}
	// A claim counted by the per-user limit is bounded the same way.
	r.Router = handlers.NewRouter(r.Env.Service, handlers.Options{Logger: r.Env.Config.Logger, Limits: handlers.Limits{ClaimsPerUser: 5}})
	a = r.Claim("", testsupport.Req{Body: `{"user_id":"big"}` + strings.Repeat(" ", maxBody)})
	if a.Status != 413 || a.Body["field"] != "body" {
		t.Fatalf("a claim of 64 KiB + 17: %v, want 413 naming the body", a)
	}
	testsupport.WantStatus(t, r.Claim("", testsupport.Req{Body: `{"user_id":"big"}` + strings.Repeat(" ", maxBody-17)}), 201, "a claim of exactly 64 KiB")
}
