package main

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// sharedOrder is one order of the shared-code checkout: its user and what
// the client was answered.
type sharedOrder struct {
	user      int
	order     string
	confirmed bool // the hold and its confirm answered held, then redeemed
	code      string
}

// verifySharedCheckout checks the guarantees of a shared code from the
// coupons the service shows (used coupons per user) and the client's
// answers: exactly min(stock, users that reached the gate) coupons used, no
// user over the limit, and every confirmed order's coupon among the used
// ones. It returns the problems found.
func verifySharedCheckout(orders []sharedOrder, used map[int][]string, stock, limit, users int) []string {
	var bad []string
	total := 0
	for u, codes := range used {
		total += len(codes)
		if len(codes) > limit {
			bad = append(bad, fmt.Sprintf("user %d holds %d used coupons over a limit of %d", u, len(codes), limit))
		}
	}
	if want := min(stock, users*limit); total != want {
		bad = append(bad, fmt.Sprintf("%d coupons used, want exactly %d (stock %d, %d users, limit %d)", total, want, stock, users, limit))
	}
	confirmed := 0
	for _, o := range orders {
		if !o.confirmed {
			continue
		}
		confirmed++
		found := false
		for _, c := range used[o.user] {
			found = found || c == o.code
		}
		if !found {
			bad = append(bad, fmt.Sprintf("confirmed order %s: coupon %s is not used by its user", o.order, o.code))
		}
	}
	if confirmed != total {
		bad = append(bad, fmt.Sprintf("%d orders confirmed, %d coupons used", confirmed, total))
	}
	sort.Strings(bad)
	return bad
}

// runSharedCheckout is the checkout with a shared code, next to the claimed
// coupon's checkout: n orders, two per user, each holds the template's one
// shared code for its user (the claim happens inside the hold) and
// confirms it; the stock is a quarter of the orders and the limit 1, so
// that half the users get a coupon and the rest of the orders are refused
// as sold out or over the limit.
func (e *env) runSharedCheckout(ctx context.Context) *Summary {
	n := e.z.redeems
	users, stock := max(1, n/2), max(1, n/4)
	code := "SC-" + e.runID + "-BENCH"
	s := &Summary{Name: "sharedcheckout", OKWord: "redeemed", Concurrency: e.conc,
		Params: fmt.Sprintf("%d orders by %d users, one shared code (stock %d, limit 1): hold with the code, then confirm", n, users, stock)}
	prefix := "b" + e.runID + "s-"
	tid, err := e.c.createTemplate(ctx, templateSpec{name: "bench shared checkout " + e.runID, stock: stock, limit: 1,
		faceValue: 500, sharedCode: code})
	if err != nil {
		s.Error = err.Error()
		return s
	}
	orders := make([]sharedOrder, n)
	var f faults
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := e.prof.start(ctx, s.Name)
	t, elapsed := drive(ctx, n, e.conc, func(ctx context.Context, _, i int) sample {
		ord := fmt.Sprintf("s%s-%d", e.runID, i)
		orders[i] = sharedOrder{user: i % users, order: ord}
		a := e.c.hold(ctx, ord, code, userName(prefix, i%users), 10000, 900)
		kind := classify(&a, &f, "hold", "held", "sold_out", "user_limit_reached")
		if kind != "held" {
			return sample{kind: kind, d: a.d}
		}
		orders[i].code = a.heldCode()
		b := e.c.settle(ctx, ord, "confirm")
		kind = classify(&b, &f, "confirm", "redeemed")
		orders[i].confirmed = kind == "redeemed"
		return sample{kind: kind, d: a.d + b.d}
	})
	s.MaxRSSMB = rss.Stop()
	s.Profile = profDone()
	s.fill(t, elapsed)
	f.report(s)

	used, err := e.sharedUsed(ctx, tid, prefix, users)
	if err != nil {
		s.check("coupons used", false, "%v", err)
	} else {
		bad := verifySharedCheckout(orders, used, stock, 1, users)
		detail := fmt.Sprintf("%d coupons used by %d users, %d problems", countCodes(used), len(used), len(bad))
		if len(bad) > 0 {
			detail += ": " + strings.Join(bad[:min(3, len(bad))], "; ")
		}
		s.check("exactly the stock used, nobody over the limit", len(bad) == 0, "%s", detail)
	}
	checkReconcile(ctx, s, e.c, tid, e.log)
	return s
}

func countCodes(m map[int][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// sharedUsed reads the used coupons of the template per user: from the
// database when there is one, else through the API, user by user.
func (e *env) sharedUsed(ctx context.Context, tid int64, prefix string, users int) (map[int][]string, error) {
	if e.db != nil {
		return usedByUser(ctx, e.db, tid, prefix)
	}
	out := map[int][]string{}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for u := range users {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			list, err := e.c.userCoupons(ctx, userName(prefix, u))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = err
				return
			}
			for _, cp := range list {
				if cp.Status == "used" {
					out[u] = append(out[u], cp.Code)
				}
			}
		})
	}
	wg.Wait()
	return out, firstErr
}

// usedByUser lists the used coupons of a template by user (the users of
// this run, named prefix + "u" + number).
func usedByUser(ctx context.Context, db *sql.DB, tid int64, prefix string) (map[int][]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT user_id, code FROM user_coupons WHERE template_id = ? AND status = 'used'", tid)
	if err != nil {
		return nil, fmt.Errorf("used coupons: %w", err)
	}
	defer rows.Close()
	out := map[int][]string{}
	for rows.Next() {
		var user, code string
		if err := rows.Scan(&user, &code); err != nil {
			return nil, err
		}
		var u int
		if _, err := fmt.Sscanf(strings.TrimPrefix(user, prefix), "u%d", &u); err != nil {
			return nil, fmt.Errorf("used coupon %s of user %q, not of this run", code, user)
		}
		out[u] = append(out[u], code)
	}
	return out, rows.Err()
}

// heldCode is the code of the first coupon of a checkout answer: for a
// shared code, the coupon its claim made.
func (a *answer) heldCode() string {
	if a.checkout == nil || len(a.checkout.Coupons) == 0 {
		return ""
	}
	return a.checkout.Coupons[0].CouponCode
}
