package faulttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
)

// TestTwoInstances: two couponsvc instances on one database and one Redis,
// the load spread across both (every other request to each), give the same
// guarantees as one: no oversell, no user over the limit, every 201 in the
// database, every redemption and refund answered there, zero drift at the
// end seen from either instance. On real backends the instances are two
// processes; on the embedded default (whose Redis lives inside a process) two
// services in this process share the SQLite file and the in-process Redis.
func TestTwoInstances(t *testing.T) {
	tmpls := []*tmplSpec{
		{stock: 300, limit: 2, policy: models.RefundRecycle},
		{stock: 300, limit: 3, policy: models.RefundRestore},
	}
	b, urls, boot, mode := startTwoInstances(t)
	app := setUp(t, newClient(urls[0], boot), 0, tmpls)

	l := newLedger()
	(&load{urls: urls, token: app.token, tmpls: tmpls, users: 200, max: 1000, workers: 16, redeem: 0.5, refund: 0.4}).run(t, l)
	for kind, n := range l.kinds {
		if strings.HasSuffix(kind, " transport error") || strings.HasSuffix(kind, " internal") || strings.HasSuffix(kind, " undocumented answer") {
			t.Errorf("%d answers %s", n, kind)
		}
	}
	var settled []string
	for _, u := range urls {
		took, _, last := waitSettled(t, newClient(u, boot), b, tmpls[0].cid, 30*time.Second)
		settled = append(settled, took.Round(time.Millisecond).String()+":"+last)
	}
	figures := checkDatabase(t, b.db, l, tmpls)
	replayed := replayClaims(t, newClient(urls[1], app.token), l, 50)
	report(t, "%s; %s", mode, l.summary())
	report(t, "database: %s; replayed %d claims on the other instance: all duplicate; settled (from each instance): %v",
		figures, replayed, settled)
}

// startTwoInstances starts two couponsvc instances on shared backends and
// returns them with an admin token: two processes on real backends, two
// services in this process on the embedded default.
func startTwoInstances(t *testing.T) (b *backends, urls []string, boot, mode string) {
	t.Helper()
	if newFreshIsEmbedded() {
		b = newBackends(t, true)
		for i := 0; i < 2; i++ {
			svc := b.service(t, services.Config{CheckoutConfig: services.CheckoutConfig{SweepInterval: 500 * time.Millisecond}}, "", "")
			urls = append(urls, serveInProcess(t, svc, time.Second))
			if i == 0 {
				tok, _, err := svc.CreateToken(context.Background(), "test", "admin", "faulttest-admin")
				if err != nil {
					t.Fatal(err)
				}
				boot = tok
			}
		}
		return b, urls, boot, "two services in one process"
	}
	ps := newProcs(t)
	for _, name := range []string{"couponsvc#1", "couponsvc#2"} {
		p, _ := ps.start(name)
		urls = append(urls, p.url)
	}
	b, boot = ps.b, ps.boot
	return b, urls, boot, "two processes"
}

// TestTwoInstancesPause: shoppers claim through one instance without pause
// while an admin pauses the template through the other. No claim sent after
// the pause answered is issued, and nothing is taken by the refusals; a
// resume, a closed claim window and a reopened one bind the claiming
// instance from their answer on too.
func TestTwoInstancesPause(t *testing.T) {
	tmpls := []*tmplSpec{{stock: 100_000, limit: 5, policy: models.RefundRestore}}
	b, urls, boot, mode := startTwoInstances(t)
	admin := newClient(urls[0], boot)
	app := setUp(t, admin, 0, tmpls)
	shop := newClient(urls[1], app.token)
	tp := tmpls[0]
	var n atomic.Int64
	claim := func() answer {
		i := n.Add(1)
		status := 0
		got, err := shop.ClaimCoupon(context.Background(), tp.id, client.ClaimRequest{UserID: client.Ptr(fmt.Sprintf("u%d", i))},
			client.IdempotencyKey(fmt.Sprintf("k%d", i)), client.Status(&status))
		return outcome(status, err, func() string { return got.Result })
	}
	update := func(what string, req client.UpdateTemplateRequest) {
		t.Helper()
		status := 0
		_, err := admin.UpdateTemplate(context.Background(), tp.id, req, client.Status(&status))
		wantStatus(t, what, status, err, 200)
	}
	coupons := func() int64 {
		var c int64
		if err := b.db.Model(&models.Coupon{}).Where("template_id = ?", tp.id).Count(&c).Error; err != nil {
			t.Fatal(err)
		}
		return c
	}

	// Under load: workers claim until well after the pause answered.
	var paused atomic.Bool
	var claimedBefore, claimedAfter, refusedAfter atomic.Int64
	var other sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := paused.Load()
				a := claim()
				switch {
				case a.err == nil && a.status == 201 && after:
					claimedAfter.Add(1)
				case a.err == nil && a.status == 201:
					claimedBefore.Add(1)
				case a.err == nil && a.status == 409 && a.result == "not_claimable":
					if after {
						refusedAfter.Add(1)
					}
				default:
					other.Store(a.kind(), a.String())
				}
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for claimedBefore.Load() < 100 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	update("pause", client.UpdateTemplateRequest{Status: client.Ptr(client.TemplateStatusPaused)})
	paused.Store(true)
	for refusedAfter.Load() < 300 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	other.Range(func(k, v any) bool { t.Errorf("unexpected answer %s: %s", k, v); return true })
	if claimedBefore.Load() < 100 || refusedAfter.Load() < 300 {
		t.Fatalf("%d claimed before the pause, %d refused after: the load did not run long enough",
			claimedBefore.Load(), refusedAfter.Load())
	}
	if claimedAfter.Load() != 0 {
		t.Errorf("%d claims sent after the pause answered were issued", claimedAfter.Load())
	}
	if c := coupons(); c != claimedBefore.Load() {
		t.Errorf("%d coupons in the database, %d claims answered 201", c, claimedBefore.Load())
	}

	// Each change binds the claiming instance from its answer on.
	expect := func(what string, status int, result string) {
		t.Helper()
		before := coupons()
		if a := claim(); a.err != nil || a.status != status || a.result != result {
			t.Fatalf("%s: claim through the other instance = %s, want %d %s", what, a, status, result)
		}
		if want := before + map[bool]int64{true: 1}[status == 201]; coupons() != want {
			t.Fatalf("%s: %d coupons, want %d", what, coupons(), want)
		}
	}
	update("resume", client.UpdateTemplateRequest{Status: client.Ptr(client.TemplateStatusActive)})
	expect("resumed", 201, "claimed")
	update("close the claim window", client.UpdateTemplateRequest{ClaimEndsAt: client.Ptr(time.Now().UTC())})
	expect("claim window closed", 409, "not_claimable")
	update("reopen the claim window", client.UpdateTemplateRequest{ClaimEndsAt: client.Ptr(time.Now().UTC().Add(time.Hour).Truncate(time.Second))})
	expect("claim window reopened", 201, "claimed")
	update("open claims later", client.UpdateTemplateRequest{ClaimStartsAt: client.Ptr(time.Now().UTC().Add(30 * time.Minute).Truncate(time.Second))})
	expect("claims not open yet", 409, "not_claimable")

	took, _, last := waitSettled(t, admin, b, tp.cid, 30*time.Second)
	report(t, "%s; %d claimed before the pause, %d refused after it, %d issued after it; settled in %v: %s",
		mode, claimedBefore.Load(), refusedAfter.Load(), claimedAfter.Load(), took.Round(time.Millisecond), last)
}
