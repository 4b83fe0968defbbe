package services_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"

	"gorm.io/gorm"
)

// autoFixture is a campaign with a budget and a per-customer cap, and one
// automatic offer of it (tp): 500 off orders of at least 5000.
type autoFixture struct{ *sharedFixture }

// edit may change the offer's other fields before it is created.
func newAutoFixture(t *testing.T, budget, perCustomer, stock, perUser int64, edit ...func(*models.Template)) *autoFixture {
	t.Helper()
	f := &autoFixture{&sharedFixture{claimFixture: newClaimFixture(t, services.Config{})}}
	f.campaign = f.CreateCampaign(models.Campaign{Name: "autumn", BudgetCents: budget, PerCustomerLimit: perCustomer})
	f.tp = f.template(f.campaign.ID, stock, perUser, 500, append([]func(*models.Template){func(tp *models.Template) {
		tp.CodeMode, tp.MinOrderCents, tp.Stacking = models.CodeModeAutomatic, 5000, models.StackingCombinable
	}}, edit...)...)
	return f
}

// holdAuto holds an order with no code typed.
func holdAuto(svc *services.App, f *autoFixture, order, user string, amount int64) (*checkout.CheckoutResult, error) {
	return svc.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: order, OrderAmountCents: amount, UserID: user, TTLSeconds: 600, Actor: "shop"})
}

// TestAutomaticOfferRace: 50 carts of 10 customers (5 each) take an
// automatic offer with no code on two service instances at once, each a
// hold then its confirm. The campaign's budget and its per-customer cap
// are never passed: exactly as many coupons are used as the tighter of the
// two allows, no customer holds more than the cap, the budget left is
// exact, every other cart is refused with the word of the bound it met,
// and the counters agree with the database.
func TestAutomaticOfferRace(t *testing.T) {
	const carts, customers, capPer = 50, 10, 2
	for _, tc := range []struct {
		name     string
		budget   int64 // in coupons of 500
		wantUsed int
		refusals []string // the words a refused cart may get
	}{
		// A customer may meet the cap before the budget runs out.
		{"BudgetBinds", 15, 15, []string{"budget_exhausted", "campaign_limit"}},
		{"CapBinds", 40, customers * capPer, []string{"campaign_limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAutoFixture(t, tc.budget*500, capPer, 100, 5)
			svcs := f.instances(2)
			errs := make([]error, carts)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range carts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					svc, order, user := svcs[i%2], fmt.Sprintf("cart-%02d", i), fmt.Sprintf("customer-%d", i%customers)
					<-start
					res, err := holdAuto(svc, f, order, user, 6000)
					if err == nil && (len(res.Coupons) != 1 || !res.Coupons[0].Automatic || res.DiscountCents != 500 || res.PayableCents != 5500) {
						err = fmt.Errorf("hold answered %+v", res)
					}
					if err == nil {
						_, err = svc.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: order, Cashier: "shop"})
					}
					errs[i] = err
				}()
			}
			close(start)
			wg.Wait()
			counts := map[string]int{}
			for i, err := range errs {
				switch w := models.ErrorCode(err).Word(); {
				case err == nil:
					counts["used"]++
				case slices.Contains(tc.refusals, w):
					counts["refused"]++
				default:
					t.Errorf("cart %d: %v", i, err)
				}
			}
			if counts["used"] != tc.wantUsed || counts["refused"] != carts-tc.wantUsed {
				t.Errorf("results %v, want %d used and %d refused (%v)", counts, tc.wantUsed, carts-tc.wantUsed, tc.refusals)
			}
			perCustomer := map[string]int{}
			statuses := map[string]int{}
			for _, c := range f.Coupons() {
				statuses[c.Status]++
				if c.Status == models.CouponUsed {
					perCustomer[c.UserID]++
				}
			}
			if statuses[models.CouponUsed] != tc.wantUsed || len(statuses) != 1 {
				t.Errorf("coupons by status %v, want %d used and nothing else", statuses, tc.wantUsed)
			}
			for u, n := range perCustomer {
				if n > capPer {
					t.Errorf("%s holds %d coupons of the campaign, over its cap %d", u, n, capPer)
				}
			}
			if tc.name == "CapBinds" && len(perCustomer) != customers {
				t.Errorf("%d customers hold coupons, want all %d at the cap", len(perCustomer), customers)
			}
			left, err := f.Env.Backends.Redis.Get(f.Ctx, f.Key(f.campaign.ID, "budget")).Int64()
			if want := (tc.budget - int64(tc.wantUsed)) * 500; err != nil || left != want {
				t.Errorf("budget left %d (%v), want %d", left, err, want)
			}
			f.assertAgree(f.campaign, f.tp)
		})
	}
}

// TestAutomaticOffer: an automatic offer at validate, hold, release and
// beside typed codes, and the campaign's cap over claims and shared codes.
func TestAutomaticOffer(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := newAutoFixture(t, 10*500, 0, 10, 1)
		ctx := f.Ctx
		// Below the offer's minimum: nothing applies, the request has no code.
		_, err := f.Checkout.Validate(ctx, checkout.CheckoutRequest{OrderAmountCents: 4999, UserID: "ann"})
		assertClaimCode(t, err, models.CodeInvalidRequest, "coupon_codes")
		res, err := f.Checkout.Validate(ctx, checkout.CheckoutRequest{OrderAmountCents: 6000, UserID: "ann"})
		if err != nil || res.Result != "ok" || len(res.Coupons) != 1 || !res.Coupons[0].Automatic ||
			res.Coupons[0].TemplateID != f.tp.ID || res.DiscountCents != 500 || res.PayableCents != 5500 {
			t.Fatalf("validate: %+v, %v", res, err)
		}
		if f.couponCount() != 0 {
			t.Fatalf("validate wrote %d coupons", f.couponCount())
		}
		if _, err := holdAuto(f.Svc, f, "o-1", "ann", 6000); err != nil {
			t.Fatal(err)
		}
		// The same hold again is its duplicate: nothing more is taken.
		again, err := holdAuto(f.Svc, f, "o-1", "ann", 6000)
		if err != nil || !again.Duplicate || f.couponCount() != 1 {
			t.Fatalf("repeat: %+v, %v; %d coupons", again, err, f.couponCount())
		}
		// Ann's limit (1) is reached: her next cart takes no offer.
		_, err = holdAuto(f.Svc, f, "o-2", "ann", 6000)
		assertClaimCode(t, err, models.CodeUserLimitReached)
		// A release gives the claim back, as a shared code's.
		if _, err := f.Checkout.Release(ctx, "shop", "o-1"); err != nil {
			t.Fatal(err)
		}
		if f.remaining() != 10 || f.ordinals("ann") != "" {
			t.Fatalf("after release: remaining %d, ordinals %q", f.remaining(), f.ordinals("ann"))
		}
		if _, err := holdAuto(f.Svc, f, "o-2", "ann", 6000); err != nil {
			t.Fatal(err)
		}
		f.assertAgree(f.campaign, f.tp)
	})
	t.Run("StacksWithTypedCodes", func(t *testing.T) {
		f := newAutoFixture(t, 0, 0, 10, 1)
		combinable := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
		exclusive := f.template(f.campaign.ID, 10, 1, 1000)
		a := f.MustClaim(combinable.ID, "bob", "k1").Coupon
		b := f.MustClaim(exclusive.ID, "bob", "k2").Coupon
		res, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "o-1", OrderAmountCents: 6000, UserID: "bob",
			CouponCodes: []string{a.Code}, TTLSeconds: 600})
		if err != nil || len(res.Coupons) != 2 || res.Coupons[0].CouponCode != a.Code || !res.Coupons[1].Automatic ||
			res.DiscountCents != 800 {
			t.Fatalf("combinable: %+v, %v", res, err)
		}
		// An exclusive typed coupon keeps the cart to itself: the offer is left out.
		res, err = f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "o-2", OrderAmountCents: 6000, UserID: "bob",
			CouponCodes: []string{b.Code}, TTLSeconds: 600})
		if err != nil || len(res.Coupons) != 1 || res.Coupons[0].CouponCode != b.Code || res.DiscountCents != 1000 {
			t.Fatalf("exclusive: %+v, %v", res, err)
		}
		if f.remaining() != 9 {
			t.Fatalf("offer's stock left %d, want 9", f.remaining())
		}
	})
	t.Run("ErrCampaignLimit", func(t *testing.T) {
		// Cap 2 over the campaign: a claim and a shared code's claim fill
		// it; the automatic offer, a third claim and validate then refuse.
		f := newAutoFixture(t, 0, 2, 10, 5)
		claimed := f.template(f.campaign.ID, 10, 5, 100)
		f.template(f.campaign.ID, 10, 5, 100, func(tp *models.Template) {
			tp.CodeMode, tp.SharedCode, tp.Stacking = models.CodeModeShared, "poster42", models.StackingCombinable
		})
		f.MustClaim(claimed.ID, "cy", "k1")
		if _, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: "POSTER42", OrderID: "r-1",
			OrderAmountCents: 1000, UserID: "cy", Cashier: "till"}); err != nil {
			t.Fatal(err)
		}
		_, err := f.Claim(claimed.ID, "cy", "k2")
		assertClaimCode(t, err, models.CodeCampaignLimit)
		_, err = holdAuto(f.Svc, f, "o-1", "cy", 6000)
		assertClaimCode(t, err, models.CodeCampaignLimit)
		_, err = f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 6000, UserID: "cy"})
		assertClaimCode(t, err, models.CodeCampaignLimit)
		// Another customer is not counted with cy.
		if _, err := holdAuto(f.Svc, f, "o-2", "dee", 6000); err != nil {
			t.Fatal(err)
		}
		if n := f.couponCount(); n != 3 {
			t.Fatalf("%d coupons, want 3", n)
		}
	})
}

// instances starts n service instances over the test's backends, each with
// its own Redis client, for races across instances.
func (f *claimFixture) instances(n int) []*services.App {
	f.T.Helper()
	var svcs []*services.App
	for range n {
		b := *f.Env.Backends
		b.Redis = f.patientRedis()
		svcs = append(svcs, f.serviceOver(b, services.Config{CoreConfig: services.CoreConfig{TemplateCacheTTL: time.Minute, DBTimeout: time.Minute}}))
	}
	return svcs
}

// TestAutomaticOffersRefreshOnce: when the list of offers is older than
// the TTL by the service's clock, N requests arriving together read it
// again with exactly one SELECT; the others answer from the old list
// without waiting for that read (docs/automatic-offers.md).
func TestAutomaticOffersRefreshOnce(t *testing.T) {
	const n = 20
	f := newAutoFixture(t, 0, 0, 10, 1)
	if offers, err := f.Checkout.AutomaticOffers(f.Ctx); err != nil || len(offers) != 1 {
		t.Fatalf("offers: %+v, %v", offers, err)
	}
	db := f.Env.Backends.DB
	var log statementLog
	log.register(t, db)
	// The one read blocks until the other n-1 requests have answered.
	var answered atomic.Int32
	var armed atomic.Bool
	if err := db.Callback().Query().Before("gorm:query").Register("test:slow", func(*gorm.DB) {
		for deadline := time.Now().Add(5 * time.Second); armed.Load() && answered.Load() < n-1 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}); err != nil {
		t.Fatal(err)
	}
	// Within the TTL by the service's clock, nothing is read.
	if stmts := log.during(func() { _, _ = f.Checkout.AutomaticOffers(f.Ctx) }); len(stmts) != 0 {
		t.Fatalf("a fresh list read %d statements: %q", len(stmts), stmts)
	}
	f.Clock.Advance(2 * time.Second) // past the default TTL of 1 s
	armed.Store(true)
	counts := make([]int, n)
	errs := make([]error, n)
	stmts := log.during(func() {
		race(n, func(i int) {
			offers, err := f.Checkout.AutomaticOffers(f.Ctx)
			counts[i], errs[i] = len(offers), err
			answered.Add(1)
		})
	})
	armed.Store(false)
	if len(stmts) != 1 || !strings.Contains(stmts[0], "code_mode") {
		t.Fatalf("%d requests on a stale list ran %d statements, want the one SELECT of the offers: %q", n, len(stmts), stmts)
	}
	for i := range n {
		if errs[i] != nil || counts[i] != 1 {
			t.Fatalf("request %d: %d offers, %v", i, counts[i], errs[i])
		}
	}
	// The list read is fresh again: the next request reads nothing.
	if stmts := log.during(func() { _, _ = f.Checkout.AutomaticOffers(f.Ctx) }); len(stmts) != 0 {
		t.Fatalf("after the refresh %d statements: %q", len(stmts), stmts)
	}
}

// TestAutomaticOffersUnreadable: when the list of offers cannot be read,
// every checkout path that may take an offer answers unavailable (503),
// never the business answer of a cart without offers, and takes nothing
// (docs/automatic-offers.md, docs/failures.md).
func TestAutomaticOffersUnreadable(t *testing.T) {
	f := newAutoFixture(t, 0, 0, 10, 1)
	typed := f.template(f.campaign.ID, 10, 1, 300, func(tp *models.Template) { tp.Stacking = models.StackingCombinable })
	a := f.MustClaim(typed.ID, "bob", "k1").Coupon
	var failing atomic.Bool
	db := f.Env.Backends.DB
	if err := db.Callback().Query().Before("gorm:query").Register("test:offers-fail", func(tx *gorm.DB) {
		// The read of the offers: templates joined to their campaigns.
		if failing.Load() && tx.Statement.Table == "templates" && len(tx.Statement.Joins) > 0 {
			_ = tx.AddError(errors.New("connection refused"))
		}
	}); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(2 * time.Second) // the list read at the claim is stale
	failing.Store(true)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"HoldNoCode", func() error { _, err := holdAuto(f.Svc, f, "o-1", "bob", 6000); return err }},
		{"ValidateNoCode", func() error {
			_, err := f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderID: "o-1", OrderAmountCents: 6000, UserID: "bob"})
			return err
		}},
		{"Redeem", func() error {
			_, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "o-1", OrderAmountCents: 6000, UserID: "bob"})
			return err
		}},
		{"TillSale", func() error {
			_, err := f.Checkout.RedeemSale(f.Ctx, checkout.CheckoutRequest{OrderID: "o-1", OrderAmountCents: 6000, CouponCodes: []string{a.Code}}, "till")
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertClaimCode(t, tc.call(), models.CodeUnavailable)
			if c := f.couponOf(a.Code); c.Status != models.CouponIssued || f.couponCount() != 1 || f.remaining() != 10 {
				t.Fatalf("after the refusal: %s, %d coupons, offer's stock %d", c.Status, f.couponCount(), f.remaining())
			}
		})
	}
	failing.Store(false)
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: a.Code, OrderID: "o-1", OrderAmountCents: 6000, UserID: "bob"})
	if err != nil || res.PayableCents != 5200 || f.couponCount() != 2 || f.remaining() != 9 {
		t.Fatalf("once readable: %+v, %v; %d coupons, offer's stock %d", res, err, f.couponCount(), f.remaining())
	}
}
