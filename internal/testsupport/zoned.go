package testsupport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// ZonedEnv is the demo deployment in New York's time zone on a clock the
// test sets.
type ZonedEnv struct {
	*PageEnv
	Clock *testenv.Clock
	loc   *time.Location
}

// NewZonedEnv returns the demo deployment in New York with the clock at
// start (RFC 3339).
func NewZonedEnv(t *testing.T, start string) *ZonedEnv {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	clock := &testenv.Clock{}
	clock.Set(MustTime(t, start))
	return &ZonedEnv{PageEnv: NewPageEnvWith(t, services.Config{CoreConfig: services.CoreConfig{Location: loc, Now: clock.Now}}), Clock: clock, loc: loc}
}

// MustTime parses an RFC 3339 time.
func MustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

// RedeemAt claims a coupon of tp and redeems it at the instant at (UTC),
// by cashier; refundAt, when set, refunds it then. The clock goes back to
// where it was.
func (e *ZonedEnv) RedeemAt(t *testing.T, tp *models.Template, n int, at, cashier string, amount int64, refundAt string) {
	t.Helper()
	ctx := context.Background()
	was := e.Clock.Now()
	defer e.Clock.Set(was)
	res, err := e.Service.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: fmt.Sprint("shopper-", n), IdempotencyKey: fmt.Sprint("k-", n)})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Set(MustTime(t, at))
	order := fmt.Sprint("order-", n)
	if _, err := e.Service.Redeem(ctx, checkout.RedeemRequest{CouponCode: res.Coupon.Code, OrderID: order,
		OrderAmountCents: amount, Cashier: cashier}); err != nil {
		t.Fatal(err)
	}
	if refundAt != "" {
		e.Clock.Set(MustTime(t, refundAt))
		if _, err := e.Service.Refund(ctx, checkout.RefundRequest{CouponCode: res.Coupon.Code, OrderID: order, Cashier: cashier}); err != nil {
			t.Fatal(err)
		}
	}
}
