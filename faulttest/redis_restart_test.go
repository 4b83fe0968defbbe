package faulttest

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// faultConfig settles stale reservations within seconds, so that the tests
// see the sweeper at work.
func faultConfig() services.Config {
	return services.Config{CoreConfig: services.CoreConfig{DBTimeout: 2 * time.Second}, ClaimsConfig: services.ClaimsConfig{PendingTimeout: 6 * time.Second}, CheckoutConfig: services.CheckoutConfig{SweepInterval: 500 * time.Millisecond}}
}

// TestRedisLostMidFlashClaim: in the middle of a flash claim Redis restarts
// empty (the connection cut for 2 seconds, and the test's keys gone), then
// later loses its keys again while connected (a FLUSHALL, done here by
// prefix: the Redis is shared with other tests). Claims answer 503 or load
// the counters again from the database; live coupons never exceed the stock,
// nor a user's the limit; every 201 is in the database; the run ends with zero
// drift and nothing pending, repaired by the service itself.
func TestRedisLostMidFlashClaim(t *testing.T) {
	b := newBackends(t, true)
	var px *proxy
	via := ""
	if addr := b.redisAddr(); addr != "" && !testenv.IsCluster() {
		px = newProxy(t, addr)
		via = px.addr
	}
	svc := b.service(t, faultConfig(), "", via)
	url := serveInProcess(t, svc, 500*time.Millisecond)
	ctx := context.Background()
	boot, _, err := svc.CreateToken(ctx, "test", "admin", "faulttest-admin")
	if err != nil {
		t.Fatal(err)
	}
	const stock, value = 700, 500
	tmpls := []*tmplSpec{{stock: stock, limit: 1, policy: models.RefundRestore}}
	// A budget for more than the stock: its counter is lost and rebuilt too.
	app := setUp(t, newClient(url, boot), (stock+100)*value, tmpls)

	l := newLedger()
	ld := &load{urls: []string{url}, token: app.token, tmpls: tmpls, users: 1500, max: 1600, workers: 16,
		stop: make(chan struct{})}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var restarted, flushed atomic.Int64
	go whenAnswered(runCtx, l, 150, func() {
		// Redis restarts empty: connections cut, data gone, back in 2s.
		if px != nil {
			px.cut()
		}
		testenv.DeleteKeys(b.rdb, b.fresh.Prefix)
		restarted.Store(l.answered.Load())
		time.Sleep(2 * time.Second)
		if px != nil {
			px.restore()
		}
		whenAnswered(runCtx, l, restarted.Load()+250, func() {
			testenv.DeleteKeys(b.rdb, b.fresh.Prefix) // FLUSHALL while connected
			flushed.Store(l.answered.Load())
		})
	})
	ld.run(t, l)
	cancel()
	if restarted.Load() == 0 || flushed.Load() == 0 {
		t.Fatalf("the claims ended before the faults: %s", l.summary())
	}
	for kind, n := range l.kinds {
		switch kind {
		case "claim 201 claimed", "claim 409 sold_out", "claim 409 user_limit_reached", "claim 503 unavailable",
			"claim 409 in_progress", "claim 200 duplicate":
		default:
			t.Errorf("%d claims answered %s", n, kind)
		}
	}

	took, first, last := waitSettled(t, newClient(url, boot), b, tmpls[0].cid, 30*time.Second)
	figures := checkDatabase(t, b.db, l, tmpls)
	budget, err := b.rdb.Get(ctx, fmt.Sprintf("%s{c%d}:budget", b.fresh.Prefix, tmpls[0].cid)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt((stock+100)*value-figures.live*value, 10); budget != want {
		t.Errorf("budget left in Redis %s, the database says %s", budget, want)
	}
	report(t, "stock=%d; Redis restarted empty after %d answers (proxy cut 2s: %t), keys deleted again after %d answers",
		stock, restarted.Load(), px != nil, flushed.Load())
	report(t, "%s", l.summary())
	report(t, "settled in %s; reconcile right after the load:%s; settled:%s; database: %s; budget left %s",
		took.Round(time.Millisecond), first, last, figures, budget)
}
