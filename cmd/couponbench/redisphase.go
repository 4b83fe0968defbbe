package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisPhase is what Redis spent per answer in one phase of a flash sale:
// before the sell-out (claims reserve stock) or after it (refusals). CPU is
// the server's used_cpu_sys+used_cpu_user (network included), Script the
// usec of its script runs (INFO commandstats of eval, evalsha and their
// read-only forms: the commands a script calls are inside it) and Scripts
// their number; every figure divided by the answers of the phase. Redis is
// shared with whatever else runs on the machine, which these deltas include.
type RedisPhase struct {
	Phase           string  `json:"phase"`
	Answers         int     `json:"answers"`
	CPUMicrosPerAns float64 `json:"cpu_us_per_answer"`
	CmdMicrosPerAns float64 `json:"script_us_per_answer"`
	CallsPerAnswer  float64 `json:"scripts_per_answer"`
	// CommandsPerAnswer counts every command Redis ran (INFO commandstats,
	// less couponbench's own INFO readings), scripts included. In the
	// sold-out phase (SoldOutPhase), less the background of idle windows
	// around it too.
	CommandsPerAnswer float64 `json:"commands_per_answer"`
	// BackgroundPerAnswer is the background subtracted from the sold-out
	// phase's commands, per answer; Noisy marks a phase whose two idle
	// windows differ by more than half a command per answer (other clients'
	// load changed while it ran: run again).
	BackgroundPerAnswer float64 `json:"background_commands_per_answer,omitempty"`
	Noisy               bool    `json:"noisy,omitempty"`
	SecondsOfTheRun     float64 `json:"seconds"`
	AnswersPerSecond    float64 `json:"answers_per_second"`
	RedisCoresInPhase   float64 `json:"redis_cores"`
}

// redisSnap is one reading of Redis's counters.
type redisSnap struct {
	at              time.Time
	cpu, usec, call float64
	// commands counts every command but INFO (couponbench's readings).
	commands float64
	answers  int64
	ok       bool
}

func readRedisSnap(ctx context.Context, rdb *redis.Client) redisSnap {
	info, err := rdb.Info(ctx, "cpu", "commandstats").Result()
	s := redisSnap{at: time.Now()}
	if err != nil {
		return s
	}
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "used_cpu_sys:"), strings.HasPrefix(line, "used_cpu_user:"):
			_, v, _ := strings.Cut(line, ":")
			f, _ := strconv.ParseFloat(v, 64)
			s.cpu += f * 1e6
			s.ok = true
		case strings.HasPrefix(line, "cmdstat_") && !strings.HasPrefix(line, "cmdstat_info:"):
			s.commands += statField(line, "calls")
			if strings.HasPrefix(line, "cmdstat_eval") {
				s.call += statField(line, "calls")
				s.usec += statField(line, "usec")
			}
		}
	}
	return s
}

// statField reads one field of a commandstats line
// ("cmdstat_evalsha:calls=3,usec=12,usec_per_call=4.00,...").
func statField(line, name string) float64 {
	_, fields, _ := strings.Cut(line, ":")
	for kv := range strings.SplitSeq(fields, ",") {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// sellOutMeter splits a flash run at its first sold_out answer and reads
// Redis's counters at the start, there, and at the end.
type sellOutMeter struct {
	rdb     *redis.Client
	answers atomic.Int64
	once    sync.Once
	start   redisSnap
	mid     redisSnap
}

// newSellOutMeter reads the counters at the start; a nil client measures
// nothing.
func newSellOutMeter(ctx context.Context, rdb *redis.Client) *sellOutMeter {
	m := &sellOutMeter{rdb: rdb}
	if rdb != nil {
		m.start = readRedisSnap(ctx, rdb)
	}
	return m
}

// answered counts one answer; the first sold_out reads the counters.
func (m *sellOutMeter) answered(ctx context.Context, kind string) {
	n := m.answers.Add(1)
	if kind != "sold_out" || m.rdb == nil {
		return
	}
	m.once.Do(func() {
		m.mid = readRedisSnap(context.WithoutCancel(ctx), m.rdb)
		m.mid.answers = n - 1
	})
}

// phases reads the counters at the end and returns both phases (nothing
// when a reading failed or the run never sold out).
func (m *sellOutMeter) phases(ctx context.Context) []RedisPhase {
	if m.rdb == nil || !m.start.ok || !m.mid.ok {
		return nil
	}
	end := readRedisSnap(context.WithoutCancel(ctx), m.rdb)
	end.answers = m.answers.Load()
	if !end.ok {
		return nil
	}
	phase := func(name string, a, b redisSnap) RedisPhase {
		n := b.answers - a.answers
		secs := b.at.Sub(a.at).Seconds()
		p := RedisPhase{Phase: name, Answers: int(n), SecondsOfTheRun: round3(secs)}
		if n > 0 {
			p.CPUMicrosPerAns = round1((b.cpu - a.cpu) / float64(n))
			p.CmdMicrosPerAns = round1((b.usec - a.usec) / float64(n))
			p.CallsPerAnswer = round3((b.call - a.call) / float64(n))
			p.CommandsPerAnswer = round3((b.commands - a.commands) / float64(n))
		}
		if secs > 0 {
			p.AnswersPerSecond = float64(int(float64(n)/secs + 0.5))
			p.RedisCoresInPhase = round3((b.cpu - a.cpu) / 1e6 / secs)
		}
		return p
	}
	return []RedisPhase{phase("before sell-out", m.start, m.mid), phase("after sell-out", m.mid, end)}
}

// SoldOutPhase names the phase a flash run ends with once its template is
// sold out: claims of new users with new keys only, every one answered
// sold_out, no replay among them. Its commands per answer are what the
// service sends Redis for a sold-out answer, the row "Redis commands per
// sold-out claim answer" of bench/run.sh (the phase after the sell-out
// also counts the run's replays and the claims still in flight).
const SoldOutPhase = "sold out only"

// redisWindow is Redis's counters read at both ends of a stretch of time.
type redisWindow struct{ from, to redisSnap }

// commandRate is the window's commands a second.
func (w redisWindow) commandRate() float64 {
	secs := w.to.at.Sub(w.from.at).Seconds()
	if secs <= 0 {
		return 0
	}
	return (w.to.commands - w.from.commands) / secs
}

// idleRedisWindow reads Redis's counters, waits idle and reads them again:
// what the other clients (and the service's own background work) send
// while couponbench sends nothing.
func idleRedisWindow(ctx context.Context, rdb *redis.Client, idle time.Duration) redisWindow {
	w := redisWindow{from: readRedisSnap(ctx, rdb)}
	select {
	case <-ctx.Done():
	case <-time.After(idle):
	}
	w.to = readRedisSnap(ctx, rdb)
	return w
}

// measureSoldOut runs phase between two idle windows of Redis's counters
// and returns its figures per answer (answers: the sold-out answers phase
// got), the background subtracted; false when a reading failed.
func measureSoldOut(ctx context.Context, rdb *redis.Client, idle time.Duration, phase func() (answers int)) (RedisPhase, bool) {
	before := idleRedisWindow(ctx, rdb, idle)
	w := redisWindow{from: readRedisSnap(ctx, rdb)}
	n := phase()
	w.to = readRedisSnap(ctx, rdb)
	after := idleRedisWindow(ctx, rdb, idle)
	for _, s := range []redisSnap{before.from, before.to, w.from, w.to, after.from, after.to} {
		if !s.ok {
			return RedisPhase{}, false
		}
	}
	w.to.answers = int64(n)
	return soldOutPhaseOf(before, w, after), true
}

// soldOutPhaseOf is the sold-out phase's figures: its deltas per answer
// (w.to.answers), its commands less the mean of the two idle windows'
// rates over the phase's length.
func soldOutPhaseOf(before, w, after redisWindow) RedisPhase {
	n := w.to.answers - w.from.answers
	secs := w.to.at.Sub(w.from.at).Seconds()
	p := RedisPhase{Phase: SoldOutPhase, Answers: int(n), SecondsOfTheRun: round3(secs)}
	if n <= 0 {
		return p
	}
	bg := (before.commandRate() + after.commandRate()) / 2 * secs
	p.CommandsPerAnswer = round3(max(w.to.commands-w.from.commands-bg, 0) / float64(n))
	p.BackgroundPerAnswer = round3(bg / float64(n))
	p.Noisy = math.Abs(before.commandRate()-after.commandRate())*secs/float64(n) > 0.5
	p.CPUMicrosPerAns = round1((w.to.cpu - w.from.cpu) / float64(n))
	p.CmdMicrosPerAns = round1((w.to.usec - w.from.usec) / float64(n))
	p.CallsPerAnswer = round3((w.to.call - w.from.call) / float64(n))
	if secs > 0 {
		p.AnswersPerSecond = float64(int(float64(n)/secs + 0.5))
		p.RedisCoresInPhase = round3((w.to.cpu - w.from.cpu) / 1e6 / secs)
	}
	return p
}

func round1(v float64) float64 { return float64(int(v*10+0.5)) / 10 }

// phasesLine is the console form of the phases.
func phasesLine(ps []RedisPhase) string {
	var parts []string
	for _, p := range ps {
		part := fmt.Sprintf("%s: %d answers, %.1f µs CPU, %.1f µs in scripts, %.2f scripts and %.2f commands per answer",
			p.Phase, p.Answers, p.CPUMicrosPerAns, p.CmdMicrosPerAns, p.CallsPerAnswer, p.CommandsPerAnswer)
		if p.Phase == SoldOutPhase {
			part += fmt.Sprintf(" (background %.2f subtracted%s)", p.BackgroundPerAnswer, map[bool]string{true: ", noisy: run again"}[p.Noisy])
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}
