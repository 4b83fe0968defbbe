package lua_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// The scripts run on one campaign's keys, named as services/keys.go names them.
const (
	cid  = 7
	tid  = 70
	tid2 = 71
	ttl  = 3600 // idempotency TTL in seconds
	now0 = 1_900_000_000_000
	// attempt is the attempt word of every reservation the tests make.
	attempt = "Att3mpt"
)

type fixture struct {
	env *testenv.Env
	rdb redis.UniversalClient
	ctx context.Context
	c   string // the campaign's key prefix, with its hash tag
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := testenv.New(t, services.Config{})
	return &fixture{env: env, rdb: env.Backends.Redis, ctx: context.Background(),
		c: fmt.Sprintf("%s{c%d}:", env.Prefix, cid)}
}

func (f *fixture) budget() string       { return f.c + "budget" }
func (f *fixture) pending() string      { return f.c + "pending" }
func (f *fixture) recent() string       { return f.c + "recent" }
func (f *fixture) tpl(id int) string    { return f.c + "t:" + strconv.Itoa(id) }
func (f *fixture) free(id int) string   { return f.tpl(id) + ":free" }
func (f *fixture) users(id int) string  { return f.tpl(id) + ":users" }
func (f *fixture) idem(k string) string { return f.c + "idem:" + k }
func (f *fixture) ret(coupon int) string {
	return f.c + "ret:" + strconv.Itoa(coupon)
}

func (f *fixture) rule(id int) string { return f.tpl(id) + ":rule" }

// claimKeys are the keys of coupon_release.lua.
func (f *fixture) claimKeys(id int, key string) []string {
	return []string{f.budget(), f.tpl(id), f.free(id), f.users(id), f.idem(key), f.pending()}
}

// deductKeys are the keys of coupon_deduct.lua.
func (f *fixture) deductKeys(id int, key string) []string {
	return append(f.claimKeys(id, key), f.rule(id))
}

// openRule is a claim rule that takes claims at any time.
const openRule = "active|0||"

// tplState is a template hash as coupon_load.lua writes it.
type tplState struct{ remaining, next, total, limit, value int64 }

// seed writes a campaign's budget (-1: none), a template's hash and an open
// claim rule directly.
func (f *fixture) seed(t *testing.T, budget int64, id int, s tplState) {
	t.Helper()
	if err := f.rdb.Set(f.ctx, f.budget(), budget, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.Set(f.ctx, f.rule(id), openRule, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.HSet(f.ctx, f.tpl(id), "remaining", s.remaining, "next", s.next, "total", s.total,
		"limit", s.limit, "value", s.value).Err(); err != nil {
		t.Fatal(err)
	}
}

// deductResult is the reply of coupon_deduct.lua.
type deductResult struct {
	code, slot, ordinal, remaining int64
	detail                         string
}

func (f *fixture) deductArgs(t *testing.T, keys []string, args ...any) deductResult {
	t.Helper()
	vals, err := lua.Deduct.Run(f.ctx, f.rdb, keys, args...).Slice()
	if err != nil {
		t.Fatalf("coupon_deduct.lua: %v", err)
	}
	long := vals[0] == int64(lua.DeductDuplicate) || vals[0] == int64(lua.DeductNotClaimable) || vals[0] == int64(lua.DeductSoldOut) ||
		vals[0] == int64(lua.DeductReserved)
	if want := map[bool]int{true: 6, false: 5}[long]; len(vals) != want {
		t.Fatalf("coupon_deduct.lua answered %d values: %v, want %d", len(vals), vals, want)
	}
	var r deductResult
	r.code, _ = vals[0].(int64)
	r.slot, _ = vals[1].(int64)
	r.ordinal, _ = vals[2].(int64)
	r.remaining, _ = vals[3].(int64)
	r.detail, _ = vals[4].(string)
	return r
}

func (f *fixture) deduct(t *testing.T, id int, user, key string) deductResult {
	t.Helper()
	return f.deductArgs(t, f.deductKeys(id, key), id, user, key, now0, ttl, attempt)
}

// duplicateAttempt replays key and returns the attempt the script says
// reserved it.
func (f *fixture) duplicateAttempt(t *testing.T, id int, user, key, myAttempt string) string {
	t.Helper()
	vals, err := lua.Deduct.Run(f.ctx, f.rdb, f.deductKeys(id, key), id, user, key, now0, ttl, myAttempt).Slice()
	if err != nil {
		t.Fatalf("coupon_deduct.lua: %v", err)
	}
	if vals[0] != int64(lua.DeductDuplicate) || len(vals) != 6 {
		t.Fatalf("coupon_deduct.lua = %v, want a duplicate", vals)
	}
	return vals[5].(string)
}

func member(id int, user string, slot, ordinal, value int64, key string) string {
	return fmt.Sprintf("%d|%s|%d|%d|%d|%s", id, user, slot, ordinal, value, key)
}

func (f *fixture) confirm(t *testing.T, key, m string) int64 {
	t.Helper()
	n, err := lua.Confirm.Run(f.ctx, f.rdb, []string{f.idem(key), f.pending(), f.recent()}, m, now0+1, 60_000).Int64()
	if err != nil {
		t.Fatalf("coupon_confirm.lua: %v", err)
	}
	return n
}

func (f *fixture) release(t *testing.T, id int, key, m string) int64 {
	t.Helper()
	n, err := lua.Release.Run(f.ctx, f.rdb, f.claimKeys(id, key), m).Int64()
	if err != nil {
		t.Fatalf("coupon_release.lua: %v", err)
	}
	return n
}

// snapshot is every key of the test with its type, value and TTL.
type snapshot map[string]keyState

type keyState struct {
	value string
	pttl  time.Duration
}

func (f *fixture) snapshot(t *testing.T) snapshot {
	t.Helper()
	s := snapshot{}
	for _, k := range f.env.Keys(t) {
		typ, err := f.rdb.Type(f.ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v string
		switch typ {
		case "string":
			v, err = f.rdb.Get(f.ctx, k).Result()
		case "hash":
			var h map[string]string
			h, err = f.rdb.HGetAll(f.ctx, k).Result()
			delete(h, "gen")  // the holders' generation: see TestHoldersGeneration
			v = fmt.Sprint(h) // fmt sorts map keys
		case "list":
			var l []string
			l, err = f.rdb.LRange(f.ctx, k, 0, -1).Result()
			v = fmt.Sprint(l)
		case "zset":
			var z []redis.Z
			z, err = f.rdb.ZRangeWithScores(f.ctx, k, 0, -1).Result()
			v = fmt.Sprint(z)
		default:
			t.Fatalf("key %s has unexpected type %s", k, typ)
		}
		if err != nil {
			t.Fatalf("read %s: %v", k, err)
		}
		pttl, err := f.rdb.PTTL(f.ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		s[k] = keyState{value: typ + " " + v, pttl: pttl}
	}
	return s
}

// assertUnchanged checks that every key is as in before: same keys, values,
// and no TTL set, removed or renewed.
func (f *fixture) assertUnchanged(t *testing.T, before snapshot) {
	t.Helper()
	after := f.snapshot(t)
	for k, b := range before {
		a, ok := after[k]
		if !ok {
			t.Errorf("key %s was deleted", k)
			continue
		}
		if a.value != b.value {
			t.Errorf("key %s changed:\n before %s\n after  %s", k, b.value, a.value)
		}
		switch {
		case b.pttl < 0 && a.pttl != b.pttl:
			t.Errorf("key %s: TTL %v, was %v", k, a.pttl, b.pttl)
		case b.pttl >= 0 && (a.pttl > b.pttl || b.pttl-a.pttl > 5*time.Second):
			t.Errorf("key %s: TTL %v, was %v (renewed or changed)", k, a.pttl, b.pttl)
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("key %s was created: %s", k, a.value)
		}
	}
}

// hash reads a hash without the template hash's holders' generation, which
// TestHoldersGeneration checks.
func (f *fixture) hash(t *testing.T, key string) map[string]string {
	t.Helper()
	h, err := f.rdb.HGetAll(f.ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	delete(h, "gen")
	return h
}

func (f *fixture) get(t *testing.T, key string) (string, bool) {
	t.Helper()
	v, err := f.rdb.Get(f.ctx, key).Result()
	if err == redis.Nil {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

func (f *fixture) list(t *testing.T, key string) []string {
	t.Helper()
	l, err := f.rdb.LRange(f.ctx, key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (f *fixture) zset(t *testing.T, key string) []redis.Z {
	t.Helper()
	z, err := f.rdb.ZRangeWithScores(f.ctx, key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func assertDeduct(t *testing.T, got, want deductResult) {
	t.Helper()
	if got != want {
		t.Fatalf("coupon_deduct.lua = %+v, want %+v", got, want)
	}
}

func assertHash(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("hash = %v, want %v", got, want)
	}
}

func assertEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func TestDeduct(t *testing.T) {
	t.Run("OK", deductOK)
	t.Run("OKFreeSlotFirst", deductOKFreeSlotFirst)
	t.Run("OKSmallestFreeOrdinal", deductOKSmallestFreeOrdinal)
	t.Run("OKBudgetExactlyOneCoupon", deductOKBudgetExactlyOneCoupon)
	t.Run("OKWithoutAttempt", deductOKWithoutAttempt)
	t.Run("OKIdempotencyKeyWithSeparators", deductOKIdempotencyKeyWithSeparators)
	t.Run("Duplicate", deductDuplicate)
	deductRefusals(t)
	t.Run("ErrSoldOutThenRetry", deductErrSoldOutThenRetry)
	t.Run("ErrBadArguments", deductErrBadArguments)
	t.Run("ErrIdempotencyMismatch", deductErrIdempotencyMismatch)
	t.Run("OKScriptCacheFlushed", deductOKScriptCacheFlushed)
	t.Run("OKBudgetLeft", deductOKBudgetLeft)
}

// deductOKBudgetLeft: a reservation answers the campaign's budget after it
// as its sixth value (-1 without a budget); the service tells
// campaign.budget_exhausted from it.
func deductOKBudgetLeft(t *testing.T) {
	for _, c := range []struct {
		budget, want int64
	}{{1000, 900}, {100, 0}, {-1, -1}} {
		f := newFixture(t)
		f.seed(t, c.budget, tid, tplState{remaining: 3, next: 1, total: 3, limit: 2, value: 100})
		vals, err := lua.Deduct.Run(f.ctx, f.rdb, f.deductKeys(tid, "k1"), tid, "u1", "k1", now0, ttl, attempt).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != 6 || vals[0] != int64(lua.DeductReserved) || vals[5] != c.want {
			t.Fatalf("budget %d: coupon_deduct.lua = %v, want reserved with %d left", c.budget, vals, c.want)
		}
	}
}

func deductOK(t *testing.T) {
	f := newFixture(t)
	f.seed(t, 1000, tid, tplState{remaining: 3, next: 1, total: 3, limit: 2, value: 100})
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 2, ""})

	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "900")
	assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "2", "next": "2", "total": "3", "limit": "2", "value": "100"})
	assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "1"})
	m := member(tid, "u1", 1, 1, 100, "k1")
	assertEqual(t, "idem", orMissing(f.get(t, f.idem("k1"))), "P|"+m+"\n"+attempt)
	if d := f.rdb.TTL(f.ctx, f.idem("k1")).Val(); d <= 0 || d > ttl*time.Second {
		t.Fatalf("idem TTL = %v, want (0, %ds]", d, ttl)
	}
	assertEqual(t, "pending", fmt.Sprint(f.zset(t, f.pending())), fmt.Sprint([]redis.Z{{Score: now0, Member: m}}))

	// The same user's second coupon takes ordinal 2 and slot 2.
	assertDeduct(t, f.deduct(t, tid, "u1", "k2"), deductResult{0, 2, 2, 1, ""})
	assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "1,2"})
	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "800")
	assertEqual(t, "pending size", len(f.zset(t, f.pending())), 2)
}

func deductOKFreeSlotFirst(t *testing.T) {
	f := newFixture(t)
	f.seed(t, -1, tid, tplState{remaining: 3, next: 9, total: 10, limit: 1, value: 100})
	f.rdb.RPush(f.ctx, f.free(tid), 4, 6)
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 4, 1, 2, ""})
	assertEqual(t, "free", fmt.Sprint(f.list(t, f.free(tid))), "[6]")
	assertEqual(t, "next", f.hash(t, f.tpl(tid))["next"], "9")
	assertDeduct(t, f.deduct(t, tid, "u2", "k2"), deductResult{0, 6, 1, 1, ""})
	assertEqual(t, "free exists", f.rdb.Exists(f.ctx, f.free(tid)).Val(), int64(0))
	assertDeduct(t, f.deduct(t, tid, "u3", "k3"), deductResult{0, 9, 1, 0, ""})
	assertEqual(t, "next", f.hash(t, f.tpl(tid))["next"], "10")
	assertEqual(t, "budget (none)", orMissing(f.get(t, f.budget())), "-1")
}

func deductOKSmallestFreeOrdinal(t *testing.T) {
	f := newFixture(t)
	f.seed(t, -1, tid, tplState{remaining: 5, next: 1, total: 5, limit: 3, value: 100})
	f.rdb.HSet(f.ctx, f.users(tid), "u1", "2", "u2", "1,3")
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 4, ""})
	assertDeduct(t, f.deduct(t, tid, "u2", "k2"), deductResult{0, 2, 2, 3, ""})
	assertDeduct(t, f.deduct(t, tid, "u1", "k3"), deductResult{0, 3, 3, 2, ""})
	assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "2,1,3", "u2": "1,3,2"})
}

func deductOKBudgetExactlyOneCoupon(t *testing.T) {
	f := newFixture(t)
	f.seed(t, 100, tid, tplState{remaining: 5, next: 1, total: 5, limit: 5, value: 100})
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 4, ""})
	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "0")
}

func deductOKWithoutAttempt(t *testing.T) {
	// Callers that do not tell attempts apart (benchmarks, tools) still work.
	for _, args := range [][]any{{tid, "u1", "k1", now0, ttl}, {tid, "u1", "k2", now0, ttl, ""}} {
		f := newFixture(t)
		f.seed(t, -1, tid, tplState{remaining: 5, next: 1, total: 5, limit: 5, value: 100})
		before := f.snapshot(t)
		key := args[2].(string)
		assertDeduct(t, f.deductArgs(t, f.deductKeys(tid, key), args...), deductResult{0, 1, 1, 4, ""})
		m := member(tid, "u1", 1, 1, 100, key)
		assertEqual(t, "idem", orMissing(f.get(t, f.idem(key))), "P|"+m)
		assertEqual(t, "attempt", f.duplicateAttempt(t, tid, "u1", key, attempt), "")
		assertEqual(t, "release", f.release(t, tid, key, m), int64(1))
		f.assertUnchanged(t, before)
		f.deductArgs(t, f.deductKeys(tid, key), args...)
		assertEqual(t, "confirm", f.confirm(t, key, m), int64(1))
		assertEqual(t, "idem", orMissing(f.get(t, f.idem(key))), "C|"+m)
	}
}

func deductOKIdempotencyKeyWithSeparators(t *testing.T) {
	f := newFixture(t)
	f.seed(t, -1, tid, tplState{remaining: 5, next: 1, total: 5, limit: 5, value: 100})
	key := "a|b,c=d;e f"
	assertDeduct(t, f.deduct(t, tid, "u1", key), deductResult{0, 1, 1, 4, ""})
	assertDeduct(t, f.deduct(t, tid, "u1", key), deductResult{1, 1, 1, 0, "P"})
	assertEqual(t, "release", f.release(t, tid, key, member(tid, "u1", 1, 1, 100, key)), int64(1))
}

func deductDuplicate(t *testing.T) {
	f := newFixture(t)
	f.seed(t, 1000, tid, tplState{remaining: 3, next: 1, total: 3, limit: 2, value: 100})
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 2, ""})
	assertDeduct(t, f.deduct(t, tid, "u1", "k2"), deductResult{0, 2, 2, 1, ""})

	t.Run("Pending", func(t *testing.T) {
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k2"), deductResult{1, 2, 2, 0, "P"})
		// The answer names the attempt that reserved, so that the caller
		// tells its own reservation (a re-sent script) from another request's.
		assertEqual(t, "attempt", f.duplicateAttempt(t, tid, "u1", "k2", "Other1"), attempt)
		f.assertUnchanged(t, before)
	})
	t.Run("Confirmed", func(t *testing.T) {
		assertEqual(t, "confirm", f.confirm(t, "k1", member(tid, "u1", 1, 1, 100, "k1")), int64(1))
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{1, 1, 1, 0, "C"})
		assertEqual(t, "attempt", f.duplicateAttempt(t, tid, "u1", "k1", attempt), "")
		f.assertUnchanged(t, before)
	})
	t.Run("BeforeEveryOtherCheck", func(t *testing.T) {
		// Sold out, budget gone and the user at the limit: a replay is still a replay.
		f.rdb.HSet(f.ctx, f.tpl(tid), "remaining", 0)
		f.rdb.Set(f.ctx, f.budget(), 0, 0)
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{1, 1, 1, 0, "C"})
		assertDeduct(t, f.deduct(t, tid, "u1", "k2"), deductResult{1, 2, 2, 0, "P"})
		f.assertUnchanged(t, before)
	})
	t.Run("NotLoaded", func(t *testing.T) {
		// The idempotency key answers even when the counters are gone.
		f.rdb.Del(f.ctx, f.budget(), f.tpl(tid))
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{1, 1, 1, 0, "C"})
		f.assertUnchanged(t, before)
	})
}

// Each refusal leaves every key exactly as it was, and no idempotency key.
func deductRefusals(t *testing.T) {
	refusals := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		user  string
		want  deductResult
	}{
		{"ErrSoldOut", func(t *testing.T, f *fixture) {
			f.seed(t, 1000, tid, tplState{remaining: 0, next: 4, total: 3, limit: 2, value: 100})
			f.rdb.HSet(f.ctx, f.users(tid), "u1", "1", "u2", "1,2")
		}, "u3", deductResult{2, 0, 0, 0, ""}},
		{"ErrSoldOutHolder", func(t *testing.T, f *fixture) {
			f.seed(t, 1000, tid, tplState{remaining: 0, next: 4, total: 3, limit: 2, value: 100})
			f.rdb.HSet(f.ctx, f.users(tid), "u1", "1", "u2", "1,2")
		}, "u1", deductResult{2, 0, 0, 0, "H"}},
		{"ErrSoldOutNoBudget", func(t *testing.T, f *fixture) {
			f.seed(t, -1, tid, tplState{remaining: 0, next: 2, total: 1, limit: 1, value: 100})
		}, "u1", deductResult{2, 0, 0, 0, ""}},
		{"ErrUserLimitReached", func(t *testing.T, f *fixture) {
			f.seed(t, 1000, tid, tplState{remaining: 5, next: 3, total: 7, limit: 2, value: 100})
			f.rdb.HSet(f.ctx, f.users(tid), "u1", "2,1")
			f.rdb.RPush(f.ctx, f.free(tid), 9)
		}, "u1", deductResult{4, 0, 0, 5, "H"}},
		{"ErrUserLimitReachedLimitOne", func(t *testing.T, f *fixture) {
			f.seed(t, -1, tid, tplState{remaining: 5, next: 2, total: 6, limit: 1, value: 100})
			f.rdb.HSet(f.ctx, f.users(tid), "u1", "1")
		}, "u1", deductResult{4, 0, 0, 5, "H"}},
		{"ErrBudgetExhausted", func(t *testing.T, f *fixture) {
			f.seed(t, 99, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
		}, "u1", deductResult{5, 0, 0, 5, ""}},
		{"ErrBudgetExhaustedZero", func(t *testing.T, f *fixture) {
			f.seed(t, 0, tid, tplState{remaining: 0, next: 6, total: 5, limit: 2, value: 1})
			f.rdb.HSet(f.ctx, f.users(tid), "u1", "1,2")
		}, "u1", deductResult{5, 0, 0, 0, "H"}},
		{"ErrNotLoadedBudget", func(t *testing.T, f *fixture) {
			f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
			f.rdb.Del(f.ctx, f.budget())
		}, "u1", deductResult{20, 0, 0, 0, ""}},
		{"ErrNotLoadedTemplate", func(t *testing.T, f *fixture) {
			f.seed(t, 1000, tid2, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
			f.rdb.HSet(f.ctx, f.users(tid), "u1", "1") // users alone do not make a loaded template
		}, "u1", deductResult{20, 0, 0, 0, ""}},
		{"ErrNotLoadedTemplateField", func(t *testing.T, f *fixture) {
			f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
			f.rdb.HDel(f.ctx, f.tpl(tid), "value")
		}, "u1", deductResult{20, 0, 0, 0, ""}},
		{"ErrNotLoadedNothing", func(t *testing.T, f *fixture) {}, "u1", deductResult{20, 0, 0, 0, ""}},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			f := newFixture(t)
			r.setup(t, f)
			before := f.snapshot(t)
			assertDeduct(t, f.deduct(t, tid, r.user, "k1"), r.want)
			f.assertUnchanged(t, before)
			if _, ok := f.get(t, f.idem("k1")); ok {
				t.Fatal("a refusal left its idempotency key")
			}
		})
	}
}

func deductErrSoldOutThenRetry(t *testing.T) {
	// A refusal deletes nothing and records no key: the same key works once stock is back.
	f := newFixture(t)
	f.seed(t, -1, tid, tplState{remaining: 0, next: 2, total: 1, limit: 1, value: 100})
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{2, 0, 0, 0, ""})
	f.rdb.HSet(f.ctx, f.tpl(tid), "remaining", 1)
	f.rdb.RPush(f.ctx, f.free(tid), 1)
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 0, ""})
}

func deductErrBadArguments(t *testing.T) {
	f := newFixture(t)
	f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
	f.rdb.HSet(f.ctx, f.users(tid), "u1", "1")
	assertDeduct(t, f.deduct(t, tid, "u1", "seen"), deductResult{0, 1, 2, 4, ""})
	keys := f.deductKeys(tid, "k1")
	cases := []struct {
		name   string
		args   []any
		detail string
	}{
		{"TemplateEmpty", []any{"", "u1", "k1", now0, ttl, attempt}, "template_id"},
		{"TemplateWord", []any{"abc", "u1", "k1", now0, ttl, attempt}, "template_id"},
		{"TemplateNegative", []any{-70, "u1", "k1", now0, ttl, attempt}, "template_id"},
		{"TemplateFraction", []any{"70.5", "u1", "k1", now0, ttl, attempt}, "template_id"},
		{"UserEmpty", []any{tid, "", "k1", now0, ttl, attempt}, "user_id"},
		{"UserPipe", []any{tid, "u|1", "k1", now0, ttl, attempt}, "user_id"},
		{"UserComma", []any{tid, "u,1", "k1", now0, ttl, attempt}, "user_id"},
		{"UserEquals", []any{tid, "u=1", "k1", now0, ttl, attempt}, "user_id"},
		{"UserSemicolon", []any{tid, "u;1", "k1", now0, ttl, attempt}, "user_id"},
		{"RequestEmpty", []any{tid, "u1", "", now0, ttl, attempt}, "request_id"},
		{"NowWord", []any{tid, "u1", "k1", "soon", ttl, attempt}, "now_or_ttl"},
		{"TTLZero", []any{tid, "u1", "k1", now0, 0, attempt}, "now_or_ttl"},
		{"TTLNegative", []any{tid, "u1", "k1", now0, -5, attempt}, "now_or_ttl"},
		{"TTLWord", []any{tid, "u1", "k1", now0, "day", attempt}, "now_or_ttl"},
		{"AttemptNewline", []any{tid, "u1", "k1", now0, ttl, "a\nb"}, "attempt"},
		{"AttemptPipe", []any{tid, "u1", "k1", now0, ttl, "a|b"}, "attempt"},
		{"Missing", []any{tid, "u1"}, "request_id"},
		{"None", []any{}, "template_id"},
		// The idempotency check comes after the arguments: a seen key with a bad user is bad arguments.
		{"SeenKeyBadUser", []any{tid, "u|1", "seen", now0, ttl, attempt}, "user_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.snapshot(t)
			k := keys
			if c.name == "SeenKeyBadUser" {
				k = f.deductKeys(tid, "seen")
			}
			assertDeduct(t, f.deductArgs(t, k, c.args...), deductResult{3, 0, 0, 0, c.detail})
			f.assertUnchanged(t, before)
		})
	}
}

func deductErrIdempotencyMismatch(t *testing.T) {
	f := newFixture(t)
	f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
	f.rdb.HSet(f.ctx, f.tpl(tid2), "remaining", 5, "next", 1, "total", 5, "limit", 2, "value", 100)
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 4, ""})
	for _, c := range []struct {
		name string
		id   int
		user string
	}{{"OtherUser", tid, "u2"}, {"OtherTemplate", tid2, "u1"}, {"OtherBoth", tid2, "u2"}, {"UserPrefix", tid, "u"}, {"UserLonger", tid, "u11"}} {
		t.Run(c.name, func(t *testing.T) {
			before := f.snapshot(t)
			assertDeduct(t, f.deduct(t, c.id, c.user, "k1"), deductResult{12, 0, 0, 0, ""})
			f.assertUnchanged(t, before)
		})
	}
	t.Run("Confirmed", func(t *testing.T) {
		f.confirm(t, "k1", member(tid, "u1", 1, 1, 100, "k1"))
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u2", "k1"), deductResult{12, 0, 0, 0, ""})
		f.assertUnchanged(t, before)
	})
}

func deductOKScriptCacheFlushed(t *testing.T) {
	f := newFixture(t)
	if f.env.Mini == nil {
		t.Skip("SCRIPT FLUSH would disturb other users of a shared Redis; covered on miniredis")
	}
	f.seed(t, -1, tid, tplState{remaining: 2, next: 1, total: 2, limit: 2, value: 100})
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 1, ""})
	if err := f.rdb.ScriptFlush(f.ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// EVALSHA answers NOSCRIPT; go-redis falls back to EVAL.
	assertDeduct(t, f.deduct(t, tid, "u1", "k2"), deductResult{0, 2, 2, 0, ""})
}

// TestDeductClaimRule: the claim rule is checked after the idempotency key
// and before everything else; a refusal takes nothing and says why, and a
// rule that is missing or unreadable is "not loaded", never open.
func TestDeductClaimRule(t *testing.T) {
	ms := func(v int64) string { return strconv.FormatInt(v, 10) }
	cases := []struct {
		name, rule string
		want       deductResult // code, at (in the slot's place), 0, remaining, holds
		why        string
	}{
		{"OKOpen", "active|" + ms(now0) + "||", deductResult{0, 1, 1, 4, ""}, ""},
		{"OKBeforeEnd", "active|0|" + ms(now0+1) + "|" + ms(now0+1), deductResult{0, 1, 1, 4, ""}, ""},
		{"OKNegativeTimes", "active|-5000|" + ms(now0+1) + "|", deductResult{0, 1, 1, 4, ""}, ""},
		{"ErrPaused", "paused|0||", deductResult{6, 0, 0, 5, ""}, "paused"},
		{"ErrPausedWithinWindow", "paused|" + ms(now0-1) + "|" + ms(now0+1) + "|", deductResult{6, 0, 0, 5, ""}, "paused"},
		{"ErrNotYet", "active|" + ms(now0+1) + "||", deductResult{6, now0 + 1, 0, 5, ""}, "not_yet"},
		{"ErrClosedAtEnd", "active|0|" + ms(now0) + "|", deductResult{6, now0, 0, 5, ""}, "closed"},
		{"ErrClosedBeforeExpired", "active|0|" + ms(now0-2) + "|" + ms(now0-1), deductResult{6, now0 - 2, 0, 5, ""}, "closed"},
		{"ErrExpired", "active|0||" + ms(now0), deductResult{6, now0, 0, 5, ""}, "expired"},
		{"ErrExpiredWindowOpen", "active|0|" + ms(now0+5000) + "|" + ms(now0-1), deductResult{6, now0 - 1, 0, 5, ""}, "expired"},
		{"ErrNotLoadedRuleMissing", "", deductResult{20, 0, 0, 0, ""}, ""},
		{"ErrNotLoadedRuleUnreadable", "active|soon||", deductResult{20, 0, 0, 0, ""}, ""},
		{"ErrNotLoadedRuleEmpty", "-", deductResult{20, 0, 0, 0, ""}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
			switch c.rule {
			case "":
				f.rdb.Del(f.ctx, f.rule(tid))
			case "-":
				f.rdb.Set(f.ctx, f.rule(tid), "", 0)
			default:
				f.rdb.Set(f.ctx, f.rule(tid), c.rule, 0)
			}
			before := f.snapshot(t)
			assertDeduct(t, f.deduct(t, tid, "u1", "k1"), c.want)
			if c.want.code == 0 {
				return
			}
			f.assertUnchanged(t, before)
			if c.why != "" {
				vals := lua.Deduct.Run(f.ctx, f.rdb, f.deductKeys(tid, "k1"), tid, "u1", "k1", now0, ttl, attempt).Val().([]any)
				assertEqual(t, "why", vals[5].(string), c.why)
			}
		})
	}
	t.Run("ErrNotClaimableHolder", func(t *testing.T) {
		// A holder's refusal says so: it may be a replay whose key Redis lost.
		f := newFixture(t)
		f.seed(t, 1000, tid, tplState{remaining: 5, next: 2, total: 6, limit: 2, value: 100})
		f.rdb.HSet(f.ctx, f.users(tid), "u1", "1")
		f.rdb.Set(f.ctx, f.rule(tid), "paused|0||", 0)
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{6, 0, 0, 5, "H"})
		assertDeduct(t, f.deduct(t, tid, "u2", "k2"), deductResult{6, 0, 0, 5, ""})
		f.assertUnchanged(t, before)
	})
	t.Run("ErrNotClaimableBeforeStockAndBudget", func(t *testing.T) {
		f := newFixture(t)
		f.seed(t, 0, tid, tplState{remaining: 0, next: 6, total: 5, limit: 2, value: 100})
		f.rdb.Set(f.ctx, f.rule(tid), "paused|0||", 0)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{6, 0, 0, 0, ""})
	})
	t.Run("DuplicateWhilePaused", func(t *testing.T) {
		// A replay is answered before the rule: the first claim was made while open.
		f := newFixture(t)
		f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 4, ""})
		f.rdb.Set(f.ctx, f.rule(tid), "paused|0||", 0)
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{1, 1, 1, 0, "P"})
		f.rdb.Del(f.ctx, f.rule(tid))
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{1, 1, 1, 0, "P"})
		f.rdb.Set(f.ctx, f.rule(tid), "paused|0||", 0)
		f.assertUnchanged(t, before)
	})
	t.Run("OKResumed", func(t *testing.T) {
		// A refusal records nothing: the same key claims once the rule opens.
		f := newFixture(t)
		f.seed(t, -1, tid, tplState{remaining: 5, next: 1, total: 5, limit: 1, value: 100})
		f.rdb.Set(f.ctx, f.rule(tid), "paused|0||", 0)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{6, 0, 0, 5, ""})
		f.rdb.Set(f.ctx, f.rule(tid), openRule, 0)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 4, ""})
	})
}

func orMissing(v string, ok bool) string {
	if !ok {
		return "<missing>"
	}
	return v
}

func TestConfirm(t *testing.T) {
	setup := func(t *testing.T) (*fixture, string) {
		t.Helper()
		f := newFixture(t)
		f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 4, ""})
		return f, member(tid, "u1", 1, 1, 100, "k1")
	}
	t.Run("OK", func(t *testing.T) {
		f, m := setup(t)
		ttlBefore := f.rdb.PTTL(f.ctx, f.idem("k1")).Val()
		assertEqual(t, "confirm", f.confirm(t, "k1", m), int64(1))
		assertEqual(t, "idem", orMissing(f.get(t, f.idem("k1"))), "C|"+m)
		if d := f.rdb.PTTL(f.ctx, f.idem("k1")).Val(); d <= 0 || d > ttlBefore {
			t.Fatalf("idem TTL after confirm = %v, want kept (%v)", d, ttlBefore)
		}
		assertEqual(t, "pending size", len(f.zset(t, f.pending())), 0)
		assertEqual(t, "recent", fmt.Sprint(f.zset(t, f.recent())), fmt.Sprint([]redis.Z{{Score: now0 + 1, Member: m}}))
		// Counters are untouched: the reservation already took them.
		assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "4", "next": "2", "total": "5", "limit": "2", "value": "100"})
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "900")
	})
	t.Run("OKTwice", func(t *testing.T) {
		f, m := setup(t)
		assertEqual(t, "confirm", f.confirm(t, "k1", m), int64(1))
		before := f.snapshot(t)
		assertEqual(t, "confirm again", f.confirm(t, "k1", m), int64(0))
		f.assertUnchanged(t, before)
	})
	t.Run("OKRedisLostIt", func(t *testing.T) {
		// The reservation is gone (flush): nothing to confirm, and no idempotency key invented.
		f, m := setup(t)
		f.rdb.Del(f.ctx, f.pending(), f.idem("k1"))
		assertEqual(t, "confirm", f.confirm(t, "k1", m), int64(0))
		if _, ok := f.get(t, f.idem("k1")); ok {
			t.Fatal("confirm created an idempotency key")
		}
	})
	t.Run("OKRecentWindowTrimmed", func(t *testing.T) {
		f, m := setup(t)
		f.rdb.ZAdd(f.ctx, f.recent(), redis.Z{Score: now0 - 120_000, Member: "old"}, redis.Z{Score: now0 - 30_000, Member: "young"})
		f.confirm(t, "k1", m)
		got := f.zset(t, f.recent())
		assertEqual(t, "recent", fmt.Sprint(got), fmt.Sprint([]redis.Z{{Score: now0 - 30_000, Member: "young"}, {Score: now0 + 1, Member: m}}))
	})
}

func TestRelease(t *testing.T) {
	// setup reserves slot 1 (k0) and slot 2 (k1) for u1; before is the state
	// between the two reservations.
	setup := func(t *testing.T) (f *fixture, m string, before snapshot) {
		t.Helper()
		f = newFixture(t)
		f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 3, value: 100})
		assertDeduct(t, f.deduct(t, tid, "u1", "k0"), deductResult{0, 1, 1, 4, ""})
		before = f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 2, 2, 3, ""})
		return f, member(tid, "u1", 2, 2, 100, "k1"), before
	}
	t.Run("OK", func(t *testing.T) {
		// Given back at once, a reservation leaves every key as it was.
		f, m, before := setup(t)
		assertEqual(t, "release", f.release(t, tid, "k1", m), int64(1))
		f.assertUnchanged(t, before)
		// The slot and the ordinal are handed out again, and the key works again.
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 2, 2, 3, ""})
	})
	t.Run("OKFromFreeList", func(t *testing.T) {
		f := newFixture(t)
		f.seed(t, 1000, tid, tplState{remaining: 3, next: 5, total: 5, limit: 3, value: 100})
		f.rdb.RPush(f.ctx, f.free(tid), 2, 3)
		before := f.snapshot(t)
		assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 2, 1, 2, ""})
		assertEqual(t, "release", f.release(t, tid, "k1", member(tid, "u1", 2, 1, 100, "k1")), int64(1))
		f.assertUnchanged(t, before)
	})
	t.Run("OKNotLastSlot", func(t *testing.T) {
		// Slot 1 is given back after slot 2 was handed out: it goes to the free list.
		f, _, _ := setup(t)
		assertEqual(t, "release", f.release(t, tid, "k0", member(tid, "u1", 1, 1, 100, "k0")), int64(1))
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "900")
		assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "4", "next": "3", "total": "5", "limit": "3", "value": "100"})
		assertEqual(t, "free", fmt.Sprint(f.list(t, f.free(tid))), "[1]")
		assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "2"})
		if _, ok := f.get(t, f.idem("k0")); ok {
			t.Fatal("release kept the idempotency key")
		}
		assertEqual(t, "pending", fmt.Sprint(f.zset(t, f.pending())), fmt.Sprint([]redis.Z{{Score: now0, Member: member(tid, "u1", 2, 2, 100, "k1")}}))
		// Free slots go first.
		assertDeduct(t, f.deduct(t, tid, "u2", "k2"), deductResult{0, 1, 1, 3, ""})
	})
	t.Run("OKLastOrdinal", func(t *testing.T) {
		f, m, _ := setup(t)
		f.release(t, tid, "k1", m)
		assertEqual(t, "release", f.release(t, tid, "k0", member(tid, "u1", 1, 1, 100, "k0")), int64(1))
		assertEqual(t, "users exists", f.rdb.Exists(f.ctx, f.users(tid)).Val(), int64(0))
		assertEqual(t, "pending exists", f.rdb.Exists(f.ctx, f.pending()).Val(), int64(0))
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "1000")
		assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "5", "next": "1", "total": "5", "limit": "3", "value": "100"})
	})
	t.Run("OKNoBudget", func(t *testing.T) {
		f := newFixture(t)
		f.seed(t, -1, tid, tplState{remaining: 5, next: 1, total: 5, limit: 3, value: 100})
		before := f.snapshot(t)
		f.deduct(t, tid, "u1", "k1")
		assertEqual(t, "release", f.release(t, tid, "k1", member(tid, "u1", 1, 1, 100, "k1")), int64(1))
		f.assertUnchanged(t, before)
	})
	t.Run("OKIdempotent", func(t *testing.T) {
		f, m, _ := setup(t)
		f.release(t, tid, "k1", m)
		before := f.snapshot(t)
		assertEqual(t, "release again", f.release(t, tid, "k1", m), int64(0))
		f.assertUnchanged(t, before)
	})
	t.Run("OKConfirmedIsKept", func(t *testing.T) {
		f, m, _ := setup(t)
		f.confirm(t, "k1", m)
		before := f.snapshot(t)
		assertEqual(t, "release", f.release(t, tid, "k1", m), int64(0))
		f.assertUnchanged(t, before)
	})
	t.Run("OKUnknownMember", func(t *testing.T) {
		f, _, _ := setup(t)
		before := f.snapshot(t)
		assertEqual(t, "release", f.release(t, tid, "k1", member(tid, "u1", 3, 2, 100, "k1")), int64(0))
		f.assertUnchanged(t, before)
	})
	t.Run("OKKeepsAnotherRequestsKey", func(t *testing.T) {
		// The idempotency key now belongs to a later reservation of the same request:
		// giving back an older one must not delete it.
		f, m, _ := setup(t)
		f.rdb.Set(f.ctx, f.idem("k1"), "C|"+member(tid, "u1", 4, 2, 100, "k1"), 0)
		assertEqual(t, "release", f.release(t, tid, "k1", m), int64(1))
		assertEqual(t, "idem", orMissing(f.get(t, f.idem("k1"))), "C|"+member(tid, "u1", 4, 2, 100, "k1"))
	})
	t.Run("OKNotLoaded", func(t *testing.T) {
		// The counters were lost and not reloaded yet: the loader will read the
		// slot as free from the database, so only the key and the pending entry go.
		f, m, _ := setup(t)
		f.rdb.Del(f.ctx, f.tpl(tid), f.budget(), f.users(tid))
		assertEqual(t, "release", f.release(t, tid, "k1", m), int64(1))
		for _, k := range []string{f.tpl(tid), f.free(tid), f.budget(), f.users(tid), f.idem("k1")} {
			assertEqual(t, "exists "+k, f.rdb.Exists(f.ctx, k).Val(), int64(0))
		}
		assertEqual(t, "pending size", len(f.zset(t, f.pending())), 1)
	})
}

// loadTemplate is one template's database view for coupon_load.lua.
type loadTemplate struct {
	id                  int
	total, limit, value int64
	next                int64
	free, users         string
	rule                string // openRule when empty
}

func (f *fixture) load(t *testing.T, mode string, budget int64, ts ...loadTemplate) []int64 {
	t.Helper()
	keys := []string{f.budget(), f.pending(), f.recent()}
	args := []any{mode, budget}
	for _, lt := range ts {
		rule := lt.rule
		if rule == "" {
			rule = openRule
		}
		keys = append(keys, f.tpl(lt.id), f.free(lt.id), f.users(lt.id), f.rule(lt.id))
		args = append(args, lt.id, lt.total, lt.limit, lt.value, lt.next, lt.free, lt.users, rule)
	}
	res, err := lua.Load.Run(f.ctx, f.rdb, keys, args...).Int64Slice()
	if err != nil {
		t.Fatalf("coupon_load.lua: %v", err)
	}
	return res
}

// The database the load tests read: template 70 has slots 1, 2, 4, 6 held
// (3 and 5 free, next 7) by u1 (1, 2), u2 (1), u3 (1); template 71 has none.
var (
	db70 = loadTemplate{id: tid, total: 10, limit: 2, value: 100, next: 7, free: "3,5", users: "u1=1,2;u2=1;u3=1"}
	db71 = loadTemplate{id: tid2, total: 3, limit: 1, value: 250, next: 1}
)

func TestLoad(t *testing.T) {
	t.Run("OKMissing", loadOKMissing)
	t.Run("OKMissingNoBudget", loadOKMissingNoBudget)
	t.Run("OKMissingKeepsLoaded", loadOKMissingKeepsLoaded)
	t.Run("OKMissingOnlyWhatIsMissing", loadOKMissingOnlyWhatIsMissing)
	t.Run("OKForce", loadOKForce)
	t.Run("OKPendingKept", loadOKPendingKept)
	t.Run("OKBudgetNeverUnlimited", loadOKBudgetNeverUnlimited)
	t.Run("OKRuleOnlyWhenMissing", loadOKRuleOnlyWhenMissing)
	t.Run("OKLargeTemplate", loadOKLargeTemplate)
}

func loadOKMissing(t *testing.T) {
	f := newFixture(t)
	assertEqual(t, "load", fmt.Sprint(f.load(t, "missing", 5000, db70, db71)), "[2 1]")
	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "5000")
	assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "6", "next": "7", "total": "10", "limit": "2", "value": "100"})
	assertEqual(t, "free", fmt.Sprint(f.list(t, f.free(tid))), "[3 5]")
	assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "1,2", "u2": "1", "u3": "1"})
	assertHash(t, f.hash(t, f.tpl(tid2)), map[string]string{"remaining": "3", "next": "1", "total": "3", "limit": "1", "value": "250"})
	assertEqual(t, "users 71 exists", f.rdb.Exists(f.ctx, f.users(tid2), f.free(tid2)).Val(), int64(0))
	// Loaded counters serve claims: free slots first.
	assertDeduct(t, f.deduct(t, tid, "u2", "k1"), deductResult{0, 3, 2, 5, ""})
}

func loadOKMissingNoBudget(t *testing.T) {
	f := newFixture(t)
	f.load(t, "missing", -1, db71)
	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "-1")
}

func loadOKMissingKeepsLoaded(t *testing.T) {
	f := newFixture(t)
	f.load(t, "missing", 5000, db70, db71)
	f.deduct(t, tid, "u9", "k1")
	f.rdb.HSet(f.ctx, f.tpl(tid2), "remaining", 1) // drift: left alone in missing mode
	before := f.snapshot(t)
	assertEqual(t, "load", fmt.Sprint(f.load(t, "missing", 5000, db70, db71)), "[0 0]")
	f.assertUnchanged(t, before)
}

func loadOKMissingOnlyWhatIsMissing(t *testing.T) {
	f := newFixture(t)
	f.load(t, "missing", 5000, db70, db71)
	f.rdb.HSet(f.ctx, f.tpl(tid), "remaining", 1) // drift on a loaded template stays
	f.rdb.Del(f.ctx, f.tpl(tid2))
	assertEqual(t, "load", fmt.Sprint(f.load(t, "missing", 5000, db70, db71)), "[1 0]")
	assertEqual(t, "remaining 70", f.hash(t, f.tpl(tid))["remaining"], "1")
	assertEqual(t, "remaining 71", f.hash(t, f.tpl(tid2))["remaining"], "3")
}

func loadOKForce(t *testing.T) {
	f := newFixture(t)
	f.load(t, "missing", 5000, db70, db71)
	// Drift everywhere.
	f.rdb.Set(f.ctx, f.budget(), 1, 0)
	f.rdb.HSet(f.ctx, f.tpl(tid), "remaining", 9, "next", 2)
	f.rdb.RPush(f.ctx, f.free(tid), 1, 2)
	f.rdb.HSet(f.ctx, f.users(tid), "u1", "1", "u7", "1")
	assertEqual(t, "load", fmt.Sprint(f.load(t, "force", 5000, db70, db71)), "[2 1]")
	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "5000")
	assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "6", "next": "7", "total": "10", "limit": "2", "value": "100"})
	assertEqual(t, "free", fmt.Sprint(f.list(t, f.free(tid))), "[3 5]")
	assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "1,2", "u2": "1", "u3": "1"})
}

func loadOKPendingKept(t *testing.T) {
	f := newFixture(t)
	f.load(t, "missing", 5000, db70, db71)
	// Three reservations in flight: free slot 3 (u2's 2nd), fresh slot 7 (u4),
	// and on template 71 slot 1 (u1).
	assertDeduct(t, f.deduct(t, tid, "u2", "k1"), deductResult{0, 3, 2, 5, ""})
	assertDeduct(t, f.deduct(t, tid, "u4", "k2"), deductResult{0, 5, 1, 4, ""})
	assertDeduct(t, f.deduct(t, tid, "u5", "k3"), deductResult{0, 7, 1, 3, ""})
	assertDeduct(t, f.deduct(t, tid2, "u1", "k4"), deductResult{0, 1, 1, 2, ""})
	assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "4450")
	for _, mode := range []string{"force", "missing"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "missing" {
				f.rdb.Del(f.ctx, f.budget(), f.tpl(tid), f.free(tid), f.users(tid), f.tpl(tid2), f.free(tid2), f.users(tid2))
			}
			// The database does not have the four rows yet.
			assertEqual(t, "load", fmt.Sprint(f.load(t, mode, 5000, db70, db71)), "[2 1]")
			assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "4450")
			assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "3", "next": "8", "total": "10", "limit": "2", "value": "100"})
			assertEqual(t, "free", f.rdb.Exists(f.ctx, f.free(tid)).Val(), int64(0))
			assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "1,2", "u2": "1,2", "u3": "1", "u4": "1", "u5": "1"})
			assertHash(t, f.hash(t, f.tpl(tid2)), map[string]string{"remaining": "2", "next": "2", "total": "3", "limit": "1", "value": "250"})
			assertHash(t, f.hash(t, f.users(tid2)), map[string]string{"u1": "1"})
		})
	}
	t.Run("InDatabase", func(t *testing.T) {
		// The rows of slots 3 and 7 are committed (still pending): counted once.
		db := db70
		db.next, db.free, db.users = 8, "5", "u1=1,2;u2=1,2;u3=1;u5=1"
		f.load(t, "force", 5000-200, db, db71)
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "4450")
		assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "3", "next": "8", "total": "10", "limit": "2", "value": "100"})
		assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "1,2", "u2": "1,2", "u3": "1", "u4": "1", "u5": "1"})
	})
	t.Run("Recent", func(t *testing.T) {
		// Slot 7 confirmed after the loader read the database: still taken.
		assertEqual(t, "confirm", f.confirm(t, "k3", member(tid, "u5", 7, 1, 100, "k3")), int64(1))
		f.load(t, "force", 5000, db70, db71)
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "4450")
		assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "3", "next": "8", "total": "10", "limit": "2", "value": "100"})
		assertEqual(t, "u5", f.hash(t, f.users(tid))["u5"], "1")
	})
}

func loadOKBudgetNeverUnlimited(t *testing.T) {
	// Reservations in flight worth more than the budget the database has
	// left (after Redis lost writes) leave a budget of 0, never -1, which
	// would read as "no budget".
	for _, left := range []int64{199, 200, 250, 99, 0} {
		t.Run(strconv.FormatInt(left, 10), func(t *testing.T) {
			f := newFixture(t)
			f.seed(t, 1000, tid, tplState{remaining: 5, next: 1, total: 5, limit: 2, value: 100})
			f.deduct(t, tid, "u1", "k1")
			f.deduct(t, tid, "u2", "k2")
			f.rdb.Del(f.ctx, f.budget())
			f.load(t, "missing", left, loadTemplate{id: tid, total: 5, limit: 2, value: 100, next: 1})
			want := max(left-200, 0)
			assertEqual(t, "budget", orMissing(f.get(t, f.budget())), strconv.FormatInt(want, 10))
			assertDeduct(t, f.deduct(t, tid, "u3", "k3"), deductResult{5, 0, 0, 3, ""})
		})
	}
}

func loadOKRuleOnlyWhenMissing(t *testing.T) {
	// The service writes a changed rule before it answers the change; a
	// load may have read the database before it, so it never overwrites
	// a rule, in either mode; it fills a missing or unreadable one.
	for _, mode := range []string{"missing", "force"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			paused := db70
			paused.rule = "paused|0||"
			f.load(t, mode, 5000, paused, db71)
			assertEqual(t, "rule 70", orMissing(f.get(t, f.rule(tid))), "paused|0||")
			assertEqual(t, "rule 71", orMissing(f.get(t, f.rule(tid2))), openRule)
			f.rdb.Set(f.ctx, f.rule(tid), "active|5||", 0) // written by a change after the read
			f.rdb.Set(f.ctx, f.rule(tid2), "active|x||", 0)
			f.load(t, mode, 5000, paused, db71)
			assertEqual(t, "rule 70 kept", orMissing(f.get(t, f.rule(tid))), "active|5||")
			assertEqual(t, "rule 71 repaired", orMissing(f.get(t, f.rule(tid2))), openRule)
			// A rule lost alone (counters kept) is filled in missing mode.
			f.rdb.Del(f.ctx, f.rule(tid))
			assertEqual(t, "load", fmt.Sprint(f.load(t, "missing", 5000, paused, db71)), "[0 0]")
			assertEqual(t, "rule 70 filled", orMissing(f.get(t, f.rule(tid))), "paused|0||")
			assertDeduct(t, f.deduct(t, tid, "u9", "k1"), deductResult{6, 0, 0, 6, ""})
		})
	}
}

func loadOKLargeTemplate(t *testing.T) {
	// More free slots and users than one RPUSH/HSET takes in this script's batches.
	f := newFixture(t)
	var free, users []string
	for i := 1; i <= 2500; i++ {
		free = append(free, strconv.Itoa(2*i))
		users = append(users, fmt.Sprintf("u%d=1", i))
	}
	assertEqual(t, "load", fmt.Sprint(f.load(t, "missing", -1, loadTemplate{id: tid, total: 10000, limit: 1, value: 1, next: 5002,
		free: strings.Join(free, ","), users: strings.Join(users, ";")})), "[1 1]")
	assertEqual(t, "free len", f.rdb.LLen(f.ctx, f.free(tid)).Val(), int64(2500))
	assertEqual(t, "users len", f.rdb.HLen(f.ctx, f.users(tid)).Val(), int64(2500))
	assertEqual(t, "remaining", f.hash(t, f.tpl(tid))["remaining"], strconv.Itoa(10000-5001+2500))
}

func (f *fixture) returnCoupon(t *testing.T, coupon int, user string, slot, ordinal, value int64) int64 {
	t.Helper()
	n, err := lua.Return.Run(f.ctx, f.rdb, []string{f.budget(), f.tpl(tid), f.free(tid), f.users(tid), f.ret(coupon)},
		user, slot, ordinal, value, 600).Int64()
	if err != nil {
		t.Fatalf("coupon_return.lua: %v", err)
	}
	return n
}

func TestReturn(t *testing.T) {
	setup := func(t *testing.T) *fixture {
		t.Helper()
		f := newFixture(t)
		f.load(t, "missing", 700, loadTemplate{id: tid, total: 5, limit: 2, value: 100, next: 4, free: "2", users: "u1=1,2"})
		return f
	}
	t.Run("OK", func(t *testing.T) {
		f := setup(t)
		assertEqual(t, "return", f.returnCoupon(t, 11, "u1", 3, 1, 100), int64(lua.ReturnDone))
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "800")
		assertEqual(t, "remaining", f.hash(t, f.tpl(tid))["remaining"], "4")
		assertEqual(t, "free", fmt.Sprint(f.list(t, f.free(tid))), "[3 2]")
		assertHash(t, f.hash(t, f.users(tid)), map[string]string{"u1": "2"})
		if d := f.rdb.TTL(f.ctx, f.ret(11)).Val(); d <= 0 || d > 600*time.Second {
			t.Fatalf("return key TTL = %v", d)
		}
	})
	t.Run("OKIdempotent", func(t *testing.T) {
		f := setup(t)
		f.returnCoupon(t, 11, "u1", 3, 1, 100)
		before := f.snapshot(t)
		assertEqual(t, "return again", f.returnCoupon(t, 11, "u1", 3, 1, 100), int64(lua.ReturnDuplicate))
		f.assertUnchanged(t, before)
	})
	t.Run("OKLastOrdinal", func(t *testing.T) {
		f := setup(t)
		f.returnCoupon(t, 11, "u1", 3, 1, 100)
		f.returnCoupon(t, 12, "u1", 1, 2, 100)
		assertEqual(t, "users exists", f.rdb.Exists(f.ctx, f.users(tid)).Val(), int64(0))
	})
	t.Run("OKAlreadyFree", func(t *testing.T) {
		for name, slot := range map[string]int64{"InFreeList": 2, "BeyondNext": 4} {
			t.Run(name, func(t *testing.T) {
				f := setup(t)
				before := f.snapshot(t)
				assertEqual(t, "return", f.returnCoupon(t, 11, "u1", slot, 1, 100), int64(lua.ReturnAlreadyFree))
				delete(before, f.ret(11))
				after := f.snapshot(t)
				for k, v := range before {
					if after[k].value != v.value {
						t.Fatalf("key %s changed: %s -> %s", k, v.value, after[k].value)
					}
				}
				assertEqual(t, "return key set", f.rdb.Exists(f.ctx, f.ret(11)).Val(), int64(1))
				assertEqual(t, "return again", f.returnCoupon(t, 11, "u1", slot, 1, 100), int64(lua.ReturnDuplicate))
			})
		}
	})
	t.Run("OKNotLoaded", func(t *testing.T) {
		f := newFixture(t)
		assertEqual(t, "return", f.returnCoupon(t, 11, "u1", 3, 1, 100), int64(lua.ReturnNotLoaded))
		keys := f.env.Keys(t)
		assertEqual(t, "keys", fmt.Sprint(keys), fmt.Sprint([]string{f.ret(11)}))
	})
	t.Run("OKNoBudget", func(t *testing.T) {
		f := newFixture(t)
		f.load(t, "missing", -1, loadTemplate{id: tid, total: 5, limit: 2, value: 100, next: 4, free: "2", users: "u1=1,2"})
		f.returnCoupon(t, 11, "u1", 3, 1, 100)
		assertEqual(t, "budget", orMissing(f.get(t, f.budget())), "-1")
	})
}

func TestAddStock(t *testing.T) {
	addStock := func(t *testing.T, f *fixture, delta, total int64) int64 {
		t.Helper()
		n, err := lua.AddStock.Run(f.ctx, f.rdb, []string{f.tpl(tid)}, delta, total).Int64()
		if err != nil {
			t.Fatalf("coupon_stock.lua: %v", err)
		}
		return n
	}
	t.Run("OK", func(t *testing.T) {
		f := newFixture(t)
		f.seed(t, -1, tid, tplState{remaining: 2, next: 4, total: 5, limit: 1, value: 100})
		assertEqual(t, "add", addStock(t, f, 10, 15), int64(1))
		assertHash(t, f.hash(t, f.tpl(tid)), map[string]string{"remaining": "12", "next": "4", "total": "15", "limit": "1", "value": "100"})
	})
	t.Run("OKRetry", func(t *testing.T) {
		f := newFixture(t)
		f.seed(t, -1, tid, tplState{remaining: 2, next: 4, total: 5, limit: 1, value: 100})
		addStock(t, f, 10, 15)
		before := f.snapshot(t)
		assertEqual(t, "add again", addStock(t, f, 10, 15), int64(2))
		f.assertUnchanged(t, before)
	})
	t.Run("OKNotLoaded", func(t *testing.T) {
		f := newFixture(t)
		assertEqual(t, "add", addStock(t, f, 10, 15), int64(0))
		assertEqual(t, "keys", len(f.env.Keys(t)), 0)
	})
}

// TestScriptsTouchOnlyTheirKeys runs every script once with all keys of one
// campaign and checks that no key outside the campaign's hash tag appears.
func TestScriptsTouchOnlyTheirKeys(t *testing.T) {
	f := newFixture(t)
	f.load(t, "missing", 1000, loadTemplate{id: tid, total: 5, limit: 2, value: 100, next: 1})
	f.deduct(t, tid, "u1", "k1")
	f.deduct(t, tid, "u1", "k2")
	f.confirm(t, "k1", member(tid, "u1", 1, 1, 100, "k1"))
	f.release(t, tid, "k2", member(tid, "u1", 2, 2, 100, "k2"))
	f.returnCoupon(t, 1, "u1", 1, 1, 100)
	lua.AddStock.Run(f.ctx, f.rdb, []string{f.tpl(tid)}, 1, 6)
	keys := f.env.Keys(t)
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, f.c) {
			t.Errorf("key %s is outside the campaign %s", k, f.c)
		}
	}
	want := []string{f.budget(), f.idem("k1"), f.recent(), f.ret(1), f.tpl(tid), f.free(tid), f.rule(tid)}
	sort.Strings(want)
	if !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
}

// TestHoldersGeneration: the template hash's "gen" goes up by one with every
// reservation and with nothing else the claim path does (refusals, replays,
// confirm, release); sold_out answers it; a rebuild makes it larger than
// before, and at least the server's clock in microseconds when the hash was
// lost (see docs/soldout.md).
func TestHoldersGeneration(t *testing.T) {
	f := newFixture(t)
	gen := func() string { return f.rdb.HGet(f.ctx, f.tpl(tid), "gen").Val() }
	f.seed(t, -1, tid, tplState{remaining: 2, next: 1, total: 2, limit: 1, value: 100})
	assertEqual(t, "gen at first", gen(), "")
	assertDeduct(t, f.deduct(t, tid, "u1", "k1"), deductResult{0, 1, 1, 1, ""})
	assertEqual(t, "gen after a reservation", gen(), "1")
	f.deduct(t, tid, "u1", "k1")  // replay
	f.deduct(t, tid, "u1", "k1b") // user limit
	assertEqual(t, "gen after refusals", gen(), "1")
	r2 := f.deduct(t, tid, "u2", "k2")
	assertEqual(t, "gen after a second reservation", gen(), "2")
	vals, err := lua.Deduct.Run(f.ctx, f.rdb, f.deductKeys(tid, "k3"), tid, "u3", "k3", now0, ttl, attempt).Slice()
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 6 || vals[0] != int64(lua.DeductSoldOut) || vals[5] != "2" {
		t.Fatalf("sold_out answered %v, want the generation 2 last", vals)
	}
	assertEqual(t, "release", f.release(t, tid, "k2", member(tid, "u2", r2.slot, 1, 100, "k2")), int64(1))
	assertEqual(t, "gen after a release", gen(), "2")

	// A forced rebuild over the hash: larger than before.
	start := time.Now()
	f.load(t, "force", -1, loadTemplate{id: tid, total: 2, limit: 1, value: 100, next: 2, users: "u1=1"})
	after, err := strconv.ParseInt(gen(), 10, 64)
	if err != nil || after <= 2 {
		t.Fatalf("gen after a rebuild %q, want a number above 2", gen())
	}
	// The hash lost and rebuilt: the server's clock in microseconds.
	f.rdb.Del(f.ctx, f.tpl(tid))
	f.load(t, "missing", -1, loadTemplate{id: tid, total: 2, limit: 1, value: 100, next: 2, users: "u1=1"})
	lost, err := strconv.ParseInt(gen(), 10, 64)
	if err != nil || lost < start.Add(-time.Minute).UnixMicro() {
		t.Fatalf("gen after the hash was lost %q, want at least the clock in µs (%d)", gen(), start.UnixMicro())
	}
}
