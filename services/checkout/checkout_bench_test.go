package checkout_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// The service's own CPU per hold and confirm, as couponbench's
// cartcheckout scenarios run them (docs/statements.md): one pre-claimed
// fixed coupon of 500 cents per order, a new order each time, held then
// confirmed, on the backends of the tests (the embedded default unless
// COUPON_TEST_MYSQL_DSN / COUPON_TEST_REDIS_ADDR say otherwise). The
// coupons are claimed before the timer starts.
//
//	go test -run '^$' -bench HoldConfirm -benchmem ./services/checkout

// benchCoupons opens fresh backends and claims n coupons of one template
// (500 cents off), each for a user of its own.
func benchCoupons(b *testing.B, n int) (*services.App, []string) {
	b.Helper()
	env := testenv.New(b, services.Config{})
	app, ctx := env.Service, context.Background()
	camp, err := app.CreateCampaign(ctx, "bench", models.Campaign{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	tp, err := app.CreateTemplate(ctx, "bench", models.Template{CampaignID: camp.ID, Name: "bench", Kind: models.KindFixed,
		FaceValueCents: 500, TotalStock: int64(n) + 1, PerUserLimit: 1, ValidDays: 30})
	if err != nil {
		b.Fatal(err)
	}
	codes := make([]string, n)
	for i := range codes {
		res, err := app.Claim(ctx, claims.ClaimRequest{TemplateID: tp.ID, UserID: fmt.Sprintf("u%d", i), IdempotencyKey: fmt.Sprintf("k%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		codes[i] = res.Coupon.Code
	}
	return app, codes
}

// benchHoldConfirm holds then confirms b.N new orders, each with its own
// coupon, carrying cart (or only the cart's total when cart is nil), and
// checks each confirmed 500 cents off.
func benchHoldConfirm(b *testing.B, cart *checkout.Cart, total int64) {
	app, codes := benchCoupons(b, b.N)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		order := fmt.Sprintf("bench-%d", i)
		hold := checkout.CheckoutRequest{OrderID: order, CouponCodes: []string{codes[i]}, TTLSeconds: 600, Actor: "shop"}
		confirm := checkout.ConfirmRequest{OrderID: order}
		if cart != nil {
			hold.Cart, confirm.Cart = *cart, *cart
		} else {
			hold.OrderAmountCents = total
		}
		if _, err := app.Checkout.Hold(ctx, hold); err != nil {
			b.Fatalf("hold %s: %v", order, err)
		}
		res, err := app.Checkout.Confirm(ctx, confirm)
		if err != nil {
			b.Fatalf("confirm %s: %v", order, err)
		}
		if res.DiscountCents != 500 || res.PayableCents != total-500 {
			b.Fatalf("confirm %s: discount %d payable %d, want 500 and %d", order, res.DiscountCents, res.PayableCents, total-500)
		}
	}
}

func BenchmarkHoldConfirm20Lines(b *testing.B) {
	c, _ := benchcart.New(20)
	cart := checkout.Cart{Lines: c.Lines, ShippingCents: c.ShippingCents}
	benchHoldConfirm(b, &cart, c.TotalCents())
}

func BenchmarkHoldConfirmAmount(b *testing.B) {
	c, _ := benchcart.New(20)
	benchHoldConfirm(b, nil, c.TotalCents())
}

// The amount-only steps alone, for their allocations per step
// (docs/statements.md): a hold of a new order, the confirm of a hold made
// before the timer starts, and a one-step redemption of a new order.
//
//	go test -run '^$' -bench 'Amount' -benchmem ./services/checkout
func BenchmarkHoldAmount(b *testing.B) {
	benchAmountStep(b, "hold")
}

func BenchmarkConfirmAmount(b *testing.B) {
	benchAmountStep(b, "confirm")
}

func BenchmarkRedeemAmount(b *testing.B) {
	benchAmountStep(b, "redeem")
}

// benchAmountStep times one step of the amount-only checkout (hold,
// confirm or redeem) of b.N new orders of 10,000 cents, 500 off each.
func benchAmountStep(b *testing.B, step string) {
	app, codes := benchCoupons(b, b.N)
	ctx := context.Background()
	hold := func(i int) {
		if _, err := app.Checkout.Hold(ctx, checkout.CheckoutRequest{OrderID: fmt.Sprintf("bench-%d", i),
			OrderAmountCents: 10_000, CouponCodes: []string{codes[i]}, TTLSeconds: 600, Actor: "shop"}); err != nil {
			b.Fatalf("hold %d: %v", i, err)
		}
	}
	if step == "confirm" {
		for i := range b.N {
			hold(i)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		switch step {
		case "hold":
			hold(i)
		case "confirm":
			res, err := app.Checkout.Confirm(ctx, checkout.ConfirmRequest{OrderID: fmt.Sprintf("bench-%d", i)})
			if err != nil || res.DiscountCents != 500 || res.PayableCents != 9_500 {
				b.Fatalf("confirm %d: %+v, %v", i, res, err)
			}
		case "redeem":
			res, err := app.Checkout.Redeem(ctx, checkout.RedeemRequest{CouponCode: codes[i], OrderID: fmt.Sprintf("bench-%d", i),
				OrderAmountCents: 10_000, Cashier: "till"})
			if err != nil || res.DiscountCents != 500 || res.PayableCents != 9_500 {
				b.Fatalf("redeem %d: %+v, %v", i, res, err)
			}
		}
	}
}
