package services_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	claimsvc "github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/glebarez/sqlite"
	"github.com/redis/go-redis/v9"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// serviceOver returns a Service of this test (same key prefix, clock and
// logger) over other backends: a broken Redis client or database handle.
func (f *claimFixture) serviceOver(b core.Backends, cfg services.Config) *services.App {
	f.T.Helper()
	cfg.KeyPrefix = f.Env.Prefix
	cfg.Logger = f.Env.Config.Logger
	if cfg.Now == nil {
		cfg.Now = f.Clock.Now
	}
	return services.New(&b, cfg)
}

// withDB returns the test's backends with db in place of the database.
func (f *claimFixture) withDB(db *gorm.DB) core.Backends {
	b := *f.Env.Backends
	b.DB, b.Embedded = db, nil
	return b
}

// openDB opens a second handle on the test's database, with its own pool.
func (f *claimFixture) openDB() *gorm.DB {
	f.T.Helper()
	var d gorm.Dialector
	switch dl := f.Env.Backends.DB.Dialector.(type) {
	case *mysql.Dialector:
		d = mysql.Open(dl.DSN)
	case *sqlite.Dialector:
		d = sqlite.Open(dl.DSN)
	default:
		f.T.Fatalf("unknown dialector %T", dl)
	}
	db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true,
		NowFunc: func() time.Time { return time.Now().UTC() }})
	if err != nil {
		f.T.Fatalf("open a second database handle: %v", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		f.T.Fatal(err)
	}
	if f.Env.Backends.Dialect == core.DialectSQLite {
		sqlDB.SetMaxOpenConns(1) // one writer, as the service's own handle
	} else {
		sqlDB.SetMaxOpenConns(16) // the server is shared with other tests
	}
	f.T.Cleanup(func() { sqlDB.Close() })
	return db
}

// onCreateCoupon registers fn to run on db before each coupon row is written.
func onCreateCoupon(t *testing.T, db *gorm.DB, fn func(tx *gorm.DB)) {
	t.Helper()
	err := db.Callback().Create().Before("gorm:create").Register("test:fault", func(tx *gorm.DB) {
		if tx.Statement.Table == "user_coupons" {
			fn(tx)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// redisAddr is the address of the test's single Redis ("" on a cluster).
func (f *claimFixture) redisAddr() string {
	if f.Env.Mini != nil {
		return f.Env.Mini.Addr()
	}
	if testenv.IsCluster() {
		return ""
	}
	return os.Getenv("COUPON_TEST_REDIS_ADDR")
}

func TestClaimFaults(t *testing.T) {
	t.Run("ErrUnavailableRedisUnreachable", claimFaultErrUnavailableRedisUnreachable)
	t.Run("ErrUnavailableRedisStopped", claimFaultErrUnavailableRedisStopped)
	claimDBFaults(t)
	t.Run("ErrUnavailableOutcomeUnknown", claimFaultErrUnavailableOutcomeUnknown)
	t.Run("OKReplyLostAfterReservation", claimFaultOKReplyLostAfterReservation)
	t.Run("OKRedisFlushedMidRun", claimFaultOKRedisFlushedMidRun)
	t.Run("OKRedisFlushedMidRunBudget", claimFaultOKRedisFlushedMidRunBudget)
	t.Run("OKSweepKilledProcess", claimFaultOKSweepKilledProcess)
	t.Run("OKSweepKeyOfAnotherCampaign", claimFaultOKSweepKeyOfAnotherCampaign)
}

func claimFaultErrUnavailableRedisUnreachable(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(1000)
	tp := f.template(c.ID, 5, 2, 100)
	f.MustClaim(tp.ID, "u1", "k1")
	before := f.redisState()
	b := *f.Env.Backends
	b.Redis = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { b.Redis.Close() })
	down := f.serviceOver(b, services.Config{})
	for _, key := range []string{"k2", "k1"} { // a new claim and a replay
		_, err := down.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: "u2", IdempotencyKey: key})
		assertClaimCode(t, err, models.CodeUnavailable)
	}
	if n := f.couponCount(); n != 1 {
		t.Fatalf("%d coupons, want 1", n)
	}
	f.assertRedisUnchanged(before)
}

func claimFaultErrUnavailableRedisStopped(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	if f.Env.Mini == nil {
		t.Skip("stops the embedded Redis; real Redis is covered by ErrUnavailableRedisUnreachable")
	}
	c := f.Campaign(0)
	tp := f.template(c.ID, 5, 2, 100)
	f.MustClaim(tp.ID, "u1", "k1")
	f.Env.Mini.Close()
	for _, key := range []string{"k2", "k1"} {
		_, err := f.Claim(tp.ID, "u1", key)
		assertClaimCode(t, err, models.CodeUnavailable)
	}
	if n := f.couponCount(); n != 1 {
		t.Fatalf("%d coupons, want 1", n)
	}
}

// The database refuses the row after Redis reserved it: the caller gets
// 503 and stock, budget, limit and key are given back at once.
func claimDBFaults(t *testing.T) {
	dbFaults := []struct {
		name   string
		inject func(t *testing.T, f *claimFixture) *gorm.DB
		// beforeWrite, when set, runs before the coupon writer's
		// transaction begins.
		beforeWrite func(db *gorm.DB)
	}{
		{"ErrUnavailableInsertFails", func(t *testing.T, f *claimFixture) *gorm.DB {
			db := f.openDB()
			onCreateCoupon(t, db, func(tx *gorm.DB) { tx.AddError(errors.New("injected: write refused")) })
			return db
		}, nil},
		{"ErrUnavailableDatabaseGone", func(t *testing.T, f *claimFixture) *gorm.DB {
			// The database goes away between the reservation and the insert:
			// neither the insert nor the check for the row can run.
			return f.openDB()
		}, func(db *gorm.DB) {
			if sqlDB, err := db.DB(); err == nil {
				sqlDB.Close()
			}
		}},
	}
	for _, fault := range dbFaults {
		t.Run(fault.name, func(t *testing.T) {
			f := newClaimFixture(t, services.Config{})
			c := f.Campaign(1000)
			tp := f.template(c.ID, 3, 2, 100)
			f.MustClaim(tp.ID, "u1", "k1")
			before := f.redisState()
			db := fault.inject(t, f)
			broken := f.serviceOver(f.withDB(db), services.Config{})
			if fault.beforeWrite != nil {
				broken.SetBeforeCouponWrite(func() { fault.beforeWrite(db) })
			}
			_, err := broken.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k2"})
			assertClaimCode(t, err, models.CodeUnavailable)
			if n := f.couponCount(); n != 1 {
				t.Fatalf("%d coupons, want 1", n)
			}
			f.assertRedisUnchanged(before)
			f.assertAgree(c, tp)
			// Given back means usable: the same key claims on a healthy instance.
			res := f.MustClaim(tp.ID, "u1", "k2")
			if *res.Coupon.Slot != 2 || *res.Coupon.UserOrdinal != 2 {
				t.Errorf("slot %d ordinal %d, want 2 2", *res.Coupon.Slot, *res.Coupon.UserOrdinal)
			}
			f.assertAgree(c, tp)
		})
	}
}

func claimFaultErrUnavailableOutcomeUnknown(t *testing.T) {
	// The insert fails and the database cannot say whether the row is
	// there: the reservation stays pending (never "claimed", never given
	// back on a guess) until the sweeper settles it.
	f := newClaimFixture(t, services.Config{ClaimsConfig: services.ClaimsConfig{PendingTimeout: 50 * time.Millisecond}})
	c := f.Campaign(1000)
	tp := f.template(c.ID, 3, 2, 100)
	before := f.redisState()
	db := f.openDB()
	var failing atomic.Bool
	onCreateCoupon(t, db, func(tx *gorm.DB) {
		failing.Store(true)
		tx.AddError(errors.New("injected: connection reset"))
	})
	err := db.Callback().Query().Before("gorm:query").Register("test:fault-query", func(tx *gorm.DB) {
		if failing.Load() {
			tx.AddError(errors.New("injected: connection reset"))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	broken := f.serviceOver(f.withDB(db), services.Config{})
	_, err = broken.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k1"})
	assertClaimCode(t, err, models.CodeUnavailable)
	if n := f.couponCount(); n != 0 {
		t.Fatalf("%d coupons, want 0", n)
	}
	if n := f.Env.Backends.Redis.ZCard(f.Ctx, f.Key(c.ID, "pending")).Val(); n != 1 {
		t.Fatalf("%d reservations pending, want 1", n)
	}
	// A retry meanwhile is told to wait, not given a second coupon.
	_, err = f.Claim(tp.ID, "u1", "k1")
	assertClaimCode(t, err, models.CodeInProgress)
	f.Clock.Advance(time.Second)
	st, err := f.Claims.Sweep(f.Ctx)
	if err != nil || st.Released != 1 || st.Confirmed != 0 {
		t.Fatalf("sweep = %+v, %v; want 1 released", st, err)
	}
	f.assertRedisUnchanged(before)
	f.MustClaim(tp.ID, "u1", "k1")
	f.assertAgree(c, tp)
}

func claimFaultOKReplyLostAfterReservation(t *testing.T) {
	// Redis ran the claim script but its reply was lost; go-redis sends
	// the script again on a new connection. The second run must not be
	// taken for another request's claim in progress.
	f := newClaimFixture(t, services.Config{})
	addr := f.redisAddr()
	if addr == "" {
		t.Skip("the proxy serves one Redis node, not a cluster")
	}
	c := f.Campaign(1000)
	tp := f.template(c.ID, 3, 2, 100)
	proxy := newReplyDropper(t, addr, []byte(lua.Deduct.Hash()))
	b := *f.Env.Backends
	b.Redis = redis.NewClient(&redis.Options{Addr: proxy.addr()})
	t.Cleanup(func() { b.Redis.Close() })
	svc := f.serviceOver(b, services.Config{})
	if _, err := svc.GetTemplate(f.Ctx, tp.ID); err != nil {
		t.Fatal(err)
	}
	if err := lua.Deduct.Load(f.Ctx, f.Env.Backends.Redis).Err(); err != nil { // EVALSHA, not EVAL
		t.Fatal(err)
	}
	proxy.drops.Store(1)
	res, err := svc.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k1"})
	if proxy.dropped.Load() != 1 {
		t.Fatalf("the proxy dropped %d replies, want 1", proxy.dropped.Load())
	}
	if err != nil || res.Duplicate || *res.Coupon.Slot != 1 {
		t.Fatalf("claim = %+v, %v; want coupon with slot 1", res, err)
	}
	f.assertAgree(c, tp)
}

func claimFaultOKRedisFlushedMidRun(t *testing.T) {
	// Redis loses everything while 1,500 claims run: the service reloads
	// from the database, which refuses what Redis hands out twice.
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	spec := claimRaceSpec{stock: 300, limit: 2, value: 100, users: 500, claims: 1500, want: 300, refusedAfterReserve: true}
	tp := f.template(c.ID, spec.stock, spec.limit, spec.value)
	out := f.runFlushedRace(spec, tp, 200)
	counts := f.checkClaimRace(spec, tp, out)
	t.Logf("results: %v", counts)
	f.assertAgree(c, tp)
	f.topUp(tp, spec.want)
	f.assertAgree(c, tp)
}

func claimFaultOKRedisFlushedMidRunBudget(t *testing.T) {
	// With a budget: the stock and the limits hold as above, and the
	// budget is reloaded from the database.
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(20_000)
	spec := claimRaceSpec{budget: 20_000, stock: 400, limit: 2, value: 100, users: 500, claims: 1500, want: 200,
		refusedAfterReserve: true}
	tp := f.template(c.ID, spec.stock, spec.limit, spec.value)
	out := f.runFlushedRace(spec, tp, 150)
	counts := f.checkClaimRace(spec, tp, out)
	t.Logf("results: %v", counts)
	f.assertAgree(c, tp)
	f.topUp(tp, spec.want)
	f.assertAgree(c, tp)
}

func claimFaultOKSweepKilledProcess(t *testing.T) {
	// Two claims reserved in Redis and their process died: one before
	// writing its row, one after. The sweeper gives back the first and
	// confirms the second, and only once they are older than PendingTimeout.
	f := newClaimFixture(t, services.Config{ClaimsConfig: services.ClaimsConfig{PendingTimeout: 50 * time.Millisecond}})
	c := f.Campaign(1000)
	tp := f.template(c.ID, 5, 2, 100)
	f.MustClaim(tp.ID, "u0", "k0")
	m1 := f.deductDirect(c.ID, tp.ID, "u1", "k1")
	m2 := f.deductDirect(c.ID, tp.ID, "u2", "k2")
	f.insertRowOf(tp, "u2", "k2", 3, 1)
	if n := f.Env.Backends.Redis.ZCard(f.Ctx, f.Key(c.ID, "pending")).Val(); n != 2 {
		t.Fatalf("%d pending, want 2", n)
	}
	if st, err := f.Claims.Sweep(f.Ctx); err != nil || st != (claimsvc.SweepStats{}) {
		t.Fatalf("sweep of young reservations = %+v, %v; want nothing done", st, err)
	}
	f.Clock.Advance(51 * time.Millisecond)
	st, err := f.Claims.Sweep(f.Ctx)
	if err != nil || st != (claimsvc.SweepStats{Confirmed: 1, Released: 1}) {
		t.Fatalf("sweep = %+v, %v; want 1 confirmed, 1 released", st, err)
	}
	f.assertAgree(c, tp)
	rdb := f.Env.Backends.Redis
	if v := rdb.Get(f.Ctx, f.Key(c.ID, "idem:k2")).Val(); v != "C|"+m2 {
		t.Errorf("k2 = %q, want confirmed C|%s", v, m2)
	}
	if n := rdb.Exists(f.Ctx, f.Key(c.ID, "idem:k1")).Val(); n != 0 {
		t.Errorf("k1 still held after its reservation %s was given back", m1)
	}
	if st, err := f.Claims.Sweep(f.Ctx); err != nil || st != (claimsvc.SweepStats{}) {
		t.Fatalf("second sweep = %+v, %v; want nothing done", st, err)
	}
	// k2 answers its coupon; k1 claims afresh, in the slot it had.
	res, err := f.Claim(tp.ID, "u2", "k2")
	if err != nil || !res.Duplicate || *res.Coupon.Slot != 3 {
		t.Fatalf("replay of k2 = %+v, %v", res, err)
	}
	if res := f.MustClaim(tp.ID, "u1", "k1"); *res.Coupon.Slot != 2 {
		t.Errorf("k1 got slot %d, want 2", *res.Coupon.Slot)
	}
	f.assertAgree(c, tp)
}

func claimFaultOKSweepKeyOfAnotherCampaign(t *testing.T) {
	// The process died between reserving in campaign B and giving back:
	// its key had been used in campaign A. The row of A must not make the
	// sweeper keep B's slot.
	f := newClaimFixture(t, services.Config{ClaimsConfig: services.ClaimsConfig{PendingTimeout: 50 * time.Millisecond}})
	a, b := f.Campaign(0), f.Campaign(1000)
	ta, tb := f.template(a.ID, 5, 2, 100), f.template(b.ID, 5, 2, 100)
	f.MustClaim(ta.ID, "u1", "k1")
	f.MustClaim(tb.ID, "u9", "k9")
	before := f.redisState()
	f.deductDirect(b.ID, tb.ID, "u1", "k1")
	f.Clock.Advance(time.Second)
	st, err := f.Claims.Sweep(f.Ctx)
	if err != nil || st != (claimsvc.SweepStats{Released: 1}) {
		t.Fatalf("sweep = %+v, %v; want 1 released", st, err)
	}
	f.assertRedisUnchanged(before)
	f.assertAgree(b, tb)
}

// deductDirect reserves a coupon with coupon_deduct.lua as a claim would, and
// returns the pending member; nothing is written to the database.
func (f *claimFixture) deductDirect(cid, tid int64, user, key string) string {
	f.T.Helper()
	keys := []string{f.Key(cid, "budget"), f.TemplateKey(cid, tid), f.TemplateKey(cid, tid) + ":free", f.TemplateKey(cid, tid) + ":users",
		f.Key(cid, "idem:"+key), f.Key(cid, "pending"), f.TemplateKey(cid, tid) + ":rule"}
	vals, err := lua.Deduct.Run(f.Ctx, f.Env.Backends.Redis, keys, tid, user, key, f.Clock.Now().UnixMilli(), 3600, "killed").Slice()
	if err != nil {
		f.T.Fatalf("coupon_deduct.lua: %v", err)
	}
	if vals[0].(int64) != lua.DeductReserved {
		f.T.Fatalf("coupon_deduct.lua = %v, want reserved", vals)
	}
	tp, err := f.Core.GetTemplate(f.Ctx, tid)
	if err != nil {
		f.T.Fatal(err)
	}
	m := services.FormatPendingMember(tid, user, vals[1].(int64), vals[2].(int64), tp.ValueCents(), key)
	if err := f.Env.Backends.Redis.ZScore(f.Ctx, f.Key(cid, "pending"), m).Err(); err != nil {
		f.T.Fatalf("the service's member %q is not the one coupon_deduct.lua wrote: %v", m, err)
	}
	return m
}

// insertRowOf writes the coupon row of a reservation, as the claim would
// have before its process died.
func (f *claimFixture) insertRowOf(tp *models.Template, user, key string, slot, ordinal int64) {
	f.T.Helper()
	now := f.Clock.Now()
	from, until := tp.ValidityFor(now, time.UTC)
	c := models.Coupon{Code: models.NewCouponCode(), TemplateID: tp.ID, CampaignID: tp.CampaignID, UserID: user,
		Status: models.CouponIssued, Slot: &slot, UserOrdinal: &ordinal, RequestID: key, ValueCents: tp.ValueCents(),
		ClaimedAt: now, ValidFrom: from, ValidUntil: until, UpdatedAt: now}
	if err := f.Env.Backends.DB.Create(&c).Error; err != nil {
		f.T.Fatal(err)
	}
}

// runFlushedRace runs spec's claims in two waves through a second service
// whose coupon inserts wait at a gate. The first wave's reservations are made,
// their rows held back; Redis is flushed; the second wave starts and reloads
// the counters from the database, which does not show the first wave's
// coupons yet; then the gate opens. Both waves hand out the same slots and
// ordinals, and the database must refuse every second holder.
func (f *claimFixture) runFlushedRace(spec claimRaceSpec, tp *models.Template, wave1 int) []claimRaceOutcome {
	t := f.T
	t.Helper()
	db := f.openDB()
	gate := make(chan struct{})
	// The rows are held back on purpose: no insert may time out meanwhile.
	b := f.withDB(db)
	b.Redis = f.patientRedis()
	svc := f.serviceOver(b, services.Config{CoreConfig: services.CoreConfig{TemplateCacheTTL: time.Minute, DBTimeout: time.Minute}})
	svc.SetBeforeCouponWrite(func() { <-gate })
	if _, err := svc.GetTemplate(f.Ctx, tp.ID); err != nil {
		t.Fatal(err)
	}
	reqs := raceRequests(spec.users, spec.claims, rand.New(rand.NewPCG(uint64(wave1), uint64(spec.stock))))
	out := make([]claimRaceOutcome, len(reqs))
	var returned atomic.Int64
	var wg sync.WaitGroup
	run := func(from, to int) {
		for i := from; i < to; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := reqs[i]
				res, err := svc.Claim(t.Context(), claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: r.user, IdempotencyKey: r.key})
				out[i] = claimRaceOutcome{req: r, res: res, code: models.ErrorCode(err), err: err}
				returned.Add(1)
			}()
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				close(gate)
				t.Fatalf("timed out waiting for %s (%d claims answered)", what, returned.Load())
			}
		}
	}
	pending := func() int64 { return f.Env.Backends.Redis.ZCard(f.Ctx, f.Key(tp.CampaignID, "pending")).Val() }
	run(0, wave1)
	// The first wave has reserved (its rows wait) or been answered (a replay in progress).
	waitFor("the first wave", func() bool { return pending()+returned.Load() == int64(wave1) })
	t.Logf("first wave: %d rows held back, %d answered", pending(), returned.Load())
	f.Env.FlushRedis(t)
	run(wave1, len(reqs))
	tplKey := f.TemplateKey(tp.CampaignID, tp.ID)
	waitFor("a reload", func() bool { return f.Env.Backends.Redis.Exists(f.Ctx, tplKey).Val() == 1 })
	close(gate)
	wg.Wait()
	// A quiet moment: whatever reads the counters loads what is missing.
	if _, err := f.Core.ListTemplates(f.Ctx, false); err != nil {
		t.Fatal(err)
	}
	return out
}

// replyDropper is a TCP proxy in front of one Redis. While drops > 0, the
// first command holding match is forwarded, the server's reply is read, and
// the client's connection is closed instead of answered: the command ran but
// its caller cannot know.
type replyDropper struct {
	ln    net.Listener
	to    string
	match []byte
	// drops is how many replies are still to drop; dropped counts the
	// commands that ran and whose reply was dropped.
	drops, dropped atomic.Int64
}

func (p *replyDropper) take() bool {
	for {
		n := p.drops.Load()
		if n <= 0 {
			return false
		}
		if p.drops.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

func newReplyDropper(t *testing.T, to string, match []byte) *replyDropper {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyDropper{ln: ln, to: to, match: bytes.ToLower(match)}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.serve(client)
			}()
		}
	}()
	return p
}

func (p *replyDropper) addr() string { return p.ln.Addr().String() }

func (p *replyDropper) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.to)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		io.Copy(client, server)
		client.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if err != nil {
			return
		}
		drop := bytes.Contains(bytes.ToLower(buf[:n]), p.match) && p.take()
		if !drop {
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
			continue
		}
		// Stop the reply reaching the client: run the command on a
		// connection of our own, wait for its reply, then hang up.
		own, err := net.Dial("tcp", p.to)
		if err != nil {
			return
		}
		own.Write(buf[:n])
		own.SetReadDeadline(time.Now().Add(5 * time.Second))
		reply := make([]byte, 4096)
		own.Read(reply)
		own.Close()
		if strings.HasPrefix(string(reply), "*") {
			p.dropped.Add(1)
		}
		return
	}
}

// topUp claims with new users until the template (or its budget) refuses, and
// checks that the database then holds exactly want coupons: stock held by
// reservations that failed during a storm came back, and none was lost.
func (f *claimFixture) topUp(tp *models.Template, want int64) {
	t := f.T
	t.Helper()
	for i := 0; i < int(want)+1; i++ {
		_, err := f.Claim(tp.ID, fmt.Sprintf("topup-%d", i), fmt.Sprintf("topup-key-%d", i))
		if err != nil {
			code := models.ErrorCode(err)
			if code != models.CodeSoldOut && code != models.CodeBudgetExhausted {
				t.Fatalf("top-up claim %d: %v", i, err)
			}
			break
		}
	}
	var n int64
	if err := f.Env.Backends.DB.Model(&models.Coupon{}).Where("template_id = ?", tp.ID).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("after topping up, %d coupons in the database; want exactly %d", n, want)
	}
}
