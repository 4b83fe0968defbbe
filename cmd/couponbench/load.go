package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// job runs operation i and returns its result word and the time the operation
// itself took (waiting for a precondition is not counted).
type job func(ctx context.Context, worker, i int) sample

// drive runs operations 0..n-1 in order of dispatch with conc workers and
// returns their tally (with the CPU of the processes of ctx's meter) and the
// wall time. Operations are handed out one by one
// from a shared counter so that a slow answer never holds up the others; once
// ctx is done no new operation starts.
func drive(ctx context.Context, n, conc int, run job) (*tally, time.Duration) {
	conc = max(1, min(conc, n))
	meter := cpuMeterFrom(ctx)
	var cpuBefore []float64
	if meter != nil {
		cpuBefore = meter.sample()
	}
	var next atomic.Int64
	tallies := make([]*tally, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		tallies[w] = newTally(n/conc + 1)
		wg.Go(func() {
			t := tallies[w]
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t.add(run(ctx, w, i))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := newTally(n)
	for _, t := range tallies {
		total.merge(t)
	}
	if meter != nil {
		total.cpu = meter.usage(cpuBefore, meter.sample(), elapsed, len(total.lat))
	}
	if done := len(total.lat); done < n {
		total.results["not_run"] += n - done
	}
	return total, elapsed
}

// rssSampler records the largest resident set of a process, read from
// /proc/<pid>/status every interval until stopped.
type rssSampler struct {
	pid     int
	maxKB   atomic.Int64
	stop    chan struct{}
	stopped chan struct{}
}

// startRSS starts sampling pid; a pid of 0 samples nothing.
func startRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{}), stopped: make(chan struct{})}
	if pid <= 0 {
		close(s.stopped)
		return s
	}
	go func() {
		defer close(s.stopped)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if kb, err := readRSSKB(pid); err == nil && kb > s.maxKB.Load() {
				s.maxKB.Store(kb)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the largest RSS seen, in MB.
func (s *rssSampler) Stop() float64 {
	if s.pid > 0 {
		close(s.stop)
	}
	<-s.stopped
	return float64(s.maxKB.Load()) / 1024
}

// readRSSKB reads VmRSS of a process in kB.
func readRSSKB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseVmRSS(f)
}

// parseVmRSS finds the "VmRSS:   1234 kB" line of a /proc status file.
func parseVmRSS(r interface{ Read([]byte) (int, error) }) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.ParseInt(fields[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS line")
}

// profiler fetches a CPU profile of the service from its net/http/pprof
// listener while a scenario runs.
type profiler struct {
	base    string // e.g. http://127.0.0.1:6060; empty: no profiles
	dir     string
	seconds int
}

// start begins a CPU profile named after the scenario; the returned function
// waits for it and reports where it was written, or why not.
func (p profiler) start(ctx context.Context, name string) func() string {
	if p.base == "" {
		return func() string { return "" }
	}
	done := make(chan string, 1)
	go func() { done <- p.fetch(ctx, name) }()
	return func() string {
		select {
		case msg := <-done:
			return msg
		case <-time.After(time.Duration(p.seconds+15) * time.Second):
			return "cpu profile: timed out"
		}
	}
}

func (p profiler) fetch(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.seconds+10)*time.Second)
	defer cancel()
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.base, p.seconds)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return "cpu profile: " + err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "cpu profile: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Sprintf("cpu profile: HTTP %d from %s", resp.StatusCode, url)
	}
	path := filepath.Join(p.dir, name+".cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		return "cpu profile: " + err.Error()
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "cpu profile: " + err.Error()
	}
	return fmt.Sprintf("cpu profile of the first %ds: %s", p.seconds, path)
}
