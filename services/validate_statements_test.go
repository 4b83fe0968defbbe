package services_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"
)

// A validation of a 20-line cart with three coupons reads the three in one
// SELECT and writes nothing (docs/statements.md, "Validate"); its answers
// are those of the code-by-code read: the discounts, the first code no
// coupon has, another user's coupon as not_found, a revoked coupon on its
// line.
func TestValidateReadsItsCouponsInOneStatement(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	var log statementLog
	log.register(t, f.Backends.DB)
	ts := []*models.Template{f.tmpl(models.StackingCombinable, 300, 0, 0), f.tmpl(models.StackingCombinable, 400, 0, 0),
		f.tmpl(models.StackingCombinable, 500, 0, 0)}
	var codes []string
	for _, tp := range ts {
		codes = append(codes, f.claim(tp, "u1").Code)
	}
	other := f.claim(ts[0], "u2")
	cart, _ := benchcart.New(20)
	req := func(codes ...string) checkout.CheckoutRequest {
		return checkout.CheckoutRequest{CouponCodes: codes, UserID: "u1",
			Cart: checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}}
	}
	// The templates are in the cache after a first validation, as on any
	// instance that serves checkouts.
	if _, err := f.Checkout.Validate(f.Ctx, req(codes...)); err != nil {
		t.Fatal(err)
	}
	var res *checkout.CheckoutResult
	var err error
	stmts := log.during(func() { res, err = f.Checkout.Validate(f.Ctx, req(codes...)) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "ok" || res.DiscountCents != 1200 || len(res.Coupons) != 3 {
		t.Fatalf("answer %+v, want ok with 300+400+500 off", res)
	}
	if len(stmts) != 1 || !strings.HasPrefix(stmts[0], "SELECT") || !strings.Contains(stmts[0], "user_coupons") {
		t.Fatalf("statements %q, want the one SELECT of the coupons", stmts)
	}

	missing := models.NewCouponCode() // a well-formed code no coupon has
	for _, tc := range []struct {
		name  string
		codes []string
		want  []string
	}{
		{"a code no coupon has, second", []string{codes[0], missing, codes[2]}, []string{"ok", "not_found", "ok"}},
		{"another user's coupon before a missing code", []string{codes[1], other.Code, missing}, []string{"ok", "not_found", "not_found"}},
	} {
		stmts := log.during(func() { res, err = f.Checkout.Validate(f.Ctx, req(tc.codes...)) })
		var words []string
		if err == nil {
			for _, cc := range res.Coupons {
				words = append(words, cc.Result)
			}
		}
		if err != nil || res.Result != "not_found" || fmt.Sprint(words) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v (lines %v), want not_found with lines %v", tc.name, err, words, tc.want)
		}
		if len(stmts) != 1 {
			t.Errorf("%s: statements %q, want one SELECT", tc.name, stmts)
		}
	}

	if _, err := f.Admin.Revoke(f.Ctx, "admin", codes[1], false, "validate test"); err != nil {
		t.Fatal(err)
	}
	res, err = f.Checkout.Validate(f.Ctx, req(codes...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != "revoked" || res.Coupons[1].Result != "revoked" || res.Coupons[0].Result != "ok" || res.Coupons[2].Result != "ok" {
		t.Fatalf("with the second revoked: %+v", res)
	}
	for _, c := range f.Coupons() {
		if c.Code != codes[1] && c.Status != models.CouponIssued {
			t.Errorf("coupon %s is %s after validations, want issued", c.Code, c.Status)
		}
	}
}
