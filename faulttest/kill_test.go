package faulttest

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
)

// killTemplates are the templates of the kill and shutdown tests, whose
// shoppers claim, redeem and refund: one that recycles refunded coupons, one
// that restores them.
func killTemplates() []*tmplSpec {
	return []*tmplSpec{
		{stock: 250, limit: 2, policy: models.RefundRecycle},
		{stock: 250, limit: 2, policy: models.RefundRestore},
	}
}

// TestKillMidFlight: couponsvc is killed with SIGKILL while 1,000 claims,
// redemptions and refunds are in flight, then restarted. Within one minute
// reconciliation reports zero drift and no reservation is left pending; no
// coupon is lost or duplicated, every claim that answered 201 is in the
// database, and every redemption or refund answered 200 is there too.
func TestKillMidFlight(t *testing.T) {
	ps := newProcs(t)
	b := ps.b

	p1, admin := ps.start("couponsvc#1")
	tmpls := killTemplates()
	app := setUp(t, admin, 0, tmpls)

	const requests = 1000
	l := newLedger()
	ld := &load{urls: []string{p1.url}, token: app.token, tmpls: tmpls, users: 150, max: requests, workers: 16,
		redeem: 0.5, refund: 0.4, stop: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var killed atomic.Int64
	go whenAnswered(ctx, l, requests/2, func() {
		killed.Store(l.sent.Load())
		p1.kill()
		close(ld.stop)
	})
	ld.run(t, l)
	cancel()
	p1.kill()
	killedAt := killed.Load()
	if killedAt == 0 {
		t.Fatalf("the load ended before the kill: %s", l.summary())
	}

	restart := time.Now()
	p2, admin2 := ps.start("couponsvc#2")
	started := time.Since(restart)
	// Within one minute of the restart: zero drift, nothing pending.
	took, first, last := waitSettled(t, admin2, b, tmpls[0].cid, time.Minute-started)
	app2 := newClient(p2.url, app.token)
	replayed := replayClaims(t, app2, l, 50)
	figures := checkDatabase(t, b.db, l, tmpls)

	// The rest of the 1,000 requests go to the restarted process, which
	// serves them as before.
	l2 := newLedger()
	rest := requests - int(l.sent.Load())
	(&load{urls: []string{p2.url}, token: app.token, tmpls: tmpls, users: 150, max: rest, workers: 16,
		redeem: 0.5, refund: 0.4}).run(t, l2)
	if l2.count("claim 201 claimed") == 0 && figures.live < tmpls[0].stock+tmpls[1].stock {
		t.Errorf("no claim succeeded after the restart: %s", l2.summary())
	}
	for kind, n := range l2.kinds {
		if strings.HasSuffix(kind, " transport error") || strings.HasSuffix(kind, " internal") || strings.HasSuffix(kind, " undocumented answer") {
			t.Errorf("%d answers %s after the restart", n, kind)
		}
	}
	_, _, after := waitSettled(t, admin2, b, tmpls[0].cid, 30*time.Second)
	checkDatabase(t, b.db, l2, tmpls)

	cli := reconcileCommand(t, ps.bin, ps.env, b.fresh.Embedded())

	report(t, "%d requests: SIGKILL after %d were sent; before the kill: %s", requests, killedAt, l.summary())
	report(t, "restart: listening and ready in %s, then settled (zero drift, nothing pending) in %s; first reconcile:%s; settled:%s",
		started.Round(time.Millisecond), took.Round(time.Millisecond), first, last)
	report(t, "database: %s; replayed %d claims: all duplicate with the same coupon", figures, replayed)
	report(t, "the other %d requests, after the restart: %s; reconcile:%s", rest, l2.summary(), after)
	report(t, "couponsvc reconcile:\n%s", cli)
}

// reconcileCommand runs `couponsvc reconcile` next to the serving process: on
// real backends it reports every template without drift and exits 0; on the
// embedded default (whose Redis lives in the serving process) it refuses and
// exits 1.
func reconcileCommand(t *testing.T, bin string, env []string, embedded bool) string {
	t.Helper()
	cmd := exec.Command(bin, "reconcile")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if embedded {
		if err == nil || !strings.Contains(string(out), "POST /api/v1/reconcile") {
			t.Errorf("couponsvc reconcile on the embedded default: %v\n%s", err, out)
		}
		return string(out)
	}
	if err != nil || !strings.Contains(string(out), " 0 drifted") {
		t.Errorf("couponsvc reconcile: %v\n%s", err, out)
	}
	return string(out)
}

// TestGracefulShutdown: SIGTERM while claims, redemptions and refunds are in
// flight. The process stops accepting, finishes the requests it holds and
// exits 0; nothing is half-written: no reservation is left pending, and a
// restarted process reports zero drift at once.
func TestGracefulShutdown(t *testing.T) {
	ps := newProcs(t)
	b := ps.b

	p1, admin := ps.start("couponsvc#1")
	tmpls := killTemplates()
	app := setUp(t, admin, 0, tmpls)

	l := newLedger()
	ld := &load{urls: []string{p1.url}, token: app.token, tmpls: tmpls, users: 150, max: 600, workers: 16,
		redeem: 0.5, refund: 0.4, stop: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var term atomic.Int64
	exited := make(chan error, 1)
	go whenAnswered(ctx, l, 200, func() {
		term.Store(l.sent.Load())
		l.mark.Store(true)
		if err := p1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			exited <- err
			return
		}
		close(ld.stop) // no new requests; those in flight run on
		select {
		case <-p1.exited:
			if !p1.state.Success() {
				exited <- errExit(p1.state.String())
				return
			}
			exited <- nil
		case <-time.After(30 * time.Second):
			exited <- errExit("still running 30s after SIGTERM")
		}
	})
	ld.run(t, l)
	termAt := term.Load()
	if termAt == 0 {
		t.Fatalf("the load ended before SIGTERM: %s", l.summary())
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("after SIGTERM: %v\n%s", err, tail(p1.out.String(), 40))
		}
	case <-time.After(40 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	if n := b.pendingOrZero(tmpls[0].cid); n != 0 {
		t.Errorf("%d reservations left pending by a graceful shutdown", n)
	}
	figures := checkDatabase(t, b.db, l, tmpls)

	_, admin2 := ps.start("couponsvc#2")
	rows, err := reconcileReport(admin2)
	if err != nil {
		t.Fatal(err)
	}
	if s, u := drift(rows); s != 0 || u != 0 {
		t.Errorf("drift right after a graceful restart:%s", showRows(rows))
	}
	report(t, "SIGTERM after %d requests sent; %d answers arrived after SIGTERM; exit: %v; %s",
		termAt, l.after.Load(), p1.state, l.summary())
	report(t, "database: %s; reconcile after restart:%s", figures, showRows(rows))
}

type errExit string

func (e errExit) Error() string { return "exit status: " + string(e) }
