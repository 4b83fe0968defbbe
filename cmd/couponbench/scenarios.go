package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// sizes are the counts of every scenario; -short divides them by 50.
type sizes struct {
	flashStock, flashClaims, flashUsers int
	claims                              int // claim and baseline
	redeems                             int // redeem and rawredeem
	mixedOps                            int
	codes                               int // generate and rawinsert
	export                              int // coupons exported
	cartOrders                          int // cartcheckout, each half
	pricingCarts                        int // carts priced by pricing
	validates                           int // validate
	statementUsers                      int // statements: users, each one operation of every kind
}

func fullSizes() sizes {
	return sizes{flashStock: 10000, flashClaims: 100000, flashUsers: 60000, claims: 50000, redeems: 20000, mixedOps: 30000,
		codes: 1_000_000, export: 1_000_000, cartOrders: 10000, pricingCarts: 200_000,
		validates: 50000, statementUsers: 500}
}

func (z sizes) short() sizes { return z.divided(50) }

// divided divides every count by by (at least 10 each), for a reduced run.
func (z sizes) divided(by int) sizes {
	d := func(n int) int { return max(n/by, 10) }
	return sizes{d(z.flashStock), d(z.flashClaims), d(z.flashUsers), d(z.claims), d(z.redeems), d(z.mixedOps), d(z.codes), d(z.export),
		d(z.cartOrders), d(z.pricingCarts), d(z.validates), d(z.statementUsers)}
}

// env is what every service scenario shares.
type env struct {
	c      *client
	runID  string
	conc   int
	z      sizes
	seed   uint64
	rssPID int
	log    io.Writer
	prof   profiler
	short  bool
	db     *sql.DB // the service's database, when reachable: use-log checks
	// rdb is the service's Redis, when reachable: its cost per answer
	// before and after a flash sale's sell-out.
	rdb *redis.Client
	// rate, when above zero, runs the claim scenarios open loop at this
	// many requests a second (see driveRate); rateOf says where it comes from.
	rate   float64
	rateOf string
}

// claimWords are the answers a claim may get.
var claimWords = []string{"claimed", "duplicate", "sold_out", "user_limit_reached", "in_progress"}

// runClaims drives a claim plan against template tid and checks the answers.
func (e *env) runClaims(ctx context.Context, s *Summary, tid int64, plan []claimReq, stock, limit int, prefix string) claimTally {
	out := make([]claimOutcome, len(plan))
	var f faults
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := e.prof.start(ctx, s.Name)
	sell := newSellOutMeter(ctx, e.rdb)
	run := func(ctx context.Context, _, i int) sample {
		p := plan[i]
		a := e.c.claim(ctx, tid, userName(prefix, p.user), keyName(prefix, p.key))
		kind := classify(&a, &f, "claim", claimWords...)
		sell.answered(ctx, kind)
		o := claimOutcome{kind: kind}
		if a.body.Coupon != nil {
			o.code = a.body.Coupon.Code
		}
		if (kind == "claimed" || kind == "duplicate") && o.code == "" {
			f.add("claim: %s answer without a coupon code", kind)
		}
		out[i] = o
		return sample{kind: kind, d: a.d}
	}
	var t *tally
	var elapsed time.Duration
	if e.rate > 0 {
		var ol OpenLoop
		t, elapsed, ol = driveRate(ctx, len(plan), e.rate, e.conc, run)
		ol.Of = e.rateOf
		s.OpenLoop = &ol
	} else {
		t, elapsed = drive(ctx, len(plan), e.conc, run)
	}
	s.RedisPhases = sell.phases(ctx)
	s.MaxRSSMB = rss.Stop()
	s.Profile = profDone()
	s.fill(t, elapsed)
	f.report(s)
	return verifyClaims(s, plan, out, stock, limit)
}

// afterClaims runs the service-side checks of a claim scenario; states and
// uncertain (nil in a scenario of claims only) are what checkUsers takes.
func (e *env) afterClaims(ctx context.Context, s *Summary, tid int64, limit int, prefix string, plan []claimReq, tally claimTally,
	states map[string]couponState, uncertain map[string]bool) {
	checkServerCount(ctx, s, e.c, tid, tally.claimed)
	all := make([]int, 0, len(plan))
	for _, p := range plan {
		all = append(all, p.user)
	}
	checkUsers(ctx, s, e.c, tid, limit, prefix, sampleUsers(tally.userCodes, all, 150, 50), tally.userCodes, states, uncertain)
	checkReconcile(ctx, s, e.c, tid, e.log)
}

// runFlash is the flash sale: far more claims than stock, users retrying.
func (e *env) runFlash(ctx context.Context) *Summary {
	z := e.z
	return e.runFlashSized(ctx, "flash", z.flashStock, z.flashClaims, z.flashUsers)
}

// runFlashSized is a flash sale of claims requests from users users on a
// stock of stock, under the scenario name name.
func (e *env) runFlashSized(ctx context.Context, name string, stock, claims, users int) *Summary {
	s := &Summary{Name: name, OKWord: "claimed", Concurrency: e.conc,
		Params: fmt.Sprintf("stock %d, limit 1, %d claims from %d users (retries: half same key, half new key)", stock, claims, users)}
	prefix := "b" + e.runID + name[:1] + fmt.Sprint(len(name)) + "-"
	tid, err := e.c.createTemplate(ctx, templateSpec{name: "bench " + name + " " + e.runID, stock: stock, limit: 1, faceValue: 500})
	if err != nil {
		s.Error = err.Error()
		return s
	}
	plan := flashPlan(claims, users, 0.5, e.seed)
	tally := e.runClaims(ctx, s, tid, plan, stock, 1, prefix)
	s.Coupons = tally.claimed
	s.check("exact stock", tally.claimed == stock, "%d coupons claimed, stock %d", tally.claimed, stock)
	e.afterClaims(ctx, s, tid, 1, prefix, plan, tally, nil, nil)
	if e.rdb != nil && tally.claimed == stock {
		e.soldOutPhase(ctx, s, tid, prefix, claims)
	}
	return s
}

// soldOutPhase ends a flash run whose template sold out: a tenth of its
// claims more (50 to 2,000), each from a new user with a new key, every one
// to be answered sold_out, sent between two idle windows of Redis's
// counters (SoldOutPhase). Its answers are not in the run's figures.
func (e *env) soldOutPhase(ctx context.Context, s *Summary, tid int64, prefix string, claims int) {
	n := min(max(claims/10, 50), 2000)
	idle := 500 * time.Millisecond
	if e.short {
		idle = 200 * time.Millisecond
	}
	var others atomic.Int64
	p, ok := measureSoldOut(ctx, e.rdb, idle, func() int {
		drive(ctx, n, e.conc, func(ctx context.Context, _, i int) sample {
			a := e.c.claim(ctx, tid, userName(prefix+"so", i), keyName(prefix+"so", i))
			k := a.kind()
			if k != "sold_out" {
				others.Add(1)
			}
			return sample{kind: k, d: a.d}
		})
		return n - int(others.Load())
	})
	s.check("sold out only", others.Load() == 0, "%d of %d new claims after the sell-out answered sold_out", n-int(others.Load()), n)
	if ok {
		s.RedisPhases = append(s.RedisPhases, p)
	}
}

// runClaim is the committed-claim rate: stock above the requests, every
// claim a new user.
func (e *env) runClaim(ctx context.Context) *Summary {
	return e.runClaimSized(ctx, "claim", e.z.claims)
}

// runClaimSized is the committed-claim rate of n claims under the scenario
// name name.
func (e *env) runClaimSized(ctx context.Context, name string, n int) *Summary {
	stock := n + n/10
	s := &Summary{Name: name, OKWord: "claimed", Concurrency: e.conc,
		Params: fmt.Sprintf("stock %d, limit 1, %d claims by distinct users", stock, n)}
	prefix := "b" + e.runID + name[:1] + fmt.Sprint(len(name)) + "-"
	tid, err := e.c.createTemplate(ctx, templateSpec{name: "bench " + name + " " + e.runID, stock: stock, limit: 1, faceValue: 500})
	if err != nil {
		s.Error = err.Error()
		return s
	}
	plan := make([]claimReq, n)
	for i := range plan {
		plan[i] = claimReq{user: i, key: i}
	}
	tally := e.runClaims(ctx, s, tid, plan, stock, 1, prefix)
	s.Coupons = tally.claimed
	shed := 0
	for k, v := range s.Results {
		if transient[k] {
			shed += v
		}
	}
	s.check("every claim claimed", tally.claimed+shed == n,
		"%d of %d claims claimed, %d shed by the service (busy, rate_limited, unavailable)", tally.claimed, n, shed)
	e.afterClaims(ctx, s, tid, 1, prefix, plan, tally, nil, nil)
	return s
}

// redeemable creates the template of a checkout scenario (n coupons of 500
// cents, one a user) and claims its coupons untimed, one for each user named
// after prefix; a failure is the summary's error (ok false).
func (e *env) redeemable(ctx context.Context, s *Summary, name string, n int, prefix string) (int64, []string, bool) {
	tid, err := e.c.createTemplate(ctx, templateSpec{name: name + " " + e.runID, stock: n, limit: 1, faceValue: 500})
	if err != nil {
		s.Error = err.Error()
		return 0, nil, false
	}
	codes, err := e.prefill(ctx, tid, n, prefix)
	if err != nil {
		s.Error = err.Error()
		return 0, nil, false
	}
	s.Coupons = n
	return tid, codes, true
}

// prefill claims one coupon for each of n users, untimed, retrying answers that
// shed load a bounded number of times; it returns the codes by user.
func (e *env) prefill(ctx context.Context, tid int64, n int, prefix string) ([]string, error) {
	return e.prefillKeyed(ctx, tid, n, prefix, prefix)
}

// prefillKeyed is prefill with the users named after userPrefix and the
// idempotency keys after keyPrefix: one user claims on several templates.
func (e *env) prefillKeyed(ctx context.Context, tid int64, n int, userPrefix, keyPrefix string) ([]string, error) {
	codes := make([]string, n)
	var f faults
	drive(ctx, n, e.conc, func(ctx context.Context, _, i int) sample {
		for attempt := range 8 {
			a := e.c.claim(ctx, tid, userName(userPrefix, i), keyName(keyPrefix, i))
			k := classify(&a, &f, "prefill claim", "claimed", "duplicate")
			if (k == "claimed" || k == "duplicate") && a.body.Coupon != nil {
				codes[i] = a.body.Coupon.Code
				return sample{kind: k}
			}
			if !transient[k] && k != "in_progress" {
				return sample{kind: k}
			}
			time.Sleep(time.Duration(10*(attempt+1)) * time.Millisecond)
		}
		return sample{kind: "gave_up"}
	})
	missing := 0
	for _, c := range codes {
		if c == "" {
			missing++
		}
	}
	if missing > 0 {
		ex := ""
		if len(f.examples) > 0 {
			ex = ": " + f.examples[0]
		}
		return nil, fmt.Errorf("prefill: %d of %d coupons not claimed%s", missing, n, ex)
	}
	return codes, nil
}

// redeemOp is one planned redemption: the first of a coupon, a replay of it
// (same order) or a conflicting order.
type redeemOp struct {
	kind   int // opOriginal, opReplay, opConflict
	coupon int
	pos    float64
}

const (
	opOriginal = iota
	opReplay
	opConflict
)

// redeemPlan lays out the first redemptions of n coupons in a random order
// (checkouts do not come in the order of the claims), with replays and
// conflicting orders placed at random after the redemption they follow.
func redeemPlan(n, replays, conflicts int, seed uint64) []redeemOp {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	rank := rng.Perm(n)
	ops := make([]redeemOp, 0, n+replays+conflicts)
	for i := range n {
		ops = append(ops, redeemOp{kind: opOriginal, coupon: i, pos: float64(rank[i])})
	}
	extra := func(kind, count int) {
		for range count {
			c := rng.IntN(n)
			r := rank[c]
			ops = append(ops, redeemOp{kind: kind, coupon: c, pos: float64(r) + 0.5 + rng.Float64()*float64(n-r)})
		}
	}
	extra(opReplay, replays)
	extra(opConflict, conflicts)
	slices.SortStableFunc(ops, func(a, b redeemOp) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	return ops
}

// runRedeem claims coupons untimed, then redeems each once, with replays
// (expected "duplicate") and other orders on used coupons (expected
// "already_used") mixed in after the first redemption has answered.
func (e *env) runRedeem(ctx context.Context) *Summary {
	n := e.z.redeems
	replays, conflicts := n/10, n/20
	s := &Summary{Name: "redeem", OKWord: "redeemed", Concurrency: e.conc,
		Params: fmt.Sprintf("%d redemptions of distinct coupons + %d replays + %d conflicting orders", n, replays, conflicts)}
	prefix := "b" + e.runID + "r-"
	tid, codes, ok := e.redeemable(ctx, s, "bench redeem", n, prefix)
	if !ok {
		return s
	}
	ops := redeemPlan(n, replays, conflicts, e.seed)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	firstKind := make([]string, n)
	var mu sync.Mutex
	redeemedBy := make([][]string, n) // orders answered "redeemed" per coupon
	var f faults
	order := func(op redeemOp, i int) string {
		if op.kind == opConflict {
			return fmt.Sprintf("x%s-%d", e.runID, i)
		}
		return fmt.Sprintf("o%s-%d", e.runID, op.coupon)
	}
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := e.prof.start(ctx, s.Name)
	t, elapsed := drive(ctx, len(ops), e.conc, func(ctx context.Context, _, i int) sample {
		op := ops[i]
		if op.kind != opOriginal {
			// Wait for the first redemption's answer outside the clock, so
			// that a replay never races it.
			select {
			case <-done[op.coupon]:
			case <-ctx.Done():
				return sample{kind: "not_run"}
			}
		}
		ord := order(op, i)
		a := e.c.redeem(ctx, codes[op.coupon], ord, 10000)
		var kind string
		switch {
		case op.kind == opOriginal:
			kind = classify(&a, &f, "redeem", "redeemed")
			firstKind[op.coupon] = kind
			close(done[op.coupon])
		case transient[firstKind[op.coupon]]:
			// The first redemption did not happen: whichever comes next may
			// be the first.
			kind = classify(&a, &f, "redeem after a shed first", "redeemed", "duplicate", "already_used")
		case op.kind == opReplay:
			kind = classify(&a, &f, "replay", "duplicate")
		default:
			kind = classify(&a, &f, "conflicting order", "already_used")
		}
		if kind == "redeemed" {
			mu.Lock()
			redeemedBy[op.coupon] = append(redeemedBy[op.coupon], ord)
			mu.Unlock()
		}
		return sample{kind: kind, d: a.d}
	})
	s.MaxRSSMB = rss.Stop()
	s.Profile = profDone()
	s.fill(t, elapsed)
	f.report(s)

	double, unredeemed, shed := 0, 0, 0
	states := map[string]couponState{}
	uncertain := map[string]bool{}
	userCodes := map[int][]string{}
	for i, orders := range redeemedBy {
		userCodes[i] = []string{codes[i]}
		switch len(orders) {
		case 0:
			if transient[firstKind[i]] {
				shed++
			} else {
				unredeemed++
			}
			uncertain[codes[i]] = true
		case 1:
			states[codes[i]] = couponState{status: "used", order: orders[0]}
		default:
			double++
		}
	}
	s.check("no double redemption", double == 0, "%d coupons answered \"redeemed\" for two orders", double)
	s.check("every coupon redeemed", unredeemed == 0,
		"%d of %d coupons never answered \"redeemed\" (%d more were shed by the service: busy/unavailable)", unredeemed, n, shed)
	checkServerCount(ctx, s, e.c, tid, n)
	checkUsers(ctx, s, e.c, tid, 1, prefix, sampleUsers(userCodes, nil, 200, 0), userCodes, states, uncertain)
	checkReconcile(ctx, s, e.c, tid, e.log)
	return s
}

// mixedCoupon is a coupon of the mixed scenario as the client tracks it.
type mixedCoupon struct {
	code  string
	user  int
	state couponState
}

// runMixed interleaves claims, redemptions and refunds (policy restore: a
// refunded coupon is issued again and may be redeemed by another order). An
// operation takes its coupon out of the pool while it runs, so two never touch
// the same coupon at once and every answer has one expected word.
func (e *env) runMixed(ctx context.Context) *Summary {
	n := e.z.mixedOps
	users, limit := max(n/4, 1), 3
	stock := n
	s := &Summary{Name: "mixed", OKWord: "claimed+redeemed+refunded", Concurrency: e.conc,
		Params: fmt.Sprintf("%d operations: ~45%% claims (%d users, limit %d), ~35%% redemptions, ~20%% refunds (restore)", n, users, limit)}
	prefix := "b" + e.runID + "m-"
	tid, err := e.c.createTemplate(ctx, templateSpec{name: "bench mixed " + e.runID, stock: stock, limit: limit, faceValue: 500, refundPolicy: "restore"})
	if err != nil {
		s.Error = err.Error()
		return s
	}
	var mu sync.Mutex
	var coupons []*mixedCoupon
	var issued, used []*mixedCoupon
	uncertain := map[string]bool{}
	pop := func(pool *[]*mixedCoupon, rng *rand.Rand) *mixedCoupon {
		p := *pool
		if len(p) == 0 {
			return nil
		}
		j := rng.IntN(len(p))
		c := p[j]
		p[j] = p[len(p)-1]
		*pool = p[:len(p)-1]
		return c
	}
	plan := make([]claimReq, n)
	out := make([]claimOutcome, n)
	isClaim := make([]bool, n)
	rngs := make([]*rand.Rand, e.conc)
	for w := range rngs {
		rngs[w] = rand.New(rand.NewPCG(e.seed, uint64(w)+100))
	}
	var f faults
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := e.prof.start(ctx, s.Name)
	t, elapsed := drive(ctx, n, e.conc, func(ctx context.Context, w, i int) sample {
		rng := rngs[w]
		r := rng.Float64()
		var cp *mixedCoupon
		redeem := false
		mu.Lock()
		switch {
		case r < 0.45:
		case r < 0.80:
			cp, redeem = pop(&issued, rng), true
		default:
			cp = pop(&used, rng)
		}
		mu.Unlock()
		if cp == nil {
			u := rng.IntN(users)
			plan[i], isClaim[i] = claimReq{user: u, key: i}, true
			a := e.c.claim(ctx, tid, userName(prefix, u), keyName(prefix, i))
			kind := classify(&a, &f, "claim", "claimed", "user_limit_reached")
			out[i] = claimOutcome{kind: kind}
			if kind == "claimed" && a.body.Coupon != nil {
				out[i].code = a.body.Coupon.Code
				mu.Lock()
				nc := &mixedCoupon{code: a.body.Coupon.Code, user: u, state: couponState{status: "issued"}}
				coupons = append(coupons, nc)
				issued = append(issued, nc)
				mu.Unlock()
			}
			return sample{kind: kind, d: a.d}
		}
		var a answer
		var kind string
		if redeem {
			ord := fmt.Sprintf("m%s-%d", e.runID, i)
			a = e.c.redeem(ctx, cp.code, ord, 10000)
			kind = classify(&a, &f, "redeem", "redeemed")
			if kind == "redeemed" {
				cp.state = couponState{status: "used", order: ord}
			}
		} else {
			a = e.c.refund(ctx, cp.code, cp.state.order)
			kind = classify(&a, &f, "refund", "refunded")
			if kind == "refunded" {
				cp.state = couponState{status: "issued"}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case kind == "busy" || kind == "rate_limited":
			// Refused before any change: the coupon goes back as it was.
		case kind != "redeemed" && kind != "refunded":
			uncertain[cp.code] = true // may or may not have happened
			return sample{kind: kind, d: a.d}
		}
		if cp.state.status == "used" {
			used = append(used, cp)
		} else {
			issued = append(issued, cp)
		}
		return sample{kind: kind, d: a.d}
	})
	s.MaxRSSMB = rss.Stop()
	s.Profile = profDone()
	s.fill(t, elapsed)
	f.report(s)

	var cplan []claimReq
	var cout []claimOutcome
	for i := range plan {
		if isClaim[i] {
			cplan = append(cplan, plan[i])
			cout = append(cout, out[i])
		}
	}
	tally := verifyClaims(s, cplan, cout, stock, limit)
	s.Coupons = tally.claimed
	states := map[string]couponState{}
	for _, cp := range coupons {
		states[cp.code] = cp.state
	}
	e.afterClaims(ctx, s, tid, limit, prefix, cplan, tally, states, uncertain)
	return s
}
