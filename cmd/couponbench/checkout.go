package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// What a checkout request does with its hold.
const (
	actConfirm = iota
	actRelease
	actExpire
)

// checkoutPlan gives each of n orders its end: a share released, a share left
// to expire, the rest confirmed, spread at random over the run.
func checkoutPlan(n int, release, expire float64, seed uint64) []int {
	acts := make([]int, n)
	nr, ne := int(float64(n)*release+0.5), int(float64(n)*expire+0.5)
	for i := range acts {
		switch {
		case i < nr:
			acts[i] = actRelease
		case i < nr+ne:
			acts[i] = actExpire
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed+7))
	rng.Shuffle(n, func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
	return acts
}

// checkoutEnd is one order as the client saw it and as the service shows it
// after the run.
type checkoutEnd struct {
	act       int
	code      string
	order     string
	answered  bool   // the hold and its confirm or release answered as planned
	status    string // the coupon's status now
	couponOrd string // the coupon's order now
	useLogs   int    // live use-log rows of the order (-1: not known)
}

// verifyCheckout checks the ends: a confirmed order has its one coupon used
// for it and one live use-log row; a released or expired order's coupon is
// issued again, with no use-log row. checkExpiry false leaves the expired
// share out. It returns the number of orders checked and the problems found.
func verifyCheckout(ends []checkoutEnd, checkExpiry bool) (int, []string) {
	var bad []string
	checked := 0
	for _, e := range ends {
		if !e.answered || (e.act == actExpire && !checkExpiry) {
			continue
		}
		checked++
		switch e.act {
		case actConfirm:
			if e.status != "used" || e.couponOrd != e.order {
				bad = append(bad, fmt.Sprintf("confirmed order %s: coupon %s is %s/%q", e.order, e.code, e.status, e.couponOrd))
			}
			if e.useLogs >= 0 && e.useLogs != 1 {
				bad = append(bad, fmt.Sprintf("confirmed order %s: %d live use-log rows", e.order, e.useLogs))
			}
		default:
			if e.status != "issued" {
				bad = append(bad, fmt.Sprintf("%s order %s: coupon %s is %s/%q, expected issued", actName(e.act), e.order, e.code, e.status, e.couponOrd))
			}
			if e.useLogs > 0 {
				bad = append(bad, fmt.Sprintf("%s order %s: %d live use-log rows", actName(e.act), e.order, e.useLogs))
			}
		}
	}
	slices.Sort(bad)
	return checked, bad
}

func actName(act int) string {
	return [...]string{"confirmed", "released", "expired"}[act]
}

// runCheckout is the online checkout: each order holds one pre-claimed
// coupon (5.00 off) on a cart of cartLines lines and shipping, then confirms
// it with the same cart (85%), releases it (10%) or leaves it to expire
// with a 5 s hold (5%). The expired share is checked after the sweeper has
// had its turn (15 s); -short does not wait and skips that check.
func (e *env) runCheckout(ctx context.Context) *Summary {
	n := e.z.redeems
	cart, _ := benchcart.New(cartLines)
	lines := apiLines(&cart)
	s := &Summary{Name: "checkout", OKWord: "held+redeemed+released", Concurrency: e.conc,
		Params: fmt.Sprintf("%d orders of a %d-line cart, one pre-claimed coupon each: hold, then ~85%% confirm, ~10%% release, ~5%% left to expire (ttl 5 s)", n, cartLines)}
	prefix := "b" + e.runID + "k-"
	tid, codes, ok := e.redeemable(ctx, s, "bench checkout", n, prefix)
	if !ok {
		return s
	}
	acts := checkoutPlan(n, 0.10, 0.05, e.seed)
	ends := make([]checkoutEnd, n)
	var f faults
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := e.prof.start(ctx, s.Name)
	t, elapsed := drive(ctx, n, e.conc, func(ctx context.Context, _, i int) sample {
		ord := fmt.Sprintf("k%s-%d", e.runID, i)
		ends[i] = checkoutEnd{act: acts[i], code: codes[i], order: ord, useLogs: -1}
		ttl := 900
		if acts[i] == actExpire {
			ttl = 5
		}
		a := e.c.holdCart(ctx, ord, codes[i], userName(prefix, i), lines, cart.ShippingCents, ttl)
		kind := classify(&a, &f, "hold", "held")
		if kind != "held" || acts[i] == actExpire {
			ends[i].answered = kind == "held"
			return sample{kind: kind, d: a.d}
		}
		var b answer
		if acts[i] == actConfirm {
			b = e.c.confirmCart(ctx, ord, lines, cart.ShippingCents)
			kind = classify(&b, &f, "confirm", "redeemed")
			ends[i].answered = kind == "redeemed"
		} else {
			b = e.c.settle(ctx, ord, "release")
			kind = classify(&b, &f, "release", "released")
			ends[i].answered = kind == "released"
		}
		return sample{kind: kind, d: a.d + b.d}
	})
	s.MaxRSSMB = rss.Stop()
	s.Profile = profDone()
	s.fill(t, elapsed)
	// A confirmed or released order counts once, under its second step
	// (fill counts each word of OKWord).
	f.report(s)

	checkExpiry := !e.short
	if checkExpiry {
		select {
		case <-time.After(15 * time.Second):
		case <-ctx.Done():
		}
	}
	e.checkoutStates(ctx, s, tid, prefix, ends)
	checked, bad := verifyCheckout(ends, checkExpiry)
	logs := "use-log rows from the database"
	if e.db == nil {
		logs = "use-log rows not read"
	}
	detail := fmt.Sprintf("%d orders checked (coupon states, %s), %d problems", checked, logs, len(bad))
	if len(bad) > 0 {
		detail += ": " + strings.Join(bad[:min(3, len(bad))], "; ")
	}
	s.check("holds settled", len(bad) == 0 && checked > 0, "%s", detail)
	if !checkExpiry {
		s.skip("expired holds issued again", "-short does not wait for the sweeper")
	}
	if e.db == nil {
		s.skip("use-log rows", "no database")
	}
	checkReconcile(ctx, s, e.c, tid, e.log)
	return s
}

// checkoutStates reads every coupon's status and order through the API and,
// with a database, the live use-log rows of each order.
func (e *env) checkoutStates(ctx context.Context, s *Summary, tid int64, prefix string, ends []checkoutEnd) {
	var mu sync.Mutex
	var errs []string
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range ends {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			list, err := e.c.userCoupons(ctx, userName(prefix, i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			for _, cp := range list {
				if cp.Code == ends[i].code {
					ends[i].status = string(cp.Status)
					if cp.OrderID != nil {
						ends[i].couponOrd = *cp.OrderID
					}
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		s.check("coupon states (service)", false, "%d listings failed: %s", len(errs), errs[0])
	}
	if e.db == nil {
		return
	}
	logs, err := liveUseLogs(ctx, e.db, tid)
	if err != nil {
		s.check("use-log rows", false, "%v", err)
		return
	}
	for i := range ends {
		ends[i].useLogs = logs[ends[i].order]
	}
}

// liveUseLogs counts the live (not undone) use-log rows of a template by order.
func liveUseLogs(ctx context.Context, db *sql.DB, tid int64) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, "SELECT order_id, COUNT(*) FROM coupon_use_log WHERE template_id = ? AND undo_flag = 0 GROUP BY order_id", tid)
	if err != nil {
		return nil, fmt.Errorf("use-log rows: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var ord string
		var c int
		if err := rows.Scan(&ord, &c); err != nil {
			return nil, err
		}
		out[ord] = c
	}
	return out, rows.Err()
}

// checkoutRatios are the checkout's targets against the bare order
// transactions of the same run: orders settled per second (held, then
// confirmed or released, or left to expire; each order is one raw
// transaction) at least 0.6 of the reference, and MariaDB's CPU per order
// at most twice the reference's. raworderlines, which writes the rows of a
// 20-line order as the checkout's orders have, is the target's reference;
// raworder (amount-only rows) is shown beside it.
func checkoutRatios(get func(string) *Summary) []Ratio {
	c := get("checkout")
	if c == nil || c.Error != "" || c.Seconds <= 0 {
		return nil
	}
	var out []Ratio
	for _, ref := range []string{"raworderlines", "raworder"} {
		raw := get(ref)
		if raw == nil || raw.Error != "" || raw.OKPerSecond <= 0 {
			continue
		}
		confirmed := float64(c.Results["redeemed"]) / c.Seconds
		x := newRatio("checkout/"+ref+" (orders settled/s)", c.OKPerSecond/raw.OKPerSecond, 0.6, false,
			fmt.Sprintf("%.0f orders/s (%.0f/s held and confirmed) vs %.0f/s", c.OKPerSecond, confirmed, raw.OKPerSecond))
		x.Info = ref != "raworderlines"
		out = append(out, x)
		if cm, rm := procMicros(c, "mariadb"), procMicros(raw, "mariadb"); cm > 0 && rm > 0 {
			y := newRatio("checkout/"+ref+" (MariaDB CPU per order)", cm/rm, 2, true,
				fmt.Sprintf("%.0f µs vs %.0f µs", cm, rm))
			y.Info = ref != "raworderlines"
			out = append(out, y)
		}
	}
	return out
}

// procMicros is the CPU a watched process spent per answer of s, or 0.
func procMicros(s *Summary, name string) float64 {
	for _, c := range s.CPU {
		if c.Name == name {
			return c.MicrosPerAnswer
		}
	}
	return 0
}
