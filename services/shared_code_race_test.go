package services_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// TestSharedCodeRace: 200 shoppers type one shared code (stock 50, limit 1)
// at checkout, each in two orders at once: a hold then its confirm, and a
// one-step redemption; two service instances share the backends. Exactly 50
// coupons end used, no shopper has two, every other attempt is refused as
// sold out or over the limit, nothing stays held or pending, and the
// counters agree with the database.
func TestSharedCodeRace(t *testing.T) {
	const shoppers, stock = 200, 50
	f := newSharedFixture(t, stock, 1)
	var svcs []*services.App
	for range 2 {
		b := *f.Env.Backends
		b.Redis = f.patientRedis()
		svcs = append(svcs, f.serviceOver(b, services.Config{CoreConfig: services.CoreConfig{TemplateCacheTTL: time.Minute, DBTimeout: time.Minute}}))
	}
	type outcome struct {
		user, via string
		err       error
	}
	out := make([]outcome, 2*shoppers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range shoppers {
		user := fmt.Sprintf("shopper-%03d", i)
		wg.Add(2)
		go func() { // hold, then confirm
			defer wg.Done()
			svc := svcs[i%2]
			<-start
			order := "h-" + user
			_, err := svc.Hold(t.Context(), checkout.CheckoutRequest{OrderID: order, OrderAmountCents: 1000,
				CouponCodes: []string{"Summer10"}, UserID: user, TTLSeconds: 600, Actor: "shop"})
			if err == nil {
				_, err = svc.Confirm(t.Context(), checkout.ConfirmRequest{OrderID: order, Cashier: "shop"})
			}
			out[2*i] = outcome{user, "hold", err}
		}()
		go func() { // one step
			defer wg.Done()
			svc := svcs[(i+1)%2]
			<-start
			_, err := svc.Redeem(t.Context(), checkout.RedeemRequest{CouponCode: "summer10", OrderID: "r-" + user,
				OrderAmountCents: 1000, UserID: user, Cashier: "till"})
			out[2*i+1] = outcome{user, "redeem", err}
		}()
	}
	close(start)
	wg.Wait()
	won := map[string]string{}
	counts := map[string]int{}
	for _, o := range out {
		if o.err == nil {
			if via, twice := won[o.user]; twice {
				t.Errorf("%s used the code twice (%s and %s)", o.user, via, o.via)
			}
			won[o.user] = o.via
			counts["used"]++
			continue
		}
		switch w := models.ErrorCode(o.err).Word(); w {
		case "sold_out", "user_limit_reached":
			counts[w]++
		default:
			t.Errorf("%s by %s: %v", o.user, o.via, o.err)
		}
	}
	t.Logf("results: %v", counts)
	if counts["used"] != stock {
		t.Errorf("%d checkouts succeeded, want exactly %d", counts["used"], stock)
	}
	statuses := map[string]int{}
	owners := map[string]int{}
	for _, c := range f.Coupons() {
		statuses[c.Status]++
		if c.Status == models.CouponUsed {
			owners[c.UserID]++
			if via, ok := won[c.UserID]; !ok {
				t.Errorf("coupon %d used by %s, who was answered a refusal", c.ID, c.UserID)
			} else if want := map[string]string{"hold": "h-", "redeem": "r-"}[via] + c.UserID; c.OrderID == nil || *c.OrderID != want {
				t.Errorf("coupon %d used by order %v, want %s", c.ID, c.OrderID, want)
			}
		}
	}
	if statuses[models.CouponUsed] != stock || len(owners) != stock {
		t.Errorf("coupons by status %v, %d distinct owners; want %d used by %d shoppers", statuses, len(owners), stock, stock)
	}
	if statuses[models.CouponHeld] != 0 || statuses[models.CouponIssued] != 0 {
		t.Errorf("coupons by status %v: none may stay held or issued", statuses)
	}
	if f.remaining() != 0 {
		t.Errorf("remaining %d, want 0", f.remaining())
	}
	f.assertNoDrift()
}
