package services_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/redis/go-redis/v9"
)

// absolute makes a template valid from now to until, with absolute dates.
func absolute(from, until time.Time) func(*models.Template) {
	return func(tp *models.Template) { tp.ValidDays, tp.ValidFrom, tp.ValidUntil = 0, &from, &until }
}

// assertNothingTaken checks that claims refused since before left Redis and
// the database as they were: no stock, budget, user ordinal or idempotency
// key taken, no coupon written.
func (f *claimFixture) assertNothingTaken(before redisState, coupons int) {
	f.T.Helper()
	f.assertRedisUnchanged(before)
	if n := f.couponCount(); n != coupons {
		f.T.Fatalf("%d coupons, want %d", n, coupons)
	}
}

func (f *claimFixture) patch(svc *services.App, tid int64, p admin.TemplatePatch) (*models.Template, error) {
	return svc.UpdateTemplate(f.Ctx, "test", tid, p)
}

func (f *claimFixture) mustPatch(svc *services.App, tid int64, p admin.TemplatePatch) {
	f.T.Helper()
	if _, err := f.patch(svc, tid, p); err != nil {
		f.T.Fatalf("update template %d: %v", tid, err)
	}
}

func (f *claimFixture) templateRow(tid int64) models.Template {
	f.T.Helper()
	var tp models.Template
	if err := f.Env.Backends.DB.First(&tp, tid).Error; err != nil {
		f.T.Fatal(err)
	}
	return tp
}

// TestTemplateBornExpired: a template whose coupons would be born expired
// is refused at create and at update with the field to change, and a claim
// from valid_until on is not_claimable and takes nothing.
func TestTemplateBornExpired(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(10_000)
	now := f.Clock.Now()
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }

	t.Run("ErrCreate", func(t *testing.T) {
		for name, c2 := range map[string]struct {
			edit  func(*models.Template)
			field string
		}{
			"ValidUntilPassed": {absolute(now.Add(-48*time.Hour), now.Add(-time.Hour)), "valid_until"},
			"ValidUntilNow":    {absolute(now.Add(-48*time.Hour), now), "valid_until"},
			"ClaimsCloseAfterValidity": {func(tp *models.Template) {
				absolute(now, now.Add(24*time.Hour))(tp)
				tp.ClaimEndsAt = at(24*time.Hour + time.Second)
			}, "claim_ends_at"},
			"ClaimsOpenAfterValidity": {func(tp *models.Template) {
				absolute(now, now.Add(24*time.Hour))(tp)
				tp.ClaimStartsAt = now.Add(24 * time.Hour)
			}, "claim_starts_at"},
		} {
			t.Run(name, func(t *testing.T) {
				tp := models.Template{CampaignID: c.ID, Name: "x", Kind: models.KindFixed, FaceValueCents: 100,
					TotalStock: 5, PerUserLimit: 1}
				c2.edit(&tp)
				_, err := f.Admin.CreateTemplate(f.Ctx, "test", tp)
				assertClaimCode(t, err, models.CodeInvalidRequest, c2.field)
			})
		}
		var n int64
		f.Env.Backends.DB.Model(&models.Template{}).Count(&n)
		if n != 0 {
			t.Fatalf("%d templates created, want 0", n)
		}
	})

	// Valid for two hours; claims close with the validity (no claim_ends_at).
	tp := f.template(c.ID, 5, 2, 100, absolute(now.Add(-time.Hour), now.Add(2*time.Hour)))
	// Closing claims exactly when the validity ends is fine.
	last := f.template(c.ID, 5, 2, 100, absolute(now.Add(-time.Hour), now.Add(2*time.Hour)),
		func(tp *models.Template) { tp.ClaimEndsAt = at(2 * time.Hour) })

	t.Run("ErrUpdate", func(t *testing.T) {
		row := f.templateRow(tp.ID)
		for name, c2 := range map[string]struct {
			p     admin.TemplatePatch
			field string
		}{
			"ClaimsCloseAfterValidity": {admin.TemplatePatch{ClaimEndsAt: at(3 * time.Hour)}, "claim_ends_at"},
			"ClaimsOpenAfterValidity":  {admin.TemplatePatch{ClaimStartsAt: at(2 * time.Hour)}, "claim_starts_at"},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := f.patch(f.Svc, tp.ID, c2.p)
				assertClaimCode(t, err, models.CodeInvalidRequest, c2.field)
				if got := f.templateRow(tp.ID); fmt.Sprint(got) != fmt.Sprint(row) {
					t.Fatalf("the template changed:\n%+v\nwas\n%+v", got, row)
				}
			})
		}
	})

	f.MustClaim(tp.ID, "u1", "k1")
	f.Clock.Advance(2*time.Hour - time.Second)
	f.MustClaim(tp.ID, "u1", "k2")
	f.MustClaim(last.ID, "u1", "k3")
	f.Clock.Advance(time.Second) // valid_until: a coupon now would be born expired

	t.Run("ErrClaim", func(t *testing.T) {
		before, n := f.redisState(), f.couponCount()
		for i, id := range []int64{tp.ID, last.ID} {
			for _, user := range []string{"u1", "u2"} {
				_, err := f.Claim(id, user, fmt.Sprintf("late-%d-%s", i, user))
				assertClaimCode(t, err, models.CodeNotClaimable)
			}
		}
		f.assertNothingTaken(before, n)
		// A replay of a claim made in time is still a replay.
		res, err := f.Claim(tp.ID, "u1", "k1")
		if err != nil || !res.Duplicate {
			t.Fatalf("replay after the validity = %+v, %v; want duplicate", res, err)
		}
		f.assertAgree(c, tp, last)
	})
	t.Run("NotOffered", func(t *testing.T) {
		views, err := f.Core.ListTemplates(f.Ctx, true)
		if err != nil || len(views) != 0 {
			t.Fatalf("on offer: %d templates, %v; want none", len(views), err)
		}
		_, err = f.Core.ViewOffer(f.Ctx, tp.ID)
		assertClaimCode(t, err, models.CodeNotFound)
		if all, err := f.Core.ListTemplates(f.Ctx, false); err != nil || len(all) != 2 {
			t.Fatalf("all: %d templates, %v; want 2", len(all), err)
		}
	})
	t.Run("UpdateAfterValidity", func(t *testing.T) {
		// Pausing and renaming stay possible; reopening claims does not.
		paused, name := models.TemplatePaused, "renamed"
		f.mustPatch(f.Svc, tp.ID, admin.TemplatePatch{Status: &paused, Name: &name})
		active := models.TemplateActive
		_, err := f.patch(f.Svc, tp.ID, admin.TemplatePatch{Status: &active})
		assertClaimCode(t, err, models.CodeInvalidRequest, "valid_until")
		_, err = f.patch(f.Svc, last.ID, admin.TemplatePatch{ClearClaimEndsAt: true})
		assertClaimCode(t, err, models.CodeInvalidRequest, "valid_until")
		if got := f.templateRow(tp.ID); got.Status != models.TemplatePaused || got.Name != "renamed" {
			t.Fatalf("template %+v, want paused and renamed", got)
		}
	})
}

// TestClaimRuleTwoInstances: a pause, a resume or a change of the claim
// window made through one instance binds the other from the answer on, even
// though the other has the template cached.
func TestClaimRuleTwoInstances(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	a := f.Svc
	b := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now, TemplateCacheTTL: time.Hour}})
	c := f.Campaign(0)
	now := f.Clock.Now()
	tp := f.template(c.ID, 100, 50, 100, func(tp *models.Template) { tp.ClaimStartsAt = now.Add(-time.Hour) })
	claimB := func(user, key string) (*claims.ClaimResult, error) {
		return b.Claim(f.Ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: user, IdempotencyKey: key})
	}
	n := 0
	mustClaimB := func(what string) {
		t.Helper()
		n++
		if res, err := claimB("u1", fmt.Sprintf("ok-%d", n)); err != nil || res.Duplicate {
			t.Fatalf("%s: claim through the other instance = %+v, %v; want claimed", what, res, err)
		}
	}
	refusedB := func(what string) {
		t.Helper()
		before, coupons := f.redisState(), f.couponCount()
		for _, user := range []string{"u1", "u2"} {
			_, err := claimB(user, "refused-"+user)
			assertClaimCode(t, err, models.CodeNotClaimable)
		}
		f.assertNothingTaken(before, coupons)
	}
	mustClaimB("open") // the other instance caches the open template

	paused, active := models.TemplatePaused, models.TemplateActive
	f.mustPatch(a, tp.ID, admin.TemplatePatch{Status: &paused})
	refusedB("paused")
	f.mustPatch(a, tp.ID, admin.TemplatePatch{Status: &active})
	mustClaimB("resumed")

	f.mustPatch(a, tp.ID, admin.TemplatePatch{ClaimEndsAt: &now})
	refusedB("claim window closed")
	f.mustPatch(a, tp.ID, admin.TemplatePatch{ClearClaimEndsAt: true})
	mustClaimB("claim window reopened")

	later := now.Add(time.Hour)
	f.mustPatch(a, tp.ID, admin.TemplatePatch{ClaimStartsAt: &later})
	refusedB("claims not open yet")
	f.mustPatch(a, tp.ID, admin.TemplatePatch{ClaimStartsAt: &now})
	mustClaimB("claims open again")

	// The Redis flushed meanwhile: the rule comes back from the database.
	f.mustPatch(a, tp.ID, admin.TemplatePatch{Status: &paused})
	f.Env.FlushRedis(t)
	if _, err := claimB("u2", "after-flush"); !models.IsCode(err, models.CodeNotClaimable) {
		t.Fatalf("claim of a paused template after a flush: %v, want not_claimable", err)
	}
	f.mustPatch(a, tp.ID, admin.TemplatePatch{Status: &active})
	mustClaimB("resumed after the flush")
	f.assertAgree(c, tp)
}

// TestClaimRulePauseUnderLoad: shoppers claim through one instance without
// pause while an admin pauses through the other; no claim sent after the
// pause answered is issued.
func TestClaimRulePauseUnderLoad(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	b := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
	c := f.Campaign(0)
	tp := f.template(c.ID, 100_000, 100, 100)
	const workers = 8
	var paused atomic.Bool
	var before, after, refusedAfter atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				sentAfter := paused.Load()
				_, err := b.Claim(f.Ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: fmt.Sprintf("w%d-%d", w, i%50),
					IdempotencyKey: fmt.Sprintf("w%d-%d", w, i)})
				switch {
				case err == nil && sentAfter:
					after.Add(1)
				case err == nil:
					before.Add(1)
				case sentAfter && models.IsCode(err, models.CodeNotClaimable):
					refusedAfter.Add(1)
				case !models.IsCode(err, models.CodeNotClaimable) && !models.IsCode(err, models.CodeUserLimitReached):
					t.Errorf("claim: %v", err)
				}
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for before.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	p := models.TemplatePaused
	f.mustPatch(f.Svc, tp.ID, admin.TemplatePatch{Status: &p})
	paused.Store(true)
	for refusedAfter.Load() < 200 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if before.Load() < 50 || refusedAfter.Load() < 200 {
		t.Fatalf("%d claimed before the pause, %d refused after; the test did not run long enough", before.Load(), refusedAfter.Load())
	}
	if after.Load() != 0 {
		t.Fatalf("%d claims sent after the pause answered were issued", after.Load())
	}
	if n := int64(f.couponCount()); n != before.Load() {
		t.Fatalf("%d coupons, want %d", n, before.Load())
	}
	f.assertAgree(c, tp)
}

// TestClaimRuleRedisDown: a change that cannot reach Redis answers
// unavailable and changes nothing, so that no instance follows a rule the
// database does not have; a rule lost alone is loaded from the database.
func TestClaimRuleRedisDown(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.template(c.ID, 10, 5, 100)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { dead.Close() })
	down := services.New(&core.Backends{DB: f.Env.Backends.DB, Dialect: f.Env.Backends.Dialect, Redis: dead},
		services.Config{CoreConfig: services.CoreConfig{KeyPrefix: f.Env.Prefix, Now: f.Clock.Now, Logger: f.Env.Config.Logger}})
	t.Cleanup(down.Close)
	row := f.templateRow(tp.ID)
	paused := models.TemplatePaused
	_, err := f.patch(down, tp.ID, admin.TemplatePatch{Status: &paused})
	assertClaimCode(t, err, models.CodeUnavailable)
	if got := f.templateRow(tp.ID); fmt.Sprint(got) != fmt.Sprint(row) {
		t.Fatalf("the template changed:\n%+v\nwas\n%+v", got, row)
	}
	f.MustClaim(tp.ID, "u1", "k1")

	// The rule alone lost (or a Redis written by an older version): loaded
	// from the database by the first claim, which follows it.
	f.mustPatch(f.Svc, tp.ID, admin.TemplatePatch{Status: &paused})
	rule := f.TemplateKey(c.ID, tp.ID) + ":rule"
	f.Env.Backends.Redis.Del(f.Ctx, rule)
	_, err = f.Claim(tp.ID, "u2", "k2")
	assertClaimCode(t, err, models.CodeNotClaimable)
	if v := f.Env.Backends.Redis.Get(f.Ctx, rule).Val(); v == "" {
		t.Fatal("the claim did not load the rule")
	}
	f.assertAgree(c, tp)
}

// TestClaimRuleBoundaries: the claim script, which sees the clock in whole
// milliseconds, refuses whenever models.Template.Claimable does, also for
// claim windows and validities set to a fraction of a millisecond, and
// takes claims when Claimable does, at least a millisecond from a boundary.
func TestClaimRuleBoundaries(t *testing.T) {
	f := newClaimFixture(t, services.Config{})
	c := f.Campaign(0)
	base := f.Clock.Now().Add(time.Hour)
	frac := 500 * time.Microsecond
	window := f.template(c.ID, 1000, 100, 100, func(tp *models.Template) {
		tp.ClaimStartsAt = base.Add(frac)
		end := base.Add(10*time.Second + frac)
		tp.ClaimEndsAt = &end
	})
	dated := f.template(c.ID, 1000, 100, 100, func(tp *models.Template) { tp.ClaimStartsAt = base.Add(-time.Hour) },
		absolute(base.Add(-time.Hour), base.Add(20*time.Second+frac)))
	n := 0
	for _, tp := range []*models.Template{window, dated} {
		var bounds []time.Time
		if tp == window {
			bounds = []time.Time{tp.ClaimStartsAt, *tp.ClaimEndsAt}
		} else {
			bounds = []time.Time{*tp.ValidUntil}
		}
		row := f.templateRow(tp.ID) // as the database keeps it
		for _, b := range bounds {
			for _, d := range []time.Duration{-2 * time.Millisecond, -time.Millisecond, -frac, -time.Microsecond, 0,
				time.Microsecond, frac - time.Microsecond, frac, time.Millisecond, 2 * time.Millisecond} {
				at := b.Add(d)
				f.Clock.Advance(at.Sub(f.Clock.Now()))
				n++
				_, err := f.Claim(tp.ID, fmt.Sprintf("u%d", n), fmt.Sprintf("k%d", n))
				want := row.Claimable(at)
				nearBoundary := at.Sub(b) > -time.Millisecond && at.Sub(b) < time.Millisecond
				switch {
				case want != nil && !models.IsCode(err, models.CodeNotClaimable):
					t.Errorf("template %d at %s: %v, want not_claimable (%v)", tp.ID, at.Format(time.RFC3339Nano), err, want)
				case want == nil && err != nil && !nearBoundary:
					t.Errorf("template %d at %s: %v, want claimed", tp.ID, at.Format(time.RFC3339Nano), err)
				}
			}
		}
	}
	f.assertAgree(c, window, dated)
}
