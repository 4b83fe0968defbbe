package services_test

import (
	"fmt"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
)

// Returns by line of an order that took an automatic offer beside a typed
// coupon with an eligibility rule (docs/pricing.md, worked example 22;
// docs/returns.md): lines a (2 × 1,000) and b (1 × 3,000); the typed
// coupon 1,000 off, the offer 500 off orders from 5,000, both combinable,
// spread by price: 200, 200, 600 and 100, 100, 300; 3,500 to pay.

// offerRule admits the vip on the web and anyone at the till.
const offerRule = `"vip" in customer.tags || channel == "till"`

// offerReturnCase is the order of the worked example on a fixture whose
// two templates (the offer, f.tp, and the typed one) refund by policy.
type offerReturnCase struct {
	f     *autoFixture
	typed *models.Template
	code  string // the typed coupon's
	cart  checkout.Cart
	// user is who the offer is claimed for: bob, or no one at the till,
	// which names no customer (an anonymous claim holds no ordinal).
	user string
}

func newOfferReturnCase(t *testing.T, policy string) *offerReturnCase {
	t.Helper()
	f := newAutoFixture(t, 10_000, 0, 10, 1, func(tp *models.Template) { tp.RefundPolicy = policy })
	typed := f.template(f.campaign.ID, 10, 1, 1_000, func(tp *models.Template) {
		tp.Stacking, tp.Eligibility, tp.RefundPolicy = models.StackingCombinable, offerRule, policy
	})
	return &offerReturnCase{f: f, typed: typed, code: f.MustClaim(typed.ID, "bob", "k1").Coupon.Code,
		cart: checkout.Cart{Lines: []pricing.Line{line("a", 2, 1_000), line("b", 1, 3_000)},
			Customer: &checkout.Customer{Tags: []string{"vip"}}}, user: "bob"}
}

// ordinal is bob's ordinals in Redis while the offer's claim holds one.
func (c *offerReturnCase) ordinal() string {
	if c.user == "" {
		return ""
	}
	return "1"
}

// assertTaken wants the order to use both coupons, the offer's claimed for
// c.user, its stock, the user's ordinal and the budget taken in Redis.
func (c *offerReturnCase) assertTaken(t *testing.T) {
	t.Helper()
	f := c.f
	offer := c.offerCoupon(t)
	if offer.Status != models.CouponUsed || offer.UserID != c.user || (offer.UserOrdinal == nil) != (c.user == "") ||
		f.couponOf(c.code).Status != models.CouponUsed {
		t.Fatalf("offer's coupon %+v; typed coupon %s", offer, f.couponOf(c.code).Status)
	}
	if f.remaining() != 9 || f.ordinals("bob") != c.ordinal() || f.budgetLeft() != 10_000-1_000-500 {
		t.Fatalf("offer's stock %d, bob's ordinals %q, budget %d", f.remaining(), f.ordinals("bob"), f.budgetLeft())
	}
}

// offerCoupon is the one coupon of the offer's template.
func (c *offerReturnCase) offerCoupon(t *testing.T) models.Coupon {
	t.Helper()
	var out []models.Coupon
	for _, cp := range c.f.Coupons() {
		if cp.TemplateID == c.f.tp.ID {
			out = append(out, cp)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d coupons of the offer, want 1", len(out))
	}
	return out[0]
}

// returnAll returns line b, then line a, and wants the exact refunds, the
// order's payable after each, and at the end the coupons refunded by their
// policy, in the database and in Redis.
func (c *offerReturnCase) returnAll(t *testing.T, order, policy string) {
	t.Helper()
	f := c.f
	first, err := f.Checkout.ReturnLines(f.Ctx, "pos", order, order+"-r1", []checkout.ReturnLine{rl("b", 1)})
	if err != nil || first.RefundCents != 2_100 || first.DiscountReturnedCents != 900 || len(first.Lines) != 1 ||
		first.Lines[0] != (models.ReturnedLine{LineID: "b", Quantity: 1, RefundCents: 2_100, DiscountCents: 900}) ||
		first.KeptAmountCents != 2_000 || first.DiscountKeptCents != 600 || first.FullRefund {
		t.Fatalf("return of b: %+v, %v", first, err)
	}
	// The order pays 1,400 for what it keeps: 2,000 less 400 and 200.
	if payable := first.KeptAmountCents - first.DiscountKeptCents; payable != 1_400 {
		t.Fatalf("after the return of b the order pays %d, want 1400", payable)
	}
	c.assertTaken(t) // a partial return refunds no coupon
	rest, err := f.Checkout.ReturnLines(f.Ctx, "pos", order, order+"-r2", []checkout.ReturnLine{rl("a", 2)})
	if err != nil || rest.RefundCents != 1_400 || rest.DiscountReturnedCents != 600 || !rest.FullRefund ||
		rest.KeptAmountCents != 0 || rest.DiscountKeptCents != 0 || len(rest.Refunds) != 2 {
		t.Fatalf("return of a: %+v, %v", rest, err)
	}
	if paid := first.RefundCents + rest.RefundCents; paid != 5_000-1_500 {
		t.Fatalf("refunded %d in all, paid 3500", paid)
	}
	offer := c.offerCoupon(t)
	switch policy {
	case models.RefundRestore:
		// Issued again to its holder: it keeps its slot, the holder's
		// ordinal and the budget it took.
		if offer.Status != models.CouponIssued || offer.Slot == nil || (offer.UserOrdinal == nil) != (c.user == "") || offer.OrderID != nil ||
			f.couponOf(c.code).Status != models.CouponIssued {
			t.Fatalf("restored offer %+v; typed %s", offer, f.couponOf(c.code).Status)
		}
		if f.remaining() != 9 || f.ordinals("bob") != c.ordinal() || f.budgetLeft() != 10_000-1_500 {
			t.Fatalf("offer's stock %d, bob's ordinals %q, budget %d", f.remaining(), f.ordinals("bob"), f.budgetLeft())
		}
	case models.RefundRecycle:
		// Revoked: its slot, the holder's ordinal and its budget value go
		// back.
		if offer.Status != models.CouponRevoked || offer.Slot != nil || offer.UserOrdinal != nil ||
			f.couponOf(c.code).Status != models.CouponRevoked {
			t.Fatalf("recycled offer %+v; typed %s", offer, f.couponOf(c.code).Status)
		}
		if f.remaining() != 10 || f.ordinals("bob") != "" || f.budgetLeft() != 10_000 {
			t.Fatalf("offer's stock %d, bob's ordinals %q, budget %d", f.remaining(), f.ordinals("bob"), f.budgetLeft())
		}
	}
	f.assertAgree(f.campaign, f.tp, c.typed) // the database's slots, ordinals and budget are Redis's
}

// TestAutomaticOfferReturnByLine: the worked example taken by a hold and
// its confirm, returned line by line, under either refund policy.
func TestAutomaticOfferReturnByLine(t *testing.T) {
	for _, policy := range []string{models.RefundRestore, models.RefundRecycle} {
		t.Run(policy, func(t *testing.T) {
			c := newOfferReturnCase(t, policy)
			f := c.f
			held, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "o-1", UserID: "bob", CouponCodes: []string{c.code},
				Cart: c.cart, TTLSeconds: 600, Actor: "shop"})
			if err != nil || len(held.Coupons) != 2 || !held.Coupons[1].Automatic || held.DiscountCents != 1_500 || held.PayableCents != 3_500 {
				t.Fatalf("hold: %+v, %v", held, err)
			}
			want := []checkout.LineDiscount{
				{LineID: "a", DiscountCents: 600, Coupons: []checkout.LineCoupon{{CouponCode: c.code, DiscountCents: 400}, {CouponCode: held.Coupons[1].CouponCode, DiscountCents: 200}}},
				{LineID: "b", DiscountCents: 900, Coupons: []checkout.LineCoupon{{CouponCode: c.code, DiscountCents: 600}, {CouponCode: held.Coupons[1].CouponCode, DiscountCents: 300}}},
			}
			if got := fmt.Sprint(held.Lines); got != fmt.Sprint(want) {
				t.Fatalf("hold's lines %s, want %s", got, fmt.Sprint(want))
			}
			if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "o-1", Cashier: "shop"}); err != nil {
				t.Fatal(err)
			}
			c.assertTaken(t)
			c.returnAll(t, "o-1", policy)
		})
	}
}

// TestAutomaticOfferReturnByLineOneStep: the worked example taken by the
// one-step redemption of the typed code (the vip on the web) and by the
// till's sale of it (anyone at the till), returned line by line.
func TestAutomaticOfferReturnByLineOneStep(t *testing.T) {
	for _, policy := range []string{models.RefundRestore, models.RefundRecycle} {
		t.Run("Redeem/"+policy, func(t *testing.T) {
			c := newOfferReturnCase(t, policy)
			f := c.f
			res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.code, OrderID: "r-1", UserID: "bob", Cashier: "till", Cart: c.cart})
			if err != nil || res.Duplicate || !res.Lined || res.DiscountCents != 1_000 || res.PayableCents != 3_500 {
				t.Fatalf("redemption: %+v, %v", res, err)
			}
			c.assertTaken(t)
			c.returnAll(t, "r-1", policy)
		})
		t.Run("TillSale/"+policy, func(t *testing.T) {
			c := newOfferReturnCase(t, policy)
			f := c.f
			cart := c.cart
			cart.Customer, c.user = nil, "" // the till names no customer: its channel admits
			sale, err := f.Checkout.RedeemSale(f.Ctx, checkout.CheckoutRequest{OrderID: "t-1", CouponCodes: []string{c.code}, Cart: cart}, "till-1")
			if err != nil || sale.Duplicate || len(sale.Coupons) != 2 || sale.DiscountCents != 1_500 || sale.PayableCents != 3_500 {
				t.Fatalf("sale: %+v, %v", sale, err)
			}
			c.assertTaken(t)
			c.returnAll(t, "t-1", policy)
		})
	}
}
