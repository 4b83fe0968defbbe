package services_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/testenv"

	"github.com/redis/go-redis/v9"
)

// claimFixture is the shared fixture with its clock stopped at the start,
// and the claim flow's own helpers and assertions.
type claimFixture struct{ *testenv.Fixture }

func newClaimFixture(t *testing.T, cfg services.Config) *claimFixture {
	t.Helper()
	return &claimFixture{testenv.NewFixtureAt(t, cfg, time.Now().UTC().Truncate(time.Second))}
}

// template creates a fixed-value template valid for 30 days from the claim;
// edit may change any field before it is created.
func (f *claimFixture) template(cid, stock, limit, value int64, edit ...func(*models.Template)) *models.Template {
	f.T.Helper()
	return f.Template(models.Template{CampaignID: cid, Kind: models.KindFixed, FaceValueCents: value,
		TotalStock: stock, PerUserLimit: limit}, edit...)
}

// assertClaimCode checks that err is a domain error with code (and, for
// invalid_request, names field).
func assertClaimCode(t *testing.T, err error, code models.Code, field ...string) {
	t.Helper()
	if got := models.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %d), want %s (%d)", err, got, code.Word(), code)
	}
	if len(field) > 0 {
		e := err.(*models.Error)
		if e.Field != field[0] {
			t.Fatalf("error names field %q, want %q", e.Field, field[0])
		}
	}
}

func (f *claimFixture) couponCount() int {
	f.T.Helper()
	return len(f.Coupons())
}

// redisState is every key of the test: type, value and whether it expires.
type redisState map[string]string

func (f *claimFixture) redisState() redisState {
	f.T.Helper()
	rdb := f.Env.Backends.Redis
	s := redisState{}
	for _, k := range f.Env.Keys(f.T) {
		typ := rdb.Type(f.Ctx, k).Val()
		var v any
		var err error
		switch typ {
		case "string":
			v, err = rdb.Get(f.Ctx, k).Result()
		case "hash":
			var h map[string]string
			h, err = rdb.HGetAll(f.Ctx, k).Result()
			// The holders' generation of a template hash counts
			// reservations, also those given back (see TestSoldOutMemory
			// and lua's TestHoldersGeneration); the counters are compared.
			delete(h, "gen")
			v = h
		case "list":
			v, err = rdb.LRange(f.Ctx, k, 0, -1).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(f.Ctx, k, 0, -1).Result()
		case "none":
			continue // expired or deleted since the scan
		default:
			f.T.Fatalf("key %s has type %s", k, typ)
		}
		if err != nil && err != redis.Nil {
			f.T.Fatalf("read %s: %v", k, err)
		}
		s[k] = fmt.Sprintf("%s %v expires=%v", typ, v, rdb.PTTL(f.Ctx, k).Val() > 0)
	}
	return s
}

func (f *claimFixture) assertRedisUnchanged(before redisState) {
	f.T.Helper()
	after := f.redisState()
	for k, b := range before {
		if a, ok := after[k]; !ok {
			f.T.Errorf("Redis key %s was deleted (was %s)", k, b)
		} else if a != b {
			f.T.Errorf("Redis key %s changed:\n before %s\n after  %s", k, b, a)
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			f.T.Errorf("Redis key %s was created: %s", k, a)
		}
	}
}

// parseOrdinals reads a users-hash value "2,1" as sorted ordinals.
func parseOrdinals(s string) []int64 {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// assertAgree checks docs/guarantees.md at a quiet moment: for each
// template, Redis remaining + live coupons == total_stock, each user's Redis
// ordinals are their live coupons' ordinals, no slot or ordinal out of range,
// nothing pending, and the campaign's Redis budget is its budget less the
// value of its live coupons.
func (f *claimFixture) assertAgree(c *models.Campaign, ts ...*models.Template) {
	f.T.Helper()
	rdb := f.Env.Backends.Redis
	if n := rdb.ZCard(f.Ctx, f.Key(c.ID, "pending")).Val(); n != 0 {
		f.T.Errorf("campaign %d: %d reservations still pending", c.ID, n)
	}
	var live []models.Coupon
	if err := f.Env.Backends.DB.Where("campaign_id = ? AND slot IS NOT NULL", c.ID).Find(&live).Error; err != nil {
		f.T.Fatal(err)
	}
	var spent int64
	for _, cp := range live {
		spent += cp.ValueCents
	}
	wantBudget := "-1"
	if c.BudgetCents > 0 {
		wantBudget = strconv.FormatInt(c.BudgetCents-spent, 10)
		if spent > c.BudgetCents {
			f.T.Errorf("campaign %d: %d cents issued over a budget of %d", c.ID, spent, c.BudgetCents)
		}
	}
	if got := rdb.Get(f.Ctx, f.Key(c.ID, "budget")).Val(); got != wantBudget {
		f.T.Errorf("campaign %d: Redis budget %q, want %s", c.ID, got, wantBudget)
	}
	for _, tp := range ts {
		tp, err := f.Core.GetTemplate(f.Ctx, tp.ID)
		if err != nil {
			f.T.Fatal(err)
		}
		dbUsers := map[string][]int64{}
		slots := map[int64]bool{}
		n := int64(0)
		for _, cp := range live {
			if cp.TemplateID != tp.ID {
				continue
			}
			n++
			if *cp.Slot < 1 || *cp.Slot > tp.TotalStock || slots[*cp.Slot] {
				f.T.Errorf("template %d: coupon %d holds slot %d (stock %d)", tp.ID, cp.ID, *cp.Slot, tp.TotalStock)
			}
			slots[*cp.Slot] = true
			if cp.UserOrdinal == nil && cp.UserID == "" {
				continue // an anonymous claim or bearer coupon: stock, no ordinal
			}
			if cp.UserOrdinal == nil || *cp.UserOrdinal < 1 || *cp.UserOrdinal > tp.PerUserLimit {
				f.T.Errorf("template %d: coupon %d holds ordinal %v (limit %d)", tp.ID, cp.ID, cp.UserOrdinal, tp.PerUserLimit)
				continue
			}
			dbUsers[cp.UserID] = append(dbUsers[cp.UserID], *cp.UserOrdinal)
		}
		if n > tp.TotalStock {
			f.T.Errorf("template %d: %d live coupons over a stock of %d", tp.ID, n, tp.TotalStock)
		}
		remaining, err := rdb.HGet(f.Ctx, f.TemplateKey(c.ID, tp.ID), "remaining").Int64()
		if err != nil {
			f.T.Errorf("template %d: Redis remaining: %v", tp.ID, err)
		} else if remaining+n != tp.TotalStock {
			f.T.Errorf("template %d: Redis remaining %d + %d live coupons != total stock %d", tp.ID, remaining, n, tp.TotalStock)
		}
		redisUsers, err := rdb.HGetAll(f.Ctx, f.TemplateKey(c.ID, tp.ID)+":users").Result()
		if err != nil {
			f.T.Fatal(err)
		}
		for u, ords := range dbUsers {
			slices.Sort(ords)
			if int64(len(ords)) > tp.PerUserLimit {
				f.T.Errorf("template %d: user %s holds %d coupons over a limit of %d", tp.ID, u, len(ords), tp.PerUserLimit)
			}
			if got := parseOrdinals(redisUsers[u]); !slices.Equal(got, ords) {
				f.T.Errorf("template %d: user %s: Redis ordinals %v, database %v", tp.ID, u, got, ords)
			}
		}
		for u, v := range redisUsers {
			if _, ok := dbUsers[u]; !ok {
				f.T.Errorf("template %d: user %s has ordinals %q in Redis and no live coupon", tp.ID, u, v)
			}
		}
	}
}

func TestClaim(t *testing.T) {
	t.Run("OK", claimOK)
	t.Run("OKSlotsAndOrdinals", claimOKSlotsAndOrdinals)
	t.Run("OKAbsoluteValidity", claimOKAbsoluteValidity)
	t.Run("OKAfterAddStock", claimOKAfterAddStock)
	t.Run("OKCodeCollision", claimOKCodeCollision)
	t.Run("Duplicate", claimDuplicate)
	t.Run("DuplicateAfterRedisLost", claimDuplicateAfterRedisLost)
	t.Run("DuplicateWhileNotClaimable", claimDuplicateWhileNotClaimable)
	claimRefusals(t)
	t.Run("ErrNotClaimable", claimErrNotClaimable)
	t.Run("ErrNotFound", claimErrNotFound)
	t.Run("ErrInvalidRequest", claimErrInvalidRequest)
	t.Run("OKLongestKeyAndUser", claimOKLongestKeyAndUser)
}

func claimOK(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(10_000)
	tp := f.template(c.ID, 3, 2, 500)
	res := f.MustClaim(tp.ID, "u1", "k1")
	cp := res.Coupon
	if res.Remaining != 2 {
		t.Errorf("remaining = %d, want 2", res.Remaining)
	}
	if code, err := models.ParseCouponCode("code", cp.Code); err != nil || code != cp.Code {
		t.Errorf("code %q does not parse: %v", cp.Code, err)
	}
	now := f.Clock.Now()
	// Valid 30 days: to the end of the 30th day after the claim's (UTC here).
	y, m, d := now.Date()
	want := models.Coupon{ID: cp.ID, Code: cp.Code, TemplateID: tp.ID, CampaignID: c.ID, UserID: "u1",
		Status: models.CouponIssued, ValueCents: 500, ClaimedAt: now, ValidFrom: now,
		ValidUntil: time.Date(y, m, d+31, 0, 0, 0, 0, time.UTC)}
	assertCoupon(t, cp, &want, 1, 1)
	rows := f.Coupons()
	if len(rows) != 1 {
		t.Fatalf("%d coupon rows, want 1", len(rows))
	}
	assertCoupon(t, &rows[0], &want, 1, 1)
	if rows[0].RequestID != "k1" {
		t.Errorf("request_id = %q, want k1", rows[0].RequestID)
	}
	f.assertAgree(c, tp)
	member := fmt.Sprintf("%d|u1|1|1|500|k1", tp.ID)
	if got := f.Env.Backends.Redis.Get(f.Ctx, f.Key(c.ID, "idem:k1")).Val(); got != "C|"+member {
		t.Errorf("idempotency key = %q, want confirmed C|%s", got, member)
	}
}

func claimOKSlotsAndOrdinals(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 5, 3, 100)
	for i, want := range []struct {
		user           string
		slot, ordinal  int64
		remainingAfter int64
	}{{"u1", 1, 1, 4}, {"u2", 2, 1, 3}, {"u1", 3, 2, 2}, {"u1", 4, 3, 1}, {"u3", 5, 1, 0}} {
		res := f.MustClaim(tp.ID, want.user, fmt.Sprintf("k%d", i))
		if *res.Coupon.Slot != want.slot || *res.Coupon.UserOrdinal != want.ordinal || res.Remaining != want.remainingAfter {
			t.Errorf("claim %d: slot %d ordinal %d remaining %d, want %d %d %d", i, *res.Coupon.Slot,
				*res.Coupon.UserOrdinal, res.Remaining, want.slot, want.ordinal, want.remainingAfter)
		}
	}
	f.assertAgree(c, tp)
}

func claimOKAbsoluteValidity(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	from, until := f.Clock.Now().Add(24*time.Hour), f.Clock.Now().Add(48*time.Hour)
	tp := f.template(c.ID, 5, 1, 0, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents, tp.PercentOff, tp.MaxDiscountCents = models.KindPercent, 0, 20, 700
		tp.ValidDays, tp.ValidFrom, tp.ValidUntil = 0, &from, &until
	})
	cp := f.MustClaim(tp.ID, "u1", "k1").Coupon
	if !cp.ValidFrom.Equal(from) || !cp.ValidUntil.Equal(until) || cp.ValueCents != 700 {
		t.Errorf("coupon valid %v..%v value %d, want %v..%v value 700", cp.ValidFrom, cp.ValidUntil, cp.ValueCents, from, until)
	}
}

func claimOKAfterAddStock(t *testing.T) {
	// The template cached by the claim path still says stock 1: the slot
	// beyond it must be checked against the database, not refused.
	f := newClaimFixture(t, services.Config{CoreConfig: services.CoreConfig{TemplateCacheTTL: time.Hour}})
	c := f.Campaign(0)
	tp := f.template(c.ID, 1, 5, 100)
	f.MustClaim(tp.ID, "u1", "k1")
	_, err := f.Claim(tp.ID, "u1", "k2")
	assertClaimCode(t, err, models.CodeSoldOut)
	other := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}}) // another instance adds the stock
	if _, err := other.AddStock(f.Ctx, "test", tp.ID, 2, "more"); err != nil {
		t.Fatal(err)
	}
	// This instance saw the sell-out: it learns of stock added elsewhere
	// within a second (docs/soldout.md).
	f.Clock.Advance(time.Second)
	for i, slot := range []int64{2, 3} {
		if got := *f.MustClaim(tp.ID, "u1", fmt.Sprintf("k%d", i+3)).Coupon.Slot; got != slot {
			t.Errorf("slot %d, want %d", got, slot)
		}
	}
	_, err = f.Claim(tp.ID, "u1", "k9")
	assertClaimCode(t, err, models.CodeSoldOut)
	f.assertAgree(c, tp)
}

func claimOKCodeCollision(t *testing.T) {
	// Two claims draw the same code: the second draws again.
	var mu sync.Mutex
	codes := []string{models.NewCouponCode()}
	codes = append(codes, codes[0], codes[0], models.NewCouponCode())
	f := newClaimFixture(t, services.Config{CoreConfig: services.CoreConfig{NewCode: func() string {
		mu.Lock()
		defer mu.Unlock()
		c := codes[0]
		codes = codes[1:]
		return c
	}}})
	c := f.Campaign(0)
	tp := f.template(c.ID, 5, 5, 100)
	first := f.MustClaim(tp.ID, "u1", "k1").Coupon
	second := f.MustClaim(tp.ID, "u1", "k2").Coupon
	if first.Code == second.Code || len(codes) != 0 {
		t.Fatalf("codes %s and %s, %d left; want distinct codes after two collisions", first.Code, second.Code, len(codes))
	}
	f.assertAgree(c, tp)
}

func claimDuplicate(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(1000)
	tp := f.template(c.ID, 3, 2, 100)
	first := f.MustClaim(tp.ID, "u1", "k1")
	before := f.redisState()
	for range 3 {
		res, err := f.Claim(tp.ID, "u1", "k1")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Duplicate || res.Coupon.ID != first.Coupon.ID || res.Coupon.Code != first.Coupon.Code {
			t.Fatalf("replay = %+v, want duplicate of coupon %d", res, first.Coupon.ID)
		}
		if res.Remaining != 2 {
			t.Errorf("replay remaining = %d, want 2", res.Remaining)
		}
	}
	f.assertRedisUnchanged(before)
	if n := f.couponCount(); n != 1 {
		t.Fatalf("%d coupons, want 1", n)
	}
}

func claimDuplicateAfterRedisLost(t *testing.T) {
	// Redis forgot the key (flush, restart, TTL): the database answers.
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(1000)
	tp := f.template(c.ID, 3, 2, 100)
	first := f.MustClaim(tp.ID, "u1", "k1")
	f.Env.FlushRedis(t)
	res, err := f.Claim(tp.ID, "u1", "k1")
	if err != nil || !res.Duplicate || res.Coupon.ID != first.Coupon.ID {
		t.Fatalf("replay after flush = %+v, %v; want duplicate of coupon %d", res, err, first.Coupon.ID)
	}
	if n := f.couponCount(); n != 1 {
		t.Fatalf("%d coupons, want 1", n)
	}
	f.assertAgree(c, tp)
	// The key expired only: the same.
	f.Env.Backends.Redis.Del(f.Ctx, f.Key(c.ID, "idem:k1"))
	res, err = f.Claim(tp.ID, "u1", "k1")
	if err != nil || !res.Duplicate || res.Coupon.ID != first.Coupon.ID {
		t.Fatalf("replay after the key expired = %+v, %v; want duplicate of coupon %d", res, err, first.Coupon.ID)
	}
	f.assertAgree(c, tp)
	if n := f.couponCount(); n != 1 {
		t.Fatalf("%d coupons, want 1", n)
	}
}

func claimDuplicateWhileNotClaimable(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 3, 2, 100)
	first := f.MustClaim(tp.ID, "u1", "k1")
	paused := models.TemplatePaused
	if _, err := f.Admin.UpdateTemplate(f.Ctx, "test", tp.ID, admin.TemplatePatch{Status: &paused}); err != nil {
		t.Fatal(err)
	}
	res, err := f.Claim(tp.ID, "u1", "k1")
	if err != nil || !res.Duplicate || res.Coupon.ID != first.Coupon.ID {
		t.Fatalf("replay while paused = %+v, %v; want duplicate of coupon %d", res, err, first.Coupon.ID)
	}
	_, err = f.Claim(tp.ID, "u2", "k1")
	assertClaimCode(t, err, models.CodeIdempotencyMismatch)
	_, err = f.Claim(tp.ID, "u1", "k2")
	assertClaimCode(t, err, models.CodeNotClaimable)
}

// Each refusal leaves the database and every Redis key as they were.
func claimRefusals(t *testing.T) {
	refusals := []struct {
		name   string
		budget int64
		stock  int64
		limit  int64
		before []string // users that claim first, one coupon each
		user   string
		code   models.Code
	}{
		{"ErrSoldOut", 0, 2, 2, []string{"u1", "u2"}, "u3", models.CodeSoldOut},
		{"ErrSoldOutWithBudget", 10_000, 2, 2, []string{"u1", "u1"}, "u2", models.CodeSoldOut},
		{"ErrUserLimitReached", 0, 5, 2, []string{"u1", "u2", "u1"}, "u1", models.CodeUserLimitReached},
		{"ErrBudgetExhausted", 250, 5, 5, []string{"u1", "u2"}, "u3", models.CodeBudgetExhausted},
		{"ErrBudgetExhaustedExactly", 200, 5, 5, []string{"u1", "u2"}, "u1", models.CodeBudgetExhausted},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			f := newClaimFixture(t, services.Config{})
			c := f.Campaign(r.budget)
			tp := f.template(c.ID, r.stock, r.limit, 100)
			for i, u := range r.before {
				f.MustClaim(tp.ID, u, fmt.Sprintf("first-%d", i))
			}
			before, n := f.redisState(), f.couponCount()
			for range 2 { // the same key again: still refused, never in progress
				_, err := f.Claim(tp.ID, r.user, "k-refused")
				assertClaimCode(t, err, r.code)
			}
			f.assertRedisUnchanged(before)
			if got := f.couponCount(); got != n {
				t.Fatalf("%d coupons, want %d", got, n)
			}
			f.assertAgree(c, tp)
		})
	}
}

func claimErrNotClaimable(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	now := f.Clock.Now()
	later := f.template(c.ID, 5, 1, 100, func(tp *models.Template) { tp.ClaimStartsAt = now.Add(time.Hour) })
	window := f.template(c.ID, 5, 1, 100, func(tp *models.Template) { end := now.Add(time.Hour); tp.ClaimEndsAt = &end })
	paused := f.template(c.ID, 5, 1, 100, func(tp *models.Template) { tp.Status = models.TemplatePaused })
	before := f.redisState()
	for _, id := range []int64{later.ID, paused.ID} {
		_, err := f.Claim(id, "u1", fmt.Sprintf("k%d", id))
		assertClaimCode(t, err, models.CodeNotClaimable)
	}
	f.Clock.Advance(time.Hour)
	_, err := f.Claim(window.ID, "u1", "k-late")
	assertClaimCode(t, err, models.CodeNotClaimable)
	f.assertRedisUnchanged(before)
	if n := f.couponCount(); n != 0 {
		t.Fatalf("%d coupons, want 0", n)
	}
	f.MustClaim(later.ID, "u1", "k-now-open")
}

func claimErrNotFound(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	_, err := f.Claim(999_999, "u1", "k1")
	assertClaimCode(t, err, models.CodeNotFound)
	if keys := f.Env.Keys(t); len(keys) != 0 {
		t.Fatalf("Redis keys %v written for an unknown template", keys)
	}
}

func claimErrInvalidRequest(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 5, 1, 100)
	before := f.redisState()
	for _, r := range []struct {
		req   claims.ClaimRequest
		field string
	}{
		{claims.ClaimRequest{TemplateID: 0, UserID: "u1", IdempotencyKey: "k"}, "template_id"},
		{claims.ClaimRequest{TemplateID: -1, UserID: "u1", IdempotencyKey: "k"}, "template_id"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: "", IdempotencyKey: "k"}, "user_id"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: strings.Repeat("u", 65), IdempotencyKey: "k"}, "user_id"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: "u|1", IdempotencyKey: "k"}, "user_id"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: "ü", IdempotencyKey: "k"}, "user_id"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: ""}, "Idempotency-Key"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: strings.Repeat("k", 129)}, "Idempotency-Key"},
		{claims.ClaimRequest{TemplateID: tp.ID, UserID: "u1", IdempotencyKey: "k\n"}, "Idempotency-Key"},
	} {
		_, err := f.Claims.Claim(f.Ctx, r.req)
		assertClaimCode(t, err, models.CodeInvalidRequest, r.field)
	}
	f.assertRedisUnchanged(before)
	if n := f.couponCount(); n != 0 {
		t.Fatalf("%d coupons, want 0", n)
	}
}

func claimOKLongestKeyAndUser(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 5, 1, 100)
	key := strings.Repeat("k|,=; ~", 19)[:128]
	user := strings.Repeat("A.b_c:d@e-", 7)[:64]
	first := f.MustClaim(tp.ID, user, key)
	res, err := f.Claim(tp.ID, user, key)
	if err != nil || !res.Duplicate || res.Coupon.ID != first.Coupon.ID {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	f.assertAgree(c, tp)
}

// assertCoupon compares a coupon with want, ignoring the fields the database
// fills, and checks its slot and ordinal.
func assertCoupon(t *testing.T, got, want *models.Coupon, slot, ordinal int64) {
	t.Helper()
	if got.ID != want.ID || got.Code != want.Code || got.TemplateID != want.TemplateID || got.CampaignID != want.CampaignID ||
		got.UserID != want.UserID || got.Status != want.Status || got.ValueCents != want.ValueCents || got.Version != 0 ||
		got.UsedAt != nil || got.OrderID != nil {
		t.Errorf("coupon = %+v, want %+v", *got, *want)
	}
	if !got.ClaimedAt.Equal(want.ClaimedAt) || !got.ValidFrom.Equal(want.ValidFrom) || !got.ValidUntil.Equal(want.ValidUntil) {
		t.Errorf("coupon times %v %v..%v, want %v %v..%v", got.ClaimedAt, got.ValidFrom, got.ValidUntil,
			want.ClaimedAt, want.ValidFrom, want.ValidUntil)
	}
	if got.Slot == nil || *got.Slot != slot || got.UserOrdinal == nil || *got.UserOrdinal != ordinal {
		t.Errorf("coupon slot %v ordinal %v, want %d %d", got.Slot, got.UserOrdinal, slot, ordinal)
	}
}

func TestClaimIdempotency(t *testing.T) {
	// setup: campaigns A (budget) and B, templates A1, A2 and B1; u1 claimed
	// A1 with key k1.
	type world struct {
		f          *claimFixture
		a, b       *models.Campaign
		a1, a2, b1 *models.Template
		first      *models.Coupon
	}
	setup := func(t *testing.T) *world {
		t.Helper()
		f := newClaimFixture(t, services.Config{})
		w := &world{f: f, a: f.Campaign(10_000), b: f.Campaign(0)}
		w.a1 = f.template(w.a.ID, 5, 2, 100)
		w.a2 = f.template(w.a.ID, 5, 2, 300)
		w.b1 = f.template(w.b.ID, 5, 2, 100)
		w.first = f.MustClaim(w.a1.ID, "u1", "k1").Coupon
		return w
	}
	mismatches := []struct {
		name string
		tpl  func(w *world) *models.Template
		user string
	}{
		{"OtherUser", func(w *world) *models.Template { return w.a1 }, "u2"},
		{"OtherTemplate", func(w *world) *models.Template { return w.a2 }, "u1"},
		{"OtherTemplateAndUser", func(w *world) *models.Template { return w.a2 }, "u2"},
		{"OtherCampaign", func(w *world) *models.Template { return w.b1 }, "u1"},
		{"OtherCampaignAndUser", func(w *world) *models.Template { return w.b1 }, "u2"},
	}
	for _, m := range mismatches {
		t.Run("ErrIdempotencyMismatch"+m.name, func(t *testing.T) {
			w := setup(t)
			f := w.f
			// Load every campaign first, so that nothing is left to change.
			if _, err := f.Core.ListTemplates(f.Ctx, false); err != nil {
				t.Fatal(err)
			}
			before := f.redisState()
			for range 2 {
				_, err := f.Claim(m.tpl(w).ID, m.user, "k1")
				assertClaimCode(t, err, models.CodeIdempotencyMismatch)
			}
			f.assertRedisUnchanged(before)
			if cs := f.Coupons(); len(cs) != 1 || cs[0].ID != w.first.ID {
				t.Fatalf("coupons %+v, want only coupon %d", cs, w.first.ID)
			}
			// The first claim is still answered as before.
			res, err := f.Claim(w.a1.ID, "u1", "k1")
			if err != nil || !res.Duplicate || res.Coupon.ID != w.first.ID {
				t.Fatalf("replay = %+v, %v", res, err)
			}
		})
		t.Run("ErrIdempotencyMismatch"+m.name+"AfterRedisLost", func(t *testing.T) {
			w := setup(t)
			f := w.f
			f.Env.FlushRedis(t)
			for range 2 {
				_, err := f.Claim(m.tpl(w).ID, m.user, "k1")
				assertClaimCode(t, err, models.CodeIdempotencyMismatch)
			}
			if cs := f.Coupons(); len(cs) != 1 || cs[0].ID != w.first.ID {
				t.Fatalf("coupons %+v, want only coupon %d", cs, w.first.ID)
			}
			if _, err := f.Core.ListTemplates(f.Ctx, false); err != nil { // loads what was not
				t.Fatal(err)
			}
			f.assertAgree(w.a, w.a1, w.a2)
			f.assertAgree(w.b, w.b1)
		})
	}
	t.Run("OKKeysAreNotShared", func(t *testing.T) {
		// Different keys of one user are different claims.
		w := setup(t)
		w.f.MustClaim(w.a1.ID, "u1", "k2")
		_, err := w.f.Claim(w.a1.ID, "u1", "k3")
		assertClaimCode(t, err, models.CodeUserLimitReached)
		w.f.MustClaim(w.b1.ID, "u1", "k3") // a refused key is free for another claim
		w.f.assertAgree(w.a, w.a1)
		w.f.assertAgree(w.b, w.b1)
	})
}
