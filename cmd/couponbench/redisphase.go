package main

import (
	"context"
	"fmt"
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
	// less couponbench's own INFO readings), scripts included.
	CommandsPerAnswer float64 `json:"commands_per_answer"`
	SecondsOfTheRun   float64 `json:"seconds"`
	AnswersPerSecond  float64 `json:"answers_per_second"`
	RedisCoresInPhase float64 `json:"redis_cores"`
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

func round1(v float64) float64 { return float64(int(v*10+0.5)) / 10 }

// phasesLine is the console form of the phases.
func phasesLine(ps []RedisPhase) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s: %d answers, %.1f µs CPU, %.1f µs in scripts, %.2f scripts and %.2f commands per answer",
			p.Phase, p.Answers, p.CPUMicrosPerAns, p.CmdMicrosPerAns, p.CallsPerAnswer, p.CommandsPerAnswer))
	}
	return strings.Join(parts, "; ")
}
