package services_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
	"github.com/couponsvc/couponsvc/services/testenv"

	"gorm.io/gorm"
)

// statementLog records the SQL statements run through a gorm.DB (every
// callback chain: create, query, update, delete, row, raw), for counting
// the statements of one request.
type statementLog struct {
	mu   sync.Mutex
	on   bool
	stmt []string
}

func (l *statementLog) register(t *testing.T, db *gorm.DB) {
	t.Helper()
	record := func(db *gorm.DB) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.on {
			l.stmt = append(l.stmt, db.Statement.SQL.String())
		}
	}
	testenv.OnStatement(t, db, "test:count", record)
}

// during runs f and returns the statements it ran.
func (l *statementLog) during(f func()) []string {
	l.mu.Lock()
	l.on, l.stmt = true, nil
	l.mu.Unlock()
	f()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = false
	return l.stmt
}

// newStatementFixture is the fixture of the statement counts: a template
// of 500 cents off, the statements of its database logged, and the
// benchmark's cart of 20 lines. The list of automatic offers is read once
// a second per instance (docs/statements.md, "Automatic offers"): read
// here, kept a minute.
func newStatementFixture(t *testing.T) (*holdFixture, *models.Template, *statementLog, pricing.Cart) {
	t.Helper()
	f := newHoldFixture(t, services.Config{CoreConfig: services.CoreConfig{TemplateCacheTTL: time.Minute}})
	tp := f.tmpl("", 500, 0, 0)
	if _, err := f.Checkout.AutomaticOffers(f.Ctx); err != nil {
		t.Fatal(err)
	}
	log := &statementLog{}
	log.register(t, f.Backends.DB)
	cart, _ := benchcart.New(20)
	return f, tp, log, cart
}

// countWhere counts the statements that match.
func countWhere(stmts []string, match func(string) bool) int {
	n := 0
	for _, s := range stmts {
		if match(s) {
			n++
		}
	}
	return n
}

// logStatements logs the statements of one step.
func logStatements(t *testing.T, name string, st []string) {
	t.Helper()
	t.Logf("%s: %d statements", name, len(st))
	for _, s := range st {
		t.Logf("  %s", oneLine(s))
	}
}

// The checkout of a cart with 20 lines costs the database a fixed few
// statements more than the amount-only checkout, whatever the number of
// lines (BENCHMARKS.md, "Carts with lines"): the hold writes the order's
// lines and its coupon's line discounts with one INSERT each, and a
// confirm that carries the held cart reads the stored discounts back with
// one SELECT.
func TestCartCheckoutStatementsPerHoldAndConfirm(t *testing.T) {
	f, tp, log, cart := newStatementFixture(t)
	lined := checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}
	total := cart.TotalCents()

	count := func(name string, hold checkout.CheckoutRequest, confirm checkout.ConfirmRequest) (h, c []string) {
		t.Helper()
		h = log.during(func() {
			if _, err := f.Checkout.Hold(f.Ctx, hold); err != nil {
				t.Fatalf("%s hold: %v", name, err)
			}
		})
		c = log.during(func() {
			res, err := f.Checkout.Confirm(f.Ctx, confirm)
			if err != nil {
				t.Fatalf("%s confirm: %v", name, err)
			}
			if res.DiscountCents != 500 {
				t.Fatalf("%s confirm: discount %d, want 500", name, res.DiscountCents)
			}
		})
		t.Logf("%s: hold %d statements, confirm %d statements", name, len(h), len(c))
		if testing.Verbose() {
			for _, s := range h {
				t.Logf("  hold:    %s", oneLine(s))
			}
			for _, s := range c {
				t.Logf("  confirm: %s", oneLine(s))
			}
		}
		return h, c
	}
	a := f.claim(tp, "u1")
	ah, ac := count("amount-only", checkout.CheckoutRequest{OrderID: "stmt-a", OrderAmountCents: total, CouponCodes: []string{a.Code}, TTLSeconds: 600, Actor: "shop"},
		checkout.ConfirmRequest{OrderID: "stmt-a"})
	l := f.claim(tp, "u2")
	lh, lc := count("20 lines", checkout.CheckoutRequest{OrderID: "stmt-l", Cart: lined, CouponCodes: []string{l.Code}, TTLSeconds: 600, Actor: "shop"},
		checkout.ConfirmRequest{OrderID: "stmt-l", Cart: lined})
	// The statements of each step, the transaction's BEGIN and COMMIT aside
	// (docs/statements.md): the hold of a new order does not read its row
	// first, the usual confirm does not read the discounts back.
	if len(ah) != 6 || len(ac) != 7 {
		t.Errorf("amount-only: hold %d statements, confirm %d: want 6 and 7 (docs/statements.md)", len(ah), len(ac))
	}
	if len(lh) != 8 || len(lc) != 8 {
		t.Errorf("20 lines: hold %d statements, confirm %d: want 8 and 8 (docs/statements.md)", len(lh), len(lc))
	}
	if len(lh) > len(ah)+2 {
		t.Errorf("the hold of 20 lines runs %d statements, the amount-only one %d: want at most 2 more (the lines, the line discounts)", len(lh), len(ah))
	}
	if len(lc) > len(ac)+1 {
		t.Errorf("the confirm of 20 lines runs %d statements, the amount-only one %d: want at most 1 more (the line discounts read back)", len(lc), len(ac))
	}
	f.checkInvariants()
}

// A one-step redemption is one read of the coupon and the transaction of
// the rows it writes; a partial return by amount reads what it decides on
// and re-prices the order under its row's lock (docs/statements.md).
func TestStatementsPerRedemptionAndReturn(t *testing.T) {
	f, tp, log, cart := newStatementFixture(t)
	lined := checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}
	redeem := func(name string, req checkout.RedeemRequest) []string {
		t.Helper()
		st := log.during(func() {
			res, err := f.Checkout.Redeem(f.Ctx, req)
			if err != nil || res.Duplicate || res.DiscountCents != 500 {
				t.Fatalf("%s: %+v, %v", name, res, err)
			}
		})
		logStatements(t, name, st)
		return st
	}
	a := f.claim(tp, "u1")
	amount := redeem("redemption, amount only", checkout.RedeemRequest{CouponCode: a.Code, OrderID: "stmt-ra", OrderAmountCents: 10_000, Cashier: "till"})
	l := f.claim(tp, "u2")
	lines := redeem("redemption, 20 lines", checkout.RedeemRequest{CouponCode: l.Code, OrderID: "stmt-rl", Cart: lined, Cashier: "till"})
	// SELECT the coupon; INSERT the order, its coupon, UPDATE the coupon,
	// INSERT the use log row and the event; a cart adds its lines and the
	// coupon's line discounts.
	if len(amount) != 6 || len(lines) != 8 {
		t.Errorf("redemption: %d statements amount-only, %d with 20 lines: want 6 and 8", len(amount), len(lines))
	}
	ret := log.during(func() {
		res, err := f.Checkout.ReturnPart(f.Ctx, "pos", "stmt-ra", "r1", 4_000)
		if err != nil || res.KeptAmountCents != 6_000 || res.DiscountKeptCents != 500 || res.ClawbackCents != 0 {
			t.Fatalf("return: %+v, %v", res, err)
		}
	})
	logStatements(t, "partial return", ret)
	if len(ret) != 10 {
		t.Errorf("a partial return of one coupon's order runs %d statements: want 10, its use log row kept as it was (docs/statements.md)", len(ret))
	}
	f.checkInvariants()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + fmt.Sprintf("… (%d chars)", len(s))
	}
	return s
}

// EncodeUnits writes what encoding/json writes of the runs, so that every
// reader of order_line_discounts.units (DecodeUnits) reads it as before.
func TestEncodeUnitsIsTheJSONOfTheRuns(t *testing.T) {
	type run struct {
		First        int64 `json:"first"`
		Count        int64 `json:"count"`
		PerUnitCents int64 `json:"per_unit_cents"`
	}
	for _, runs := range [][]pricing.UnitRun{nil, {}, {{First: 0, Count: 2, PerUnitCents: 334}},
		{{First: 0, Count: 1, PerUnitCents: 0}, {First: 1, Count: 9999, PerUnitCents: 100_000_000_000}, {First: 10000, Count: 3, PerUnitCents: -1}}} {
		in := make([]run, len(runs))
		for i, u := range runs {
			in[i] = run{u.First, u.Count, u.PerUnitCents}
		}
		want, _ := json.Marshal(in)
		got := checkout.EncodeUnits(runs)
		if got != string(want) {
			t.Errorf("EncodeUnits(%v) = %s, want %s", runs, got, want)
		}
		back, err := checkout.DecodeUnits(&got)
		if err != nil || len(back) != len(runs) {
			t.Errorf("DecodeUnits(%s) = %v, %v", got, back, err)
		}
		for i := range back {
			if back[i] != runs[i] {
				t.Errorf("DecodeUnits(%s)[%d] = %v, want %v", got, i, back[i], runs[i])
			}
		}
	}
}

// A confirm reads the order's discounts back only when the order carries
// more than its hold (docs/statements.md): next to a coupon redeemed one
// step at a time it does, and the order's discounts stay within its amount;
// an order that carries its hold alone is confirmed by the guarded UPDATE.
func TestConfirmReadsDiscountsOnlyNextToOtherCoupons(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	var log statementLog
	log.register(t, f.Backends.DB)
	reads := func(stmts []string) int {
		return countWhere(stmts, func(s string) bool { return strings.Contains(s, "AS kept") })
	}
	readsDiscounts := func(stmts []string) bool { return reads(stmts) > 0 }
	confirm := func(order string, want int64) []string {
		t.Helper()
		return log.during(func() {
			res, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: order})
			if err != nil || res.Duplicate || res.DiscountCents != want || res.PayableCents != 600-want-map[string]int64{"alone": 0, "mixed": 100}[order] {
				t.Fatalf("confirm %s: %+v %v", order, res, err)
			}
		})
	}
	alone := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	if _, err := f.hold("alone", 600, 60, alone); err != nil {
		t.Fatal(err)
	}
	if readsDiscounts(confirm("alone", 500)) {
		t.Error("the confirm of an order that carries its hold alone read its discounts back")
	}
	held := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	step := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	if _, err := f.hold("mixed", 600, 60, held); err != nil {
		t.Fatal(err)
	}
	if res, err := f.redeem(step, "mixed", 600); err != nil || res.DiscountCents != 100 {
		t.Fatalf("next to the hold: %+v %v", res, err)
	}
	// Once, under the order's row lock before the writes: the answer's
	// payable comes from that state, not from a read after the commit.
	if n := reads(confirm("mixed", 500)); n != 1 {
		t.Errorf("the confirm of an order that carries another coupon read its discounts %d times, want once", n)
	}
	// A hold next to a coupon redeemed before reads the order's discounts
	// twice: to price on what the order leaves, and under its row lock to
	// decide it fits; its payable comes from the second.
	first := f.claim(f.tmpl(models.StackingCombinable, 100, 0, 0), "u1")
	if _, err := f.redeem(first, "next", 600); err != nil {
		t.Fatal(err)
	}
	later := f.claim(f.tmpl(models.StackingCombinable, 500, 0, 0), "u1")
	st := log.during(func() {
		res, err := f.hold("next", 600, 60, later)
		if err != nil || res.DiscountCents != 500 || res.PayableCents != 0 {
			t.Fatalf("hold next to a redemption: %+v %v", res, err)
		}
	})
	if n := reads(st); n != 2 {
		t.Errorf("the hold next to a redemption read the order's discounts %d times, want 2", n)
	}
	for order, want := range map[string]int64{"alone": 500, "mixed": 600} {
		if _, _, discounts, _ := f.orderFigures(order); discounts != want {
			t.Errorf("order %s: %d off, want %d", order, discounts, want)
		}
	}
	if got := f.coupon(held.ID); got.Status != models.CouponUsed || got.OrderID == nil || *got.OrderID != "mixed" {
		t.Errorf("the held coupon after the confirm: %+v", got)
	}
	f.checkInvariants()
}

// A release or an expiry of a hold that parked nothing sends no UPDATE of
// order_line_discounts to put parked rows back, and one of an amount-only
// order no DELETE of line discounts (docs/statements.md, "Release and
// expiry"): the order's row, read once, said so. A release reads the row
// once and takes its lock once (the guarded UPDATE).
func TestStatementsPerReleaseAndExpiry(t *testing.T) {
	f, tp, log, cart := newStatementFixture(t)
	lined := checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}
	prefixed := func(stmts []string, prefix string) int {
		return countWhere(stmts, func(s string) bool { return strings.HasPrefix(s, prefix) })
	}
	count := func(name string, want, drops, orderReads int, f func()) {
		t.Helper()
		st := log.during(f)
		logStatements(t, name, st)
		restores := prefixed(st, "UPDATE order_line_discounts")
		deletes := prefixed(st, "DELETE FROM order_line_discounts")
		reads := prefixed(st, "SELECT order_id, stacking")
		locks := prefixed(st, "UPDATE checkout_orders SET updated_at")
		if len(st) != want || restores != 0 || deletes != drops || reads != orderReads || locks != 0 {
			t.Errorf("%s: %d statements, %d putting parked rows back, %d deleting line discounts, %d reading the order, %d taking its lock again;"+
				" want %d, 0, %d, %d, 0 (docs/statements.md)", name, len(st), restores, deletes, reads, locks, want, drops, orderReads)
		}
	}
	release := func(order string) func() {
		return func() {
			if res, err := f.Checkout.Release(f.Ctx, "shop", order); err != nil || res.Duplicate {
				t.Fatalf("release %s: %+v %v", order, res, err)
			}
		}
	}
	a := f.claim(tp, "u1")
	if _, err := f.hold("rel-a", 10_000, 600, a); err != nil {
		t.Fatal(err)
	}
	count("release, amount only", 11, 0, 1, release("rel-a"))
	l := f.claim(tp, "u2")
	if _, err := f.holdCart("rel-l", lined, l); err != nil {
		t.Fatal(err)
	}
	count("release, 20 lines", 13, 1, 1, release("rel-l"))
	e := f.claim(tp, "u3")
	if _, err := f.hold("exp-a", 10_000, 60, e); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(61 * time.Second)
	count("expiry, amount only", 9, 0, 0, func() {
		if n, err := f.Checkout.ExpireHolds(f.Ctx); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
	})
	for _, c := range []*models.Coupon{a, l, e} {
		if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.OrderID != nil {
			t.Errorf("coupon %d after its hold ended: %s", c.ID, got.Status)
		}
	}
	f.checkInvariants()
}
