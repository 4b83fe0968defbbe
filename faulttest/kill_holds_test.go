package faulttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/models"
)

// TestKillBetweenHoldAndConfirm: couponsvc holds coupons for 12 orders (6
// with a 5 s hold, 6 with 15 minutes) and is killed with SIGKILL before any
// confirm. A hold lives in the database: after the restart the long holds are
// still held, the short ones are expired by the sweeper and their coupons are
// issued again, a still-held order confirms (one used coupon, one use-log
// row) and another releases, and reconciliation reports zero drift.
func TestKillBetweenHoldAndConfirm(t *testing.T) {
	ps := newProcs(t)
	b := ps.b

	p1, admin := ps.start("couponsvc#1")
	tmpls := []*tmplSpec{{stock: 20, limit: 1, policy: models.RefundRestore}}
	app := setUp(t, admin, 0, tmpls)
	tid := tmpls[0].id

	const orders, short = 12, 6
	codes := claimEach(t, app, tid, orders, "kh")
	order := func(i int) string { return fmt.Sprintf("kh-o%d", i) }
	var heldAt time.Time
	for i := range orders {
		ttl := int64(900)
		if i < short {
			ttl = 5
		}
		hold(t, app, client.HoldRequest{OrderID: order(i), CouponCodes: []string{codes[i]},
			UserID: client.Ptr(fmt.Sprintf("kh-u%d", i)), TTLSeconds: client.Ptr(ttl)})
		if i == short-1 {
			heldAt = time.Now()
		}
	}
	p1.kill()

	restart := time.Now()
	p2, admin2 := ps.start("couponsvc#2")
	app2 := newClient(p2.url, app.token)
	status := func(code string) (st, ord string) {
		var row struct {
			Status  string
			OrderID *string
		}
		if err := b.db.Raw("SELECT status, order_id FROM user_coupons WHERE code = ?", code).Scan(&row).Error; err != nil {
			t.Fatal(err)
		}
		if row.OrderID != nil {
			ord = *row.OrderID
		}
		return row.Status, ord
	}
	for i := short; i < orders; i++ {
		h := getHold(t, app2, order(i))
		if h.State == nil || *h.State != "held" {
			t.Errorf("order %s after the restart: state %v, want held", order(i), stateOf(h))
		}
		if st, ord := status(codes[i]); st != "held" || ord != order(i) {
			t.Errorf("coupon of %s after the restart: %s/%q, want held", order(i), st, ord)
		}
	}

	// The short holds end at their time; the sweeper (every 5 s) gives their
	// coupons back. Up to 20 s past the time.
	deadline := heldAt.Add(5*time.Second + 20*time.Second)
	for {
		left := 0
		for i := range short {
			if st, _ := status(codes[i]); st != "issued" {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d short holds not released 20 s after their time", left, short)
		}
		time.Sleep(250 * time.Millisecond)
	}
	expiredIn := time.Since(heldAt)
	for i := range short {
		h := getHold(t, app2, order(i))
		if h.State == nil || *h.State != "expired" {
			t.Errorf("order %s: state %v, want expired", order(i), stateOf(h))
		}
		if st, ord := status(codes[i]); st != "issued" || ord != "" {
			t.Errorf("coupon of expired %s: %s/%q, want issued without an order", order(i), st, ord)
		}
	}
	// The long holds are untouched by the sweeper.
	for i := short; i < orders; i++ {
		if st, _ := status(codes[i]); st != "held" {
			t.Errorf("coupon of %s: %s after the sweeper, want held", order(i), st)
		}
	}

	// A still-held order confirms on the restarted process; another releases.
	c := confirmHold(t, app2, order(short))
	if c.Result != "redeemed" || c.Late {
		t.Errorf("confirm after the restart: %+v", c)
	}
	if st, ord := status(codes[short]); st != "used" || ord != order(short) {
		t.Errorf("confirmed coupon: %s/%q", st, ord)
	}
	var logs int64
	if err := b.db.Raw("SELECT COUNT(*) FROM coupon_use_log WHERE order_id = ? AND undo_flag = ?", order(short), false).Scan(&logs).Error; err != nil || logs != 1 {
		t.Errorf("use-log rows of the confirmed order: %d (%v), want 1", logs, err)
	}
	r := releaseHold(t, app2, order(short+1))
	if r.Result != "released" {
		t.Errorf("release after the restart: %+v", r)
	}
	if st, _ := status(codes[short+1]); st != "issued" {
		t.Errorf("released coupon: %s", st)
	}
	var total int64
	if err := b.db.Raw("SELECT COUNT(*) FROM coupon_use_log").Scan(&total).Error; err != nil || total != 1 {
		t.Errorf("use-log rows in all: %d (%v), want 1", total, err)
	}

	_, _, last := waitSettled(t, admin2, b, tmpls[0].cid, 30*time.Second)
	rows, err := reconcileReport(admin2)
	if err != nil {
		t.Fatal(err)
	}
	if s, u := drift(rows); s != 0 || u != 0 {
		t.Errorf("drift after the restart:%s", showRows(rows))
	}
	report(t, "%d holds (%d of 5 s), SIGKILL before any confirm; restart to end of checks %s; short holds issued again %s after they were made; reconcile:%s",
		orders, short, time.Since(restart).Round(time.Millisecond), expiredIn.Round(time.Millisecond), last)
}
