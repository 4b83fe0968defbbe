package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// The service's own cost per answer on the hot paths of the API, through
// the real router and its middleware, in process: a claim, a sold-out
// claim (a flash sale after its last coupon) and a one-step redemption, on
// the tests' backends (embedded unless COUPON_TEST_MYSQL_DSN /
// COUPON_TEST_REDIS_ADDR say otherwise). Besides time and allocations each
// reports the database statements (through gorm; BEGIN and COMMIT are not
// counted) and the Redis commands per answer, over the whole process, the
// service's background work included (BENCHMARKS.md, "Profiles").
//
//	go test -run '^$' -bench 'Claim|SoldOut|Redeem' -benchmem -cpuprofile cpu.out ./handlers/api

// hotPath is a router over fresh backends with an app token, counting the
// statements and Redis commands sent while on, and apart those sent in the
// context of its own requests (post), which the service's background work
// cannot add to.
type hotPath struct {
	env    *testenv.Env
	router *gin.Engine
	token  string
	on     atomic.Bool
	stmts  atomic.Int64
	redis  atomic.Int64
	// reqStmts and reqRedis count what post's requests sent, on or not.
	reqStmts atomic.Int64
	reqRedis atomic.Int64
}

// inRequest marks the context of post's requests.
type inRequest struct{}

func (h *hotPath) count(ctx context.Context, all, req *atomic.Int64, n int64) {
	if h.on.Load() {
		all.Add(n)
	}
	if ctx != nil && ctx.Value(inRequest{}) != nil {
		req.Add(n)
	}
}

func newHotPath(b testing.TB) *hotPath { return newHotPathWith(b, services.Config{}) }

func newHotPathWith(b testing.TB, cfg services.Config) *hotPath {
	b.Helper()
	h := &hotPath{env: testenv.New(b, cfg)}
	h.router = handlers.NewRouter(h.env.Service, handlers.Options{Logger: h.env.Config.Logger})
	token, _, err := h.env.Service.Admin.CreateToken(context.Background(), "bench", models.RoleApp, "shop")
	if err != nil {
		b.Fatal(err)
	}
	h.token = token
	count := func(db *gorm.DB) { h.count(db.Statement.Context, &h.stmts, &h.reqStmts, 1) }
	testenv.OnStatement(b, h.env.Backends.DB, "bench:count", count)
	h.env.Backends.Redis.AddHook(redisCounter{h})
	return h
}

// template creates a fixed template of 500 off with stock coupons.
func (h *hotPath) template(b testing.TB, stock int64) int64 {
	b.Helper()
	ctx := context.Background()
	camp, err := h.env.Service.CreateCampaign(ctx, "bench", models.Campaign{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	tp, err := h.env.Service.CreateTemplate(ctx, "bench", models.Template{CampaignID: camp.ID, Name: "bench",
		Kind: models.KindFixed, FaceValueCents: 500, TotalStock: stock, PerUserLimit: 1, ValidDays: 30})
	if err != nil {
		b.Fatal(err)
	}
	return tp.ID
}

// post sends one request and returns its status and body.
func (h *hotPath) post(path, key, body string) (int, string) {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req = req.WithContext(context.WithValue(req.Context(), inRequest{}, true))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	h.router.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// run times b.N calls of op and reports the statements and Redis commands
// per call.
func (h *hotPath) run(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	h.stmts.Store(0)
	h.redis.Store(0)
	h.on.Store(true)
	b.ResetTimer()
	for i := range b.N {
		op(i)
	}
	b.StopTimer()
	h.on.Store(false)
	b.ReportMetric(float64(h.stmts.Load())/float64(b.N), "stmts/op")
	b.ReportMetric(float64(h.redis.Load())/float64(b.N), "redis/op")
}

// redisCounter counts the commands sent while its hotPath is on (a
// pipeline's commands one by one).
type redisCounter struct{ h *hotPath }

func (r redisCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r redisCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.h.count(ctx, &r.h.redis, &r.h.reqRedis, 1)
		return next(ctx, cmd)
	}
}

func (r redisCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.h.count(ctx, &r.h.redis, &r.h.reqRedis, int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func BenchmarkClaim(b *testing.B) {
	h := newHotPath(b)
	tid := h.template(b, int64(b.N)+1)
	path := fmt.Sprintf("/api/v1/templates/%d/claim", tid)
	h.run(b, func(i int) {
		if code, body := h.post(path, fmt.Sprintf("k%d", i), fmt.Sprintf(`{"user_id":"u%d"}`, i)); code != http.StatusCreated {
			b.Fatalf("claim %d: %d %s", i, code, body)
		}
	})
}

// BenchmarkSoldOut claims, as new users, a template whose one coupon is
// gone: every answer is 409 sold_out.
func BenchmarkSoldOut(b *testing.B) {
	h := newHotPath(b)
	tid := h.template(b, 1)
	path := fmt.Sprintf("/api/v1/templates/%d/claim", tid)
	for i, want := range []int{http.StatusCreated, http.StatusConflict} {
		if code, body := h.post(path, fmt.Sprintf("first%d", i), fmt.Sprintf(`{"user_id":"first%d"}`, i)); code != want {
			b.Fatalf("claim %d: %d %s, want %d", i, code, body, want)
		}
	}
	h.run(b, func(i int) {
		if code, body := h.post(path, fmt.Sprintf("k%d", i), fmt.Sprintf(`{"user_id":"u%d"}`, i)); code != http.StatusConflict ||
			!strings.Contains(body, `"sold_out"`) {
			b.Fatalf("claim %d: %d %s, want 409 sold_out", i, code, body)
		}
	})
}

// BenchmarkRedeem redeems b.N pre-claimed coupons, each on a new
// amount-only order.
func BenchmarkRedeem(b *testing.B) {
	h := newHotPath(b)
	tid := h.template(b, int64(b.N)+1)
	ctx := context.Background()
	codes := make([]string, b.N)
	for i := range codes {
		res, err := h.env.Service.Claims.Claim(ctx, claims.ClaimRequest{TemplateID: tid, UserID: fmt.Sprintf("u%d", i),
			IdempotencyKey: fmt.Sprintf("k%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		codes[i] = res.Coupon.Code
	}
	h.run(b, func(i int) {
		body := fmt.Sprintf(`{"coupon_code":%q,"order_id":"o%d","order_amount_cents":10000}`, codes[i], i)
		if code, out := h.post("/api/v1/redemptions", "", body); code != http.StatusOK || !strings.Contains(out, `"payable_cents":9500`) {
			b.Fatalf("redeem %d: %d %s", i, code, out)
		}
	})
}

// A claim of a template this instance knows sold out is answered 409
// sold_out from memory (docs/soldout.md): the claim script is not run (the
// memory's counter says so, exactly), and the request sends no statement
// and no Redis command on the plain client, where the revocation check
// went before it was pushed. (The scripts go through go-redis's automatic
// pipelining, whose batches carry no request's context: the counter stands
// for them.)
func TestSoldOutAnswerSendsNothing(t *testing.T) {
	// The clock stands still: the memory's second never runs out, so no
	// claim goes to the script as a probe.
	var clock testenv.Clock
	clock.Set(time.Now().UTC().Truncate(time.Second))
	h := newHotPathWith(t, services.Config{CoreConfig: services.CoreConfig{Now: clock.Now}})
	tid := h.template(t, 1)
	path := fmt.Sprintf("/api/v1/templates/%d/claim", tid)
	fromMemory := h.env.Service.Metrics().SoldOutFromMemory
	// The first claim takes the coupon; the next are answered sold_out by
	// the script until the memory is learnt (a read after the first).
	if code, body := h.post(path, "first", `{"user_id":"first"}`); code != http.StatusCreated {
		t.Fatalf("first claim: %d %s, want 201", code, body)
	}
	for i := 0; testsupport.CounterValue(t, fromMemory) == 0; i++ {
		if i == 500 {
			t.Fatal("no claim answered from memory after 500 sold_out answers")
		}
		if code, body := h.post(path, fmt.Sprintf("learn%d", i), fmt.Sprintf(`{"user_id":"learn%d"}`, i)); code != http.StatusConflict {
			t.Fatalf("claim %d: %d %s, want 409", i, code, body)
		}
		time.Sleep(time.Millisecond)
	}
	// The counts see the requests' statements and plain commands.
	marked := context.WithValue(context.Background(), inRequest{}, true)
	if err := h.env.Backends.Redis.Ping(marked).Err(); err != nil {
		t.Fatal(err)
	}
	if h.reqRedis.Load() == 0 || h.reqStmts.Load() == 0 {
		t.Fatalf("counted %d Redis commands and %d statements in requests, want some", h.reqRedis.Load(), h.reqStmts.Load())
	}
	h.reqRedis.Store(0)
	h.reqStmts.Store(0)
	before := testsupport.CounterValue(t, fromMemory)
	want := `{"code":2,"result":"sold_out","error":"this coupon is sold out"}`
	for i := range 20 {
		if code, body := h.post(path, fmt.Sprintf("k%d", i), fmt.Sprintf(`{"user_id":"u%d"}`, i)); code != http.StatusConflict || body != want {
			t.Fatalf("claim %d: %d %s, want 409 %s", i, code, body, want)
		}
	}
	if n := testsupport.CounterValue(t, fromMemory) - before; n != 20 {
		t.Errorf("%v answers from memory, want 20", n)
	}
	if r, s := h.reqRedis.Load(), h.reqStmts.Load(); r != 0 || s != 0 {
		t.Errorf("20 sold-out answers sent %d Redis commands and %d statements, want none", r, s)
	}
}
