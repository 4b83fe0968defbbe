package services_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	claimsvc "github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/redis/go-redis/v9"
)

// claimRaceSpec is one flash sale: claims from users, released together.
type claimRaceSpec struct {
	budget, stock, limit, value int64
	users, claims               int
	services                    int   // instances sharing the backends
	want                        int64 // coupons that must be issued
	// refusedAfterReserve is set when a reservation may be refused by the
	// database and claimed again (Redis lost writes): a key answered
	// in_progress may then end refused instead of issued, and a claim refused
	// maxClaimAttempts times in a row is answered unavailable (at most 1%).
	refusedAfterReserve bool
}

// claimRaceRequest is one request of the race; several may share a key.
type claimRaceRequest struct {
	user, key string
}

// claimRaceOutcome is what one request got.
type claimRaceOutcome struct {
	req  claimRaceRequest
	res  *claimsvc.ClaimResult
	code models.Code
	err  error
}

// raceRequests makes n requests from users: each user gets several keys of
// their own and about one request in eight resends a key already sent.
func raceRequests(users, n int, rng *rand.Rand) []claimRaceRequest {
	var reqs []claimRaceRequest
	resends := n / 8
	for i := 0; len(reqs) < n-resends; i++ {
		u := i % users
		reqs = append(reqs, claimRaceRequest{user: fmt.Sprintf("user-%03d", u), key: fmt.Sprintf("key-%03d-%d", u, i/users)})
	}
	distinct := len(reqs)
	for len(reqs) < n {
		reqs = append(reqs, reqs[rng.IntN(distinct)])
	}
	rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return reqs
}

// patientRedis returns a client of the test's Redis that waits long for a
// pooled connection and a reply.
func (f *claimFixture) patientRedis() redis.UniversalClient {
	f.T.Helper()
	var rdb redis.UniversalClient
	switch {
	case f.Env.Mini != nil:
		rdb = redis.NewClient(&redis.Options{Addr: f.Env.Mini.Addr(), PoolSize: 200, PoolTimeout: time.Minute, ReadTimeout: 30 * time.Second})
	case testenv.IsCluster():
		rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: core.SplitAddrs(os.Getenv("COUPON_TEST_REDIS_ADDRS")),
			PoolSize: 200, PoolTimeout: time.Minute, ReadTimeout: 30 * time.Second})
	default:
		rdb = redis.NewClient(&redis.Options{Addr: os.Getenv("COUPON_TEST_REDIS_ADDR"), PoolSize: 200, PoolTimeout: time.Minute,
			ReadTimeout: 30 * time.Second})
	}
	f.T.Cleanup(func() { rdb.Close() })
	return rdb
}

// runClaimRace releases every request at once and returns the outcomes.
func runClaimRace(t *testing.T, svcs []*services.App, tid int64, reqs []claimRaceRequest) []claimRaceOutcome {
	t.Helper()
	out := make([]claimRaceOutcome, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc := svcs[i%len(svcs)]
			<-start
			res, err := svc.Claim(t.Context(), claimsvc.ClaimRequest{TemplateID: tid, UserID: r.user, IdempotencyKey: r.key})
			out[i] = claimRaceOutcome{req: r, res: res, code: models.ErrorCode(err), err: err}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// checkClaimRace asserts the outcomes against the database: exact counts, no
// user over the limit, replays answered with the first coupon, and a sum of
// results that adds up. It returns the counts by result.
func (f *claimFixture) checkClaimRace(spec claimRaceSpec, tp *models.Template, out []claimRaceOutcome) map[string]int {
	t := f.T
	t.Helper()
	counts := map[string]int{}
	claimedByKey := map[string]*models.Coupon{}
	for _, o := range out {
		switch {
		case o.err == nil && !o.res.Duplicate:
			counts["claimed"]++
			if prev := claimedByKey[o.req.key]; prev != nil {
				t.Errorf("key %s claimed twice: coupons %d and %d", o.req.key, prev.ID, o.res.Coupon.ID)
			}
			claimedByKey[o.req.key] = o.res.Coupon
		case o.err == nil:
			counts["duplicate"]++
		default:
			counts[o.code.Word()]++
		}
	}
	// Coupons in the database, by key.
	var rows []models.Coupon
	if err := f.Env.Backends.DB.Where("template_id = ?", tp.ID).Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	dbByKey := map[string]models.Coupon{}
	perUser := map[string]int64{}
	for _, c := range rows {
		dbByKey[c.RequestID] = c
		perUser[c.UserID]++
	}
	switch {
	case int64(len(rows)) != int64(counts["claimed"]):
		t.Errorf("%d coupons in the database, %d claims answered claimed", len(rows), counts["claimed"])
	case spec.refusedAfterReserve && int64(len(rows)) > spec.want:
		t.Errorf("%d coupons in the database; want at most %d", len(rows), spec.want)
	case !spec.refusedAfterReserve && int64(len(rows)) != spec.want:
		// When reservations may fail after the script, a claim can be
		// refused while stock is held by one that later fails; the caller
		// then checks that the stock comes back (topUp).
		t.Errorf("%d coupons in the database; want exactly %d", len(rows), spec.want)
	}
	for u, n := range perUser {
		if n > spec.limit {
			t.Errorf("user %s holds %d coupons, over the limit of %d", u, n, spec.limit)
		}
	}
	for key, c := range claimedByKey {
		row, ok := dbByKey[key]
		if !ok || row.ID != c.ID || row.UserID != c.UserID || row.Code != c.Code {
			t.Errorf("key %s answered claimed with coupon %d, the database holds %+v", key, c.ID, row)
		}
	}
	for key, row := range dbByKey {
		if claimedByKey[key] == nil {
			t.Errorf("coupon %d (key %s) is in the database but no request was answered claimed", row.ID, key)
		}
	}
	answered := map[string]int{} // requests per key answered other than in_progress
	for _, o := range out {
		if o.code != models.CodeInProgress {
			answered[o.req.key]++
		}
	}
	for _, o := range out {
		switch {
		case o.err == nil && o.res.Duplicate:
			row, ok := dbByKey[o.req.key]
			if !ok || o.res.Coupon.ID != row.ID || o.res.Coupon.Code != row.Code {
				t.Errorf("replay of key %s answered coupon %d, the first coupon is %+v", o.req.key, o.res.Coupon.ID, row)
			}
		case o.code == models.CodeInProgress:
			if _, ok := dbByKey[o.req.key]; !ok && !spec.refusedAfterReserve {
				t.Errorf("key %s answered in_progress but its first request issued nothing", o.req.key)
			}
			if answered[o.req.key] == 0 {
				t.Errorf("key %s answered in_progress, and no request with it was answered otherwise", o.req.key)
			}
		case o.code == models.CodeUnavailable && spec.refusedAfterReserve:
			if seen := counts["unavailable-logged"]; seen < 3 {
				counts["unavailable-logged"]++
				t.Logf("request %+v: %v", o.req, o.err)
			}
		case o.err != nil && o.code != models.CodeSoldOut && o.code != models.CodeUserLimitReached && o.code != models.CodeBudgetExhausted:
			t.Errorf("request %+v: unexpected error %v", o.req, o.err)
		}
	}
	// 503 is an honest answer while a flushed Redis is rebuilt and claims
	// collide on slots it handed out twice; how many there are depends on how
	// fast the machine clears the storm, so the bound is loose: a regression
	// that turns the storm into mostly 503s still fails.
	if n := counts["unavailable"]; n > len(out)/20 {
		t.Errorf("%d claims answered unavailable, more than 5%%", n)
	}
	sum := counts["claimed"] + counts["sold_out"] + counts["user_limit_reached"] + counts["budget_exhausted"] +
		counts["duplicate"] + counts["in_progress"] + counts["unavailable"]
	if sum != len(out) {
		t.Errorf("results %v add up to %d, want %d", counts, sum, len(out))
	}
	delete(counts, "unavailable-logged")
	return counts
}

func TestClaimRace(t *testing.T) {
	specs := []struct {
		name string
		spec claimRaceSpec
	}{
		{"Stock", claimRaceSpec{stock: 500, limit: 2, value: 100, users: 800, claims: 3000, services: 1, want: 500}},
		{"StockTwoServices", claimRaceSpec{stock: 500, limit: 2, value: 100, users: 800, claims: 3000, services: 2, want: 500}},
		// The budget runs out at 300 coupons, before the stock of 500.
		{"Budget", claimRaceSpec{budget: 30_050, stock: 500, limit: 2, value: 100, users: 800, claims: 3000, services: 1, want: 300}},
	}
	for _, s := range specs {
		t.Run(s.name, func(t *testing.T) {
			spec := s.spec
			f := newClaimFixture(t, services.Config{})
			c := f.Campaign(spec.budget)
			tp := f.template(c.ID, spec.stock, spec.limit, spec.value)
			// The race is about counts, not latency: under -race on two
			// cores 3,000 claims queue for the Redis pool and the one SQLite
			// connection for seconds, which must not turn into 503s.
			var svcs []*services.App
			for range spec.services {
				b := *f.Env.Backends
				b.Redis = f.patientRedis()
				svcs = append(svcs, f.serviceOver(b, services.Config{CoreConfig: services.CoreConfig{TemplateCacheTTL: time.Minute, DBTimeout: time.Minute}}))
			}
			for _, svc := range svcs { // a warm template cache, as in a running sale
				if _, err := svc.GetTemplate(f.Ctx, tp.ID); err != nil {
					t.Fatal(err)
				}
			}
			reqs := raceRequests(spec.users, spec.claims, rand.New(rand.NewPCG(uint64(len(s.name)), 2)))
			began := time.Now()
			out := runClaimRace(t, svcs, tp.ID, reqs)
			elapsed := time.Since(began)
			counts := f.checkClaimRace(spec, tp, out)
			t.Logf("%d claims in %v: %v", len(out), elapsed.Round(time.Millisecond), counts)
			if spec.budget > 0 {
				if counts["sold_out"] != 0 || counts["budget_exhausted"] == 0 {
					t.Errorf("results %v: the budget must run out, not the stock", counts)
				}
			} else if counts["sold_out"] == 0 {
				t.Errorf("results %v: the stock must run out", counts)
			}
			f.assertAgree(c, tp)
		})
	}
}
