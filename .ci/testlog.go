//go:build ignore

// testlog reads `go test -json` on standard input, keeps it whole in a file
// and echoes what a person reading CI needs: the output of every failing or
// skipped test in full, build errors, panics, package results with their
// times and the COUPON_BACKEND= line each integration package prints. When the
// input ends it prints the failing tests again, the packages by time and the
// ten slowest tests, and writes two files beside the log for .ci/run:
// LOG.counts ("PASS FAIL SKIP", subtests included, as `go test -v` counts
// its --- lines) and LOG.backends ("package backend" lines).
//
// Run as `go run .ci/testlog.go -log FILE [-cap N]` (file mode: .ci is not a
// package of the module). Only the standard library, so it builds offline.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail events
}

type testKey struct{ pkg, test string }

type echo struct {
	w          *bufio.Writer
	cap, lines int
	suppressed int
}

// print writes s (one or more whole lines) unless the echo cap is reached;
// the log file keeps everything either way.
func (e *echo) print(s string) {
	for _, line := range strings.SplitAfter(s, "\n") {
		if line == "" {
			continue
		}
		if e.lines >= e.cap {
			e.suppressed++
			continue
		}
		e.w.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			e.w.WriteByte('\n')
		}
		e.lines++
	}
	e.w.Flush()
}

// always writes s whatever the cap: package results and summaries.
func (e *echo) always(s string) {
	e.w.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		e.w.WriteByte('\n')
	}
	e.w.Flush()
}

type result struct {
	key     testKey
	elapsed float64
}

func main() {
	logPath := flag.String("log", "", "file to keep the whole JSON stream in (required)")
	echoCap := flag.Int("cap", 1500, "lines of test output to echo at most")
	flag.Parse()
	if *logPath == "" {
		fmt.Fprintln(os.Stderr, "testlog: -log FILE is required")
		os.Exit(2)
	}
	logFile, err := os.Create(*logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
	defer logFile.Close()

	out := &echo{w: bufio.NewWriter(os.Stdout), cap: *echoCap}
	buffers := map[testKey]*strings.Builder{}
	var passed, failed, skipped int
	var failures []testKey
	var tops []result // top-level tests with their times
	pkgTimes := map[string]float64{}
	pkgFailed := map[string]bool{}
	backends := map[string]string{}
	started := time.Now()

	in := bufio.NewReaderSize(io.TeeReader(os.Stdin, logFile), 1<<20)
	for {
		line, err := in.ReadString('\n')
		if len(line) > 0 {
			var ev event
			if json.Unmarshal([]byte(line), &ev) != nil || (ev.Action == "" && ev.ImportPath == "") {
				out.print(line) // not JSON: go test's own complaint
			} else {
				key := testKey{ev.Package, ev.Test}
				switch {
				case ev.Action == "build-output":
					out.print(ev.Output)
				case ev.Action == "build-fail":
					out.always("build failed: " + ev.ImportPath)
				case ev.Action == "output" && ev.Test == "":
					if strings.Contains(ev.Output, "COUPON_BACKEND=") {
						v := strings.TrimSpace(ev.Output[strings.Index(ev.Output, "COUPON_BACKEND=")+len("COUPON_BACKEND="):])
						backends[ev.Package] = v
						out.always(strings.TrimRight(ev.Output, "\n"))
					} else if strings.HasPrefix(ev.Output, "ok ") || strings.HasPrefix(ev.Output, "FAIL") ||
						strings.HasPrefix(ev.Output, "--- FAIL") || strings.HasPrefix(ev.Output, "panic:") ||
						strings.HasPrefix(ev.Output, "fatal error:") || strings.HasPrefix(ev.Output, "?") {
						out.always(strings.TrimRight(ev.Output, "\n"))
					} else if !strings.HasPrefix(ev.Output, "PASS") && !strings.HasPrefix(ev.Output, "=== ") &&
						!strings.HasPrefix(ev.Output, "testing: warning: no tests to run") {
						out.print(ev.Output) // TestMain's own output, setup failures
					}
				case ev.Action == "output":
					b := buffers[key]
					if b == nil {
						b = &strings.Builder{}
						buffers[key] = b
					}
					b.WriteString(ev.Output)
				case (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip") && ev.Test != "":
					b := buffers[key]
					delete(buffers, key)
					switch ev.Action {
					case "pass":
						passed++
					case "fail":
						failed++
						failures = append(failures, key)
					case "skip":
						skipped++
					}
					if ev.Action != "pass" && b != nil {
						out.print(b.String())
					}
					if !strings.Contains(ev.Test, "/") {
						tops = append(tops, result{key, ev.Elapsed})
					}
				case (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip") && ev.Test == "":
					pkgTimes[ev.Package] = ev.Elapsed
					if ev.Action == "fail" {
						pkgFailed[ev.Package] = true
						// A package that failed outside a test (a panic, a
						// timeout, TestMain): show what its running tests said.
						for k, b := range buffers {
							if k.pkg == ev.Package {
								out.always("--- output of unfinished test " + k.test + ":")
								out.print(b.String())
								delete(buffers, k)
							}
						}
					}
				}
			}
		}
		if err != nil {
			break
		}
	}

	if out.suppressed > 0 {
		out.always(fmt.Sprintf("testlog: ... %d more lines not echoed; full log: %s", out.suppressed, *logPath))
	}
	if len(failures) > 0 {
		out.always(fmt.Sprintf("\nfailing tests (%d):", len(failures)))
		for _, k := range failures {
			out.always("    " + k.pkg + " " + k.test)
		}
	}
	pkgs := make([]string, 0, len(pkgTimes))
	for p := range pkgTimes {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgTimes[pkgs[i]] > pkgTimes[pkgs[j]] })
	out.always("\npackages by time:")
	for _, p := range pkgs {
		mark := ""
		if pkgFailed[p] {
			mark = "  FAILED"
		}
		out.always(fmt.Sprintf("  %8.1fs  %s%s", pkgTimes[p], p, mark))
	}
	sort.Slice(tops, func(i, j int) bool { return tops[i].elapsed > tops[j].elapsed })
	if len(tops) > 10 {
		tops = tops[:10]
	}
	out.always("ten slowest tests:")
	for _, r := range tops {
		out.always(fmt.Sprintf("  %8.1fs  %s %s", r.elapsed, r.key.pkg, r.key.test))
	}
	out.always(fmt.Sprintf("testlog: %d passed, %d failed, %d skipped in %s",
		passed, failed, skipped, time.Since(started).Round(time.Second)))

	if err := os.WriteFile(*logPath+".counts", []byte(fmt.Sprintf("%d %d %d\n", passed, failed, skipped)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
	var bl strings.Builder
	for p, v := range backends {
		fmt.Fprintf(&bl, "%s %s\n", p, v)
	}
	if err := os.WriteFile(*logPath+".backends", []byte(bl.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
}
