package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// cartLines is how many lines the carts of cartcheckout have.
const cartLines = 20

// cartRounds is how many times cartcheckout alternates its two halves: on a
// shared machine the load of the others drifts, and alternating spreads
// the drift over both.
const cartRounds = 4

// cartVariant is one half of cartcheckout.
type cartVariant struct {
	name  string
	lines bool // the orders send their cart's lines, else its amount only
	t     *tally
	secs  float64
	cpu   []ProcCPU // seconds summed over the rounds
}

// runCartCheckout is the checkout of carts with lines beside the same
// checkout of amount-only carts, in one run: n orders of each hold their
// one pre-claimed coupon (a fixed 5.00 off) and confirm it, the lined ones
// with a cart of cartLines lines and shipping in the hold and again in the
// confirm body, the amount-only ones with that cart's total. The two halves
// alternate in rounds (amount, lines, lines, amount, ...). It returns the
// amount-only half, then the lined one.
func (e *env) runCartCheckout(ctx context.Context) (*Summary, *Summary) {
	n := e.z.cartOrders
	cart, _ := benchcart.New(cartLines)
	lines := apiLines(&cart)
	total := cart.TotalCents()
	const face = 500
	amount := &Summary{Name: "cartcheckout-amount", OKWord: "redeemed", Concurrency: e.conc,
		Params: fmt.Sprintf("%d orders, amount only (%d), one pre-claimed coupon each (%d off): hold, then confirm; alternating with cartcheckout-lines", n, total, face)}
	lined := &Summary{Name: "cartcheckout-lines", OKWord: "redeemed", Concurrency: e.conc,
		Params: fmt.Sprintf("%d orders, a cart of %d lines and shipping (total %d) in the hold and the confirm, one pre-claimed coupon each (%d off): hold, then confirm", n, cartLines, total, face)}
	fail := func(err error) (*Summary, *Summary) {
		amount.Error, lined.Error = err.Error(), err.Error()
		return amount, lined
	}
	prefix := "b" + e.runID + "c-"
	tid, err := e.c.createTemplate(ctx, templateSpec{name: "bench cart checkout " + e.runID, stock: 2 * n, limit: 1, faceValue: face})
	if err != nil {
		return fail(err)
	}
	// Users 0..n-1 check out amount-only orders, n..2n-1 lined ones.
	codes, err := e.prefill(ctx, tid, 2*n, prefix)
	if err != nil {
		return fail(err)
	}
	amount.Coupons, lined.Coupons = n, n
	ends := make([]checkoutEnd, 2*n)
	orders := make([]string, 2*n)
	for u := range orders {
		kind := "a"
		if u >= n {
			kind = "l"
		}
		orders[u] = fmt.Sprintf("c%s%s-%d", kind, e.runID, u)
	}
	var f faults
	orderJob := func(v *cartVariant, lo int) job {
		return func(ctx context.Context, _, i int) sample {
			u := lo + i
			if v.lines {
				u += n
			}
			ord := orders[u]
			ends[u] = checkoutEnd{act: actConfirm, code: codes[u], order: ord, useLogs: -1}
			var a answer
			if v.lines {
				a = e.c.holdCart(ctx, ord, codes[u], userName(prefix, u), lines, cart.ShippingCents, 900)
			} else {
				a = e.c.hold(ctx, ord, codes[u], userName(prefix, u), int(total), 900)
			}
			kind := classify(&a, &f, "hold", "held")
			if kind != "held" {
				return sample{kind: kind, d: a.d}
			}
			var b answer
			if v.lines {
				b = e.c.confirmCart(ctx, ord, lines, cart.ShippingCents)
			} else {
				b = e.c.settle(ctx, ord, "confirm")
			}
			kind = classify(&b, &f, "confirm", "redeemed")
			ends[u].answered = kind == "redeemed"
			return sample{kind: kind, d: a.d + b.d}
		}
	}
	va := &cartVariant{name: amount.Name, t: newTally(n)}
	vl := &cartVariant{name: lined.Name, lines: true, t: newTally(n)}
	rss := startRSS(e.rssPID, 100*time.Millisecond)
	profDone := func() string { return "" }
	rounds := min(cartRounds, n)
	for r := range rounds {
		lo, hi := r*n/rounds, (r+1)*n/rounds
		pair := []*cartVariant{va, vl}
		if r%2 == 1 {
			pair = []*cartVariant{vl, va}
		}
		for _, v := range pair {
			if ctx.Err() != nil {
				break
			}
			if v == vl && r == 0 {
				profDone = e.prof.start(ctx, lined.Name)
			}
			t, elapsed := drive(ctx, hi-lo, e.conc, orderJob(v, lo))
			v.t.merge(t)
			v.secs += elapsed.Seconds()
			v.cpu = addCPU(v.cpu, t.cpu)
		}
	}
	maxRSS := rss.Stop()
	lined.Profile = profDone()
	for _, x := range []struct {
		s *Summary
		v *cartVariant
	}{{amount, va}, {lined, vl}} {
		x.v.t.cpu = finishCPU(x.v.cpu, x.v.secs, len(x.v.t.lat))
		if done := len(x.v.t.lat); done < n {
			x.v.t.results["not_run"] += n - done
		}
		x.s.fill(x.v.t, time.Duration(x.v.secs*float64(time.Second)))
		x.s.MaxRSSMB = maxRSS
	}
	f.report(lined)

	e.checkoutStates(ctx, lined, tid, prefix, ends)
	for _, x := range []struct {
		s    *Summary
		ends []checkoutEnd
	}{{amount, ends[:n]}, {lined, ends[n:]}} {
		checked, bad := verifyCheckout(x.ends, false)
		detail := fmt.Sprintf("%d orders checked (coupon states, use-log rows), %d problems", checked, len(bad))
		if len(bad) > 0 {
			detail += ": " + strings.Join(bad[:min(3, len(bad))], "; ")
		}
		x.s.check("orders confirmed", len(bad) == 0 && checked > 0, "%s", detail)
	}
	if e.db == nil {
		lined.skip("order lines", "no database")
	} else if rows, err := cartOrderRows(ctx, e.db, "c_"+e.runID+"-%"); err != nil {
		lined.check("order lines", false, "%v", err)
	} else {
		var confirmed []string
		for _, end := range ends {
			if end.answered {
				confirmed = append(confirmed, end.order)
			}
		}
		bad := verifyCartOrders(rows, confirmed, func(ord string) bool { return strings.HasPrefix(ord, "cl") }, cartLines, total, face)
		detail := fmt.Sprintf("%d confirmed orders: lined ones with %d order_lines rows and %d of discount over them, amount-only ones with none; %d problems",
			len(confirmed), cartLines, face, len(bad))
		if len(bad) > 0 {
			detail += ": " + strings.Join(bad[:min(3, len(bad))], "; ")
		}
		lined.check("order lines", len(bad) == 0, "%s", detail)
	}
	checkReconcile(ctx, lined, e.c, tid, e.log)
	return amount, lined
}

// apiLines is a cart's lines as the API takes them.
func apiLines(c *pricing.Cart) []cartLine {
	out := make([]cartLine, len(c.Lines))
	for i, l := range c.Lines {
		out[i] = cartLine{LineID: l.ID, SKU: l.SKU, ProductID: l.ProductID, CategoryIDs: l.CategoryIDs, Quantity: l.Quantity, UnitPriceCents: l.UnitPriceCents}
		if l.NotDiscountable {
			no := false
			out[i].Discountable = &no
		}
	}
	return out
}

// addCPU adds the seconds of rows to sum, process by process.
func addCPU(sum, rows []ProcCPU) []ProcCPU {
	for _, r := range rows {
		i := slices.IndexFunc(sum, func(s ProcCPU) bool { return s.Name == r.Name })
		if i < 0 {
			sum = append(sum, ProcCPU{Name: r.Name})
			i = len(sum) - 1
		}
		sum[i].Seconds += r.Seconds
	}
	return sum
}

// finishCPU sets cores and µs per answer of summed rows.
func finishCPU(rows []ProcCPU, secs float64, answers int) []ProcCPU {
	for i := range rows {
		rows[i].Seconds = round3(rows[i].Seconds)
		if secs > 0 {
			rows[i].Cores = round3(rows[i].Seconds / secs)
		}
		if answers > 0 {
			rows[i].MicrosPerAnswer = math.Round(rows[i].Seconds * 1e6 / float64(answers))
		}
	}
	return rows
}

// cartOrderRow is what the database keeps of one order of cartcheckout.
type cartOrderRow struct {
	hasCartHash   bool
	amountCents   int64
	lines         int
	discountCents int64 // summed over its order_line_discounts rows
}

// cartOrderRows reads the orders whose id is LIKE pattern, with their lines
// and the discount stored over them.
func cartOrderRows(ctx context.Context, db *sql.DB, pattern string) (map[string]cartOrderRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT o.order_id, o.cart_hash IS NOT NULL, o.amount_cents,
		(SELECT COUNT(*) FROM order_lines l WHERE l.order_id = o.order_id),
		(SELECT COALESCE(SUM(d.discount_cents), 0) FROM order_line_discounts d WHERE d.order_id = o.order_id)
		FROM checkout_orders o WHERE o.order_id LIKE ?`, pattern)
	if err != nil {
		return nil, fmt.Errorf("order lines: %w", err)
	}
	defer rows.Close()
	out := map[string]cartOrderRow{}
	for rows.Next() {
		var ord string
		var r cartOrderRow
		if err := rows.Scan(&ord, &r.hasCartHash, &r.amountCents, &r.lines, &r.discountCents); err != nil {
			return nil, err
		}
		out[ord] = r
	}
	return out, rows.Err()
}

// verifyCartOrders checks the stored orders of cartcheckout: each confirmed
// lined order has a cart fingerprint, the cart's total, its lines and the
// coupon's whole discount spread over them; each amount-only order has
// the total and no fingerprint, lines or line discounts.
func verifyCartOrders(rows map[string]cartOrderRow, confirmed []string, isLined func(string) bool, lines int, total, discount int64) []string {
	var bad []string
	for _, ord := range confirmed {
		r, ok := rows[ord]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("order %s: no checkout_orders row", ord))
		case r.amountCents != total:
			bad = append(bad, fmt.Sprintf("order %s: amount %d, want %d", ord, r.amountCents, total))
		case isLined(ord) && (!r.hasCartHash || r.lines != lines || r.discountCents != discount):
			bad = append(bad, fmt.Sprintf("lined order %s: cart hash %v, %d lines, %d of discount on them", ord, r.hasCartHash, r.lines, r.discountCents))
		case !isLined(ord) && (r.hasCartHash || r.lines != 0 || r.discountCents != 0):
			bad = append(bad, fmt.Sprintf("amount-only order %s: cart hash %v, %d lines, %d of discount on them", ord, r.hasCartHash, r.lines, r.discountCents))
		}
	}
	slices.Sort(bad)
	return bad
}
