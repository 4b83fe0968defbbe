package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Check is one guarantee verified after a scenario. A check that cannot run
// (an endpoint not built yet) is Skipped, which is not a failure.
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"`
	Detail  string `json:"detail"`
}

// mark is the word a report shows for the check: ok, skipped or failed, in
// the report's own words.
func (c Check) mark(ok, skipped, failed string) string {
	switch {
	case c.Skipped:
		return skipped
	case !c.OK:
		return failed
	}
	return ok
}

// Summary is the outcome of one scenario or reference: what was sent, what came
// back by result word, how fast, and whether the guarantees held.
type Summary struct {
	Name        string         `json:"name"`
	Params      string         `json:"params"`
	Concurrency int            `json:"concurrency"`
	Requests    int            `json:"requests"`
	Results     map[string]int `json:"results"`
	// OKWord is the result that counts as the scenario's useful work
	// ("claimed", "redeemed"), or several joined by "+"
	// ("held+redeemed+released"); OK is how many answers had one of them.
	OKWord      string  `json:"ok_word"`
	OK          int     `json:"ok"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"per_second"`
	OKPerSecond float64 `json:"ok_per_second"`
	P50Ms       float64 `json:"p50_ms"`
	P95Ms       float64 `json:"p95_ms"`
	P99Ms       float64 `json:"p99_ms"`
	P999Ms      float64 `json:"p999_ms"`
	MaxMs       float64 `json:"max_ms"`
	// OpenLoop is set when the scenario ran at a fixed arrival rate; its
	// latencies then run from each request's scheduled time.
	OpenLoop *OpenLoop `json:"open_loop,omitempty"`
	// RedisPhases is what Redis spent per answer before and after the
	// sell-out, for a flash sale that sold out.
	RedisPhases []RedisPhase `json:"redis_phases,omitempty"`
	// MaxRSSMB is the service's largest resident set seen during the
	// scenario, when its pid was given.
	MaxRSSMB float64 `json:"max_rss_mb,omitempty"`
	// CPU is what each watched process used during the timed part.
	CPU []ProcCPU `json:"cpu,omitempty"`
	// Coupons is how many coupons the scenario claimed through the service
	// (untimed preparation included), for Redis memory per coupon.
	Coupons int `json:"coupons_claimed,omitempty"`
	// Pricing is what the pricing scenario measured beside the rate.
	Pricing *PricingFigures `json:"pricing,omitempty"`
	// Statements is what MariaDB did per operation of each kind
	// (statements).
	Statements []StatementRow `json:"statements,omitempty"`
	// Profile says where the service's CPU profile of the scenario went.
	Profile string  `json:"profile,omitempty"`
	Checks  []Check `json:"checks"`
	// Error says why the scenario could not run at all.
	Error string `json:"error,omitempty"`
}

// Failed reports whether the scenario broke a guarantee or could not run.
func (s *Summary) Failed() bool {
	if s.Error != "" {
		return true
	}
	for _, c := range s.Checks {
		if !c.OK && !c.Skipped {
			return true
		}
	}
	return false
}

// check appends a check result.
func (s *Summary) check(name string, ok bool, format string, args ...any) {
	s.Checks = append(s.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// skip appends a check that could not run.
func (s *Summary) skip(name, detail string) {
	s.Checks = append(s.Checks, Check{Name: name, OK: true, Skipped: true, Detail: detail})
}

// sample is one timed operation: its result word and how long it took.
type sample struct {
	kind string
	d    time.Duration
}

// tally accumulates samples; each worker owns one, merged at the end, so that
// the hot loop takes no lock.
type tally struct {
	results map[string]int
	lat     []time.Duration
	cpu     []ProcCPU // of the whole run, set by drive
}

func newTally(capacity int) *tally {
	return &tally{results: map[string]int{}, lat: make([]time.Duration, 0, capacity)}
}

func (t *tally) add(s sample) {
	t.results[s.kind]++
	t.lat = append(t.lat, s.d)
}

// merge adds the samples of other into t.
func (t *tally) merge(other *tally) {
	for k, v := range other.results {
		t.results[k] += v
	}
	t.lat = append(t.lat, other.lat...)
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of sorted
// durations, or 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

// fill sets the counts, rates and latency percentiles of s from t and the wall
// time the run took.
func (s *Summary) fill(t *tally, elapsed time.Duration) {
	s.Results = maps.Clone(t.results)
	s.Requests = 0
	for _, v := range t.results {
		s.Requests += v
	}
	s.OK = 0
	for _, word := range strings.Split(s.OKWord, "+") {
		s.OK += t.results[word]
	}
	s.Seconds = math.Round(elapsed.Seconds()*1000) / 1000
	if elapsed > 0 {
		s.PerSecond = math.Round(float64(s.Requests) / elapsed.Seconds())
		s.OKPerSecond = math.Round(float64(s.OK) / elapsed.Seconds())
	}
	s.CPU = t.cpu
	lat := slices.Clone(t.lat)
	slices.Sort(lat)
	s.P50Ms = ms(percentile(lat, 50))
	s.P95Ms = ms(percentile(lat, 95))
	s.P99Ms = ms(percentile(lat, 99))
	s.P999Ms = ms(percentile(lat, 99.9))
	if len(lat) > 0 {
		s.MaxMs = ms(lat[len(lat)-1])
	}
}

// resultsLine lists the result words, the most frequent first, ties by name.
func resultsLine(results map[string]int) string {
	keys := slices.Collect(maps.Keys(results))
	slices.SortFunc(keys, func(a, b string) int {
		if results[a] != results[b] {
			return results[b] - results[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, results[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// printSummary writes the table of one scenario.
func printSummary(w io.Writer, s *Summary) {
	status := "PASS"
	if s.Failed() {
		status = "FAIL"
	}
	fmt.Fprintf(w, "\n== %s  [%s]\n", s.Name, status)
	if s.Params != "" {
		fmt.Fprintf(w, "  %-12s %s\n", "setup", s.Params)
	}
	if s.Error != "" {
		fmt.Fprintf(w, "  %-12s %s\n", "error", s.Error)
	}
	fmt.Fprintf(w, "  %-12s %d in %.2fs, concurrency %d\n", "requests", s.Requests, s.Seconds, s.Concurrency)
	fmt.Fprintf(w, "  %-12s %s\n", "results", resultsLine(s.Results))
	fmt.Fprintf(w, "  %-12s %.0f answers/s, %.0f %s/s\n", "throughput", s.PerSecond, s.OKPerSecond, s.OKWord)
	fmt.Fprintf(w, "  %-12s p50 %.2fms  p95 %.2fms  p99 %.2fms  p99.9 %.2fms  max %.2fms\n", "latency", s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms, s.MaxMs)
	if o := s.OpenLoop; o != nil {
		fmt.Fprintf(w, "  %-12s %.0f requests/s scheduled%s, latency from the scheduled time; %d of %d sent more than %s late, at most %d in flight\n",
			"open loop", o.Rate, map[bool]string{true: " (" + o.Of + ")", false: ""}[o.Of != ""], o.Missed, s.Requests, lateAfter, o.MaxInFlight)
	}
	if len(s.RedisPhases) > 0 {
		fmt.Fprintf(w, "  %-12s %s\n", "redis", phasesLine(s.RedisPhases))
	}
	if len(s.CPU) > 0 {
		fmt.Fprintf(w, "  %-12s %s\n", "cpu", cpuLine(s.CPU))
	}
	if s.MaxRSSMB > 0 {
		fmt.Fprintf(w, "  %-12s %.1f MB max RSS of the service\n", "memory", s.MaxRSSMB)
	}
	if p := s.Pricing; p != nil {
		fmt.Fprintf(w, "  %-12s %.1f µs of CPU per cart (%.0f carts/s on one core), %.3g allocations (%.3g bytes) per cart\n",
			"pricing", p.CPUMicrosPerCart, p.CartsPerCPUSecond, p.AllocsPerCart, p.AllocBytesPerCart)
	}
	if s.Profile != "" {
		fmt.Fprintf(w, "  %-12s %s\n", "profile", s.Profile)
	}
	for _, r := range s.Statements {
		fmt.Fprintf(w, "  %-12s %-10s %.2f round trips/op (minimum %d): %.2f SELECT %.2f INSERT %.2f UPDATE %.2f DELETE %.2f BEGIN %.2f COMMIT %.2f ROLLBACK; background %.2f questions/op%s\n",
			"mariadb", r.Op, r.RoundTrips, r.Minimum, r.PerOp["Com_select"], r.PerOp["Com_insert"], r.PerOp["Com_update"], r.PerOp["Com_delete"],
			r.PerOp["Com_begin"], r.PerOp["Com_commit"], r.PerOp["Com_rollback"], r.BackgroundPerOp, noisyMark(r))
	}
	for _, c := range s.Checks {
		fmt.Fprintf(w, "  check %s %s: %s\n", c.mark("ok  ", "skip", "FAIL"), c.Name, c.Detail)
	}
}

// Ratio compares a scenario with its reference against a target.
type Ratio struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Target float64 `json:"target"`
	// AtMost marks targets that are ceilings (latency, memory) rather than
	// floors.
	AtMost bool `json:"at_most,omitempty"`
	// Info marks a figure shown for comparison, without a target.
	Info   bool   `json:"info,omitempty"`
	Met    bool   `json:"met"`
	Detail string `json:"detail"`
}

// verdict words a ratio against its target, with the gap when missed.
func (r Ratio) verdict() string {
	if r.Info {
		return "no target"
	}
	if r.Met {
		return "met"
	}
	if r.Target == 0 {
		return "missed"
	}
	if r.AtMost {
		return fmt.Sprintf("missed by %.0f%% (%.3g over)", (r.Value/r.Target-1)*100, r.Value-r.Target)
	}
	return fmt.Sprintf("missed by %.0f%% (%.3g short)", (1-r.Value/r.Target)*100, r.Target-r.Value)
}

// newRatio builds a floor (value >= target) or ceiling (value <= target).
func newRatio(name string, value, target float64, atMost bool, detail string) Ratio {
	met := value >= target
	if atMost {
		met = value <= target
	}
	return Ratio{Name: name, Value: math.Round(value*1000) / 1000, Target: target, AtMost: atMost, Met: met, Detail: detail}
}

// Report is everything a run printed, as written with -json.
type Report struct {
	StartedAt   time.Time  `json:"started_at"`
	URL         string     `json:"url"`
	Concurrency int        `json:"concurrency"`
	Short       bool       `json:"short"`
	Scenarios   []*Summary `json:"scenarios"`
	Ratios      []Ratio    `json:"ratios"`
	// RedisBytesPerCoupon is the growth of Redis used_memory over the
	// service scenarios divided by the coupons they claimed.
	RedisBytesPerCoupon float64 `json:"redis_bytes_per_coupon,omitempty"`
	RedisMemoryNote     string  `json:"redis_memory_note,omitempty"`
	OK                  bool    `json:"ok"`
}

// find returns the summary of a scenario, or nil.
func (r *Report) find(name string) *Summary {
	for _, s := range r.Scenarios {
		if s.Name == name && s.Error == "" {
			return s
		}
	}
	return nil
}

// computeRatios derives the targets from the scenarios that ran.
func (r *Report) computeRatios() {
	r.Ratios = nil
	get := func(n string) *Summary { return r.find(n) }
	if c, b := get("claim"), get("baseline"); c != nil && b != nil && b.OKPerSecond > 0 {
		r.Ratios = append(r.Ratios, newRatio("claim/baseline (committed claims/s)", c.OKPerSecond/b.OKPerSecond, 4, false,
			fmt.Sprintf("%.0f/s vs %.0f/s", c.OKPerSecond, b.OKPerSecond)))
	}
	if f, l := get("flash"), get("limit"); f != nil && l != nil && l.PerSecond > 0 {
		r.Ratios = append(r.Ratios, newRatio("flash/limit (answers/s)", f.PerSecond/l.PerSecond, 0.4, false,
			fmt.Sprintf("%.0f/s vs %.0f/s", f.PerSecond, l.PerSecond)))
	}
	if f := get("flash"); f != nil {
		r.Ratios = append(r.Ratios, newRatio("flash p99 latency (ms)", f.P99Ms, 50, true, ""))
		if f.MaxRSSMB > 0 {
			r.Ratios = append(r.Ratios, newRatio("flash max RSS of the service (MB)", f.MaxRSSMB, 150, true, ""))
		}
	}
	for _, name := range []string{"flash-open", "claim-open"} {
		if o := get(name); o != nil && o.OpenLoop != nil {
			r.Ratios = append(r.Ratios, newRatio(name+" p99 latency at a fixed rate (ms)", o.P99Ms, 20, true,
				fmt.Sprintf("%.0f/s scheduled (%s), p99.9 %.2f ms, %d sent late", o.OpenLoop.Rate, o.OpenLoop.Of, o.P999Ms, o.OpenLoop.Missed)))
		}
	}
	if d, raw := get("redeem"), get("rawredeem"); d != nil && raw != nil && raw.OKPerSecond > 0 {
		r.Ratios = append(r.Ratios, newRatio("redeem/rawredeem (redemptions/s)", d.OKPerSecond/raw.OKPerSecond, 0.7, false,
			fmt.Sprintf("%.0f/s vs %.0f/s", d.OKPerSecond, raw.OKPerSecond)))
	}
	// Beside the bare transaction of the same rows: what is left of the
	// gap once the rows the service must write are counted.
	if d, raw := get("redeem"), get("raworder"); d != nil && raw != nil && raw.OKPerSecond > 0 {
		x := newRatio("redeem/raworder (redemptions/s)", d.OKPerSecond/raw.OKPerSecond, 0, false,
			fmt.Sprintf("%.0f/s vs %.0f/s", d.OKPerSecond, raw.OKPerSecond))
		x.Info = true
		r.Ratios = append(r.Ratios, x)
	}
	r.webhookRatios()
	// The online checkout beside the one-step redemption: orders held and
	// then confirmed per second (two requests each), against the same bare
	// redemption transaction.
	if c, raw := get("checkout"), get("rawredeem"); c != nil && raw != nil && raw.OKPerSecond > 0 && c.Seconds > 0 && c.Error == "" {
		confirmed := float64(c.Results["redeemed"]) / c.Seconds
		detail := fmt.Sprintf("%.0f orders/s held and confirmed vs %.0f/s", confirmed, raw.OKPerSecond)
		if d := get("redeem"); d != nil && d.Error == "" {
			detail += fmt.Sprintf("; one-step redeem %.0f/s", d.OKPerSecond)
		}
		r.Ratios = append(r.Ratios, newRatio("checkout/rawredeem (held+confirmed orders/s)", confirmed/raw.OKPerSecond, 0.5, false, detail))
	}
	r.Ratios = append(r.Ratios, checkoutRatios(get)...)
	// The shared code's checkout: every order answered (held with the
	// code and confirmed, or refused at the hold as sold out or over the
	// limit) per second, against the same bare redemption.
	if c, raw := get("sharedcheckout"), get("rawredeem"); c != nil && raw != nil && raw.OKPerSecond > 0 && c.Error == "" {
		r.Ratios = append(r.Ratios, newRatio("sharedcheckout/rawredeem (orders/s)", c.PerSecond/raw.OKPerSecond, 0.4, false,
			fmt.Sprintf("%.0f orders/s (%.0f redeemed/s) vs %.0f/s", c.PerSecond, c.OKPerSecond, raw.OKPerSecond)))
	}
	// Pricing a 100-line cart with five coupons: CPU of one thread per
	// cart, at most 100 µs.
	if p := get("pricing"); p != nil && p.Pricing != nil && p.Pricing.CPUMicrosPerCart > 0 {
		r.Ratios = append(r.Ratios, newRatio("pricing (µs of CPU per 100-line cart)", p.Pricing.CPUMicrosPerCart, 100, true,
			fmt.Sprintf("%.0f carts/s on one core, %.0f/s by the wall clock; %.3g allocations per cart", p.Pricing.CartsPerCPUSecond, p.PerSecond, p.Pricing.AllocsPerCart)))
	}
	// Carts with lines beside amount-only carts, in the same run: held and
	// confirmed orders per second.
	if a, l := get("cartcheckout-amount"), get("cartcheckout-lines"); a != nil && l != nil && a.OKPerSecond > 0 {
		detail := fmt.Sprintf("%.0f orders/s with %d lines vs %.0f/s amount-only", l.OKPerSecond, cartLines, a.OKPerSecond)
		if sa, sl := serviceMicros(a), serviceMicros(l); sa > 0 && sl > 0 {
			detail += fmt.Sprintf("; service CPU %.0f vs %.0f µs per order", sl, sa)
		}
		r.Ratios = append(r.Ratios, newRatio("cartcheckout lines/amount (held+confirmed orders/s)", l.OKPerSecond/a.OKPerSecond, 0.8, false, detail))
	}
	// Generation is an absolute target, shown beside plain INSERTs of the
	// same rows: into a table with user_coupons' unique indexes, and into
	// a copy of user_coupons itself.
	if g := get("generate"); g != nil && g.Error == "" {
		var refs []string
		for _, ref := range []string{"rawinsert", "rawschema"} {
			if x := get(ref); x != nil && x.OKPerSecond > 0 {
				refs = append(refs, fmt.Sprintf("%s %.0f/s (%.2fx)", ref, x.OKPerSecond, g.OKPerSecond/x.OKPerSecond))
			}
		}
		r.Ratios = append(r.Ratios, newRatio("generate (codes/s)", g.OKPerSecond, 50000, false, strings.Join(refs, "; ")))
	}
}

// serviceMicros is the service's CPU per answer in a scenario, 0 when not
// measured.
func serviceMicros(s *Summary) float64 {
	for _, c := range s.CPU {
		if c.Name == "couponsvc" {
			return c.MicrosPerAnswer
		}
	}
	return 0
}

// printRatios writes the targets section.
func printRatios(w io.Writer, r *Report) {
	if len(r.Ratios) == 0 && r.RedisBytesPerCoupon == 0 && r.RedisMemoryNote == "" {
		return
	}
	fmt.Fprintf(w, "\n== targets\n")
	for _, x := range r.Ratios {
		op := ">="
		if x.AtMost {
			op = "<="
		}
		detail := ""
		if x.Detail != "" {
			detail = "  (" + x.Detail + ")"
		}
		if x.Info {
			fmt.Fprintf(w, "  %-38s %8.3g  %s%s\n", x.Name, x.Value, x.verdict(), detail)
			continue
		}
		fmt.Fprintf(w, "  %-38s %8.3g  target %s %g: %s%s\n", x.Name, x.Value, op, x.Target, x.verdict(), detail)
	}
	if r.RedisBytesPerCoupon > 0 {
		fmt.Fprintf(w, "  %-38s %8.0f bytes\n", "redis memory per claimed coupon", r.RedisBytesPerCoupon)
	}
	if r.RedisMemoryNote != "" {
		fmt.Fprintf(w, "  redis memory: %s\n", r.RedisMemoryNote)
	}
}

// printOverview writes one line per scenario, for the end of a run.
func printOverview(w io.Writer, r *Report) {
	fmt.Fprintf(w, "\n== overview\n")
	fmt.Fprintf(w, "  %-10s %8s %9s %9s %8s %8s %8s %8s  %s\n", "scenario", "requests", "answers/s", "ok/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "status")
	for _, s := range r.Scenarios {
		st := "PASS"
		if s.Failed() {
			st = "FAIL"
		}
		fmt.Fprintf(w, "  %-10s %8d %9.0f %9.0f %8.2f %8.2f %8.2f %8.2f  %s\n", s.Name, s.Requests, s.PerSecond, s.OKPerSecond, s.P50Ms, s.P95Ms, s.P99Ms, s.MaxMs, st)
	}
}

// writeMarkdown writes the report as Markdown tables, for BENCHMARKS.md.
func writeMarkdown(w io.Writer, r *Report) {
	fmt.Fprintf(w, "| scenario | setup | requests | answers/s | useful/s | p50 ms | p95 ms | p99 ms | max ms | status |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range r.Scenarios {
		st := "pass"
		if s.Failed() {
			st = "**FAIL**"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.0f %s | %.2f | %.2f | %.2f | %.2f | %s |\n",
			s.Name, mdEscape(s.Params), s.Requests, s.PerSecond, s.OKPerSecond, s.OKWord, s.P50Ms, s.P95Ms, s.P99Ms, s.MaxMs, st)
	}
	fmt.Fprintf(w, "\n| scenario | results |\n|---|---|\n")
	for _, s := range r.Scenarios {
		fmt.Fprintf(w, "| %s | %s |\n", s.Name, mdEscape(resultsLine(s.Results)))
	}
	writeCPUTable(w, r.Scenarios)
	writeOpenLoopTable(w, r.Scenarios)
	writeRedisPhasesTable(w, r.Scenarios)
	writeStatementsTable(w, r.Scenarios)
	if len(r.Ratios) > 0 {
		fmt.Fprintf(w, "\n| target | value | goal | verdict | detail |\n|---|---:|---|---|---|\n")
		for _, x := range r.Ratios {
			goal := fmt.Sprintf("≥ %g", x.Target)
			switch {
			case x.Info:
				goal = "—"
			case x.AtMost:
				goal = fmt.Sprintf("≤ %g", x.Target)
			}
			fmt.Fprintf(w, "| %s | %.3g | %s | %s | %s |\n", x.Name, x.Value, goal, x.verdict(), mdEscape(x.Detail))
		}
	}
	if r.RedisBytesPerCoupon > 0 {
		fmt.Fprintf(w, "\nRedis memory per claimed coupon: %.0f bytes", r.RedisBytesPerCoupon)
		if r.RedisMemoryNote != "" {
			fmt.Fprintf(w, " (%s)", r.RedisMemoryNote)
		}
		fmt.Fprintln(w, ".")
	}
	fmt.Fprintf(w, "\nGuarantee checks:\n\n")
	for _, s := range r.Scenarios {
		for _, c := range s.Checks {
			fmt.Fprintf(w, "- %s / %s: %s — %s\n", s.Name, c.Name, c.mark("ok", "skipped", "**FAIL**"), c.Detail)
		}
		if s.Error != "" {
			fmt.Fprintf(w, "- %s: **error** — %s\n", s.Name, s.Error)
		}
	}
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// writeJSON writes the report, indented.
func writeJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeCPUTable writes the CPU each process used in each scenario: cores, and
// microseconds per answer.
func writeCPUTable(w io.Writer, scenarios []*Summary) {
	var names []string
	for _, s := range scenarios {
		for _, c := range s.CPU {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCPU during the timed part of each scenario, in cores (µs of CPU per answer):\n\n| scenario | %s | together |\n|---|", strings.Join(names, " | "))
	fmt.Fprint(w, strings.Repeat("---:|", len(names)+1), "\n")
	for _, s := range scenarios {
		if len(s.CPU) == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s |", s.Name)
		total := 0.0
		for _, n := range names {
			i := slices.IndexFunc(s.CPU, func(c ProcCPU) bool { return c.Name == n })
			if i < 0 {
				fmt.Fprint(w, " - |")
				continue
			}
			fmt.Fprintf(w, " %.2f (%.0f) |", s.CPU[i].Cores, s.CPU[i].MicrosPerAnswer)
			total += s.CPU[i].Cores
		}
		fmt.Fprintf(w, " %.2f |\n", total)
	}
}

// writeOpenLoopTable writes the scenarios run at a fixed arrival rate.
func writeOpenLoopTable(w io.Writer, scenarios []*Summary) {
	first := true
	for _, s := range scenarios {
		o := s.OpenLoop
		if o == nil {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nAt a fixed arrival rate (open loop: requests leave on a schedule, latency from the scheduled time):\n\n")
			fmt.Fprintf(w, "| scenario | rate /s | of | answers/s | p50 ms | p99 ms | p99.9 ms | max ms | sent late (> %s) | most in flight |\n", lateAfter)
			fmt.Fprintf(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
			first = false
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %d |\n",
			s.Name, o.Rate, mdEscape(o.Of), s.PerSecond, s.P50Ms, s.P99Ms, s.P999Ms, s.MaxMs, o.Missed, o.MaxInFlight)
	}
}

// writeRedisPhasesTable writes Redis's cost per answer before and after each
// flash sale's sell-out.
func writeRedisPhasesTable(w io.Writer, scenarios []*Summary) {
	first := true
	for _, s := range scenarios {
		for _, p := range s.RedisPhases {
			if first {
				fmt.Fprintf(w, "\nRedis per answer before and after the sell-out (INFO deltas; Redis is shared with the machine's other work):\n\n")
				fmt.Fprintf(w, "| scenario | phase | answers | answers/s | Redis CPU µs/answer | in scripts µs/answer | scripts/answer | commands/answer | Redis cores |\n")
				fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
				first = false
			}
			cmds := fmt.Sprintf("%.2f", p.CommandsPerAnswer)
			if p.Noisy {
				cmds += " (noisy: run again)"
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.1f | %.1f | %.2f | %s | %.2f |\n", s.Name, p.Phase, p.Answers, p.AnswersPerSecond,
				p.CPUMicrosPerAns, p.CmdMicrosPerAns, p.CallsPerAnswer, cmds, p.RedisCoresInPhase)
		}
	}
}
