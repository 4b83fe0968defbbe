package services_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// autoFixture is a campaign with a budget and a per-customer cap, and one
// automatic offer of it: 500 off orders of at least 5000.
type autoFixture struct {
	*claimFixture
	campaign *models.Campaign
	tp       *models.Template
}

func newAutoFixture(t *testing.T, budget, perCustomer, stock, perUser int64) *autoFixture {
	t.Helper()
	f := &autoFixture{claimFixture: newClaimFixture(t, services.Config{})}
	f.campaign = f.CreateCampaign(models.Campaign{Name: "autumn", BudgetCents: budget, PerCustomerLimit: perCustomer})
	f.tp = f.template(f.campaign.ID, stock, perUser, 500, func(tp *models.Template) {
		tp.CodeMode, tp.MinOrderCents, tp.Stacking = models.CodeModeAutomatic, 5000, models.StackingCombinable
	})
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
			var svcs []*services.App
			for range 2 {
				b := *f.Env.Backends
				b.Redis = f.patientRedis()
				svcs = append(svcs, f.serviceOver(b, services.Config{TemplateCacheTTL: time.Minute, DBTimeout: time.Minute}))
			}
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
