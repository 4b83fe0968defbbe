package services_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
)

// validateLines checks a validation's result and the word and discount of
// each of its lines, in the order of the codes.
func validateLines(t *testing.T, res *checkout.CheckoutResult, err error, result string, words []string, discounts []int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if res.Result != result || len(res.Coupons) != len(words) {
		t.Fatalf("validate: result %s with %d lines %+v, want %s with %d", res.Result, len(res.Coupons), res.Coupons, result, len(words))
	}
	for i, cc := range res.Coupons {
		if cc.Result != words[i] || cc.Code.Word() != words[i] || cc.DiscountCents != discounts[i] {
			t.Fatalf("validate line %d: %+v, want %s with discount %d (lines %+v)", i, cc, words[i], discounts[i], res.Coupons)
		}
		if (cc.Message == "") != (words[i] == "ok") {
			t.Fatalf("validate line %d: message %q for %s", i, cc.Message, words[i])
		}
	}
	if result != "ok" && (res.DiscountCents != 0 || res.PayableCents != res.OrderAmountCents) {
		t.Fatalf("a refused validation prices %d off, %d to pay", res.DiscountCents, res.PayableCents)
	}
}

// TestValidateStackingOnItsLine: a cart the stacking rules refuse names
// not_combinable on the line of each coupon the refusal concerns (the
// exclusive one, the second of a template, the one past the cap), never ok
// on every line under a refused result; the result is the word the hold
// answers.
func TestValidateStackingOnItsLine(t *testing.T) {
	f := newHoldFixture(t, services.Config{CheckoutConfig: services.CheckoutConfig{MaxCouponsPerOrder: 2}})
	fixed := f.tmpl(models.StackingCombinable, 2_000, 0, 0)
	other := f.tmpl(models.StackingCombinable, 1_000, 0, 0)
	third := f.tmpl(models.StackingCombinable, 500, 0, 0)
	ex := f.tmpl(models.StackingExclusive, 2_500, 0, 0)
	high := f.tmpl(models.StackingCombinable, 300, 0, 50_000)
	cf, cf2, co, ct, cx, ch := f.claim(fixed, "u1"), f.claim(fixed, "u1"), f.claim(other, "u1"), f.claim(third, "u1"),
		f.claim(ex, "u1"), f.claim(high, "u1")
	validate := func(codes ...*models.Coupon) (*checkout.CheckoutResult, error) {
		req := checkout.CheckoutRequest{OrderAmountCents: 10_000, UserID: "u1"}
		for _, c := range codes {
			req.CouponCodes = append(req.CouponCodes, c.Code)
		}
		return f.Checkout.Validate(f.Ctx, req)
	}

	t.Run("ExclusiveAmongOthers", func(t *testing.T) {
		res, err := validate(cf, cx)
		validateLines(t, res, err, "not_combinable", []string{"ok", "not_combinable"}, []int64{2_000, 0})
		if !strings.Contains(res.Coupons[1].Message, "exclusive") {
			t.Fatalf("the exclusive coupon's line: %+v", res.Coupons[1])
		}
		_, herr := f.hold("stack-1", 10_000, 60, cf, cx)
		wantCode(t, herr, models.CodeNotCombinable)
	})
	t.Run("SecondOfATemplate", func(t *testing.T) {
		res, err := validate(cf, cf2)
		validateLines(t, res, err, "not_combinable", []string{"ok", "not_combinable"}, []int64{2_000, 0})
	})
	t.Run("PastTheCap", func(t *testing.T) {
		res, err := validate(cf, co, ct)
		validateLines(t, res, err, "not_combinable", []string{"ok", "ok", "not_combinable"}, []int64{2_000, 1_000, 0})
	})
	t.Run("WithAnotherRefusal", func(t *testing.T) {
		// The hold answers the coupon's own refusal first; the exclusive
		// coupon's line still says why it cannot go on the order.
		res, err := validate(cx, ch)
		validateLines(t, res, err, "below_minimum", []string{"not_combinable", "below_minimum"}, []int64{0, 0})
		_, herr := f.hold("stack-2", 10_000, 60, cx, ch)
		wantCode(t, herr, models.CodeBelowMinimum)
	})
	t.Run("CombinableCartStillOK", func(t *testing.T) {
		res, err := validate(cf, co)
		validateLines(t, res, err, "ok", []string{"ok", "ok"}, []int64{2_000, 1_000})
		if res.DiscountCents != 3_000 || res.PayableCents != 7_000 {
			t.Fatalf("combinable cart: %+v", res)
		}
	})
	f.checkInvariants()
}

// TestValidateOtherUsersCouponIsNotFound: with a user_id, another user's
// coupon is answered exactly as a code no coupon has (the same error, word
// and message, the code aside), wherever it stands in the cart; the user's
// own coupons and a bearer coupon still validate.
func TestValidateOtherUsersCouponIsNotFound(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl(models.StackingCombinable, 500, 0, 0)
	tp2 := f.tmpl(models.StackingCombinable, 300, 0, 0)
	mine, theirs := f.claim(tp, "ann"), f.claim(tp2, "bob")
	bearer := f.Bearer(f.tmpl(models.StackingCombinable, 200, 0, 0), 1)[0]
	unknown := models.NewCouponCode()
	validate := func(user string, codes ...string) (*checkout.CheckoutResult, error) {
		return f.Checkout.Validate(f.Ctx, checkout.CheckoutRequest{OrderAmountCents: 1_000, UserID: user, CouponCodes: codes})
	}
	// line checks that the answer refuses with not_found and that code's
	// line (at i) says not_found naming it, and returns the line with the
	// code replaced by "<code>".
	line := func(code string, res *checkout.CheckoutResult, err error, i int) string {
		t.Helper()
		if err != nil || res.Result != "not_found" || res.DiscountCents != 0 || res.PayableCents != 1_000 || len(res.Coupons) <= i {
			t.Fatalf("validate %s: %+v %v, want 200 not_found, nothing off", code, res, err)
		}
		cc := res.Coupons[i]
		if cc.Result != "not_found" || cc.Code != models.CodeNotFound || cc.CouponCode != code || !strings.Contains(cc.Message, code) || cc.DiscountCents != 0 {
			t.Fatalf("validate %s: line %d %+v, want not_found naming it", code, i, cc)
		}
		return strings.ReplaceAll(fmt.Sprintf("%+v", cc), code, "<code>")
	}
	res, err := validate("ann", unknown)
	u := line(unknown, res, err, 0)
	res, err = validate("ann", theirs.Code)
	if th := line(theirs.Code, res, err, 0); th != u {
		t.Fatalf("unknown code %s and another user's coupon %s answered differently", u, th)
	}
	// Wherever such a code stands in the cart it has its line, the same
	// whichever kind it is; the user's own coupon keeps its own.
	res, err = validate("ann", mine.Code, theirs.Code, unknown)
	line(theirs.Code, res, err, 1)
	line(unknown, res, err, 2)
	if len(res.Coupons) != 3 || res.Coupons[0].CouponCode != mine.Code || res.Coupons[0].Result != "ok" {
		t.Fatalf("ann's own coupon in the cart: %+v", res.Coupons)
	}

	res, err = validate("ann", mine.Code, bearer.Code)
	validateLines(t, res, err, "ok", []string{"ok", "ok"}, []int64{500, 200})
	// Without a user_id (the till) the owner is not checked.
	res, err = validate("", theirs.Code)
	validateLines(t, res, err, "ok", []string{"ok"}, []int64{300})
	// bob sees his own.
	res, err = validate("bob", theirs.Code, bearer.Code)
	validateLines(t, res, err, "ok", []string{"ok", "ok"}, []int64{300, 200})
}
