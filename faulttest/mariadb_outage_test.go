package faulttest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// TestMariaDBOutage: the database goes away for 3 seconds while shoppers
// claim and cashiers redeem. The shared MariaDB is not stopped (other packages
// test against it at the same time): the service reaches it through a TCP
// proxy that the test cuts (listener and every connection closed) and then
// restores. Answers are 503 meanwhile, never a business answer or a 500; then
// the service recovers by itself: claims and redemptions succeed again, every
// claim that got no clear answer can be retried with its key, nothing is left
// pending, reconciliation reports zero drift and no coupon is used without its
// live log row.
func TestMariaDBOutage(t *testing.T) {
	b := newBackends(t, true)
	if b.fresh.Embedded() {
		t.Skip("needs MariaDB: set COUPON_TEST_MYSQL_DSN (on the embedded default the database is a file in the process; TestRedisLostMidFlashClaim cuts the embedded Redis)")
	}
	px := newProxy(t, b.mysqlAddr(t))
	svc := b.service(t, faultConfig(), px.addr, "")
	url := serveInProcess(t, svc, 500*time.Millisecond)
	ctx := context.Background()
	boot, _, err := svc.CreateToken(ctx, "test", "admin", "faulttest-admin")
	if err != nil {
		t.Fatal(err)
	}
	tmpls := []*tmplSpec{
		{stock: 600, limit: 3, policy: models.RefundRestore},
		{stock: 400, limit: 2, policy: models.RefundRecycle},
	}
	admin := newClient(url, boot)
	app := setUp(t, admin, 0, tmpls)

	l := newLedger()
	ld := &load{urls: []string{url}, token: app.token, tmpls: tmpls, users: 300, max: 6000, workers: 12,
		redeem: 0.5, refund: 0.2, stop: make(chan struct{})}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cutAt, restoredAt, stoppedAt atomic.Int64
	var during atomic.Int64 // answers while cut
	go whenAnswered(runCtx, l, 300, func() {
		cutAt.Store(l.answered.Load())
		px.cut()
		time.Sleep(3 * time.Second)
		during.Store(l.answered.Load() - cutAt.Load())
		px.restore()
		restoredAt.Store(l.answered.Load())
		// Recovery: as many answers again, at most 20 seconds.
		recover, stop := context.WithTimeout(runCtx, 20*time.Second)
		defer stop()
		whenAnswered(recover, l, restoredAt.Load()+400, func() {})
		stoppedAt.Store(l.answered.Load())
		close(ld.stop)
	})
	ld.run(t, l)
	cancel()
	if stoppedAt.Load() == 0 {
		t.Fatalf("the load ended before the outage was over: %s", l.summary())
	}
	unavailable := l.count("claim 503 unavailable") + l.count("redeem 503 unavailable") + l.count("refund 503 unavailable")
	if unavailable == 0 {
		t.Errorf("no 503 while the database was cut: %s", l.summary())
	}
	for kind, n := range l.kinds {
		if strings.HasSuffix(kind, " transport error") || strings.HasSuffix(kind, " internal") || strings.HasSuffix(kind, " undocumented answer") {
			t.Errorf("%d answers %s", n, kind)
		}
	}
	if after := stoppedAt.Load() - restoredAt.Load(); after < 400 {
		t.Errorf("only %d answers in the 20s after the database came back", after)
	}
	ok := l.count("claim 201 claimed") + l.count("redeem 200 redeemed")
	if ok == 0 {
		t.Errorf("nothing succeeded: %s", l.summary())
	}

	retried := retryUnknown(t, newClient(url, app.token), l)
	took, first, last := waitSettled(t, admin, b, tmpls[0].cid, 30*time.Second)
	figures := checkDatabase(t, b.db, l, tmpls)
	report(t, "database cut for 3s after %d answers (%d answers while cut), back after %d, stopped after %d",
		cutAt.Load(), during.Load(), restoredAt.Load(), stoppedAt.Load())
	report(t, "%s", l.summary())
	report(t, "claims without a clear answer retried with their key: %v", retried)
	report(t, "settled in %s; reconcile right after the load:%s; settled:%s; database: %s",
		took.Round(time.Millisecond), first, last, figures)
}
