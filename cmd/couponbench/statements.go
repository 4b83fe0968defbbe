package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// statementCounters are the MariaDB status counters read around each counted
// phase (SHOW GLOBAL STATUS): every statement a client sends is one of
// Questions; the Com_ counters say which kind.
var statementCounters = []string{"Questions", "Com_select", "Com_insert", "Com_update", "Com_delete",
	"Com_begin", "Com_commit", "Com_rollback", "Com_stmt_prepare", "Com_stmt_execute"}

// minRoundTrips is the fewest round trips to MariaDB each operation needs,
// alone (no batching with others); docs/statements.md says why each one is
// there.
var minRoundTrips = map[string]int{
	"claim":    4, // BEGIN, INSERT coupon, INSERT its event, COMMIT
	"validate": 1, // SELECT the coupons by code; templates from the cache
	// An amount-only order of one coupon: the section's least statements,
	// BEGIN and COMMIT.
	"hold":       8, // SELECT coupon; INSERT order, order_coupons, audit, event; UPDATE coupon
	"confirm":    9, // SELECT order, coupon; UPDATE order, coupon; INSERT use log, audit, event
	"redemption": 8, // SELECT coupon; INSERT order, order_coupons, use log, event; UPDATE coupon
	"return":     9, // SELECT order, coupons, use log; UPDATE order; INSERT return, audit, event
}

// statementOps is the order of the counted phases.
var statementOps = []string{"claim", "validate", "hold", "confirm", "redemption", "return"}

// StatementRow is what one counted phase cost MariaDB, per operation.
type StatementRow struct {
	Op      string  `json:"op"`
	Ops     int     `json:"ops"`
	Seconds float64 `json:"seconds"`
	// PerOp is each counter's delta over the phase, less the background
	// (the same counters over idle windows just before and after, scaled
	// to the phase's length), divided by the operations.
	PerOp map[string]float64 `json:"per_op"`
	// RoundTrips is Questions plus Com_stmt_prepare per operation: each is
	// one request to MariaDB that waits for its answer.
	RoundTrips float64 `json:"round_trips"`
	Minimum    int     `json:"minimum"`
	// BackgroundPerOp is the background Questions subtracted, per
	// operation: the noise the other clients of the server added.
	BackgroundPerOp float64 `json:"background_per_op"`
	// Noisy marks a row whose background changed between the idle windows
	// before and after the phase (noisyBackground): run it again.
	Noisy bool `json:"noisy,omitempty"`
}

// statusReader reads the global status counters.
type statusReader struct{ db *sql.DB }

func (r statusReader) read(ctx context.Context) (map[string]float64, error) {
	names := make([]string, len(statementCounters))
	args := make([]any, len(statementCounters))
	for i, n := range statementCounters {
		names[i], args[i] = "?", n
	}
	rows, err := r.db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ("+strings.Join(names, ",")+")", args...)
	if err != nil {
		return nil, fmt.Errorf("SHOW GLOBAL STATUS: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

// window is the counters over an idle window of secs seconds.
type window struct {
	from, to map[string]float64
	secs     float64
}

// rate is counter c's background per second in the window, less the one
// question of our own reading that closed it.
func (w window) rate(c string) float64 {
	own := 0.0
	if c == "Questions" {
		own = 1
	}
	return (w.to[c] - w.from[c] - own) / w.secs
}

// idleWindow reads the counters, waits idle and reads them again.
func (r statusReader) idleWindow(ctx context.Context, idle time.Duration) (window, error) {
	from, err := r.read(ctx)
	if err != nil {
		return window{}, err
	}
	start := time.Now()
	time.Sleep(idle)
	to, err := r.read(ctx)
	return window{from: from, to: to, secs: time.Since(start).Seconds()}, err
}

// counted runs n operations of one kind sequentially (conc 1: a lone
// operation's statements, no batching with others) between two readings of
// the counters, with an idle window of idle before and after that measure
// the background.
func (r statusReader) counted(ctx context.Context, op string, n int, idle time.Duration, run job) (StatementRow, *tally, error) {
	row := StatementRow{Op: op, Ops: n, Minimum: minRoundTrips[op]}
	before, err := r.idleWindow(ctx, idle)
	if err != nil {
		return row, nil, err
	}
	start := time.Now()
	t, _ := drive(ctx, n, 1, run)
	secs := time.Since(start).Seconds()
	after, err := r.idleWindow(ctx, idle)
	if err != nil {
		return row, t, err
	}
	phase := window{from: before.to, to: after.from, secs: secs}
	return statementRow(op, n, phase, before, after), t, nil
}

// noisyBackground is the difference, in questions per operation, between
// the background before and after a phase past which its row is marked
// noisy: the other clients' load changed while it ran, and the background
// subtracted is a guess.
const noisyBackground = 0.5

// statementRow is the row of a phase of n operations from the counters
// over it and over the idle windows before and after: each counter's
// delta less the mean of the two backgrounds scaled to the phase's length,
// per operation.
func statementRow(op string, n int, phase, before, after window) StatementRow {
	row := StatementRow{Op: op, Ops: n, Seconds: phase.secs, Minimum: minRoundTrips[op], PerOp: map[string]float64{}}
	for _, c := range statementCounters {
		bg := (before.rate(c) + after.rate(c)) / 2 * phase.secs
		row.PerOp[c] = (phase.rate(c)*phase.secs - bg) / float64(n)
		if c == "Questions" {
			row.BackgroundPerOp = bg / float64(n)
			row.Noisy = math.Abs(before.rate(c)-after.rate(c))*phase.secs/float64(n) > noisyBackground
		}
	}
	row.RoundTrips = row.PerOp["Questions"] + row.PerOp["Com_stmt_prepare"]
	return row
}

// runStatements counts MariaDB's statements and round trips per claim,
// validate, hold, confirm, redemption and return: n users each claim a
// coupon of three combinable templates, validate a 20-line cart with the
// three, hold and confirm the first for one order, redeem the second for
// another order and return a tenth of that order (a partial return by
// amount, which leaves the discount as it was). Each kind is one counted
// phase, sequential, so that it runs alone among this run's requests; the
// counters are the server's, so other clients of the server add to them:
// the idle window before each phase measures that, it is subtracted and
// shown.
func (e *env) runStatements(ctx context.Context, db *sql.DB, n int) *Summary {
	s := &Summary{Name: "statements", OKWord: "counted", Concurrency: 1,
		Params: fmt.Sprintf("%d users: claim (x3 templates), validate (20 lines, 3 coupons), hold, confirm, redemption, return; sequential, each kind a phase", n)}
	if db == nil {
		s.Error = "needs -mysql-dsn (the service's MariaDB) for its status counters"
		return s
	}
	r := statusReader{db: db}
	prefix := "b" + e.runID + "s-"
	var tids [3]int64
	for i := range tids {
		tid, err := e.c.createTemplate(ctx, templateSpec{name: fmt.Sprintf("bench statements %d %s", i, e.runID),
			stock: n, limit: 1, faceValue: 300 + 100*i, stacking: "combinable"})
		if err != nil {
			s.Error = err.Error()
			return s
		}
		tids[i] = tid
	}
	cart, _ := benchcart.New(cartLines)
	lines := clientLines(apiLines(&cart))
	total := cart.TotalCents()
	codes := make([][3]string, n)
	var f faults
	idle := 500 * time.Millisecond
	if e.short {
		idle = 200 * time.Millisecond
	}
	all := &tally{results: map[string]int{}}
	var counted time.Duration
	phase := func(op string, count int, run job) bool {
		row, t, err := r.counted(ctx, op, count, idle, run)
		counted += time.Duration(row.Seconds * float64(time.Second))
		if t != nil {
			all.merge(t)
		}
		if err != nil {
			s.Error = err.Error()
			return false
		}
		s.Statements = append(s.Statements, row)
		return ctx.Err() == nil
	}
	order := func(kind string, u int) string { return fmt.Sprintf("s%s%s-%d", kind, e.runID, u) }
	ok := phase("claim", 3*n, func(ctx context.Context, _, i int) sample {
		u, k := i/3, i%3
		a := e.c.claim(ctx, tids[k], userName(prefix, u), keyName(prefix, i))
		kind := classify(&a, &f, "claim", "claimed")
		if a.body.Coupon != nil {
			codes[u][k] = a.body.Coupon.Code
		}
		return sample{kind: kind, d: a.d}
	}) && phase("validate", n, func(ctx context.Context, _, u int) sample {
		a := e.c.validate(ctx, codes[u][:], userName(prefix, u), lines, cart.ShippingCents)
		kind := classify(&a, &f, "validate", "ok")
		if kind == "ok" && a.checkout.DiscountCents != 300+400+500 {
			f.add("validate: discount %d, want %d (three fixed coupons on a %d cart)", a.checkout.DiscountCents, 300+400+500, total)
		}
		return sample{kind: kind, d: a.d}
	}) && phase("hold", n, func(ctx context.Context, _, u int) sample {
		a := e.c.hold(ctx, order("h", u), codes[u][0], userName(prefix, u), 10000, 900)
		return sample{kind: classify(&a, &f, "hold", "held"), d: a.d}
	}) && phase("confirm", n, func(ctx context.Context, _, u int) sample {
		a := e.c.settle(ctx, order("h", u), "confirm")
		return sample{kind: classify(&a, &f, "confirm", "redeemed"), d: a.d}
	}) && phase("redemption", n, func(ctx context.Context, _, u int) sample {
		a := e.c.redeem(ctx, codes[u][1], order("r", u), 10000)
		return sample{kind: classify(&a, &f, "redemption", "redeemed"), d: a.d}
	}) && phase("return", n, func(ctx context.Context, _, u int) sample {
		a := e.c.partialReturn(ctx, order("r", u), "ret-1", 1000)
		return sample{kind: classify(&a, &f, "return", "refunded"), d: a.d}
	})
	s.Coupons = 3 * n
	s.fill(all, counted)
	f.report(s)
	if ok {
		s.check("phases", len(s.Statements) == len(statementOps), "%d of %d kinds counted", len(s.Statements), len(statementOps))
	}
	return s
}

// writeStatementsTable writes the statements and round trips per operation
// next to the minimum each needs.
func writeStatementsTable(w io.Writer, scenarios []*Summary) {
	for _, s := range scenarios {
		if len(s.Statements) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nMariaDB per operation (%s: SHOW GLOBAL STATUS deltas over each phase, less the background of idle windows before and after it; docs/statements.md):\n\n", s.Name)
		fmt.Fprintf(w, "| operation | ops | round trips | minimum | SELECT | INSERT | UPDATE | DELETE | BEGIN | COMMIT | ROLLBACK | background questions/op |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range s.Statements {
			p := r.PerOp
			fmt.Fprintf(w, "| %s | %d | %.2f | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f%s |\n",
				r.Op, r.Ops, r.RoundTrips, r.Minimum, p["Com_select"], p["Com_insert"], p["Com_update"], p["Com_delete"],
				p["Com_begin"], p["Com_commit"], p["Com_rollback"], r.BackgroundPerOp, noisyMark(r))
		}
	}
}

// noisyMark flags a noisy row in the tables.
func noisyMark(r StatementRow) string {
	if r.Noisy {
		return " (noisy: run again)"
	}
	return ""
}
