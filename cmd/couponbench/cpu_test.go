package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a ')' of its own; utime 1234, stime 66.
	line := "4242 (odd) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 1234 66 0 0 20 0 9 0 100 1000 200"
	got, err := parseStatCPU(line)
	if err != nil || got != 13.0 {
		t.Fatalf("parseStatCPU = %v, %v; want 13 s", got, err)
	}
	for _, bad := range []string{"", "4242 (x S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 500 0 0 0 zz 66"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q) took a bad line", bad)
		}
	}
}

func TestCPUMeter(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	for _, bad := range []string{"redis", "redis=", "=12", "redis=-1", "redis=x"} {
		if _, err := newCPUMeter(0, bad); err == nil || !strings.Contains(err.Error(), "name=pid") {
			t.Errorf("-watch-cpu %q: %v, want an error naming name=pid", bad, err)
		}
	}
	m, err := newCPUMeter(os.Getpid(), " redis-server=999999999 ,")
	if err != nil {
		t.Fatal(err)
	}
	before := m.sample()
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); { // burn CPU
	}
	rows := m.usage(before, m.sample(), 100*time.Millisecond, 10)
	// couponbench and couponsvc (both this process here); the pid that does
	// not exist is left out rather than reported as zero.
	if len(rows) != 2 || rows[0].Name != "couponbench" || rows[1].Name != "couponsvc" {
		t.Fatalf("rows %+v, want couponbench and couponsvc", rows)
	}
	for _, r := range rows {
		if r.Seconds < 0.01 || r.Cores != round3(r.Seconds/0.1) || r.MicrosPerAnswer != float64(int64(r.Seconds*1e5+0.5)) {
			t.Errorf("%+v: want the 50 ms burnt, over 100 ms and 10 answers", r)
		}
	}
}
