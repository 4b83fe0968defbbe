package main

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The sold-out phase's commands per answer are its delta less the mean of
// the idle windows' rates over its length; windows that disagree by more
// than half a command per answer mark it noisy.
func TestSoldOutPhaseSubtractsTheBackground(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	snap := func(sec float64, commands float64, answers int64) redisSnap {
		return redisSnap{at: t0.Add(time.Duration(sec * float64(time.Second))), commands: commands, answers: answers, ok: true,
			cpu: commands * 10, call: commands / 2, usec: commands}
	}
	// 100 commands a second before; 200 answers in 2 s with 500 commands.
	before := redisWindow{snap(0, 0, 0), snap(1, 100, 0)}
	phase := redisWindow{snap(2, 300, 0), snap(4, 800, 200)}
	cases := []struct {
		name       string
		after      redisWindow
		perAnswer  float64
		background float64
		noisy      bool
	}{
		{"SteadyBackground", redisWindow{snap(5, 900, 0), snap(6, 1000, 0)}, 1.5, 1, false},
		{"BackgroundAlone", redisWindow{snap(5, 900, 0), snap(6, 1400, 0)}, 0, 3, true},
		{"BackgroundRose", redisWindow{snap(5, 900, 0), snap(6, 1200, 0)}, 0.5, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := soldOutPhaseOf(before, phase, tc.after)
			if p.Phase != SoldOutPhase || p.Answers != 200 || p.SecondsOfTheRun != 2 || p.AnswersPerSecond != 100 {
				t.Fatalf("phase %+v", p)
			}
			if p.CommandsPerAnswer != tc.perAnswer || p.BackgroundPerAnswer != tc.background || p.Noisy != tc.noisy {
				t.Errorf("commands %.3f background %.3f noisy %v: want %.3f, %.3f, %v", p.CommandsPerAnswer, p.BackgroundPerAnswer, p.Noisy,
					tc.perAnswer, tc.background, tc.noisy)
			}
			if p.CallsPerAnswer != 1.25 || p.CmdMicrosPerAns != 2.5 || p.CPUMicrosPerAns != 25 {
				t.Errorf("scripts %.3f, %.1f µs, CPU %.1f µs per answer: want 1.25, 2.5, 25", p.CallsPerAnswer, p.CmdMicrosPerAns, p.CPUMicrosPerAns)
			}
		})
	}
	if p := soldOutPhaseOf(before, redisWindow{snap(2, 300, 0), snap(4, 800, 0)}, before); p.Answers != 0 || p.CommandsPerAnswer != 0 {
		t.Errorf("a phase without answers: %+v", p)
	}
}

// A flash run ends with its sold-out phase: new users' claims only, each
// answered sold_out, and the Redis commands of a sold-out answer counted
// apart from the run's replays. Against a fake service that sends Redis
// nothing the row is about 0; one that sends an EXISTS per refusal, about 1.
// Needs a Redis (COUPON_TEST_REDIS_ADDR), whose other clients the idle
// windows subtract.
func TestFlashSoldOutPhaseAgainstFake(t *testing.T) {
	addr := os.Getenv("COUPON_TEST_REDIS_ADDR")
	if addr == "" {
		t.Skip("COUPON_TEST_REDIS_ADDR is not set")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	for _, tc := range []struct {
		name  string
		redis *redis.Client
		want  float64
	}{{"NoRedis", nil, 0}, {"OneExistsPerRefusal", rdb, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeService()
			f.soldOutRedis = tc.redis
			code, out, rep := runFakeOn(t, f, "flash", addr)
			flash := rep.find("flash")
			if code != 0 || flash == nil {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			var p *RedisPhase
			for i := range flash.RedisPhases {
				if flash.RedisPhases[i].Phase == SoldOutPhase {
					p = &flash.RedisPhases[i]
				}
			}
			// -short: 2,000 claims, so 200 more after the sell-out.
			if p == nil || p.Answers != 200 || flash.Requests != 2000 {
				t.Fatalf("flash: %d requests, sold-out phase %+v", flash.Requests, p)
			}
			t.Logf("sold-out phase: %.3f commands per answer, background %.3f, noisy %v", p.CommandsPerAnswer, p.BackgroundPerAnswer, p.Noisy)
			checked := false
			for _, c := range flash.Checks {
				if c.Name == "sold out only" {
					checked = c.OK
				}
			}
			if !checked {
				t.Errorf("the sold-out phase's check failed: %+v", flash.Checks)
			}
			if p.Noisy {
				t.Logf("the shared Redis's background moved during the phase: %+v", p)
			} else if math.Abs(p.CommandsPerAnswer-tc.want) > 0.3 {
				t.Errorf("%.3f Redis commands per sold-out answer, want %.0f (background %.3f subtracted)", p.CommandsPerAnswer, tc.want, p.BackgroundPerAnswer)
			}
		})
	}
}
