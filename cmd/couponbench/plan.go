package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// claimReq is one planned claim: a user and an idempotency key, both as
// numbers that name() turns into strings.
type claimReq struct {
	user int
	key  int
}

// flashPlan lays out requests claims by users distinct users: every user
// claims at least once, the rest are retries by random users, shuffled. A
// user's first claim has a fresh key; a later one reuses the user's previous
// key with probability sameKey (a retry of the same click) and otherwise takes
// a new key (a new click). The plan is fixed by seed.
func flashPlan(requests, users int, sameKey float64, seed uint64) []claimReq {
	users = min(users, requests)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	plan := make([]claimReq, requests)
	for i := range plan {
		if i < users {
			plan[i].user = i
		} else {
			plan[i].user = rng.IntN(users)
		}
	}
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	last := make([]int, users)
	for i := range last {
		last[i] = -1
	}
	nextKey := 0
	for i := range plan {
		u := plan[i].user
		if last[u] >= 0 && rng.Float64() < sameKey {
			plan[i].key = last[u]
			continue
		}
		plan[i].key = nextKey
		last[u] = nextKey
		nextKey++
	}
	return plan
}

// claimOutcome is what one claim got back.
type claimOutcome struct {
	kind string
	code string
}

// transient words are answers that shed load or report a fault of a backing
// store: counted, not a broken guarantee, but the claim did not happen.
var transient = map[string]bool{"busy": true, "rate_limited": true, "unavailable": true, "not_run": true}

// faults collects answers no scenario should ever get (transport errors,
// 500s, a status that does not match the result word, a word the operation
// cannot answer), with a few examples.
type faults struct {
	mu       sync.Mutex
	n        int
	examples []string
}

func (f *faults) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if len(f.examples) < 5 {
		f.examples = append(f.examples, fmt.Sprintf(format, args...))
	}
}

// report adds the check that no answer was a fault.
func (f *faults) report(s *Summary) {
	if f.n == 0 {
		s.check("answers", true, "every answer carried a result word that matches its HTTP status and the operation")
		return
	}
	s.check("answers", false, "%d unexpected answers, e.g. %s", f.n, strings.Join(f.examples, "; "))
}

// classify returns the word to count for an answer and records a fault when
// the answer is not one of allowed (or a transient word) or its status does not
// match its word.
func classify(a *answer, f *faults, op string, allowed ...string) string {
	k := a.kind()
	if transient[k] && a.consistent() {
		return k
	}
	if !a.consistent() || !slices.Contains(allowed, k) {
		f.add("%s: %s", op, a.brief())
		if a.err == nil && a.body.Result != "" && !a.consistent() {
			return fmt.Sprintf("%s/http_%d", k, a.status)
		}
	}
	return k
}

// claimTally is the client's own view of a set of claims, from the answers.
type claimTally struct {
	claimed   int              // 201 answers
	userCodes map[int][]string // distinct coupon codes from 201 answers per user
	demand    int              // sum over users of min(limit, keys that reached the gate)
}

// verifyClaims checks what the answers alone can prove: one coupon per key,
// distinct codes, replays answered with the first coupon, no user over the
// limit, never more than the stock and exactly min(stock, demand) claimed.
func verifyClaims(s *Summary, plan []claimReq, out []claimOutcome, stock, limit int) claimTally {
	type keyState struct {
		user    int
		claimed []string
		dups    []string
		reached bool // some answer that came from the gate (not transient)
	}
	keys := map[int]*keyState{}
	userTransient := map[int]bool{}
	userLimitAnswers := map[int]int{}
	for i, p := range plan {
		o := out[i]
		k := keys[p.key]
		if k == nil {
			k = &keyState{user: p.user}
			keys[p.key] = k
		}
		switch o.kind {
		case "claimed":
			k.claimed = append(k.claimed, o.code)
			k.reached = true
		case "duplicate":
			k.dups = append(k.dups, o.code)
			k.reached = true
		case "sold_out", "in_progress":
			k.reached = true
		case "user_limit_reached":
			k.reached = true
			userLimitAnswers[p.user]++
		default:
			userTransient[p.user] = true
		}
	}
	t := claimTally{userCodes: map[int][]string{}}
	var multi, badDup, dupCodes int
	var examples []string
	seenCode := map[string]bool{}
	userKeys := map[int]int{}
	for id, k := range keys {
		if k.reached {
			userKeys[k.user]++
		}
		if len(k.claimed) > 1 {
			multi++
			examples = append(examples, fmt.Sprintf("key %d got %d coupons", id, len(k.claimed)))
		}
		for _, c := range k.claimed {
			t.claimed++
			if seenCode[c] {
				dupCodes++
				examples = append(examples, fmt.Sprintf("code %q issued twice", c))
			}
			seenCode[c] = true
			t.userCodes[k.user] = append(t.userCodes[k.user], c)
		}
		for _, c := range k.dups {
			if len(k.claimed) == 0 || c != k.claimed[0] {
				badDup++
				examples = append(examples, fmt.Sprintf("key %d replay answered coupon %q, first answer %v", id, c, k.claimed))
			}
		}
	}
	for u, n := range userKeys {
		t.demand += min(n, limit)
		_ = u
	}
	over := 0
	for u, codes := range t.userCodes {
		if len(codes) > limit {
			over++
			examples = append(examples, fmt.Sprintf("user u%d got %d coupons, limit %d", u, len(codes), limit))
		}
	}
	wrongLimit := 0
	for u := range userLimitAnswers {
		if !userTransient[u] && len(t.userCodes[u]) < limit {
			wrongLimit++
			if wrongLimit <= 3 {
				examples = append(examples, fmt.Sprintf("user u%d refused user_limit_reached holding %d of %d", u, len(t.userCodes[u]), limit))
			}
		}
	}
	slices.Sort(examples)
	if len(examples) > 5 {
		examples = examples[:5]
	}
	ex := ""
	if len(examples) > 0 {
		ex = "; e.g. " + strings.Join(examples, "; ")
	}
	s.check("idempotency", multi == 0 && badDup == 0,
		"%d keys got more than one coupon, %d replays answered another coupon%s", multi, badDup, ex)
	s.check("distinct codes", dupCodes == 0, "%d coupon codes answered twice", dupCodes)
	s.check("per-user limit (answers)", over == 0 && wrongLimit == 0,
		"%d users over the limit of %d, %d refused below it", over, limit, wrongLimit)
	want := min(stock, t.demand)
	s.check("coupon count (answers)", t.claimed == want && t.claimed <= stock,
		"%d claimed == min(stock %d, demand %d) = %d", t.claimed, stock, t.demand, want)
	return t
}

// userName and keyName give the wire form of plan numbers.
func userName(prefix string, u int) string { return fmt.Sprintf("%su%d", prefix, u) }
func keyName(prefix string, k int) string  { return fmt.Sprintf("%s-k%d", prefix, k) }
