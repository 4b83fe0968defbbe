package faulttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// stallExpiry makes the sweeper's expiry pass stop inside the transaction
// that releases coupon id, after its order's row and order_coupons rows were
// changed and before the coupon's UPDATE returns, until undo is called
// (after the kill). On MariaDB the test holds the coupon's row lock (SELECT
// ... FOR UPDATE in a transaction of its own): the pass waits on it. On
// SQLite, whose lock is the whole database, a trigger on that coupon's
// release runs a query that does not end in any useful time. Either way the
// pass releases the orders before that one (it goes by hold_expires_at) and
// cannot go past it: the kill lands in the middle of the pass, in the middle
// of a transaction, every time.
func stallExpiry(t *testing.T, b *backends, id int64) (undo func()) {
	t.Helper()
	if b.dialect != "sqlite" {
		tx := b.db.Begin()
		var got int64
		if err := tx.Raw("SELECT id FROM user_coupons WHERE id = ? FOR UPDATE", id).Scan(&got).Error; err != nil || got != id {
			t.Fatalf("lock coupon %d: %d %v", id, got, err)
		}
		return func() { tx.Rollback() }
	}
	for _, sql := range []string{
		`CREATE TABLE fault_rows (n INTEGER NOT NULL)`,
		`INSERT INTO fault_rows WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) SELECT n FROM c`,
		fmt.Sprintf(`CREATE TRIGGER fault_stall BEFORE UPDATE ON user_coupons WHEN OLD.id = %d AND NEW.status = 'issued'
			BEGIN SELECT COUNT(*) FROM fault_rows a, fault_rows b, fault_rows c, fault_rows d; END`, id),
	} {
		if err := b.db.Exec(sql).Error; err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	return func() {
		for _, sql := range []string{`DROP TRIGGER fault_stall`, `DROP TABLE fault_rows`} {
			if err := b.db.Exec(sql).Error; err != nil {
				t.Fatalf("%v\n%s", err, sql)
			}
		}
	}
}

// sweeperWaiting reports whether a connection of the test's MariaDB
// database runs the coupon UPDATE of an expiry (waiting on the test's lock).
// On SQLite it cannot be seen from outside: true.
func sweeperWaiting(t *testing.T, b *backends) bool {
	t.Helper()
	if b.dialect == "sqlite" {
		return true
	}
	var n int64
	if err := b.db.Raw(`SELECT COUNT(*) FROM information_schema.processlist
		WHERE db = DATABASE() AND info LIKE 'UPDATE user_coupons SET status%'`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestKillDuringExpiryPass: 24 holds of 5 s expire together while 3 orders
// hold for 15 minutes, 1 was released and 4 are confirmed. The expiry pass is stalled inside
// the transaction of the 13th hold (stallExpiry) and couponsvc is killed
// with SIGKILL there, after it released the first 12. After the restart
// every hold is either still held (the long ones) or released (the 24, the
// stalled one included, by the restarted sweeper), each expired coupon has
// exactly one expiry audit entry, no coupon is held by an order whose hold
// ended, every live use-log row has its used coupon, every order counts the
// coupons it lists, the stalled order confirms late, and reconciliation
// reports zero drift.
func TestKillDuringExpiryPass(t *testing.T) {
	ps := newProcs(t)
	b := ps.b

	p1, admin := ps.start("couponsvc#1")
	tmpls := []*tmplSpec{{stock: 40, limit: 1, policy: models.RefundRestore}}
	app := setUp(t, admin, 0, tmpls)
	tid := tmpls[0].id

	const expiring, long, confirmed = 24, 4, 4
	const stalled = expiring / 2
	total := expiring + long + confirmed
	codes := claimEach(t, app, tid, total, "kx")
	// Orders 0..23 expire, 24..27 hold long, 28..31 are confirmed.
	order := func(i int) string { return fmt.Sprintf("kx-o%d", i) }
	holdFor := func(i int, ttl int64) {
		hold(t, app, client.HoldRequest{OrderID: order(i), CouponCodes: []string{codes[i]}, TTLSeconds: client.Ptr(ttl)})
	}
	for i := expiring; i < total; i++ {
		holdFor(i, 900)
	}
	for i := expiring + long; i < total; i++ {
		confirmHold(t, app, order(i))
	}
	releasedLong := expiring + long - 1 // released before the kill
	releaseHold(t, app, order(releasedLong))
	for i := range expiring {
		holdFor(i, 5)
	}
	type couponRow struct {
		ID      int64
		Status  string
		OrderID *string
	}
	coupon := func(i int) couponRow {
		var row couponRow
		if err := b.db.Raw("SELECT id, status, order_id FROM user_coupons WHERE code = ?", codes[i]).Scan(&row).Error; err != nil {
			t.Fatal(err)
		}
		return row
	}
	undo := stallExpiry(t, b, coupon(stalled).ID)
	undone := false
	defer func() {
		if !undone {
			undo()
		}
	}()

	// The pass releases 0..11 and stops in the transaction of 12.
	deadline := time.Now().Add(40 * time.Second)
	for {
		released := 0
		for i := range expiring {
			if coupon(i).Status == models.CouponIssued {
				released++
			}
		}
		if released > stalled {
			t.Fatalf("the pass went past the stalled hold: %d released", released)
		}
		if released == stalled && sweeperWaiting(t, b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expiry pass did not reach the stalled hold: %d of %d released", released, stalled)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // on SQLite: well inside the stalled transaction
	for i := range expiring {
		want := models.CouponIssued
		if i >= stalled {
			want = models.CouponHeld
		}
		if got := coupon(i).Status; got != want {
			t.Fatalf("before the kill: coupon of %s is %s, want %s", order(i), got, want)
		}
	}
	p1.kill()
	undo()
	undone = true

	restart := time.Now()
	p2, admin2 := ps.start("couponsvc#2")
	app2 := newClient(p2.url, app.token)
	// The restarted sweeper releases the rest, the stalled one included.
	deadline = time.Now().Add(20 * time.Second)
	for {
		left := 0
		for i := range expiring {
			if coupon(i).Status != models.CouponIssued {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d holds past their time still held 20 s after the restart", left)
		}
		time.Sleep(250 * time.Millisecond)
	}
	releasedIn := time.Since(restart)

	for i := range total {
		c := coupon(i)
		h := getHold(t, app2, order(i))
		var wantState, wantCoupon string
		switch {
		case i < expiring:
			wantState, wantCoupon = "expired", models.CouponIssued
		case i == releasedLong:
			wantState, wantCoupon = "released", models.CouponIssued
		case i < expiring+long:
			wantState, wantCoupon = "held", models.CouponHeld
		default:
			wantState, wantCoupon = "confirmed", models.CouponUsed
		}
		if h.State == nil || *h.State != wantState || c.Status != wantCoupon {
			t.Errorf("%s after the restart: hold %v, coupon %s; want %s, %s", order(i), stateOf(h), c.Status, wantState, wantCoupon)
		}
		if (c.OrderID != nil) != (i >= expiring && i != releasedLong) || (c.OrderID != nil && *c.OrderID != order(i)) {
			t.Errorf("coupon of %s keeps order %v", order(i), c.OrderID)
		}
	}
	checkCheckoutConsistent(t, b.db, confirmed)
	var audits int64
	if err := b.db.Raw("SELECT COUNT(*) FROM audit_log WHERE action = 'coupon.hold_expire'").Scan(&audits).Error; err != nil || audits != expiring {
		t.Errorf("expiry audit entries: %d (%v), want %d (one per expired coupon)", audits, err, expiring)
	}

	// The stalled order confirms late (its coupon is free); a long hold
	// confirms, and again is a duplicate.
	c := confirmHold(t, app2, order(stalled))
	if c.Result != "redeemed" || !c.Late {
		t.Errorf("late confirm of the stalled order: %+v", c)
	}
	confirmHold(t, app2, order(expiring))
	if d := confirmHold(t, app2, order(expiring)); d.Result != "duplicate" {
		t.Errorf("confirm again: %+v", d)
	}
	// Repeats of what the first process answered: duplicates.
	if d := confirmHold(t, app2, order(total-1)); d.Result != "duplicate" {
		t.Errorf("confirm of %s after the restart: %+v, want duplicate", order(total-1), d)
	}
	if d := releaseHold(t, app2, order(releasedLong)); d.Result != "duplicate" {
		t.Errorf("release of %s after the restart: %+v, want duplicate", order(releasedLong), d)
	}
	checkCheckoutConsistent(t, b.db, confirmed+2)

	_, _, last := waitSettled(t, admin2, b, tmpls[0].cid, 30*time.Second)
	rows, err := reconcileReport(admin2)
	if err != nil {
		t.Fatal(err)
	}
	if s, u := drift(rows); s != 0 || u != 0 {
		t.Errorf("drift after the restart:%s", showRows(rows))
	}
	report(t, "%d holds of 5 s, %d long, %d confirmed; SIGKILL inside the expiry transaction of hold %d (%d released before it); after the restart the rest released in %s; reconcile:%s",
		expiring, long, confirmed, stalled+1, stalled, releasedIn.Round(time.Millisecond), last)
}

// checkCheckoutConsistent checks the checkout tables against the coupons:
// no coupon held by an order whose hold is not held, none held past an
// order that does not list it, every live use-log row on a coupon used by
// its order (and usedWant of them), and every order counting the coupons it
// lists.
func checkCheckoutConsistent(t *testing.T, db *gorm.DB, usedWant int64) {
	t.Helper()
	var bad []string
	q := func(what, sql string) {
		var rows []string
		if err := db.Raw(sql).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			bad = append(bad, fmt.Sprintf("%s: %s", what, strings.Join(rows, ", ")))
		}
	}
	q("coupons held by an order whose hold ended", `SELECT c.code FROM user_coupons c
		JOIN checkout_orders o ON o.order_id = c.order_id WHERE c.status = 'held' AND (o.hold_state IS NULL OR o.hold_state <> 'held')`)
	q("held or used coupons their order does not list", `SELECT c.code FROM user_coupons c
		WHERE c.status IN ('held', 'used') AND NOT EXISTS (SELECT 1 FROM order_coupons oc WHERE oc.coupon_id = c.id AND oc.order_id = c.order_id)`)
	q("listed coupons neither held nor used by the order", `SELECT oc.order_id FROM order_coupons oc
		JOIN user_coupons c ON c.id = oc.coupon_id WHERE c.status NOT IN ('held', 'used') OR c.order_id IS NULL OR c.order_id <> oc.order_id`)
	q("live use-log rows without a coupon used by their order", `SELECT l.order_id FROM coupon_use_log l
		JOIN user_coupons c ON c.id = l.coupon_id WHERE l.undo_flag = FALSE AND (c.status <> 'used' OR c.order_id IS NULL OR c.order_id <> l.order_id)`)
	q("orders counting other than they list", `SELECT o.order_id FROM checkout_orders o
		WHERE o.coupons <> (SELECT COUNT(*) FROM order_coupons oc WHERE oc.order_id = o.order_id)`)
	if len(bad) > 0 {
		t.Errorf("checkout tables inconsistent:\n%s", strings.Join(bad, "\n"))
	}
	var used, logs int64
	if err := db.Raw("SELECT COUNT(*) FROM user_coupons WHERE status = 'used'").Scan(&used).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Raw("SELECT COUNT(*) FROM coupon_use_log WHERE undo_flag = FALSE").Scan(&logs).Error; err != nil {
		t.Fatal(err)
	}
	if used != usedWant || logs != usedWant {
		t.Errorf("%d used coupons and %d live use-log rows, want %d of each", used, logs, usedWant)
	}
}
