package main

import (
	"strings"
	"testing"
)

func TestFlashPlan(t *testing.T) {
	plan := flashPlan(1000, 600, 0.5, 7)
	if len(plan) != 1000 {
		t.Fatalf("len %d", len(plan))
	}
	users := map[int]bool{}
	keyUser := map[int]int{}
	keyCount := map[int]int{}
	for _, p := range plan {
		users[p.user] = true
		if u, ok := keyUser[p.key]; ok && u != p.user {
			t.Fatalf("key %d shared by users %d and %d", p.key, u, p.user)
		}
		keyUser[p.key] = p.user
		keyCount[p.key]++
	}
	if len(users) != 600 {
		t.Errorf("%d distinct users, want 600", len(users))
	}
	replays, newKeys := 0, len(keyUser)-600
	for _, n := range keyCount {
		replays += n - 1
	}
	// 400 retries, about half with the same key.
	if replays+newKeys != 400 || replays < 120 || newKeys < 120 {
		t.Errorf("%d same-key retries, %d new-key retries", replays, newKeys)
	}
	again := flashPlan(1000, 600, 0.5, 7)
	for i := range plan {
		if plan[i] != again[i] {
			t.Fatal("the plan is not fixed by its seed")
		}
	}
}

func TestRedeemPlan(t *testing.T) {
	ops := redeemPlan(200, 20, 10, 3)
	if len(ops) != 230 {
		t.Fatalf("len %d", len(ops))
	}
	firstAt := map[int]int{}
	counts := map[int]int{}
	for i, op := range ops {
		counts[op.kind]++
		if op.kind == opOriginal {
			if _, dup := firstAt[op.coupon]; dup {
				t.Fatalf("coupon %d redeemed first twice", op.coupon)
			}
			firstAt[op.coupon] = i
			continue
		}
		at, ok := firstAt[op.coupon]
		if !ok || at > i {
			t.Fatalf("op %d (kind %d) on coupon %d comes before its first redemption", i, op.kind, op.coupon)
		}
	}
	if counts[opOriginal] != 200 || counts[opReplay] != 20 || counts[opConflict] != 10 {
		t.Errorf("counts %v", counts)
	}
}

func TestVerifyClaims(t *testing.T) {
	// Three users, stock 2, limit 1: key 0 (u0) and key 1 (u1) win, u1 replays
	// key 1, u2 is sold out, u0 tries again with key 3.
	plan := []claimReq{{0, 0}, {1, 1}, {1, 1}, {2, 2}, {0, 3}}
	good := []claimOutcome{
		{kind: "claimed", code: "A"}, {kind: "claimed", code: "B"}, {kind: "duplicate", code: "B"},
		{kind: "sold_out"}, {kind: "sold_out"},
	}
	tests := []struct {
		name   string
		out    func() []claimOutcome
		failed []string
	}{
		{"OK", func() []claimOutcome { return good }, nil},
		{"ErrOversell", func() []claimOutcome {
			o := append([]claimOutcome(nil), good...)
			o[3] = claimOutcome{kind: "claimed", code: "C"}
			return o
		}, []string{"coupon count (answers)"}},
		{"ErrUndersell", func() []claimOutcome {
			o := append([]claimOutcome(nil), good...)
			o[1] = claimOutcome{kind: "sold_out"}
			o[2] = claimOutcome{kind: "sold_out"}
			return o
		}, []string{"coupon count (answers)"}},
		{"ErrUserOverLimit", func() []claimOutcome {
			o := append([]claimOutcome(nil), good...)
			o[1] = claimOutcome{kind: "sold_out"}
			o[2] = claimOutcome{kind: "sold_out"}
			o[4] = claimOutcome{kind: "claimed", code: "D"}
			return o
		}, []string{"per-user limit (answers)"}},
		{"ErrReplayOtherCoupon", func() []claimOutcome {
			o := append([]claimOutcome(nil), good...)
			o[2] = claimOutcome{kind: "duplicate", code: "A"}
			return o
		}, []string{"idempotency"}},
		{"ErrReplayClaimedAgain", func() []claimOutcome {
			o := append([]claimOutcome(nil), good...)
			o[2] = claimOutcome{kind: "claimed", code: "E"}
			return o
		}, []string{"idempotency", "per-user limit (answers)", "coupon count (answers)"}},
		{"ErrSameCodeTwice", func() []claimOutcome {
			o := append([]claimOutcome(nil), good...)
			o[1] = claimOutcome{kind: "claimed", code: "A"}
			o[2] = claimOutcome{kind: "duplicate", code: "A"}
			return o
		}, []string{"distinct codes"}},
		{"ShedIsNotDemand", func() []claimOutcome {
			// u1 was shed both times: only u0 reached the gate with stock
			// left, and u2 was sold out... which is then an undersell.
			o := append([]claimOutcome(nil), good...)
			o[1] = claimOutcome{kind: "unavailable"}
			o[2] = claimOutcome{kind: "busy"}
			return o
		}, []string{"coupon count (answers)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Summary{}
			tally := verifyClaims(s, plan, tt.out(), 2, 1)
			var failed []string
			for _, c := range s.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			if strings.Join(failed, ",") != strings.Join(tt.failed, ",") {
				t.Errorf("failed checks %v, want %v; %+v", failed, tt.failed, s.Checks)
			}
			if tt.name == "OK" && (tally.claimed != 2 || tally.demand != 3 || len(tally.userCodes[1]) != 1) {
				t.Errorf("tally %+v", tally)
			}
		})
	}
}

func TestSampleUsers(t *testing.T) {
	with := map[int][]string{}
	for u := range 100 {
		with[u*2] = []string{"x"}
	}
	var all []int
	for u := range 200 {
		all = append(all, u, u)
	}
	got := sampleUsers(with, all, 10, 5)
	if len(got) != 15 {
		t.Fatalf("len %d: %v", len(got), got)
	}
	for i, u := range got {
		if (i < 10) != (len(with[u]) > 0) {
			t.Errorf("user %d at %d in the wrong group", u, i)
		}
	}
}
