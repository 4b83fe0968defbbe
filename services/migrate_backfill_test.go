package services_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// preCheckout writes rows as the service wrote them before 0004_checkout,
// with the columns 0004 knows (and no later ones): raw SQL, so that later
// migrations adding columns to the models do not change what this writes.
type preCheckout struct {
	t   *testing.T
	db  *gorm.DB
	now time.Time
	cid int64
	n   int64
}

func (p *preCheckout) exec(sql string, args ...any) {
	p.t.Helper()
	if err := p.db.Exec(sql, args...).Error; err != nil {
		p.t.Fatalf("%v\n%s", err, sql)
	}
}

func (p *preCheckout) lastID(table string) int64 {
	p.t.Helper()
	var id int64
	if err := p.db.Raw("SELECT MAX(id) FROM " + table).Scan(&id).Error; err != nil {
		p.t.Fatal(err)
	}
	return id
}

// template writes a template: fixed face cents, or percent off capped at
// face when percent > 0.
func (p *preCheckout) template(stacking string, face, percent, minOrder int64) *models.Template {
	p.t.Helper()
	kind := models.KindFixed
	tp := &models.Template{Stacking: stacking, MinOrderCents: minOrder, Kind: kind, FaceValueCents: face}
	if percent > 0 {
		tp.Kind, tp.FaceValueCents, tp.PercentOff, tp.MaxDiscountCents = models.KindPercent, 0, percent, face
	}
	p.exec(`INSERT INTO templates (campaign_id, name, description, kind, face_value_cents, percent_off, max_discount_cents,
		min_order_cents, total_stock, per_user_limit, claim_starts_at, valid_days, refund_policy, extend_on_refund, status,
		created_at, updated_at, stacking) VALUES (?, 'old', '', ?, ?, ?, ?, ?, 100, 10, ?, 30, ?, ?, 'active', ?, ?, ?)`,
		p.cid, tp.Kind, tp.FaceValueCents, tp.PercentOff, tp.MaxDiscountCents, minOrder, p.now, models.RefundRestore, false,
		p.now, p.now, stacking)
	tp.ID = p.lastID("templates")
	return tp
}

// coupon writes an issued coupon of tp for user.
func (p *preCheckout) coupon(tp *models.Template, user string) *models.Coupon {
	p.t.Helper()
	p.n++
	c := &models.Coupon{Code: models.NewCouponCode(), TemplateID: tp.ID, UserID: user}
	p.exec(`INSERT INTO user_coupons (code, template_id, campaign_id, user_id, status, slot, user_ordinal, request_id,
		value_cents, claimed_at, valid_from, valid_until, version, updated_at)
		VALUES (?, ?, ?, ?, 'issued', ?, 1, ?, 0, ?, ?, ?, 0, ?)`,
		c.Code, tp.ID, p.cid, user, p.n, c.Code, p.now, p.now.Add(-time.Hour), p.now.Add(30*24*time.Hour), p.now)
	c.ID = p.lastID("user_coupons")
	return c
}

// redeem uses c on order as the one-step redemption did before 0004: the
// coupon used and its use log row, nothing else.
func (p *preCheckout) redeem(c *models.Coupon, tp *models.Template, order string, amount, discount int64) {
	p.t.Helper()
	p.exec(`UPDATE user_coupons SET status = 'used', order_id = ?, used_at = ?, version = version + 1 WHERE id = ?`, order, p.now, c.ID)
	p.exec(`INSERT INTO coupon_use_log (coupon_id, order_id, user_id, template_id, order_amount_cents, discount_cents, cashier, used_at, undo_flag)
		VALUES (?, ?, ?, ?, ?, ?, 'till-1', ?, ?)`, c.ID, order, c.UserID, tp.ID, amount, discount, p.now, false)
}

// TestMigrateBackfillsCheckoutOrders: a database at 0004 holds orders
// redeemed before it (used coupons and use log rows, no checkout_orders or
// order_coupons rows). 0005 gives each such order its row (stacking from
// its templates, amount and discount from the use log) and lists its
// coupons; after it a partial return works on such an order and the
// stacking rules hold against its coupons.
func TestMigrateBackfillsCheckoutOrders(t *testing.T) {
	ctx := context.Background()
	fresh := testenv.NewFresh(t)
	db, dialect := openUnmigrated(t, fresh, t.TempDir())
	applyLikeOldRunner(t, db, dialect, "0001_init", "0002_settings", "0003_binary_identities", "0004_checkout")
	if st := migrationStatus(t, db, dialect); st.Version != 4 || len(st.Pending) == 0 || st.Pending[0] != "0005_checkout_backfill.up.sql" {
		t.Fatalf("status before = %+v, want version 4 with 0005 pending", st)
	}

	p := &preCheckout{t: t, db: db, now: time.Now().UTC().Truncate(time.Second)}
	p.exec(`INSERT INTO campaigns (name, budget_cents, created_at) VALUES ('old', 0, ?)`, p.now)
	p.cid = p.lastID("campaigns")
	excl := p.template(models.StackingExclusive, 500, 0, 0)
	fixed := p.template(models.StackingCombinable, 1_000, 0, 0)
	pct := p.template(models.StackingCombinable, 2_000, 10, 5_000)
	other := p.template(models.StackingExclusive, 300, 0, 0)
	extra := p.template(models.StackingCombinable, 100, 0, 0)

	// "one": one exclusive coupon; "two": a fixed and a percent coupon
	// (1000 off 20000, then 10% of 19000); "undone": refunded, nothing to
	// backfill.
	c1 := p.coupon(excl, "ann")
	p.redeem(c1, excl, "one", 10_000, 500)
	c2, c3 := p.coupon(fixed, "bob"), p.coupon(pct, "bob")
	p.redeem(c2, fixed, "two", 20_000, 1_000)
	p.redeem(c3, pct, "two", 20_000, 1_900)
	c4 := p.coupon(excl, "cid")
	p.exec(`INSERT INTO coupon_use_log (coupon_id, order_id, user_id, template_id, order_amount_cents, discount_cents, cashier, used_at, undo_flag, undone_at)
		VALUES (?, 'undone', 'cid', ?, 5000, 500, 'till-1', ?, ?, ?)`, c4.ID, excl.ID, p.now, true, p.now)
	free := p.coupon(other, "dan")  // exclusive, issued
	free2 := p.coupon(extra, "dan") // combinable, issued

	if err := core.Migrate(ctx, db, dialect); err != nil {
		t.Fatal(err)
	}
	if st := migrationStatus(t, db, dialect); st.Version != st.Latest || st.Dirty || len(st.Pending) != 0 {
		t.Fatalf("status after = %+v", st)
	}

	type orderRow struct {
		OrderID       string
		Stacking      string
		Coupons       int64
		AmountCents   int64
		ReturnedCents int64
		DiscountCents int64
		HoldState     *string
	}
	var rows []orderRow
	if err := db.Raw(`SELECT order_id, stacking, coupons, amount_cents, returned_cents, discount_cents, hold_state
		FROM checkout_orders ORDER BY order_id`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	want := []orderRow{
		{OrderID: "one", Stacking: models.StackingExclusive, Coupons: 1, AmountCents: 10_000, DiscountCents: 500},
		{OrderID: "two", Stacking: models.StackingCombinable, Coupons: 2, AmountCents: 20_000, DiscountCents: 2_900},
	}
	if len(rows) != len(want) {
		t.Fatalf("checkout_orders %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("checkout_orders[%d] = %+v, want %+v", i, rows[i], want[i])
		}
	}
	var listed []struct {
		OrderID    string
		CouponID   int64
		TemplateID int64
	}
	if err := db.Raw(`SELECT order_id, coupon_id, template_id FROM order_coupons ORDER BY order_id, coupon_id`).Scan(&listed).Error; err != nil {
		t.Fatal(err)
	}
	if len(listed) != 3 || listed[0].CouponID != c1.ID || listed[1].CouponID != c2.ID || listed[2].CouponID != c3.ID ||
		listed[2].TemplateID != pct.ID || listed[2].OrderID != "two" {
		t.Fatalf("order_coupons %+v", listed)
	}

	svc := backfillService(t, fresh, db, dialect)
	// A partial return on the old order: re-priced on the kept amount by
	// models.Price (kept 4000: under the percent coupon's minimum).
	ret, err := svc.ReturnPart(ctx, "pos", "two", "r1", 16_000)
	wantPrice := models.Price(4_000, []*models.Template{fixed, pct})
	if err != nil || ret.KeptAmountCents != 4_000 || ret.DiscountKeptCents != wantPrice.DiscountCents ||
		ret.DiscountKeptCents != 1_000 || ret.ClawbackCents != 1_900 || ret.FullRefund {
		t.Fatalf("partial return on a backfilled order: %+v %v, want kept 4000, discount 1000, clawback 1900", ret, err)
	}
	if again, err := svc.ReturnPart(ctx, "pos", "two", "r1", 16_000); err != nil || !again.Duplicate || again.ClawbackCents != 1_900 {
		t.Fatalf("the same return again: %+v %v", again, err)
	}
	_, err = svc.ReturnPart(ctx, "pos", "two", "r2", 4_001)
	wantCode(t, err, models.CodeReturnExceedsOrder)

	// Stacking against the old coupons: the exclusive order takes no other
	// coupon; the combinable one takes a combinable coupon but no exclusive one.
	// Each with its order's amount (docs/checkout.md, "One amount per order").
	amounts := map[string]int64{"one": 10_000, "two": 20_000}
	redeem := func(c *models.Coupon, order string) error {
		_, err := svc.Redeem(ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: amounts[order]})
		return err
	}
	wantCode(t, redeem(free, "one"), models.CodeNotCombinable)
	wantCode(t, redeem(free, "two"), models.CodeNotCombinable)
	if err := redeem(free2, "two"); err != nil {
		t.Fatalf("a combinable coupon on the combinable old order: %v", err)
	}
	wantCode(t, redeem(free2, "one"), models.CodeAlreadyUsed)
	var n int64
	if err := db.Raw(`SELECT coupons FROM checkout_orders WHERE order_id = 'two'`).Scan(&n).Error; err != nil || n != 3 {
		t.Fatalf("order two counts %d coupons (%v), want 3", n, err)
	}
	// A whole refund of the old exclusive coupon gives the order's room back.
	if _, err := svc.Refund(ctx, checkout.RefundRequest{CouponCode: c1.Code, OrderID: "one", Cashier: "pos"}); err != nil {
		t.Fatal(err)
	}
	if err := redeem(free, "one"); err != nil {
		t.Fatalf("after the refund the old order takes another coupon: %v", err)
	}
}

// backfillService is a Service over db and the test's Redis (an in-process
// one on the embedded default).
func backfillService(t *testing.T, fresh testenv.Fresh, db *gorm.DB, dialect string) *services.App {
	t.Helper()
	rdb := fresh.Redis()
	if rdb == nil {
		mini := miniredis.NewMiniRedis()
		if err := mini.StartAddr("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(mini.Close)
		rdb = redis.NewClient(&redis.Options{Addr: mini.Addr()})
	}
	t.Cleanup(func() { rdb.Close() })
	svc := services.New(&core.Backends{DB: db, Dialect: dialect, Redis: rdb},
		services.Config{CoreConfig: services.CoreConfig{KeyPrefix: fresh.Prefix, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	t.Cleanup(svc.Close)
	return svc
}
