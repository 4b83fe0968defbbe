package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummarizeRounds: three rounds of reports give each measure's median
// and min–max, a measure a round lacks counts only the rounds that have it,
// and the note heads the table.
func TestSummarizeRounds(t *testing.T) {
	dir := t.TempDir()
	write := func(roundN int, file string, v any) {
		t.Helper()
		d := filepath.Join(dir, "round-"+string(rune('0'+roundN)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		var b []byte
		switch v := v.(type) {
		case string:
			b = []byte(v)
		default:
			var err error
			if b, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ok := func(name string, ok, all float64) *Summary {
		return &Summary{Name: name, OKPerSecond: ok, PerSecond: all}
	}
	// claim/baseline: 4, 3, 5; flash/redis-benchmark: 0.4, 0.2, 0.3;
	// redeem/raworder: 1, 0.8 and missing in round 3.
	claims := [][2]float64{{400, 100}, {300, 100}, {500, 100}}
	flash := []float64{4000, 2000, 3000}
	for i := range 3 {
		n := i + 1
		write(n, "claim-baseline.json", Report{Scenarios: []*Summary{ok("baseline", claims[i][1], claims[i][1]), ok("claim", claims[i][0], claims[i][0])}})
		f := ok("flash", 100, flash[i])
		// The phase after the sell-out counts the replays' commands; the
		// row reads the sold-out phase alone.
		f.RedisPhases = []RedisPhase{{Phase: "before sell-out", Answers: 10, CommandsPerAnswer: 3},
			{Phase: "after sell-out", Answers: 90, CommandsPerAnswer: 1},
			{Phase: SoldOutPhase, Answers: 50, CommandsPerAnswer: float64(i) / 100}}
		write(n, "flash.json", Report{Scenarios: []*Summary{f}})
		write(n, "redis-benchmark.txt", "10000\n")
		if n < 3 {
			write(n, "redeem-raworder.json", Report{Scenarios: []*Summary{ok("raworder", 100, 100), ok("redeem", []float64{100, 80}[i], 100)}})
		}
	}

	rounds, err := readRounds(dir)
	if err != nil || len(rounds) != 3 {
		t.Fatalf("rounds %d %v", len(rounds), err)
	}
	var b bytes.Buffer
	writeSummary(&b, rounds, "not alone, not for BENCHMARKS.md")
	out := b.String()
	for _, want := range []string{
		"**not alone, not for BENCHMARKS.md**\n",
		"| Redis commands per sold-out claim answer | 0.01 | 0.00–0.02 | 0 | 3 |\n",
		"| committed claims / classic claim (baseline) | 4.00 | 3.00–5.00 | ≥ 4× | 3 |\n",
		"| flash answers / the bare claim script through redis-benchmark | 0.30 | 0.20–0.40 | ≥ 0.4 | 3 |\n",
		"| one-step redemption / raworder | 0.90 | 0.80–1.00 | ≥ 0.9× | 2 |\n",
		"| hold + confirm, amount only / bare SQL of a settled order | n/a | n/a | ≥ 0.5× | 0 |\n",
		"| claim | 400 | 300–500 |\n",
		"| redis-benchmark (coupon_deduct.lua, sold out) | 10000 | 10000–10000 |\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	// Both tables' headers, the 6 measures, the 5 scenarios and redis-benchmark.
	if got := strings.Count(out, "\n| "); got != 2+6+5+1 {
		t.Errorf("%d table lines:\n%s", got, out)
	}

	var stdout, stderr bytes.Buffer
	if code := run([]string{"summarize", filepath.Join(dir, "none")}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no round-*") {
		t.Fatalf("summarize of an empty folder: %d %q", code, stderr.String())
	}
}
