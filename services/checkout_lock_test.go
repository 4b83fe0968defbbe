package services_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"

	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// countLockFailures counts the statements on db that failed on a deadlock
// or a lock wait timeout (MySQL 1213, 1205; SQLite "database is locked"):
// the flows retry those, so only such a count shows them.
func countLockFailures(t *testing.T, db *gorm.DB) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	observe := func(tx *gorm.DB) {
		var me *mysqldriver.MySQLError
		if errors.As(tx.Error, &me) && (me.Number == 1213 || me.Number == 1205) ||
			tx.Error != nil && strings.Contains(tx.Error.Error(), "database is locked") {
			n.Add(1)
		}
	}
	cb := db.Callback()
	for name, err := range map[string]error{
		"create": cb.Create().After("*").Register("test:lock-failures", observe),
		"query":  cb.Query().After("*").Register("test:lock-failures", observe),
		"update": cb.Update().After("*").Register("test:lock-failures", observe),
		"delete": cb.Delete().After("*").Register("test:lock-failures", observe),
		"raw":    cb.Raw().After("*").Register("test:lock-failures", observe),
		"row":    cb.Row().After("*").Register("test:lock-failures", observe),
	} {
		if err != nil {
			t.Fatalf("register the %s callback: %v", name, err)
		}
	}
	return &n
}

// orderState is what the database says of one order: its row, and the
// coupons listed on it.
type orderState struct {
	HoldState *string
	Coupons   int64
	Listed    int64
}

func (f *holdFixture) order(id string) orderState {
	f.T.Helper()
	var o orderState
	if err := f.Backends.DB.Raw(`SELECT hold_state, coupons, (SELECT COUNT(*) FROM order_coupons oc WHERE oc.order_id = o.order_id) AS listed
		FROM checkout_orders o WHERE order_id = ?`, id).Scan(&o).Error; err != nil {
		f.T.Fatal(err)
	}
	return o
}

// Refund and revoke race hold, redemption and expiry on one order, 25
// rounds. Every flow takes the order's checkout_orders row first
// (docs/checkout.md, "Lock order"), so on MariaDB they queue on it instead
// of deadlocking: no statement fails on a deadlock, no request answers busy,
// and the final states are exact.
//
// Phase 1: order X carries coupon B (redeemed) and holds coupon A, past its
// time; refund of B, revoke of A and the expiry pass race. After: B issued,
// A revoked, X expired with no coupon.
//
// Phase 2: B is redeemed on X again; a hold of C, the refund of B and a
// redemption of E race on X. After: C held by X, B issued, E used by X, X
// counting and listing 2 coupons.
func TestOrderLockRaceRefundRevokeHoldExpiry(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tA := f.tmpl(models.StackingCombinable, 200, 0, 0)
	tB := f.tmpl(models.StackingCombinable, 300, 0, 0)
	tC := f.tmpl(models.StackingCombinable, 100, 0, 0)
	tE := f.tmpl(models.StackingCombinable, 50, 0, 0)
	lockFailures := countLockFailures(t, f.Backends.DB)
	var mu sync.Mutex
	fail := func(round int, what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf("round %d: %s: %v", round, what, err)
	}
	for round := range 25 {
		user := fmt.Sprintf("lk%d", round)
		a, b, c, e := f.claim(tA, user), f.claim(tB, user), f.claim(tC, user), f.claim(tE, user)
		x := fmt.Sprintf("lock-%d", round)
		redeem := func(cp *models.Coupon) error {
			_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: cp.Code, OrderID: x, OrderAmountCents: 10_000})
			return err
		}
		refundB := func() error {
			_, err := f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: b.Code, OrderID: x, Cashier: "pos"})
			return err
		}
		if err := redeem(b); err != nil {
			t.Fatal(err)
		}
		if _, err := f.hold(x, 10_000, 5, a); err != nil {
			t.Fatal(err)
		}
		f.Clock.Advance(6 * time.Second)
		race(3, func(i int) {
			switch i {
			case 0:
				if err := refundB(); err != nil {
					fail(round, "refund", err)
				}
			case 1:
				if _, err := f.Admin.Revoke(f.Ctx, "admin", a.Code, false, "lock order test"); err != nil {
					fail(round, "revoke", err)
				}
			case 2:
				// The hold's state expires whether or not the revoke took
				// its coupon first.
				if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
					fail(round, "expiry", fmt.Errorf("released %d holds, want 1 (%v)", n, err))
				}
			}
		})
		if t.Failed() {
			t.FailNow()
		}
		if got := f.coupon(b.ID); got.Status != models.CouponIssued || got.OrderID != nil {
			t.Fatalf("round %d phase 1: B %s order %v, want issued", round, got.Status, got.OrderID)
		}
		if got := f.coupon(a.ID); got.Status != models.CouponRevoked || got.OrderID != nil {
			t.Fatalf("round %d phase 1: A %s order %v, want revoked", round, got.Status, got.OrderID)
		}
		if o := f.order(x); o.HoldState == nil || *o.HoldState != checkout.HoldExpired || o.Coupons != 0 || o.Listed != 0 {
			t.Fatalf("round %d phase 1: order %+v, want expired with no coupon", round, o)
		}

		if err := redeem(b); err != nil {
			t.Fatal(err)
		}
		race(3, func(i int) {
			switch i {
			case 0:
				if _, err := f.hold(x, 10_000, 3600, c); err != nil {
					fail(round, "hold", err)
				}
			case 1:
				if err := refundB(); err != nil {
					fail(round, "refund", err)
				}
			case 2:
				if err := redeem(e); err != nil {
					fail(round, "redeem", err)
				}
			}
		})
		if t.Failed() {
			t.FailNow()
		}
		if got := f.coupon(c.ID); got.Status != models.CouponHeld || got.OrderID == nil || *got.OrderID != x {
			t.Fatalf("round %d phase 2: C %s order %v, want held by %s", round, got.Status, got.OrderID, x)
		}
		if got := f.coupon(b.ID); got.Status != models.CouponIssued {
			t.Fatalf("round %d phase 2: B %s, want issued", round, got.Status)
		}
		if got := f.coupon(e.ID); got.Status != models.CouponUsed || got.OrderID == nil || *got.OrderID != x {
			t.Fatalf("round %d phase 2: E %s order %v, want used by %s", round, got.Status, got.OrderID, x)
		}
		if o := f.order(x); o.HoldState == nil || *o.HoldState != checkout.HoldHeld || o.Coupons != 2 || o.Listed != 2 {
			t.Fatalf("round %d phase 2: order %+v, want held with 2 coupons", round, o)
		}
	}
	if n := lockFailures.Load(); n != 0 {
		t.Fatalf("%d statements failed on a deadlock or lock wait: the flows do not take the order's row first", n)
	}
	t.Logf("%s: 25 rounds, no busy answer, no deadlock", testenv.BackendName())
	f.checkInvariants()
}
