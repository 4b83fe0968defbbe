package services_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/lua"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/claims"
	reconcilesvc "github.com/couponsvc/couponsvc/services/reconcile"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// rcFixture is the shared fixture with one campaign and one template.
type rcFixture struct {
	*testenv.Fixture
	tmpl *models.Template
}

func newRCFixture(t *testing.T, cfg services.Config, stock, limit int64, policy string) *rcFixture {
	t.Helper()
	f := &rcFixture{Fixture: testenv.NewFixture(t, cfg)}
	c := f.CreateCampaign(models.Campaign{Name: "reconcile"})
	f.tmpl = f.Template(models.Template{CampaignID: c.ID, Name: "r", Kind: "fixed", FaceValueCents: 100,
		TotalStock: stock, PerUserLimit: limit, ValidDays: 3, RefundPolicy: policy})
	return f
}

func (f *rcFixture) key(suffix string) string { return f.Key(f.tmpl.CampaignID, suffix) }

func (f *rcFixture) templateKey() string { return f.TemplateKey(f.tmpl.CampaignID, f.tmpl.ID) }

func (f *rcFixture) claim(user, key string) (*claims.ClaimResult, error) {
	return f.Claim(f.tmpl.ID, user, key)
}

func (f *rcFixture) mustClaim(user string) *models.Coupon {
	f.T.Helper()
	r, err := f.claim(user, "k-"+user+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		f.T.Fatalf("claim for %s: %v", user, err)
	}
	return r.Coupon
}

// reconcile compares the fixture's template (with repair when asked).
func (f *rcFixture) reconcile(svc *services.App, repair bool) reconcilesvc.TemplateDrift {
	f.T.Helper()
	if svc == nil {
		svc = f.Env.Service
	}
	rep, err := svc.Reconcile(f.Ctx, reconcilesvc.ReconcileRequest{TemplateID: f.tmpl.ID, Repair: repair, Actor: "tester"})
	if err != nil {
		f.T.Fatalf("reconcile: %v", err)
	}
	if len(rep.Templates) != 1 {
		f.T.Fatalf("reconcile reported %d templates, want 1", len(rep.Templates))
	}
	return rep.Templates[0]
}

func (f *rcFixture) wantNoDrift(d reconcilesvc.TemplateDrift) {
	f.T.Helper()
	if d.RedisRemaining == nil || d.Drift != 0 || d.UsersDrifted != 0 || d.Drifted() {
		f.T.Fatalf("want no drift, got %s", rcShow(d))
	}
}

// audits returns the audit entries of an action, oldest first.
func (f *rcFixture) audits(action string) []models.AuditEntry {
	f.T.Helper()
	var out []models.AuditEntry
	if err := f.Env.Backends.DB.Where("action = ?", action).Order("id").Find(&out).Error; err != nil {
		f.T.Fatal(err)
	}
	return out
}

func (f *rcFixture) live() int64 {
	f.T.Helper()
	var n int64
	if err := f.Env.Backends.DB.Model(&models.Coupon{}).Where("template_id = ? AND slot IS NOT NULL", f.tmpl.ID).
		Count(&n).Error; err != nil {
		f.T.Fatal(err)
	}
	return n
}

// loseReturn gives a coupon's slot back in the database only, with the audit
// entry of the revoke, as a process killed between the commit and
// coupon_return.lua leaves it.
func (f *rcFixture) loseReturn(c *models.Coupon) {
	f.T.Helper()
	db := f.Env.Backends.DB
	if err := db.Exec("UPDATE user_coupons SET status = ?, slot = NULL, user_ordinal = NULL, version = version + 1 WHERE id = ?",
		models.CouponRevoked, c.ID).Error; err != nil {
		f.T.Fatal(err)
	}
	if err := db.Create(&models.AuditEntry{Actor: "admin", Action: "coupon.revoke", Target: fmt.Sprintf("coupon:%d", c.ID),
		Detail: "return_stock=true", CreatedAt: f.Clock.Now()}).Error; err != nil {
		f.T.Fatal(err)
	}
}

func rcShow(d reconcilesvc.TemplateDrift) string {
	r, tot := "nil", "nil"
	if d.RedisRemaining != nil {
		r = strconv.FormatInt(*d.RedisRemaining, 10)
		tot = strconv.FormatInt(*d.RedisTotal, 10)
	}
	return fmt.Sprintf("template=%d total_stock=%d redis_remaining=%s redis_total=%s db_live=%d in_flight=%d drift=%d users_drifted=%d repaired=%t",
		d.TemplateID, d.TotalStock, r, tot, d.DBLive, d.InFlight, d.Drift, d.UsersDrifted, d.Repaired)
}

// rcReport prints a test's figures to the test log and to stdout, so that CI
// logs show them for passing tests too.
func rcReport(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Log(msg)
	fmt.Printf("%s: %s\n", t.Name(), msg)
}

func TestReconcile(t *testing.T) {
	t.Run("OK", reconcileOK)
	t.Run("NotLoaded", reconcileNotLoaded)
	t.Run("ErrNotFound", reconcileErrNotFound)
	t.Run("RepairRemaining", reconcileRepairRemaining)
	t.Run("RepairUsers", reconcileRepairUsers)
	t.Run("InFlight", reconcileInFlight)
	t.Run("ReturnedCouponInRecent", reconcileReturnedCouponInRecent)
}

func reconcileOK(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 2, models.RefundRestore)
	for _, u := range []string{"a", "b", "b", "c"} {
		f.mustClaim(u)
	}
	d := f.reconcile(nil, false)
	f.wantNoDrift(d)
	if d.TotalStock != 10 || d.DBLive != 4 || *d.RedisRemaining != 6 || d.InFlight != 0 || d.Repaired {
		t.Fatalf("got %s", rcShow(d))
	}
	// Nothing drifted: a repair repairs nothing and writes no audit entry.
	if d := f.reconcile(nil, true); d.Repaired {
		t.Fatalf("repaired without drift: %s", rcShow(d))
	}
	if n := len(f.audits("reconcile.repair")); n != 0 {
		t.Fatalf("%d repair audit entries, want 0", n)
	}
}

func reconcileNotLoaded(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 1, models.RefundRestore)
	f.mustClaim("a")
	f.Env.FlushRedis(t)
	d := f.reconcile(nil, true)
	if d.RedisRemaining != nil || d.Drift != 0 || d.Repaired || d.DBLive != 1 {
		t.Fatalf("counters not loaded: got %s", rcShow(d))
	}
	// The next claim loads them from the database.
	f.mustClaim("b")
	if d := f.reconcile(nil, false); *d.RedisRemaining != 8 {
		t.Fatalf("after the reload: %s", rcShow(d))
	}
}

func reconcileErrNotFound(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 1, models.RefundRestore)
	_, err := f.Env.Service.Reconcile(f.Ctx, reconcilesvc.ReconcileRequest{TemplateID: f.tmpl.ID + 1000})
	if models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("got %v, want not_found", err)
	}
	_, err = f.Env.Service.Reconcile(f.Ctx, reconcilesvc.ReconcileRequest{TemplateID: -1})
	if models.ErrorCode(err) != models.CodeInvalidRequest {
		t.Fatalf("got %v, want invalid_request", err)
	}
}

func reconcileRepairRemaining(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 1, models.RefundRestore)
	f.mustClaim("a")
	f.mustClaim("b")
	rdb := f.Env.Backends.Redis
	if err := rdb.HIncrBy(f.Ctx, f.templateKey(), "remaining", 5).Err(); err != nil {
		t.Fatal(err)
	}
	d := f.reconcile(nil, false)
	if d.Drift != 5 || d.Repaired || *d.RedisRemaining != 13 {
		t.Fatalf("want drift 5, got %s", rcShow(d))
	}
	d = f.reconcile(nil, true)
	if d.Drift != 5 || !d.Repaired {
		t.Fatalf("want drift 5 repaired, got %s", rcShow(d))
	}
	after := f.reconcile(nil, false)
	f.wantNoDrift(after)
	if *after.RedisRemaining != 8 {
		t.Fatalf("after repair: %s", rcShow(after))
	}
	audits := f.audits("reconcile.repair")
	if len(audits) != 1 || audits[0].Actor != "tester" || audits[0].Target != fmt.Sprintf("template:%d", f.tmpl.ID) {
		t.Fatalf("audit entries: %+v", audits)
	}
	rcReport(t, "found %s; audit: %s", rcShow(d), audits[0].Detail)
}

func reconcileRepairUsers(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 1, models.RefundRestore)
	f.mustClaim("a")
	f.mustClaim("b")
	// Redis forgets that a holds a coupon: a second claim by a would
	// pass Redis (and be refused by the database's unique index).
	if err := f.Env.Backends.Redis.HDel(f.Ctx, f.templateKey()+":users", "a").Err(); err != nil {
		t.Fatal(err)
	}
	d := f.reconcile(nil, true)
	if d.UsersDrifted != 1 || d.Drift != 0 || !d.Repaired {
		t.Fatalf("want 1 user drifted, repaired: %s", rcShow(d))
	}
	f.wantNoDrift(f.reconcile(nil, false))
	if _, err := f.claim("a", "again"); models.ErrorCode(err) != models.CodeUserLimitReached {
		t.Fatalf("claim again after repair: %v, want user_limit_reached", err)
	}
}

func reconcileInFlight(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 2, models.RefundRestore)
	f.mustClaim("a")
	// A reservation whose process died before writing the row.
	f.reserve(t, "b", "dead-1", f.Clock.Now())
	d := f.reconcile(nil, false)
	f.wantNoDrift(d)
	if d.InFlight != 1 || d.DBLive != 1 || *d.RedisRemaining != 8 {
		t.Fatalf("want one reservation in flight: %s", rcShow(d))
	}
	// A repair keeps the reservation's slot taken: it never frees stock
	// that a claim in flight is about to write.
	if err := f.Env.Backends.Redis.HIncrBy(f.Ctx, f.templateKey(), "remaining", -3).Err(); err != nil {
		t.Fatal(err)
	}
	if d := f.reconcile(nil, true); d.Drift != -3 || !d.Repaired {
		t.Fatalf("want drift -3 repaired: %s", rcShow(d))
	}
	d = f.reconcile(nil, false)
	f.wantNoDrift(d)
	if *d.RedisRemaining != 8 || d.InFlight != 1 {
		t.Fatalf("after repair: %s", rcShow(d))
	}
}

func reconcileReturnedCouponInRecent(t *testing.T) {
	// A coupon claimed and given back within the recent window: its
	// reservation is still in the recent zset, but it holds no slot.
	f := newRCFixture(t, services.Config{}, 5, 1, models.RefundRecycle)
	c := f.mustClaim("a")
	f.mustClaim("b")
	if _, err := f.Env.Service.Revoke(f.Ctx, "admin", c.Code, true, "test"); err != nil {
		t.Fatal(err)
	}
	d := f.reconcile(nil, false)
	f.wantNoDrift(d)
	if *d.RedisRemaining != 4 || d.DBLive != 1 || d.InFlight != 0 {
		t.Fatalf("got %s", rcShow(d))
	}
	// A repair (forced by a corruption) must not keep the returned slot.
	if err := f.Env.Backends.Redis.HIncrBy(f.Ctx, f.templateKey(), "remaining", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if d := f.reconcile(nil, true); !d.Repaired {
		t.Fatalf("not repaired: %s", rcShow(d))
	}
	d = f.reconcile(nil, false)
	f.wantNoDrift(d)
	if *d.RedisRemaining != 4 {
		t.Fatalf("after repair: %s", rcShow(d))
	}
}

// reserve runs coupon_deduct.lua as a claim would, and stops there: the
// process "died" before writing the coupon row.
func (f *rcFixture) reserve(t *testing.T, user, key string, at time.Time) (slot, ordinal int64) {
	t.Helper()
	cid := f.tmpl.CampaignID
	ks := []string{f.key("budget"), f.templateKey(), f.templateKey() + ":free", f.templateKey() + ":users",
		f.key("idem:" + key), f.key("pending"), f.templateKey() + ":rule"}
	// The last argument is the claim's attempt word (see coupon_deduct.lua).
	vals, err := lua.Deduct.Run(f.Ctx, f.Env.Backends.Redis, ks, f.tmpl.ID, user, key, at.UnixMilli(), 3600,
		"rc"+strconv.FormatInt(at.UnixNano(), 36)).Slice()
	if err != nil {
		t.Fatalf("reserve (campaign %d): %v", cid, err)
	}
	if code := vals[0].(int64); code != lua.DeductReserved {
		t.Fatalf("reserve: code %d", code)
	}
	return vals[1].(int64), vals[2].(int64)
}

// TestReconcileRepairWhileClaiming repairs again and again, after corrupting
// the counters on purpose, while shoppers claim: no oversell, no user over
// the limit, and no drift at the end.
func TestReconcileRepairWhileClaiming(t *testing.T) {
	const stock, limit, users, attempts, workers = 400, 2, 300, 700, 16
	f := newRCFixture(t, services.Config{}, stock, limit, models.RefundRestore)
	rdb := f.Env.Backends.Redis
	other := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}}) // a second instance repairs too

	var next atomic.Int64
	var results sync.Map // result word → *atomic.Int64
	count := func(word string) {
		v, _ := results.LoadOrStore(word, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	var claimed sync.Map // request key → coupon id
	stop := make(chan struct{})
	var repairs, repaired, corruptions atomic.Int64
	var rwg sync.WaitGroup
	for r, svc := range []*services.App{f.Env.Service, other} {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; i < 400; i++ { // bounded
				select {
				case <-stop:
					return
				default:
				}
				if r == 0 && i%2 == 1 {
					// Corrupt both ways, then repair in the same step.
					rdb.HIncrBy(f.Ctx, f.templateKey(), "remaining", int64(3-i%7))
					rdb.HDel(f.Ctx, f.templateKey()+":users", fmt.Sprintf("u%d", i%users))
					corruptions.Add(1)
				}
				rep, err := svc.Reconcile(f.Ctx, reconcilesvc.ReconcileRequest{TemplateID: f.tmpl.ID, Repair: true, Actor: "tester"})
				if err != nil {
					t.Errorf("reconcile: %v", err)
					return
				}
				repairs.Add(1)
				if rep.Templates[0].Repaired {
					repaired.Add(1)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// At least attempts claims, and more (up to four times as
				// many) until a repair has run among them: on a fast machine
				// the claims may otherwise all finish before the first one.
				i := next.Add(1)
				if i > attempts && (repaired.Load() > 0 || i > 4*attempts) {
					return
				}
				key := fmt.Sprintf("rc-%d", i)
				res, err := f.claim(fmt.Sprintf("u%d", i%users), key)
				if err != nil {
					code := models.ErrorCode(err)
					count(code.Word())
					if code == models.CodeInternal {
						t.Errorf("claim: %v", err)
					}
					continue
				}
				count("claimed")
				claimed.Store(key, res.Coupon.ID)
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()

	// The database: never more than the stock, nor the limit; every claim
	// answered "claimed" is there.
	live := f.live()
	if live > stock {
		t.Fatalf("oversold: %d live coupons for a stock of %d", live, stock)
	}
	var over int64
	f.Env.Backends.DB.Raw(`SELECT COUNT(*) FROM (SELECT user_id FROM user_coupons WHERE template_id = ? AND slot IS NOT NULL
		GROUP BY user_id HAVING COUNT(*) > ?) x`, f.tmpl.ID, limit).Scan(&over)
	if over != 0 {
		t.Fatalf("%d users hold more than %d coupons", over, limit)
	}
	nClaimed := 0
	claimed.Range(func(k, v any) bool {
		nClaimed++
		var n int64
		f.Env.Backends.DB.Model(&models.Coupon{}).Where("id = ? AND request_id = ?", v, k).Count(&n)
		if n != 1 {
			t.Errorf("claim %s answered claimed but its coupon is not in the database", k)
		}
		return true
	})
	if int64(nClaimed) != live {
		t.Errorf("%d claims answered claimed, %d live coupons", nClaimed, live)
	}
	if repaired.Load() == 0 {
		t.Errorf("no repair ran while the claims did")
	}
	d := f.reconcile(nil, false)
	f.wantNoDrift(d)
	words := map[string]int64{}
	results.Range(func(k, v any) bool { words[k.(string)] = v.(*atomic.Int64).Load(); return true })
	rcReport(t, "backend=%s claims=%d results=%v live=%d/%d corruptions=%d reconciles=%d repaired=%d audits=%d final: %s",
		testenv.BackendName(), min(next.Load()-workers, 4*attempts), words, live, stock, corruptions.Load(), repairs.Load(), repaired.Load(),
		len(f.audits("reconcile.repair")), rcShow(d))
}

// TestRepairPassLostReturn: a revoke (or refund under recycle) whose stock
// return never reached Redis, and a stock addition whose counters were never
// raised, are repaired by the pass once they are older than its grace.
func TestRepairPassLostReturn(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 1, models.RefundRecycle)
	a := f.mustClaim("a")
	f.mustClaim("b")
	f.loseReturn(a)
	// And 5 more stock in the database only.
	db := f.Env.Backends.DB
	if err := db.Exec("UPDATE templates SET total_stock = total_stock + 5 WHERE id = ?", f.tmpl.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&models.AuditEntry{Actor: "admin", Action: "template.stock", Target: fmt.Sprintf("template:%d", f.tmpl.ID),
		Detail: "delta=5", CreatedAt: f.Clock.Now()}).Error; err != nil {
		t.Fatal(err)
	}
	d := f.reconcile(nil, false)
	if d.Drift != -6 || d.UsersDrifted != 1 || d.TotalStock != 15 {
		t.Fatalf("want drift -6 (1 slot, 5 stock) and 1 user: %s", rcShow(d))
	}

	// Within the grace the pass leaves them: their Redis part may be running.
	st, err := f.Env.Service.RepairPass(f.Ctx)
	if err != nil || st.Checked != 0 || st.Repaired != 0 {
		t.Fatalf("pass within the grace: %+v %v", st, err)
	}
	f.Clock.Advance(11 * time.Second)
	st, err = f.Env.Service.RepairPass(f.Ctx)
	if err != nil || st.Repaired != 1 || st.StockChanges != 2 {
		t.Fatalf("pass after the grace: %+v %v, want 1 template repaired from 2 stock changes", st, err)
	}
	after := f.reconcile(nil, false)
	f.wantNoDrift(after)
	if *after.RedisRemaining != 14 {
		t.Fatalf("after the pass: %s", rcShow(after))
	}
	audits := f.audits("reconcile.repair")
	if len(audits) != 1 || audits[0].Actor != "reconciler" {
		t.Fatalf("audit entries: %+v", audits)
	}
	// The cursor moved on: the next pass has nothing to look at.
	if st, err := f.Env.Service.RepairPass(f.Ctx); err != nil || st.StockChanges != 0 || st.Repaired != 0 {
		t.Fatalf("third pass: %+v %v", st, err)
	}
	// The slot and the ordinal are claimable again.
	f.mustClaim("a")
	f.wantNoDrift(f.reconcile(nil, false))
	rcReport(t, "found %s; repaired by the pass: %s", rcShow(d), audits[0].Detail)
}

// TestRepairPassAfterRedisLoss: counters reloaded after Redis lost its data
// may miss a claim that was in flight; the pass compares the campaign once the
// claims of that moment have settled, and repairs it.
func TestRepairPassAfterRedisLoss(t *testing.T) {
	f := newRCFixture(t, services.Config{CoreConfig: services.CoreConfig{DBTimeout: time.Second}}, 10, 1, models.RefundRestore)
	f.mustClaim("a")
	f.Env.FlushRedis(t)
	f.mustClaim("b") // reloads
	// The row of a claim in flight at the loss, committed after the reload
	// read the database: Redis counts its slot free.
	if err := f.Env.Backends.DB.Create(&models.Coupon{Code: models.NewCouponCode(), TemplateID: f.tmpl.ID,
		CampaignID: f.tmpl.CampaignID, UserID: "c", Status: models.CouponIssued, Slot: rcPtr(int64(3)), UserOrdinal: rcPtr(int64(1)),
		RequestID: "late", ValueCents: 100, ClaimedAt: f.Clock.Now(), ValidFrom: f.Clock.Now(),
		ValidUntil: f.Clock.Now().Add(time.Hour), UpdatedAt: f.Clock.Now()}).Error; err != nil {
		t.Fatal(err)
	}
	if d := f.reconcile(nil, false); d.Drift != 1 || d.UsersDrifted != 1 {
		t.Fatalf("want drift 1: %s", rcShow(d))
	}
	st, err := f.Env.Service.RepairPass(f.Ctx)
	if err != nil || st.Checked != 0 {
		t.Fatalf("first pass marks the campaign due: %+v %v", st, err)
	}
	f.Clock.Advance(3 * time.Second)
	st, err = f.Env.Service.RepairPass(f.Ctx)
	if err != nil || st.Checked != 1 || st.Repaired != 1 {
		t.Fatalf("second pass: %+v %v, want 1 checked and repaired", st, err)
	}
	f.wantNoDrift(f.reconcile(nil, false))
	// Checked: the next passes leave it alone.
	f.Clock.Advance(3 * time.Second)
	if st, err := f.Env.Service.RepairPass(f.Ctx); err != nil || st.Checked != 0 {
		t.Fatalf("third pass: %+v %v", st, err)
	}
	rcReport(t, "repaired after the loss: %+v", st)
}

func rcPtr[T any](v T) *T { return &v }

// TestSweepTwoInstances: two instances settle the same stale reservations at
// once; each settles at most one batch per pass, and every reservation is
// settled once: the row there → confirmed, absent → given back.
func TestSweepTwoInstances(t *testing.T) {
	const stale = 300
	f := newRCFixture(t, services.Config{}, 1000, 1, models.RefundRestore)
	f.mustClaim("first") // loads the counters
	old := f.Clock.Now().Add(-time.Hour)
	// The reservations were made an hour ago: claims were open then.
	if _, err := f.Env.Service.UpdateTemplate(f.Ctx, "test", f.tmpl.ID,
		admin.TemplatePatch{ClaimStartsAt: rcPtr(old.Add(-time.Hour))}); err != nil {
		t.Fatal(err)
	}
	withRow := 0
	for i := 0; i < stale; i++ {
		user, key := fmt.Sprintf("s%d", i), fmt.Sprintf("stale-%d", i)
		slot, ord := f.reserve(t, user, key, old)
		if i%2 == 0 {
			continue // died before the insert
		}
		withRow++ // died after the insert, before the confirm
		if err := f.Env.Backends.DB.Create(&models.Coupon{Code: models.NewCouponCode(), TemplateID: f.tmpl.ID,
			CampaignID: f.tmpl.CampaignID, UserID: user, Status: models.CouponIssued, Slot: &slot, UserOrdinal: &ord,
			RequestID: key, ValueCents: 100, ClaimedAt: old, ValidFrom: old, ValidUntil: old.Add(72 * time.Hour),
			UpdatedAt: old}).Error; err != nil {
			t.Fatal(err)
		}
	}
	if d := f.reconcile(nil, false); d.InFlight != stale-int64(withRow) || d.Drift != 0 {
		t.Fatalf("before the sweep: %s", rcShow(d))
	}
	svcs := []*services.App{f.Env.Service, f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})}
	var passes, confirmed, released atomic.Int64
	var wg sync.WaitGroup
	for _, svc := range svcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				st, err := svc.Sweep(f.Ctx)
				if err != nil {
					t.Errorf("sweep: %v", err)
					return
				}
				if n := st.Confirmed + st.Released; n > 200 {
					t.Errorf("one pass settled %d reservations, more than its batch", n)
				}
				passes.Add(1)
				confirmed.Add(int64(st.Confirmed))
				released.Add(int64(st.Released))
			}
		}()
	}
	wg.Wait()
	pending, err := f.Env.Backends.Redis.ZCard(f.Ctx, f.key("pending")).Result()
	if err != nil || pending != 0 {
		t.Fatalf("%d reservations still pending (%v)", pending, err)
	}
	// Each reservation is counted once, by the instance that settled it.
	if confirmed.Load() != int64(withRow) || released.Load() != int64(stale-withRow) {
		t.Fatalf("the instances counted %d confirmed and %d released, want %d and %d",
			confirmed.Load(), released.Load(), withRow, stale-withRow)
	}
	d := f.reconcile(nil, false)
	f.wantNoDrift(d)
	if d.DBLive != int64(withRow)+1 || *d.RedisRemaining != 1000-d.DBLive {
		t.Fatalf("after the sweep: %s", rcShow(d))
	}
	// Given back means claimable again: every user without a row may claim.
	for i := 0; i < stale; i += 2 {
		if _, err := f.claim(fmt.Sprintf("s%d", i), fmt.Sprintf("again-%d", i)); err != nil {
			t.Fatalf("claim after the sweep gave the reservation back: %v", err)
		}
	}
	f.wantNoDrift(f.reconcile(nil, false))
	rcReport(t, "stale=%d with_row=%d passes=%d confirmed=%d released=%d (each counted once) final: %s",
		stale, withRow, passes.Load(), confirmed.Load(), released.Load(), rcShow(d))
}

func TestLoadMissingCounters(t *testing.T) {
	f := newRCFixture(t, services.Config{}, 10, 1, models.RefundRestore)
	f.mustClaim("a")
	f.Env.FlushRedis(t)
	n, err := f.Env.Service.LoadMissingCounters(f.Ctx)
	if err != nil || n != 1 {
		t.Fatalf("loaded %d campaigns (%v), want 1", n, err)
	}
	d := f.reconcile(nil, false)
	f.wantNoDrift(d)
	if *d.RedisRemaining != 9 {
		t.Fatalf("after the load: %s", rcShow(d))
	}
	if n, err := f.Env.Service.LoadMissingCounters(f.Ctx); err != nil || n != 0 {
		t.Fatalf("loaded %d campaigns again (%v), want 0", n, err)
	}
}
