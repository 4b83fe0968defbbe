package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// lateAfter is how late a request may leave against its scheduled time and
// still count as sent on schedule.
const lateAfter = time.Millisecond

// OpenLoop describes a scenario run at a fixed arrival rate: requests leave on
// a schedule whatever the answers do, and each latency runs from the request's
// scheduled time, so that a slow answer cannot hide the queue behind it (no
// coordinated omission).
type OpenLoop struct {
	// Rate is the arrival rate asked for, requests a second; Of says where it
	// comes from ("0.5 x flash 5352/s"), when derived.
	Rate float64 `json:"rate"`
	Of   string  `json:"of,omitempty"`
	// Missed is how many requests left more than lateAfter after their
	// scheduled time (the generator or its in-flight bound fell behind);
	// their latency still counts from the schedule.
	Missed int `json:"missed_schedule"`
	// MaxInFlight is the most requests in flight at once.
	MaxInFlight int `json:"max_in_flight"`
}

// parseRate reads "2000/s", "2000" or "120/m" as requests a second.
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	per := 1.0
	switch {
	case strings.HasSuffix(s, "/s"):
		s = strings.TrimSuffix(s, "/s")
	case strings.HasSuffix(s, "/m"):
		s, per = strings.TrimSuffix(s, "/m"), 60
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("-rate %q: want a positive number of requests a second, like 2000/s", s)
	}
	return v / per, nil
}

// driveRate runs operations 0..n-1 open loop: operation i is sent at
// start + i/rate, each in its own goroutine, at most maxInFlight at once (a
// request that finds them all busy leaves late and counts as missed). The
// latency of a sample is from its scheduled time to its answer. Once ctx is
// done no new operation starts.
func driveRate(ctx context.Context, n int, rate float64, maxInFlight int, run job) (*tally, time.Duration, OpenLoop) {
	ol := OpenLoop{Rate: rate}
	meter := cpuMeterFrom(ctx)
	var cpuBefore []float64
	if meter != nil {
		cpuBefore = meter.sample()
	}
	out := make([]sample, n)
	ran := make([]bool, n)
	slots := make(chan struct{}, max(1, maxInFlight))
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		sched := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		if d := time.Until(sched); d > 0 {
			time.Sleep(d)
		}
		slots <- struct{}{}
		if time.Since(sched) > lateAfter {
			ol.Missed++
		}
		if v := inFlight.Add(1); v > most.Load() {
			most.Store(v) // only this goroutine raises it
		}
		ran[i] = true
		wg.Go(func() {
			defer func() {
				inFlight.Add(-1)
				<-slots
			}()
			s := run(ctx, i%max(1, maxInFlight), i)
			s.d = time.Since(sched)
			out[i] = s
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	ol.MaxInFlight = int(most.Load())
	total := newTally(n)
	for i := range n {
		if ran[i] {
			total.add(out[i])
		}
	}
	if meter != nil {
		total.cpu = meter.usage(cpuBefore, meter.sample(), elapsed, len(total.lat))
	}
	if done := len(total.lat); done < n {
		total.results["not_run"] += n - done
	}
	return total, elapsed, ol
}
