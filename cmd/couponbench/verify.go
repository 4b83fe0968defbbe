package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
)

// couponState is what the client expects the service to hold for a coupon.
type couponState struct {
	status string // "issued" or "used"
	order  string // for "used"
}

// checkServerCount compares the client's claimed count with what the service
// reports: total_stock - remaining.
func checkServerCount(ctx context.Context, s *Summary, c *client, tid int64, claimed int) {
	total, remaining, err := c.remaining(ctx, tid)
	if err != nil {
		s.check("coupon count (service)", false, "%v", err)
		return
	}
	s.check("coupon count (service)", total-remaining == int64(claimed),
		"total_stock %d - remaining %d == %d claimed", total, remaining, claimed)
}

// checkReconcile asks the service for a reconcile report of the template:
// no stock drift and no user drift. An endpoint that is not built yet is
// reported, not failed.
func checkReconcile(ctx context.Context, s *Summary, c *client, tid int64, w io.Writer) {
	row, err := c.reconcile(ctx, tid)
	if errors.Is(err, errNotAvailable) {
		fmt.Fprintln(w, "reconcile: not available")
		s.skip("reconcile", "not available (404)")
		return
	}
	if err != nil {
		s.check("reconcile", false, "%v", err)
		return
	}
	redisRemaining := "none"
	if row.RedisRemaining != nil {
		redisRemaining = fmt.Sprint(*row.RedisRemaining)
	}
	s.check("reconcile", row.Drift == 0 && row.UsersDrifted == 0,
		"drift %d, users drifted %d (redis remaining %s, db live %d, total %d)",
		row.Drift, row.UsersDrifted, redisRemaining, row.DBLive, row.TotalStock)
}

// sampleUsers picks up to n users with coupons and up to m without, spread
// evenly over the sorted ids so that the sample is the same run to run.
func sampleUsers(withCoupons map[int][]string, all []int, n, m int) []int {
	with := slices.Sorted(maps.Keys(withCoupons))
	var without []int
	for _, u := range all {
		if len(withCoupons[u]) == 0 {
			without = append(without, u)
		}
	}
	slices.Sort(without)
	without = slices.Compact(without)
	pick := func(list []int, k int) []int {
		if len(list) <= k {
			return list
		}
		out := make([]int, 0, k)
		for i := range k {
			out = append(out, list[i*len(list)/k])
		}
		return out
	}
	return append(pick(with, n), pick(without, m)...)
}

// checkUsers lists the coupons of sampled users through the API and compares
// them with the answers: the same live coupons of the template, never more
// than the limit, and (when states is given) the expected status and order.
func checkUsers(ctx context.Context, s *Summary, c *client, tid int64, limit int, prefix string,
	users []int, codes map[int][]string, states map[string]couponState, uncertain map[string]bool) {
	var mu sync.Mutex
	var bad []string
	var over, checked int
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, u := range users {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			name := userName(prefix, u)
			list, err := c.userCoupons(ctx, name)
			mu.Lock()
			defer mu.Unlock()
			checked++
			if err != nil {
				bad = append(bad, err.Error())
				return
			}
			var live []string
			for _, cp := range list {
				if cp.TemplateID != tid || cp.Status == "revoked" {
					continue
				}
				live = append(live, cp.Code)
				if want, ok := states[cp.Code]; ok && !uncertain[cp.Code] {
					order := ""
					if cp.OrderID != nil {
						order = *cp.OrderID
					}
					if string(cp.Status) != want.status || (want.status == "used" && order != want.order) {
						bad = append(bad, fmt.Sprintf("%s coupon %s is %s/%q, expected %s/%q", name, cp.Code, cp.Status, order, want.status, want.order))
					}
				}
			}
			if len(live) > limit {
				over++
			}
			want := slices.Sorted(slices.Values(codes[u]))
			slices.Sort(live)
			if !slices.Equal(live, want) {
				bad = append(bad, fmt.Sprintf("%s holds %v, answers gave %v", name, live, want))
			}
		})
	}
	wg.Wait()
	detail := fmt.Sprintf("%d users listed, %d over the limit of %d, %d mismatches", checked, over, limit, len(bad))
	if len(bad) > 0 {
		slices.Sort(bad)
		detail += ": " + strings.Join(bad[:min(3, len(bad))], "; ")
	}
	s.check("users (service)", over == 0 && len(bad) == 0, "%s", detail)
}
