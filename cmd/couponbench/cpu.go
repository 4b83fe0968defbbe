package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// On a machine that runs the service, its databases and couponbench side by
// side, the ratios of the targets are set by who gets the cores. The CPU
// meter says, for the timed part of each scenario, how much CPU each process
// took: in cores, and in microseconds per answer.

// ProcCPU is the CPU one process used during a scenario's timed part.
type ProcCPU struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// Cores is Seconds over the wall time: 1 is one core busy all along.
	Cores float64 `json:"cores"`
	// MicrosPerAnswer is Seconds spread over the scenario's answers.
	MicrosPerAnswer float64 `json:"us_per_answer"`
}

// watchedProc is a process whose CPU is measured; pid 0 is couponbench.
type watchedProc struct {
	name string
	pid  int
}

// cpuMeter reads the CPU time of the watched processes from /proc.
type cpuMeter struct{ procs []watchedProc }

// newCPUMeter watches couponbench itself, the service (pid 0: not watched)
// and the processes of spec, a comma list of name=pid.
func newCPUMeter(servicePID int, spec string) (*cpuMeter, error) {
	m := &cpuMeter{procs: []watchedProc{{name: "couponbench"}}}
	if servicePID > 0 {
		m.procs = append(m.procs, watchedProc{name: "couponsvc", pid: servicePID})
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, pidText, ok := strings.Cut(item, "=")
		pid, err := strconv.Atoi(pidText)
		if !ok || name == "" || err != nil || pid <= 0 {
			return nil, fmt.Errorf("-watch-cpu: %q is not name=pid", item)
		}
		m.procs = append(m.procs, watchedProc{name: name, pid: pid})
	}
	return m, nil
}

// sample returns the CPU seconds each watched process has used so far, NaN
// for one that cannot be read (it exited, or this is not Linux).
func (m *cpuMeter) sample() []float64 {
	out := make([]float64, len(m.procs))
	for i, p := range m.procs {
		path := "/proc/self/stat"
		if p.pid > 0 {
			path = fmt.Sprintf("/proc/%d/stat", p.pid)
		}
		s, err := readCPUSeconds(path)
		if err != nil {
			s = math.NaN()
		}
		out[i] = s
	}
	return out
}

// clockTicks is the unit of /proc/<pid>/stat's times (USER_HZ), 100 on every
// Linux that Go runs on.
const clockTicks = 100

// readCPUSeconds reads utime + stime of a /proc/<pid>/stat file.
func readCPUSeconds(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU takes utime and stime (fields 14 and 15) from a stat line.
// The command name (field 2) is in parentheses and may hold spaces, so the
// fields are counted from the last ')'.
func parseStatCPU(stat string) (float64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("no command name in %.60q", stat)
	}
	fields := strings.Fields(stat[end+1:]) // fields[0] is field 3, the state
	if len(fields) < 13 {
		return 0, fmt.Errorf("short stat line %.60q", stat)
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad utime or stime in %.60q", stat)
	}
	return float64(utime+stime) / clockTicks, nil
}

// usage turns two samples around a timed part into ProcCPU rows.
func (m *cpuMeter) usage(before, after []float64, elapsed time.Duration, answers int) []ProcCPU {
	var out []ProcCPU
	for i, p := range m.procs {
		sec := after[i] - before[i]
		if math.IsNaN(sec) || elapsed <= 0 {
			continue
		}
		row := ProcCPU{Name: p.name, Seconds: round3(sec), Cores: round3(sec / elapsed.Seconds())}
		if answers > 0 {
			row.MicrosPerAnswer = math.Round(sec * 1e6 / float64(answers))
		}
		out = append(out, row)
	}
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

type cpuMeterKey struct{}

// withCPUMeter makes drive measure the CPU of m's processes.
func withCPUMeter(ctx context.Context, m *cpuMeter) context.Context {
	return context.WithValue(ctx, cpuMeterKey{}, m)
}

// cpuMeterFrom returns the meter of ctx, or nil.
func cpuMeterFrom(ctx context.Context) *cpuMeter {
	m, _ := ctx.Value(cpuMeterKey{}).(*cpuMeter)
	return m
}

// cpuLine words the CPU rows of a scenario for the text table.
func cpuLine(rows []ProcCPU) string {
	parts := make([]string, 0, len(rows)+1)
	total := 0.0
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%s %.2f (%.0f µs/answer)", r.Name, r.Cores, r.MicrosPerAnswer))
		total += r.Cores
	}
	return fmt.Sprintf("%s; together %.2f cores", strings.Join(parts, ", "), total)
}
