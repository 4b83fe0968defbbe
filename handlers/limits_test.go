package handlers_test

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"couponsvc/handlers"
	"couponsvc/models"
	"couponsvc/services"
	"couponsvc/services/core"

	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
)

// wantRateLimited checks a 429 rate_limited answer with a Retry-After.
func wantRateLimited(t *testing.T, a answer, what string) {
	t.Helper()
	if a.status != 429 || a.code() != int(models.CodeRateLimited) || a.body["result"] != "rate_limited" {
		t.Fatalf("%s: %v, want 429 rate_limited", what, a)
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("%s: Retry-After %q, want 1 to 60 seconds", what, a.header.Get("Retry-After"))
	}
}

// wantStatus checks an answer's status.
func wantStatus(t *testing.T, a answer, status int, what string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: %v, want %d", what, a, status)
	}
}

func TestClaimRateLimits(t *testing.T) {
	t.Run("PerUserHitsAtTheCount", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerUser: 5}})
		for i := range 5 {
			wantStatus(t, r.claim("u1", req{}), 201, fmt.Sprintf("claim %d of u1", i+1))
		}
		wantRateLimited(t, r.claim("u1", req{}), "6th claim of u1")
		// The same user through a page session shares the budget.
		wantRateLimited(t, r.claim("", req{shopper: "u1"}), "claim of u1 as a shopper")
		wantStatus(t, r.claim("u2", req{}), 201, "claim of u2")
		// A refused claim took nothing.
		var n int64
		r.Env.Backends.DB.Table("user_coupons").Where("user_id = ?", "u1").Count(&n)
		if n != 5 {
			t.Fatalf("u1 holds %d coupons, want 5", n)
		}
		if got := counterValue(t, r.Env.Service.Metrics().Refused.WithLabelValues("rate_limited_user")); got != 2 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_user} = %v, want 2", got)
		}
	})

	t.Run("ReplayAnsweredOverTheLimit", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerUser: 3}})
		key := func(k string) req { return req{headers: map[string]string{"Idempotency-Key": k}} }
		var codes []string
		for i := range 3 {
			a := r.claim("u1", key(fmt.Sprint("first-", i)))
			wantStatus(t, a, 201, fmt.Sprintf("claim %d of u1", i+1))
			codes = append(codes, a.body["coupon"].(map[string]any)["code"].(string))
		}
		wantRateLimited(t, r.claim("u1", key("new-1")), "4th claim of u1")
		for i, code := range codes {
			a := r.claim("u1", key(fmt.Sprint("first-", i)))
			if a.status != 200 || a.body["result"] != "duplicate" || a.code() != int(models.CodeDuplicate) {
				t.Fatalf("replay of claim %d over the limit: %v, want 200 duplicate", i+1, a)
			}
			if got := a.body["coupon"].(map[string]any)["code"]; got != code {
				t.Fatalf("replay of claim %d: coupon %v, want %s", i+1, got, code)
			}
		}
		wantRateLimited(t, r.claim("u1", key("new-2")), "new claim of u1 after the replays")
		// A key of another user is no replay of u1's.
		wantRateLimited(t, r.claim("u1", key("other")), "claim of u1 before u2's")
		wantStatus(t, r.claim("u2", key("u2-1")), 201, "claim of u2")
		wantRateLimited(t, r.claim("u1", key("u2-1")), "claim of u1 under u2's key")
		var n int64
		r.Env.Backends.DB.Table("user_coupons").Where("user_id = ?", "u1").Count(&n)
		if n != 3 {
			t.Fatalf("u1 holds %d coupons, want 3", n)
		}
		m := r.Env.Service.Metrics()
		if got := counterValue(t, m.Refused.WithLabelValues("rate_limited_user")); got != 4 {
			t.Fatalf("couponsvc_refused_total{reason=rate_limited_user} = %v, want 4", got)
		}
		if got := counterValue(t, m.Claims.WithLabelValues("duplicate")); got != 3 {
			t.Fatalf("couponsvc_claims_total{result=duplicate} = %v, want 3", got)
		}
	})

	t.Run("PerAddrHitsAtTheCount", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerAddr: 5}})
		const addr = "198.51.100.7"
		for i := range 5 {
			wantStatus(t, r.claim("", req{shopper: fmt.Sprintf("s%d", i), addr: addr}), 201, fmt.Sprintf("claim %d from %s", i+1, addr))
		}
		wantRateLimited(t, r.claim("", req{shopper: "s9", addr: addr}), "6th claim from "+addr)
		// X-Forwarded-For is not believed from a peer that is not a trusted proxy.
		wantRateLimited(t, r.claim("", req{shopper: "s9", addr: addr, headers: map[string]string{"X-Forwarded-For": "203.0.113.50"}}),
			"claim with a forged X-Forwarded-For")
		wantStatus(t, r.claim("", req{shopper: "s9", addr: "198.51.100.8"}), 201, "claim from another address")
	})

	t.Run("AnonymousCounted", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerAddr: 3}})
		anon := req{method: "POST", target: fmt.Sprintf("/api/v1/templates/%d/claim", r.templateID), addr: "198.51.100.20",
			headers: map[string]string{"Idempotency-Key": "k"}}
		for i := range 3 {
			wantStatus(t, r.do(anon), 401, fmt.Sprintf("anonymous claim %d", i+1))
		}
		wantRateLimited(t, r.do(anon), "4th anonymous claim")
	})

	t.Run("TokensNotLimitedPerAddr", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerAddr: 2, ClaimsPerUser: 3}})
		for i := range 20 {
			wantStatus(t, r.claim(fmt.Sprintf("shop-user-%d", i), req{addr: "10.0.0.1"}), 201, fmt.Sprintf("app claim %d", i+1))
		}
		// The per-user limit still holds for the app's users.
		for i := range 2 {
			wantStatus(t, r.claim("shop-user-0", req{addr: "10.0.0.1"}), 201, fmt.Sprintf("claim %d of shop-user-0", i+2))
		}
		wantRateLimited(t, r.claim("shop-user-0", req{addr: "10.0.0.1"}), "4th claim of shop-user-0")
	})

	t.Run("ZeroDisables", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{}})
		for i := range 30 {
			wantStatus(t, r.claim("", req{shopper: "busy", addr: "198.51.100.30"}), 201, fmt.Sprintf("claim %d", i+1))
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
		r := newRig(t, handlers.Options{TrustedProxies: []string{"10.0.0.0/8"}, Limits: handlers.Limits{ClaimsPerAddr: 1}})
		via := func(client, shopper string) answer {
			return r.claim("", req{shopper: shopper, addr: "10.1.2.3", headers: map[string]string{"X-Forwarded-For": client}})
		}
		wantStatus(t, via("203.0.113.1", "p1"), 201, "first claim of client 1")
		wantRateLimited(t, via("203.0.113.1", "p2"), "second claim of client 1")
		wantStatus(t, via("203.0.113.2", "p3"), 201, "first claim of client 2")
	})

	t.Run("BadRequestsStillAnsweredByTheHandler", func(t *testing.T) {
		r := newRig(t, handlers.Options{Limits: handlers.Limits{ClaimsPerUser: 1}})
		for _, body := range []string{`{"user_id":`, `{"user_id":"bad id!"}`, `{"user_id":"u1","extra":1}`, `[]`} {
			wantStatus(t, r.claim("", req{body: body}), 400, "claim with body "+body)
		}
		wantStatus(t, r.claim("u1", req{}), 201, "first good claim of u1")
		wantRateLimited(t, r.claim("u1", req{}), "second claim of u1")
	})

	t.Run("RedisDownIsUnavailableNotALimit", func(t *testing.T) {
		r := newRig(t, handlers.Options{})
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { dead.Close() })
		down := services.New(&core.Backends{DB: r.Env.Backends.DB, Dialect: r.Env.Backends.Dialect, Redis: dead},
			services.Config{KeyPrefix: r.Env.Prefix, Logger: r.Env.Config.Logger})
		r.router = handlers.NewRouter(down, handlers.Options{Logger: r.Env.Config.Logger, SessionPrincipal: testShopperSession, Middleware: checkedAnswers(t),
			Limits: handlers.Limits{ClaimsPerUser: 1, ClaimsPerAddr: 1, MaxInflightClaims: 4}})
		for i := range 3 {
			for _, q := range []req{{}, {shopper: "s1"}} {
				a := r.claim("u1", q)
				if a.status != 503 || a.code() != int(models.CodeUnavailable) || a.header.Get("Retry-After") == "" {
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
			r := newRig(t, handlers.Options{Limits: limits})
			// Two claims whose bodies are slow to come hold the two slots.
			type held struct {
				w    *io.PipeWriter
				done chan answer
			}
			var slow []held
			for i := range 2 {
				pr, pw := io.Pipe()
				body := &signalReader{reading: make(chan struct{}), r: pr}
				h := held{w: pw, done: make(chan answer, 1)}
				go func() {
					h.done <- r.claim("", req{bodyReader: body, headers: map[string]string{"Idempotency-Key": fmt.Sprint("slow-", i)}})
				}()
				select {
				case <-body.reading:
				case <-time.After(10 * time.Second):
					t.Fatal("the slow claim never started reading its body")
				}
				slow = append(slow, h)
			}
			// A third claim is refused at once, for any caller.
			for _, q := range []req{{}, {shopper: "s1"}} {
				start := time.Now()
				a := r.claim("u3", q)
				if elapsed := time.Since(start); elapsed > time.Second {
					t.Fatalf("the refusal took %v: queued rather than refused", elapsed)
				}
				if a.status != 503 || a.code() != int(models.CodeUnavailable) || a.header.Get("Retry-After") != "1" {
					t.Fatalf("third claim in flight: %v, want 503 unavailable with Retry-After 1", a)
				}
			}
			// Other requests are not bounded by the claims in flight.
			wantStatus(t, r.do(req{method: "GET", target: "/api/v1/templates"}), 200, "list templates")
			for i, h := range slow {
				fmt.Fprintf(h.w, `{"user_id":"slow-%d"}`, i)
				h.w.Close()
				wantStatus(t, <-h.done, 201, fmt.Sprintf("slow claim %d", i+1))
			}
			// The slots are free again.
			for i := range 3 {
				wantStatus(t, r.claim(fmt.Sprint("after-", i), req{}), 201, "claim after the slow ones")
			}
		})
	}
}

// TestBodyLimits checks the 64 KiB bound of a JSON body at its edge.
func TestBodyLimits(t *testing.T) {
	r := newRig(t, handlers.Options{})
	admin := bearer(r.tokens[models.RoleAdmin])
	const maxBody = 64 << 10
	pad := func(n int) string {
		body := `{"name":"padded","budget_cents":0}`
		return body + strings.Repeat(" ", n-len(body))
	}
	wantStatus(t, r.do(req{method: "POST", target: "/api/v1/campaigns", auth: admin, body: pad(maxBody)}), 201, "a body of exactly 64 KiB")
	a := r.do(req{method: "POST", target: "/api/v1/campaigns", auth: admin, body: pad(maxBody + 1)})
	if a.status != 413 || a.body["field"] != "body" {
		t.Fatalf("a body of 64 KiB + 1: %v, want 413 naming the body", a)
	}
	a = r.do(req{method: "POST", target: "/api/v1/campaigns", auth: admin, body: pad(10 << 20)})
	if a.status != 413 || a.body["field"] != "body" {
		t.Fatalf("a body of 10 MiB: %v, want 413 naming the body", a)
	}
	// A claim counted by the per-user limit is bounded the same way.
	r.router = handlers.NewRouter(r.Env.Service, handlers.Options{Logger: r.Env.Config.Logger, Middleware: checkedAnswers(t), Limits: handlers.Limits{ClaimsPerUser: 5}})
	a = r.claim("", req{body: `{"user_id":"big"}` + strings.Repeat(" ", maxBody)})
	if a.status != 413 || a.body["field"] != "body" {
		t.Fatalf("a claim of 64 KiB + 17: %v, want 413 naming the body", a)
	}
	wantStatus(t, r.claim("", req{body: `{"user_id":"big"}` + strings.Repeat(" ", maxBody-17)}), 201, "a claim of exactly 64 KiB")
}

// counterValue reads a Prometheus counter.
func counterValue(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
