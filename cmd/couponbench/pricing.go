package main

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// PricingFigures is what the pricing scenario measures besides the rate:
// the CPU of the one thread that priced, per cart, and the allocations of
// the whole process while it did.
type PricingFigures struct {
	Lines   int `json:"lines"`
	Coupons int `json:"coupons"`
	// CPUMicrosPerCart is the pricing thread's CPU time per cart (user and
	// system, getrusage RUSAGE_THREAD), 0 when it cannot be read.
	CPUMicrosPerCart float64 `json:"cpu_us_per_cart"`
	// CartsPerCPUSecond is 1e6 / CPUMicrosPerCart: the rate of one core
	// that did nothing else.
	CartsPerCPUSecond float64 `json:"carts_per_cpu_second"`
	// Allocs and AllocBytes count every allocation of the process during
	// the timed loop (runtime.MemStats deltas), per cart.
	AllocsPerCart     float64 `json:"allocs_per_cart"`
	AllocBytesPerCart float64 `json:"alloc_bytes_per_cart"`
}

// rusageThread is Linux's RUSAGE_THREAD: getrusage of the calling thread.
const rusageThread = 1

// threadCPU returns the CPU time the calling thread has used, or -1 when
// the system cannot say.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runPricing prices the cart of benchcart (lines lines, its five coupons)
// n times on one goroutine locked to its thread, with one Pricer and Result
// kept for the loop as a checkout keeps them, and reports carts per second
// (wall and CPU), each price's latency and the allocations. It needs no
// service: it measures the pricing package inside couponbench.
func runPricing(ctx context.Context, n, lines int) *Summary {
	cart, coupons := benchcart.New(lines)
	s := &Summary{Name: "pricing", OKWord: "priced", Concurrency: 1,
		Params: fmt.Sprintf("%d prices of a %d-line cart with %d coupons (fixed, percent on two categories, buy 2 get 1, tiers, free shipping), one goroutine on one thread, no service",
			n, lines, len(coupons))}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var p pricing.Pricer
	var out pricing.Result
	p.Price(&cart, coupons, &out) // the buffers grow once, before the clock
	want := out
	wantCoupons := make([]int64, len(out.Coupons))
	for i, c := range out.Coupons {
		wantCoupons[i] = c.DiscountCents
	}
	t := newTally(n)
	t.results["priced"] = 0
	var differ int
	meter := cpuMeterFrom(ctx)
	var procBefore []float64
	if meter != nil {
		procBefore = meter.sample()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpuStart := threadCPU()
	start := time.Now()
	for i := range n {
		if i&1023 == 0 && ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		p.Price(&cart, coupons, &out)
		t.add(sample{kind: "priced", d: time.Since(t0)})
		if out.DiscountCents != want.DiscountCents || out.PayableCents != want.PayableCents {
			differ++
		}
	}
	elapsed := time.Since(start)
	cpu := threadCPU() - cpuStart
	runtime.ReadMemStats(&after)
	done := len(t.lat)
	if meter != nil {
		t.cpu = meter.usage(procBefore, meter.sample(), elapsed, done)
	}
	if done < n {
		t.results["not_run"] += n - done
	}
	s.fill(t, elapsed)
	f := &PricingFigures{Lines: lines, Coupons: len(coupons)}
	if done > 0 {
		if cpuStart >= 0 && cpu > 0 {
			f.CPUMicrosPerCart = round3(float64(cpu.Microseconds()) / float64(done))
			f.CartsPerCPUSecond = float64(int(float64(done)/cpu.Seconds() + 0.5))
		}
		f.AllocsPerCart = round3(float64(after.Mallocs-before.Mallocs) / float64(done))
		f.AllocBytesPerCart = round3(float64(after.TotalAlloc-before.TotalAlloc) / float64(done))
	}
	s.Pricing = f
	for i, c := range out.Coupons {
		if c.DiscountCents != wantCoupons[i] {
			differ++
		}
	}
	s.check("same answer every time", differ == 0 && done > 0, "%d prices, discount %d of %d, %d differed", done, want.DiscountCents, cart.TotalCents(), differ)
	// The process may allocate a little beside the loop (the runtime, the
	// CPU meter); one allocation per cart would be done carts of them.
	s.check("no allocation per cart", after.Mallocs-before.Mallocs < uint64(max(done/100, 1)),
		"%d allocations (%d bytes) in the whole process over %d carts", after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc, done)
	return s
}
