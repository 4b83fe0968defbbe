package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"Empty", nil, 50, 0},
		{"One", ms(7), 99, 7 * time.Millisecond},
		{"MedianOdd", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"MedianEven", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"P95Of100", hundred, 95, 95 * time.Millisecond},
		{"P99Of100", hundred, 99, 99 * time.Millisecond},
		{"P100IsMax", hundred, 100, 100 * time.Millisecond},
		{"TinyPIsMin", hundred, 0.001, 1 * time.Millisecond},
		{"P99Of10IsMax", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummaryFill(t *testing.T) {
	tl := newTally(0)
	// Added out of order: fill must sort.
	for _, d := range []int{30, 10, 20, 40, 1000} {
		tl.add(sample{kind: "claimed", d: time.Duration(d) * time.Millisecond})
	}
	for range 5 {
		tl.add(sample{kind: "sold_out", d: 5 * time.Millisecond})
	}
	s := &Summary{Name: "flash", OKWord: "claimed"}
	s.fill(tl, 2*time.Second)
	if s.Requests != 10 || s.OK != 5 || s.Results["sold_out"] != 5 {
		t.Fatalf("counts: %+v", s)
	}
	if s.PerSecond != 5 || s.OKPerSecond != 3 { // 2.5 rounded
		t.Errorf("rates: %v answers/s, %v ok/s", s.PerSecond, s.OKPerSecond)
	}
	if s.P50Ms != 5 || s.MaxMs != 1000 || s.P99Ms != 1000 || s.P95Ms != 1000 {
		t.Errorf("latency: p50 %v p95 %v p99 %v max %v", s.P50Ms, s.P95Ms, s.P99Ms, s.MaxMs)
	}
}

// TestSummaryFillJoinedWords: an OKWord of several words joined by "+"
// counts the answers of each of them, and the rate follows.
func TestSummaryFillJoinedWords(t *testing.T) {
	tl := newTally(0)
	for kind, n := range map[string]int{"held": 3, "redeemed": 4, "released": 1, "busy": 2} {
		for range n {
			tl.add(sample{kind: kind, d: time.Millisecond})
		}
	}
	s := &Summary{Name: "checkout", OKWord: "held+redeemed+released"}
	s.fill(tl, 4*time.Second)
	if s.Requests != 10 || s.OK != 8 || s.OKPerSecond != 2 || s.PerSecond != 3 { // 2.5 rounded
		t.Fatalf("counts: %d requests, %d ok, %v ok/s, %v answers/s", s.Requests, s.OK, s.OKPerSecond, s.PerSecond)
	}
}

func TestTallyMerge(t *testing.T) {
	a, b := newTally(0), newTally(0)
	a.add(sample{kind: "claimed", d: time.Millisecond})
	b.add(sample{kind: "claimed", d: 2 * time.Millisecond})
	b.add(sample{kind: "busy", d: 3 * time.Millisecond})
	a.merge(b)
	if a.results["claimed"] != 2 || a.results["busy"] != 1 || len(a.lat) != 3 {
		t.Errorf("merged: %+v", a)
	}
}

func TestResultsLine(t *testing.T) {
	got := resultsLine(map[string]int{"claimed": 10, "sold_out": 90, "duplicate": 10, "busy": 1})
	want := "sold_out 90, claimed 10, duplicate 10, busy 1"
	if got != want {
		t.Errorf("resultsLine = %q, want %q", got, want)
	}
	if got := resultsLine(nil); got != "-" {
		t.Errorf("empty = %q", got)
	}
}

func sampleSummary() *Summary {
	s := &Summary{Name: "flash", Params: "stock 10", OKWord: "claimed", Concurrency: 8,
		Requests: 100, Results: map[string]int{"claimed": 10, "sold_out": 90}, OK: 10,
		Seconds: 2, PerSecond: 50, OKPerSecond: 5, P50Ms: 1.5, P95Ms: 3.25, P99Ms: 4, MaxMs: 9.75}
	s.check("exact stock", true, "10 coupons claimed, stock 10")
	return s
}

func TestPrintSummary(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		var b bytes.Buffer
		printSummary(&b, sampleSummary())
		out := b.String()
		for _, want := range []string{
			"== flash  [PASS]",
			"requests     100 in 2.00s, concurrency 8",
			"results      sold_out 90, claimed 10",
			"throughput   50 answers/s, 5 claimed/s",
			"latency      p50 1.50ms  p95 3.25ms  p99 4.00ms  p99.9 0.00ms  max 9.75ms",
			"check ok   exact stock: 10 coupons claimed, stock 10",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in\n%s", want, out)
			}
		}
	})
	t.Run("ErrBrokenGuarantee", func(t *testing.T) {
		s := sampleSummary()
		s.check("coupon count (service)", false, "11 != 10")
		s.skip("reconcile", "not available (404)")
		var b bytes.Buffer
		printSummary(&b, s)
		out := b.String()
		if !s.Failed() || !strings.Contains(out, "[FAIL]") || !strings.Contains(out, "check FAIL coupon count (service): 11 != 10") ||
			!strings.Contains(out, "check skip reconcile") {
			t.Errorf("failure not shown:\n%s", out)
		}
	})
	t.Run("SkippedIsNotFailure", func(t *testing.T) {
		s := sampleSummary()
		s.skip("reconcile", "not available (404)")
		if s.Failed() {
			t.Error("a skipped check failed the scenario")
		}
	})
}

func TestRatios(t *testing.T) {
	r := &Report{Scenarios: []*Summary{
		{Name: "baseline", OKPerSecond: 1000},
		{Name: "claim", OKPerSecond: 3000},
		{Name: "limit", PerSecond: 20000},
		{Name: "flash", PerSecond: 10000, P99Ms: 40, MaxRSSMB: 120},
		{Name: "rawredeem", OKPerSecond: 2000},
		{Name: "redeem", Error: "could not run", OKPerSecond: 5000},
		{Name: "checkout", Seconds: 10, Results: map[string]int{"redeemed": 8500, "released": 1000, "held": 500}},
		{Name: "pricing", PerSecond: 20000, Pricing: &PricingFigures{CPUMicrosPerCart: 25.5, CartsPerCPUSecond: 39216}},
		{Name: "cartcheckout-amount", OKPerSecond: 400, CPU: []ProcCPU{{Name: "couponsvc", MicrosPerAnswer: 2000}}},
		{Name: "cartcheckout-lines", OKPerSecond: 300, CPU: []ProcCPU{{Name: "couponsvc", MicrosPerAnswer: 2600}}},
	}}
	r.computeRatios()
	got := map[string]Ratio{}
	for _, x := range r.Ratios {
		got[x.Name] = x
	}
	if x := got["claim/baseline (committed claims/s)"]; x.Value != 3 || x.Met || x.verdict() != "missed by 25% (1 short)" {
		t.Errorf("claim/baseline: %+v %s", x, x.verdict())
	}
	if x := got["flash/limit (answers/s)"]; x.Value != 0.5 || !x.Met {
		t.Errorf("flash/limit: %+v", x)
	}
	if x := got["flash p99 latency (ms)"]; !x.Met || !x.AtMost {
		t.Errorf("p99: %+v", x)
	}
	if x := got["flash max RSS of the service (MB)"]; !x.Met {
		t.Errorf("rss: %+v", x)
	}
	if _, ok := got["redeem/rawredeem (redemptions/s)"]; ok {
		t.Error("a ratio from a scenario that did not run")
	}
	// 8500 orders held and confirmed in 10 s against 2000 bare redemptions/s.
	if x := got["checkout/rawredeem (held+confirmed orders/s)"]; x.Value != 0.425 || x.Info || x.verdict() != "missed by 15% (0.075 short)" ||
		x.Detail != "850 orders/s held and confirmed vs 2000/s" {
		t.Errorf("checkout/rawredeem: %+v", x)
	}
	if x := got["pricing (µs of CPU per 100-line cart)"]; x.Value != 25.5 || !x.Met || !x.AtMost ||
		x.Detail != "39216 carts/s on one core, 20000/s by the wall clock; 0 allocations per cart" {
		t.Errorf("pricing: %+v", x)
	}
	if x := got["cartcheckout lines/amount (held+confirmed orders/s)"]; x.Value != 0.75 || x.Met || x.verdict() != "missed by 6% (0.05 short)" ||
		x.Detail != "300 orders/s with 20 lines vs 400/s amount-only; service CPU 2600 vs 2000 µs per order" {
		t.Errorf("cartcheckout: %+v %s", x, x.verdict())
	}
	var md bytes.Buffer
	writeMarkdown(&md, r)
	if !strings.Contains(md.String(), "| checkout/rawredeem (held+confirmed orders/s) | 0.425 | ≥ 0.5 | missed by 15% (0.075 short) | 850 orders/s held and confirmed vs 2000/s |") {
		t.Errorf("markdown targets:\n%s", md.String())
	}
	var b bytes.Buffer
	printRatios(&b, r)
	if !strings.Contains(b.String(), "target >= 4: missed by 25%") {
		t.Errorf("ratios table:\n%s", b.String())
	}
}

func TestWriteMarkdownAndJSON(t *testing.T) {
	r := &Report{Scenarios: []*Summary{sampleSummary()}, RedisBytesPerCoupon: 180}
	r.computeRatios()
	var md bytes.Buffer
	writeMarkdown(&md, r)
	for _, want := range []string{
		"| flash | stock 10 | 100 | 50 | 5 claimed | 1.50 | 3.25 | 4.00 | 9.75 | pass |",
		"| flash | sold_out 90, claimed 10 |",
		"| flash p99 latency (ms) | 4 | ≤ 50 | met |",
		"Redis memory per claimed coupon: 180 bytes",
		"- flash / exact stock: ok — 10 coupons claimed, stock 10",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown misses %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if s := back.Scenarios[0]; s.P99Ms != 4 || s.Results["sold_out"] != 90 || len(s.Checks) != 1 {
		t.Errorf("JSON round trip: %+v", s)
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tcouponsvc\nVmPeak:\t  900000 kB\nVmRSS:\t   123456 kB\nThreads:\t9\n"
	kb, err := parseVmRSS(strings.NewReader(status))
	if err != nil || kb != 123456 {
		t.Errorf("parseVmRSS = %d, %v", kb, err)
	}
	if _, err := parseVmRSS(strings.NewReader("Name:\tx\n")); err == nil {
		t.Error("no error without VmRSS")
	}
}

func TestScenarios(t *testing.T) {
	got, err := scenarios("all")
	if err != nil || strings.Join(got, ",") != "baseline,claim,limit,flash,rawredeem,raworder,raworderlines,redeem,mixed,checkout,sharedcheckout,pricing,cartcheckout,validate,validaterule,statements,rawinsert,rawschema,generate,export" {
		t.Errorf("all = %v, %v", got, err)
	}
	got, err = scenarios("mixed,flash")
	if err != nil || strings.Join(got, ",") != "flash,mixed" {
		t.Errorf("list = %v, %v", got, err)
	}
	if _, err := scenarios("nope"); err == nil {
		t.Error("unknown scenario accepted")
	}
}

func TestParseFlagsLoopbackOnly(t *testing.T) {
	var errb bytes.Buffer
	if _, err := parseFlags([]string{"-url", "http://10.1.2.3:8080"}, &errb); err == nil {
		t.Error("a remote URL was accepted without -allow-remote")
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:9", "http://[::1]:8080"} {
		if _, err := parseFlags([]string{"-url", u}, &errb); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}
