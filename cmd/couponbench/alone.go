package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The summary of a run taken alone (bench/run.sh): each scenario and its
// reference ran one after the other, in rounds (scenario, reference,
// scenario, reference...), and each round left its reports in
// DIR/round-N/*.json, plus redis-benchmark's requests per second of the bare
// claim script in DIR/round-N/redis-benchmark.txt. The summary gives each
// measure's median over the rounds and its spread (min–max):
//
//	couponbench summarize [-note TEXT] [-markdown FILE] DIR

// round is what one round measured: every scenario's summary by name, and
// redis-benchmark's figure (0 when missing).
type round struct {
	scenarios  map[string]*Summary
	redisBench float64
}

// measure is one row of the table: a figure of a round (false when the
// round lacks it) and its target.
type measure struct {
	name   string
	target string
	value  func(round) (float64, bool)
}

// perSecond reads a scenario's useful answers per second (all answers when
// all is set).
func (r round) perSecond(name string, all bool) (float64, bool) {
	s := r.scenarios[name]
	if s == nil || s.Error != "" {
		return 0, false
	}
	if all {
		return s.PerSecond, s.PerSecond > 0
	}
	return s.OKPerSecond, s.OKPerSecond > 0
}

// ratioOf divides a scenario's figure by its reference's.
func ratioOf(num, den string, allNum bool) func(round) (float64, bool) {
	return func(r round) (float64, bool) {
		n, ok1 := r.perSecond(num, allNum)
		d, ok2 := r.perSecond(den, false)
		if !ok1 || !ok2 {
			return 0, false
		}
		return n / d, true
	}
}

// measures are the rows bench/run.sh prints, in the order of the issue's
// table.
var measures = []measure{
	{"Redis commands per sold-out claim answer", "0", func(r round) (float64, bool) {
		s := r.scenarios["flash"]
		if s == nil {
			return 0, false
		}
		for _, p := range s.RedisPhases {
			if p.Phase == SoldOutPhase && p.Answers > 0 {
				return p.CommandsPerAnswer, true
			}
		}
		return 0, false
	}},
	{"committed claims / classic claim (baseline)", "≥ 4×", ratioOf("claim", "baseline", false)},
	{"flash answers / the bare claim script through redis-benchmark", "≥ 0.4", func(r round) (float64, bool) {
		f, ok := r.perSecond("flash", true)
		if !ok || r.redisBench <= 0 {
			return 0, false
		}
		return f / r.redisBench, true
	}},
	{"hold + confirm, 20-line carts / bare SQL of the same settled order with its lines", "≥ 0.5×", ratioOf("checkout", "raworderlines", false)},
	{"hold + confirm, amount only / bare SQL of a settled order", "≥ 0.5×", ratioOf("cartcheckout-amount", "raworder", false)},
	{"one-step redemption / raworder", "≥ 0.9×", ratioOf("redeem", "raworder", false)},
}

// readRounds reads DIR/round-*/ in the order of their numbers.
func readRounds(dir string) ([]round, error) {
	dirs, err := filepath.Glob(filepath.Join(dir, "round-*"))
	if err != nil {
		return nil, err
	}
	num := func(p string) int { n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "round-")); return n }
	slices.SortFunc(dirs, func(a, b string) int { return num(a) - num(b) })
	var out []round
	for _, d := range dirs {
		r := round{scenarios: map[string]*Summary{}}
		files, _ := filepath.Glob(filepath.Join(d, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var rep Report
			if err := json.Unmarshal(b, &rep); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for _, s := range rep.Scenarios {
				r.scenarios[s.Name] = s
			}
		}
		if b, err := os.ReadFile(filepath.Join(d, "redis-benchmark.txt")); err == nil {
			r.redisBench, _ = strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no round-* folder in %s", dir)
	}
	return out, nil
}

// spread is a figure over the rounds: its median, least and greatest, and
// how many rounds had it.
type spread struct {
	median, min, max float64
	n                int
}

func spreadOf(vals []float64) spread {
	if len(vals) == 0 {
		return spread{}
	}
	v := slices.Sorted(slices.Values(vals))
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return spread{median: m, min: v[0], max: v[len(v)-1], n: len(v)}
}

// fmtFigure writes a figure with three significant digits at most.
func fmtFigure(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// writeSummary writes the table of the measures and then the figures of
// every scenario, each as median and spread over the rounds.
func writeSummary(w io.Writer, rounds []round, note string) {
	if note != "" {
		fmt.Fprintf(w, "**%s**\n\n", note)
	}
	fmt.Fprintf(w, "Medians of %d rounds, each scenario run right after its reference; spread = min–max over the rounds.\n\n", len(rounds))
	fmt.Fprintln(w, "| measure | median | spread | target | rounds |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|")
	for _, m := range measures {
		var vals []float64
		for _, r := range rounds {
			if v, ok := m.value(r); ok {
				vals = append(vals, v)
			}
		}
		s := spreadOf(vals)
		if s.n == 0 {
			fmt.Fprintf(w, "| %s | n/a | n/a | %s | 0 |\n", m.name, m.target)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s–%s | %s | %d |\n", m.name, fmtFigure(s.median), fmtFigure(s.min), fmtFigure(s.max), m.target, s.n)
	}
	names := map[string]bool{}
	for _, r := range rounds {
		for n := range r.scenarios {
			names[n] = true
		}
	}
	fmt.Fprintln(w, "\n| scenario | useful answers/s, median | spread |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	}) {
		var vals []float64
		for _, r := range rounds {
			if v, ok := r.perSecond(n, false); ok {
				vals = append(vals, v)
			}
		}
		if s := spreadOf(vals); s.n > 0 {
			fmt.Fprintf(w, "| %s | %s | %s–%s |\n", n, fmtFigure(s.median), fmtFigure(s.min), fmtFigure(s.max))
		}
	}
	var rb []float64
	for _, r := range rounds {
		if r.redisBench > 0 {
			rb = append(rb, r.redisBench)
		}
	}
	if s := spreadOf(rb); s.n > 0 {
		fmt.Fprintf(w, "| redis-benchmark (coupon_deduct.lua, sold out) | %s | %s–%s |\n", fmtFigure(s.median), fmtFigure(s.min), fmtFigure(s.max))
	}
}

// runSummarize is `couponbench summarize`.
func runSummarize(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("couponbench summarize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	note := fs.String("note", "", "a line printed above the table (e.g. that the run was not taken alone)")
	md := fs.String("markdown", "", "also write the table to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: couponbench summarize [-note TEXT] [-markdown FILE] DIR")
		return 2
	}
	rounds, err := readRounds(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "couponbench summarize:", err)
		return 1
	}
	var b strings.Builder
	writeSummary(&b, rounds, *note)
	fmt.Fprint(stdout, b.String())
	if *md != "" {
		if err := os.WriteFile(*md, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(stderr, "couponbench summarize:", err)
			return 1
		}
	}
	return 0
}
