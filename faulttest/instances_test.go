package faulttest

import (
	"context"
	"strings"
	"testing"
	"time"

	"couponsvc/models"
	"couponsvc/services"
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
	var b *backends
	var urls []string
	var boot, mode string
	if newFreshIsEmbedded() {
		b = newBackends(t, true)
		for i := 0; i < 2; i++ {
			svc := b.service(t, services.Config{SweepInterval: 500 * time.Millisecond}, "", "")
			urls = append(urls, serveInProcess(t, svc, time.Second))
			if i == 0 {
				tok, _, err := svc.CreateToken(context.Background(), "test", "admin", "faulttest-admin")
				if err != nil {
					t.Fatal(err)
				}
				boot = tok
			}
		}
		mode = "two services in one process"
	} else {
		bin := couponsvcBinary(t)
		b = newBackends(t, false)
		boot = "boot-" + randomHex(16)
		env := procEnv(b, boot)
		for _, name := range []string{"couponsvc#1", "couponsvc#2"} {
			urls = append(urls, startProc(t, name, bin, env).url)
		}
		mode = "two processes"
	}
	app := setUp(t, newClient(urls[0], boot), 0, tmpls)

	l := newLedger()
	(&load{urls: urls, token: app.token, tmpls: tmpls, users: 200, max: 1000, workers: 16, redeem: 0.5, refund: 0.4}).run(t, l)
	for kind, n := range l.kinds {
		if strings.HasSuffix(kind, " transport error") || strings.HasSuffix(kind, " internal") {
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
