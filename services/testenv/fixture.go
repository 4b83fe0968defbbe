package testenv

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/reconcile"
)

// Clock is a test's clock: real time shifted by an offset the test moves
// forward, so that validity windows can be crossed while locks and TTLs keep
// real time; or, once Set, an instant that moves only when the test says.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	fixed  time.Time
}

// Now is the clock's time; give it to services.Config.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fixed.IsZero() {
		return c.fixed
	}
	return time.Now().UTC().Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fixed.IsZero() {
		c.fixed = c.fixed.Add(d)
		return
	}
	c.offset += d
}

// Set stops the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed = t
}

// Fixture is one test's backends and service with a clock of the test's own,
// and the few steps most service tests begin with: a campaign, a template, a
// claim. Each helper fails the test on an error it does not expect.
type Fixture struct {
	*Env
	T   *testing.T
	Ctx context.Context
	// Svc is the wired whole; embedded, it gives its aggregates by name, for
	// tests of one of them (f.Checkout.Hold).
	Svc *services.App
	*services.App
	Clock *Clock
	// Actor is who creates the campaigns and templates ("test").
	Actor string
}

// NewFixture opens fresh backends and an App over them, as New does; the
// service reads the fixture's Clock unless cfg names a clock of its own.
func NewFixture(t *testing.T, cfg services.Config) *Fixture {
	t.Helper()
	return newFixture(t, cfg, &Clock{})
}

// NewFixtureAt is NewFixture with the clock stopped at start.
func NewFixtureAt(t *testing.T, cfg services.Config, start time.Time) *Fixture {
	t.Helper()
	return newFixture(t, cfg, &Clock{fixed: start})
}

func newFixture(t *testing.T, cfg services.Config, clock *Clock) *Fixture {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	env := New(t, cfg)
	a := env.Service
	return &Fixture{Env: env, T: t, Ctx: context.Background(), Svc: a, App: a, Clock: clock, Actor: "test"}
}

// Campaign creates a campaign; budget 0 means none.
func (f *Fixture) Campaign(budget int64) *models.Campaign {
	f.T.Helper()
	return f.CreateCampaign(models.Campaign{Name: "campaign", BudgetCents: budget})
}

// CreateCampaign creates c as it is.
func (f *Fixture) CreateCampaign(c models.Campaign) *models.Campaign {
	f.T.Helper()
	out, err := f.Svc.CreateCampaign(f.Ctx, f.Actor, c)
	if err != nil {
		f.T.Fatalf("create campaign: %v", err)
	}
	return out
}

// Template creates a template of campaign tp.CampaignID. Its zero fields
// take a fixed 500-cent coupon named "coupon", stock 10, limit 2, valid 30
// days from the claim; then edit may change any field.
func (f *Fixture) Template(tp models.Template, edit ...func(*models.Template)) *models.Template {
	f.T.Helper()
	if tp.Name == "" {
		tp.Name = "coupon"
	}
	if tp.Kind == "" {
		tp.Kind = models.KindFixed
		if tp.FaceValueCents == 0 {
			tp.FaceValueCents = 500
		}
	}
	if tp.TotalStock == 0 {
		tp.TotalStock = 10
	}
	if tp.PerUserLimit == 0 {
		tp.PerUserLimit = 2
	}
	if tp.ValidDays == 0 && tp.ValidFrom == nil {
		tp.ValidDays = 30
	}
	for _, e := range edit {
		e(&tp)
	}
	out, err := f.Svc.CreateTemplate(f.Ctx, f.Actor, tp)
	if err != nil {
		f.T.Fatalf("create template: %v", err)
	}
	return out
}

// Claim claims a coupon of template tid for user under key.
func (f *Fixture) Claim(tid int64, user, key string) (*claims.ClaimResult, error) {
	return f.Svc.Claim(f.Ctx, claims.ClaimRequest{TemplateID: tid, UserID: user, IdempotencyKey: key})
}

// MustClaim claims a coupon that must be issued (not a replay).
func (f *Fixture) MustClaim(tid int64, user, key string) *claims.ClaimResult {
	f.T.Helper()
	res, err := f.Claim(tid, user, key)
	if err != nil {
		f.T.Fatalf("claim %d for %s with %s: %v", tid, user, key, err)
	}
	if res.Duplicate || res.Coupon == nil {
		f.T.Fatalf("claim %d for %s with %s: %+v, want a new coupon", tid, user, key, res)
	}
	return res
}

// Coupons returns every coupon row, oldest first.
func (f *Fixture) Coupons() []models.Coupon {
	f.T.Helper()
	var cs []models.Coupon
	if err := f.Backends.DB.Order("id").Find(&cs).Error; err != nil {
		f.T.Fatalf("read coupons: %v", err)
	}
	return cs
}

// Key names a campaign's Redis key as services/keys.go does.
func (f *Fixture) Key(cid int64, suffix string) string {
	return fmt.Sprintf("%s{c%d}:%s", f.Prefix, cid, suffix)
}

// TemplateKey names a template's Redis hash.
func (f *Fixture) TemplateKey(cid, tid int64) string {
	return f.Key(cid, "t:"+strconv.FormatInt(tid, 10))
}

// Bearer writes n bearer coupons of tp, as bulk code generation makes them
// (docs/shared-codes.md): user_id empty, status issued, each holding a stock
// slot (the next free ones) but no user ordinal, valid from now for the
// template's validity; then it rebuilds the campaign's counters from the
// database (a reconcile with repair), so that Redis counts their slots.
func (f *Fixture) Bearer(tp *models.Template, n int) []models.Coupon {
	f.T.Helper()
	db := f.Backends.DB
	var top struct{ Max *int64 }
	if err := db.Raw("SELECT MAX(slot) AS max FROM user_coupons WHERE template_id = ?", tp.ID).Scan(&top).Error; err != nil {
		f.T.Fatalf("read the slots of template %d: %v", tp.ID, err)
	}
	next := int64(1)
	if top.Max != nil {
		next = *top.Max + 1
	}
	now := f.Svc.Now().Truncate(time.Microsecond)
	from, until := tp.ValidityFor(now, time.UTC)
	out := make([]models.Coupon, n)
	for i := range out {
		slot := next + int64(i)
		out[i] = models.Coupon{Code: models.NewCouponCode(), TemplateID: tp.ID, CampaignID: tp.CampaignID,
			UserID: models.BearerUserID, Status: models.CouponIssued, Slot: &slot,
			RequestID: fmt.Sprintf("bearer:%d:%d", tp.ID, slot), ValueCents: tp.ValueCents(),
			ClaimedAt: now, ValidFrom: from, ValidUntil: until, UpdatedAt: now}
		if err := db.Create(&out[i]).Error; err != nil {
			f.T.Fatalf("write bearer coupon %d of template %d: %v", slot, tp.ID, err)
		}
	}
	if _, err := f.Svc.Reconcile(f.Ctx, reconcile.ReconcileRequest{TemplateID: tp.ID, Repair: true, Actor: f.Actor}); err != nil {
		f.T.Fatalf("load the counters of template %d: %v", tp.ID, err)
	}
	return out
}
