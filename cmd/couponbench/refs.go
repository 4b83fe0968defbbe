package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// openDB opens the reference database with a pool of conns connections,
// creating the DSN's database when it does not exist. Parameters are
// interpolated client side, as most applications configure the driver, so that
// each statement is one round trip: the reference is as fast as it fairly can be.
func openDB(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql dsn: %w", err)
	}
	cfg.InterpolateParams = true
	if cfg.DBName != "" {
		admin := cfg.Clone()
		admin.DBName = ""
		db, err := sql.Open("mysql", admin.FormatDSN())
		if err != nil {
			return nil, err
		}
		_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+strings.ReplaceAll(cfg.DBName, "`", "")+"`")
		db.Close()
		if err != nil {
			return nil, fmt.Errorf("create database %s: %w", cfg.DBName, err)
		}
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql: %w", err)
	}
	return db, nil
}

// execAll runs statements in order.
func execAll(ctx context.Context, db *sql.DB, stmts ...string) error {
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.60s: %w", q, err)
		}
	}
	return nil
}

// dropTables drops the reference tables with a fresh context, so that they go
// even when the run was interrupted.
func dropTables(db *sql.DB, tables ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, t := range tables {
		db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t)
	}
}

// runBaseline measures the classic claim: one transaction per claim that
// decrements the stock row with a guard and inserts the coupon. Every claim
// contends for the same row lock, as in a flash sale.
func runBaseline(ctx context.Context, db *sql.DB, runID string, n, stock, conc int) *Summary {
	s := &Summary{Name: "baseline", OKWord: "claimed", Concurrency: conc,
		Params: fmt.Sprintf("MariaDB tx per claim (UPDATE stock>0 + INSERT), stock %d, %d claims", stock, n)}
	tpl, cpn := "bench_template_"+runID, "bench_coupon_"+runID
	defer dropTables(db, tpl, cpn)
	err := execAll(ctx, db,
		"CREATE TABLE "+tpl+" (id BIGINT PRIMARY KEY AUTO_INCREMENT, stock BIGINT NOT NULL) ENGINE=InnoDB",
		"CREATE TABLE "+cpn+` (id BIGINT PRIMARY KEY AUTO_INCREMENT, template_id BIGINT NOT NULL,
			user_id VARCHAR(64) NOT NULL, code VARCHAR(32) NOT NULL, claimed_at DATETIME(3) NOT NULL,
			UNIQUE KEY uk_code (code), KEY k_user (template_id, user_id)) ENGINE=InnoDB`,
		fmt.Sprintf("INSERT INTO %s (id, stock) VALUES (1, %d)", tpl, stock),
	)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	update := "UPDATE " + tpl + " SET stock=stock-1 WHERE id=? AND stock>0"
	insert := "INSERT INTO " + cpn + " (template_id, user_id, code, claimed_at) VALUES (?, ?, ?, NOW(3))"
	var f faults
	t, elapsed := drive(ctx, n, conc, func(ctx context.Context, _, i int) sample {
		start := time.Now()
		kind, err := baselineClaim(ctx, db, update, insert, fmt.Sprintf("bu%d", i), fmt.Sprintf("B%s%d", runID, i))
		if err != nil {
			f.add("claim %d: %v", i, err)
		}
		return sample{kind: kind, d: time.Since(start)}
	})
	s.fill(t, elapsed)
	f.report(s)
	var left, rows int
	if err := db.QueryRowContext(ctx, "SELECT stock FROM "+tpl+" WHERE id=1").Scan(&left); err != nil {
		s.check("coupon count", false, "read stock: %v", err)
		return s
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+cpn).Scan(&rows); err != nil {
		s.check("coupon count", false, "count coupons: %v", err)
		return s
	}
	s.check("coupon count", rows == s.OK && left == stock-rows && rows <= stock,
		"%d rows == %d claimed, stock left %d == %d - %d", rows, s.OK, left, stock, rows)
	return s
}

// baselineClaim is one classic claim transaction.
func baselineClaim(ctx context.Context, db *sql.DB, update, insert, user, code string) (string, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "error", err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, update, 1)
	if err != nil {
		return "error", err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "sold_out", nil
	}
	if _, err := tx.ExecContext(ctx, insert, 1, user, code); err != nil {
		return "error", err
	}
	if err := tx.Commit(); err != nil {
		return "error", err
	}
	return "claimed", nil
}

// What a raw redemption transaction writes besides the coupon's UPDATE and
// its use log row.
const (
	rawBare       = iota // rawredeem: nothing else
	rawOrder             // raworder: the order, its coupon and the event
	rawOrderLines        // raworderlines: raworder and a 20-line cart's rows
)

// runRawRedeem measures the bare redemption transaction: the guarded UPDATE of
// the coupon and the INSERT of its use log, on distinct coupons, with nothing
// else around it.
func runRawRedeem(ctx context.Context, db *sql.DB, runID string, n, conc int, seed uint64) *Summary {
	return rawRedemptions(ctx, db, runID, n, conc, seed, rawBare)
}

// runRawOrder is rawredeem writing every row an amount-only redemption of
// the service writes: besides the coupon's UPDATE and its use log row, the
// order's row (its own table), the order's coupon row and an event of about
// the size of the service's (a 5-statement transaction against rawredeem's 2).
func runRawOrder(ctx context.Context, db *sql.DB, runID string, n, conc int, seed uint64) *Summary {
	return rawRedemptions(ctx, db, runID, n, conc, seed, rawOrder)
}

// runRawOrderLines is raworder writing the rows of an order with a cart of
// cartLines lines, as the checkout scenario's orders have: the order's row
// with its cart's hash, currency and shipping, its lines in one multi-row
// INSERT, the coupon's line discounts (with their units) in another, and
// an event that carries the coupon's part of each line (7 statements).
func runRawOrderLines(ctx context.Context, db *sql.DB, runID string, n, conc int, seed uint64) *Summary {
	return rawRedemptions(ctx, db, runID, n, conc, seed, rawOrderLines)
}

// rawTables names the tables of one raw redemption run.
type rawTables struct{ coupon, useLog, order, orderCoupon, event, lines, lineDiscounts string }

// rawCart is what raworderlines writes of every order's cart: the columns
// of its lines and of its coupon's line discounts, and its event's lines,
// priced once (the cart and the 5.00 coupon are the same for every order).
type rawCart struct {
	lineArgs     [][]any // line_no, line_id, sku, product_id, category_ids, quantity, unit_price_cents, discountable
	discountArgs [][]any // line_no, discount_cents, units
	eventLines   string
	shipping     int64
	total        int64
}

func newRawCart() rawCart {
	cart, _ := benchcart.New(cartLines)
	r := pricing.Price(&cart, []pricing.Coupon{{Code: "FIXED", Kind: pricing.KindFixed, FaceValueCents: 500}})
	rc := rawCart{shipping: cart.ShippingCents, total: cart.TotalCents()}
	for i, l := range cart.Lines {
		cats := `["` + strings.Join(l.CategoryIDs, `","`) + `"]`
		rc.lineArgs = append(rc.lineArgs, []any{i, l.ID, l.SKU, l.ProductID, cats, l.Quantity, l.UnitPriceCents, !l.NotDiscountable})
	}
	var ev strings.Builder
	for _, ls := range r.Coupons[0].Lines {
		if ls.DiscountCents == 0 {
			continue
		}
		rc.discountArgs = append(rc.discountArgs, []any{ls.Line, ls.DiscountCents, unitsJSON(ls.Units)})
		if ev.Len() > 0 {
			ev.WriteByte(',')
		}
		fmt.Fprintf(&ev, `{"line_id":%q,"discount_cents":%d}`, cart.Lines[ls.Line].ID, ls.DiscountCents)
	}
	if sh := r.Coupons[0].ShippingCents; sh > 0 {
		rc.discountArgs = append(rc.discountArgs, []any{-1, sh, nil}) // line_no -1: the shipping
	}
	rc.eventLines = "[" + ev.String() + "]"
	return rc
}

// unitsJSON is the units column of a line discount as the service writes
// it: [{"first":0,"count":2,"per_unit_cents":334}].
func unitsJSON(runs []pricing.UnitRun) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, u := range runs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"first":%d,"count":%d,"per_unit_cents":%d}`, u.First, u.Count, u.PerUnitCents)
	}
	b.WriteByte(']')
	return b.String()
}

// rawRedemptions runs rawredeem, raworder or raworderlines (kind).
func rawRedemptions(ctx context.Context, db *sql.DB, runID string, n, conc int, seed uint64, kind int) *Summary {
	s := &Summary{Name: "rawredeem", OKWord: "redeemed", Concurrency: conc,
		Params: fmt.Sprintf("MariaDB tx per redemption (UPDATE coupon + INSERT log), %d distinct coupons in random order", n)}
	switch kind {
	case rawOrder:
		s.Name = "raworder"
		s.Params = fmt.Sprintf("MariaDB tx per redemption with the service's rows (INSERT order, order coupon, UPDATE coupon, INSERT log, event), %d distinct coupons in random order", n)
	case rawOrderLines:
		s.Name = "raworderlines"
		s.Params = fmt.Sprintf("raworder with a %d-line cart's rows (INSERT order, %d lines, order coupon, UPDATE coupon, line discounts, INSERT log, event), %d distinct coupons in random order", cartLines, cartLines, n)
	}
	// Every table's name ends in the run's id: a test finds any left behind.
	name := func(what string) string { return "bench_" + what + "_" + s.Name + "_" + runID }
	t := rawTables{coupon: name("ucoupon"), useLog: name("use_log"), order: name("order"), orderCoupon: name("order_coupon"),
		event: name("event"), lines: name("order_lines"), lineDiscounts: name("line_discounts")}
	defer dropTables(db, t.coupon, t.useLog)
	var err error
	if kind != rawBare {
		defer dropTables(db, t.order, t.orderCoupon, t.event)
		err = execAll(ctx, db,
			"CREATE TABLE "+t.order+` (order_id VARBINARY(64) NOT NULL PRIMARY KEY, stacking VARCHAR(12) NOT NULL,
			coupons BIGINT NOT NULL, amount_cents BIGINT NOT NULL, discount_cents BIGINT NOT NULL,
			cart_hash VARBINARY(64) NULL, currency VARCHAR(3) NOT NULL DEFAULT '', shipping_cents BIGINT NOT NULL DEFAULT 0,
			updated_at DATETIME(6) NOT NULL) ENGINE=InnoDB`,
			"CREATE TABLE "+t.orderCoupon+` (order_id VARBINARY(64) NOT NULL, coupon_id BIGINT NOT NULL, template_id BIGINT NOT NULL,
			created_at DATETIME(6) NOT NULL, PRIMARY KEY (order_id, coupon_id), UNIQUE KEY uq_template (order_id, template_id),
			KEY idx_coupon (coupon_id)) ENGINE=InnoDB`,
			"CREATE TABLE "+t.event+` (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, type VARCHAR(40) NOT NULL,
			created_at DATETIME(6) NOT NULL, data BLOB NOT NULL) ENGINE=InnoDB`,
		)
	}
	if err == nil && kind == rawOrderLines {
		// As the service's tables after migration 0014.
		defer dropTables(db, t.lines, t.lineDiscounts)
		err = execAll(ctx, db,
			"CREATE TABLE "+t.lines+` (order_id VARBINARY(64) NOT NULL, line_no INT NOT NULL, line_id VARBINARY(256) NOT NULL,
			sku VARBINARY(256) NOT NULL, product_id VARBINARY(256) NOT NULL, category_ids TEXT NULL, quantity BIGINT NOT NULL,
			unit_price_cents BIGINT NOT NULL, discountable BOOLEAN NOT NULL DEFAULT TRUE, returned_quantity BIGINT NOT NULL DEFAULT 0,
			PRIMARY KEY (order_id, line_no), UNIQUE KEY uq_line (order_id, line_id),
			CONSTRAINT ck_returns CHECK (returned_quantity >= 0 AND returned_quantity <= quantity)) ENGINE=InnoDB`,
			"CREATE TABLE "+t.lineDiscounts+` (order_id VARBINARY(64) NOT NULL, coupon_id BIGINT NOT NULL, line_no INT NOT NULL,
			template_id BIGINT NOT NULL, discount_cents BIGINT NOT NULL, returned_discount_cents BIGINT NOT NULL DEFAULT 0,
			units TEXT NULL, created_at DATETIME(6) NOT NULL, PRIMARY KEY (order_id, coupon_id, line_no),
			KEY idx_coupon (coupon_id)) ENGINE=InnoDB`,
		)
	}
	if err == nil {
		err = execAll(ctx, db,
			"CREATE TABLE "+t.coupon+` (id BIGINT PRIMARY KEY, code VARCHAR(32) NOT NULL, template_id BIGINT NOT NULL,
			user_id VARCHAR(64) NOT NULL, status VARCHAR(16) NOT NULL, order_id VARCHAR(64) NULL,
			used_at DATETIME(3) NULL, version BIGINT NOT NULL DEFAULT 0, UNIQUE KEY uk_code (code)) ENGINE=InnoDB`,
			"CREATE TABLE "+t.useLog+` (id BIGINT PRIMARY KEY AUTO_INCREMENT, coupon_id BIGINT NOT NULL,
			order_id VARCHAR(64) NOT NULL, user_id VARCHAR(64) NOT NULL, template_id BIGINT NOT NULL,
			order_amount_cents BIGINT NOT NULL, discount_cents BIGINT NOT NULL, used_at DATETIME(3) NOT NULL,
			undo_flag TINYINT NOT NULL DEFAULT 0, UNIQUE KEY uk_coupon_order (coupon_id, order_id)) ENGINE=InnoDB`,
		)
	}
	if err != nil {
		s.Error = err.Error()
		return s
	}
	// The coupons exist before the clock starts, as the claimed coupons of the
	// redeem scenario do.
	for lo := 0; lo < n; lo += 1000 {
		var b strings.Builder
		b.WriteString("INSERT INTO " + t.coupon + " (id, code, template_id, user_id, status) VALUES ")
		for i := lo; i < min(lo+1000, n); i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,'R%s%d',1,'ru%d','issued')", i+1, runID, i, i)
		}
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			s.Error = "fill coupons: " + err.Error()
			return s
		}
	}
	var cart *rawCart
	if kind == rawOrderLines {
		c := newRawCart()
		cart = &c
	}
	// The same random order as the redeem scenario's first redemptions.
	order := rand.New(rand.NewPCG(seed, seed+1)).Perm(n)
	var f faults
	tally, elapsed := drive(ctx, n, conc, func(ctx context.Context, _, i int) sample {
		start := time.Now()
		id := order[i]
		word, err := rawRedeem(ctx, db, t, kind, cart, int64(id+1), fmt.Sprintf("ro%d", id), fmt.Sprintf("ru%d", id))
		if err != nil {
			f.add("redeem %d: %v", i, err)
		}
		return sample{kind: word, d: time.Since(start)}
	})
	s.fill(tally, elapsed)
	f.report(s)
	var used, logs int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.coupon+" WHERE status='used'").Scan(&used); err != nil {
		s.check("redemption count", false, "count: %v", err)
		return s
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.useLog).Scan(&logs); err != nil {
		s.check("redemption count", false, "count log: %v", err)
		return s
	}
	s.check("redemption count", used == s.OK && logs == s.OK, "%d used, %d log rows, %d redeemed answers", used, logs, s.OK)
	if cart != nil {
		var lines, discounts int
		err := errors.Join(db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.lines).Scan(&lines),
			db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.lineDiscounts).Scan(&discounts))
		s.check("cart rows", err == nil && lines == s.OK*len(cart.lineArgs) && discounts == s.OK*len(cart.discountArgs),
			"%d line rows == %d orders × %d, %d line discount rows == %d × %d (%v)", lines, s.OK, len(cart.lineArgs), discounts, s.OK, len(cart.discountArgs), err)
	}
	return s
}

// rawRedeem is one bare redemption transaction; with kind rawOrder or
// rawOrderLines it also writes the rows the service's redemption writes, in
// the service's order (docs/checkout.md, "Lock order").
func rawRedeem(ctx context.Context, db *sql.DB, t rawTables, kind int, cart *rawCart, id int64, order, user string) (string, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "error", err
	}
	defer tx.Rollback()
	now := time.Now().UTC()
	amount, hash, shipping := int64(10000), any(nil), int64(0)
	if cart != nil {
		amount, hash, shipping = cart.total, fmt.Sprintf("%064x", id), cart.shipping
	}
	if kind != rawBare {
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+t.order+" (order_id, stacking, coupons, amount_cents, discount_cents, cart_hash, currency, shipping_cents, updated_at) VALUES (?, 'exclusive', 1, ?, 0, ?, 'EUR', ?, ?)",
			order, amount, hash, shipping, now); err != nil {
			return "error", err
		}
	}
	if cart != nil {
		q, args := multiRowInsert(t.lines, "(order_id, line_no, line_id, sku, product_id, category_ids, quantity, unit_price_cents, discountable)", order, cart.lineArgs)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return "error", err
		}
	}
	if kind != rawBare {
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+t.orderCoupon+" (order_id, coupon_id, template_id, created_at) VALUES (?, ?, 1, ?)",
			order, id, now); err != nil {
			return "error", err
		}
	}
	res, err := tx.ExecContext(ctx, "UPDATE "+t.coupon+" SET status='used', order_id=?, used_at=NOW(3), version=version+1 WHERE id=? AND status='issued' AND version=?", order, id, 0)
	if err != nil {
		return "error", err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "already_used", nil
	}
	if cart != nil {
		rows := make([][]any, len(cart.discountArgs))
		for i, d := range cart.discountArgs {
			rows[i] = append([]any{id}, append(d, now)...)
		}
		q, args := multiRowInsert(t.lineDiscounts, "(order_id, coupon_id, line_no, discount_cents, units, created_at, template_id)", order, rows)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return "error", err
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+t.useLog+" (coupon_id, order_id, user_id, template_id, order_amount_cents, discount_cents, used_at) VALUES (?, ?, ?, 1, ?, 500, NOW(3))",
		id, order, user, amount); err != nil {
		return "error", err
	}
	if kind != rawBare {
		lines := ""
		if cart != nil {
			lines = `,"lines":` + cart.eventLines + `,"shipping_discount_cents":0`
		}
		data := fmt.Sprintf(`{"coupon_id":%d,"code":"R%d","template_id":1,"campaign_id":1,"user_id":%q,"status":"used","value_cents":500,`+
			`"order_id":%q,"order_amount_cents":%d,"discount_cents":500,"actor":"token:bench","valid_from":"2026-12-01T00:00:00Z",`+
			`"valid_until":"2026-12-31T00:00:00Z","version":1%s}`, id, id, user, order, amount, lines)
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+t.event+" (type, created_at, data) VALUES ('coupon.redeemed', ?, ?)",
			now, data); err != nil {
			return "error", err
		}
	}
	if err := tx.Commit(); err != nil {
		return "error", err
	}
	return "redeemed", nil
}

// multiRowInsert is one INSERT of rows into table, as the service writes
// its lines and line discounts: each row the order id then its values, and
// template_id 1 last when the columns end in it.
func multiRowInsert(table, columns, order string, rows [][]any) (string, []any) {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " " + columns + " VALUES ")
	withTemplate := strings.HasSuffix(columns, "template_id)")
	var args []any
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?")
		args = append(args, order)
		for _, v := range r {
			b.WriteString(",?")
			args = append(args, v)
		}
		if withTemplate {
			b.WriteString(",1")
		}
		b.WriteByte(')')
	}
	return b.String(), args
}

// openRedis connects to the reference Redis with a pool as large as the
// concurrency, so that no worker waits for a connection.
func openRedis(ctx context.Context, addr string, conc int) (*redis.Client, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: conc, DialTimeout: 3 * time.Second, DialerRetries: 1})
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis %s: %w", addr, err)
	}
	return rdb, nil
}

// deductWords names the return codes of coupon_deduct.lua with the API's
// result words.
var deductWords = map[int64]string{
	lua.DeductReserved: "claimed", lua.DeductDuplicate: "duplicate", lua.DeductSoldOut: "sold_out",
	lua.DeductBadArgs: "invalid_request", lua.DeductUserLimit: "user_limit_reached",
	lua.DeductBudgetExhausted: "budget_exhausted", lua.DeductNotClaimable: "not_claimable",
	lua.DeductIdempotencyMismatch: "idempotency_mismatch", lua.DeductNotLoaded: "not_loaded",
}

// limitKeys are the keys of coupon_deduct.lua for the reference campaign.
type limitKeys struct{ prefix, budget, template, free, users, pending, rule string }

func newLimitKeys(runID string) limitKeys {
	p := "bench:{cb" + runID + "}:"
	return limitKeys{prefix: p, budget: p + "budget", template: p + "tpl", free: p + "free", users: p + "users",
		pending: p + "pending", rule: p + "rule"}
}

// runLimit measures the gate itself: the flash plan run straight through
// coupon_deduct.lua on Redis, with nothing around it.
func runLimit(ctx context.Context, rdb *redis.Client, runID string, plan []claimReq, users, stock, conc int) *Summary {
	s := &Summary{Name: "limit", OKWord: "claimed", Concurrency: conc,
		Params: fmt.Sprintf("coupon_deduct.lua on Redis, stock %d, limit 1, %d claims from %d users", stock, len(plan), users)}
	k := newLimitKeys(runID)
	defer cleanupKeys(rdb, k.prefix)
	const tid = "999999"
	if err := rdb.Set(ctx, k.budget, "-1", 0).Err(); err != nil {
		s.Error = err.Error()
		return s
	}
	if err := rdb.HSet(ctx, k.template, "remaining", stock, "next", 1, "total", stock, "limit", 1, "value", 500).Err(); err != nil {
		s.Error = err.Error()
		return s
	}
	// An active template whose claims opened at the epoch and never close.
	if err := rdb.Set(ctx, k.rule, "active|0||", 0).Err(); err != nil {
		s.Error = err.Error()
		return s
	}
	if err := lua.Deduct.Load(ctx, rdb).Err(); err != nil {
		s.Error = "load script: " + err.Error()
		return s
	}
	out := make([]claimOutcome, len(plan))
	var f faults
	sell := newSellOutMeter(ctx, rdb)
	t, elapsed := drive(ctx, len(plan), conc, func(ctx context.Context, _, i int) sample {
		p := plan[i]
		user, key := userName("", p.user), keyName("l", p.key)
		start := time.Now()
		res, err := lua.Deduct.Run(ctx, rdb,
			[]string{k.budget, k.template, k.free, k.users, k.prefix + "idem:" + key, k.pending, k.rule},
			tid, user, key, time.Now().UnixMilli(), 600).Slice()
		d := time.Since(start)
		if err != nil || len(res) < 2 {
			f.add("deduct %d: %v %v", i, err, res)
			out[i] = claimOutcome{kind: "error"}
			return sample{kind: "error", d: d}
		}
		code, _ := res[0].(int64)
		word, ok := deductWords[code]
		if !ok {
			word = "code_" + strconv.FormatInt(code, 10)
		}
		switch word {
		case "claimed", "duplicate", "sold_out", "user_limit_reached":
		default:
			f.add("deduct %d: %v", i, res)
		}
		slot, _ := res[1].(int64)
		out[i] = claimOutcome{kind: word, code: fmt.Sprintf("slot%d", slot)}
		sell.answered(ctx, word)
		return sample{kind: word, d: d}
	})
	s.RedisPhases = sell.phases(ctx)
	s.fill(t, elapsed)
	f.report(s)
	tally := verifyClaims(s, plan, out, stock, 1)
	remaining, err := rdb.HGet(ctx, k.template, "remaining").Int()
	held, err2 := rdb.HLen(ctx, k.users).Result()
	if err = errors.Join(err, err2); err != nil {
		s.check("counters", false, "read counters: %v", err)
		return s
	}
	s.check("counters", remaining == stock-tally.claimed && int(held) == tally.claimed,
		"remaining %d == %d - %d claimed, %d users hold one", remaining, stock, tally.claimed, held)
	return s
}

// cleanupKeys deletes every key under prefix, in bounded batches.
func cleanupKeys(rdb *redis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cursor uint64
	for range 100000 {
		keys, next, err := rdb.Scan(ctx, cursor, prefix+"*", 1000).Result()
		if err != nil {
			return
		}
		if len(keys) > 0 {
			rdb.Unlink(ctx, keys...)
		}
		cursor = next
		if cursor == 0 {
			return
		}
	}
}

// redisUsedMemory reads used_memory from INFO memory.
func redisUsedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO memory")
}
