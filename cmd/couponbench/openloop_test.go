package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"2000/s": 2000, "2000": 2000, "120/m": 2, " 5.5/s ": 5.5} {
		got, err := parseRate(in)
		if err != nil || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0/s", "-3", "fast", "10/h"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) took it", in)
		}
	}
}

// TestDriveRateFromSchedule: with one request in flight at most and each
// answer taking 20 ms against a schedule of one every 5 ms, the queue shows
// in the latencies (from the scheduled time, so they grow) and in the missed
// count, where a closed loop would report 20 ms for each.
func TestDriveRateFromSchedule(t *testing.T) {
	const n = 10
	var ran atomic.Int64
	tl, elapsed, ol := driveRate(context.Background(), n, 200, 1, func(ctx context.Context, _, i int) sample {
		ran.Add(1)
		time.Sleep(20 * time.Millisecond)
		return sample{kind: "claimed", d: 20 * time.Millisecond}
	})
	if ran.Load() != n || len(tl.lat) != n || tl.results["claimed"] != n {
		t.Fatalf("ran %d, tallied %d %v", ran.Load(), len(tl.lat), tl.results)
	}
	if ol.Rate != 200 || ol.MaxInFlight != 1 {
		t.Fatalf("open loop %+v", ol)
	}
	// Request i is scheduled at 5i ms and answered no earlier than 20(i+1).
	if ol.Missed < n-2 {
		t.Fatalf("%d requests sent late, want at least %d", ol.Missed, n-2)
	}
	last := tl.lat[n-1]
	if last < time.Duration(20*n-5*(n-1))*time.Millisecond {
		t.Fatalf("last latency %v, want the queue in it (at least %v)", last, time.Duration(20*n-5*(n-1))*time.Millisecond)
	}
	if elapsed < time.Duration(20*n)*time.Millisecond {
		t.Fatalf("elapsed %v", elapsed)
	}
}

// TestDriveRateKeepsSchedule: no request leaves before its scheduled time
// (a loaded machine may make them late, which the missed count reports).
func TestDriveRateKeepsSchedule(t *testing.T) {
	const n, rate = 20, 400.0
	sent := make([]time.Time, n)
	tl, elapsed, ol := driveRate(context.Background(), n, rate, 8, func(ctx context.Context, _, i int) sample {
		sent[i] = time.Now()
		return sample{kind: "sold_out"}
	})
	if len(tl.lat) != n || elapsed < 45*time.Millisecond || ol.Missed > n {
		t.Fatalf("%d answers in %v, %d late; want 20 over at least 47.5 ms", len(tl.lat), elapsed, ol.Missed)
	}
	for i := 1; i < n; i++ {
		if due := time.Duration(float64(i) * float64(time.Second) / rate); sent[i].Sub(sent[0]) < due-time.Millisecond {
			t.Fatalf("request %d left %v after the first, before its time %v", i, sent[i].Sub(sent[0]), due)
		}
	}
}

func TestOpenLoopMarkdown(t *testing.T) {
	r := &Report{Scenarios: []*Summary{{Name: "flash-open", OKWord: "claimed", Requests: 100, PerSecond: 50, P99Ms: 12, P999Ms: 15,
		OpenLoop:    &OpenLoop{Rate: 50, Of: "0.5 x flash 100/s", Missed: 3, MaxInFlight: 7},
		RedisPhases: []RedisPhase{{Phase: "before sell-out", Answers: 10, CPUMicrosPerAns: 40.5, CmdMicrosPerAns: 30, CallsPerAnswer: 2}}}}}
	r.computeRatios()
	var b strings.Builder
	writeMarkdown(&b, r)
	for _, want := range []string{
		"| flash-open | 50 | 0.5 x flash 100/s | 50 | 0.00 | 12.00 | 15.00 | 0.00 | 3 | 7 |",
		"| flash-open | before sell-out | 10 | 0 | 40.5 | 30.0 | 2.00 | 0.00 |",
		"| flash-open p99 latency at a fixed rate (ms) | 12 | ≤ 20 | met |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
