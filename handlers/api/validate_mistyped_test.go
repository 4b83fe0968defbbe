package api_test

import (
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestValidateMistypedCodeSameWithOrWithoutUser: a mistyped code (a
// coupon's code with a character missing, or one mistyped) is answered as
// a code no coupon has: 200, result not_found, a not_found line naming it,
// word for word the same with a user_id and without, and the same as an
// unknown code's answer. It used to be 400 invalid_request without a user
// and 404 with one.
func TestValidateMistypedCodeSameWithOrWithoutUser(t *testing.T) {
	r := testsupport.NewRig(t, handlers.Options{})
	code := r.Coupon("alice")
	unknown := models.NewCouponCode()
	// The last character (the check character) changed for another of the
	// alphabet.
	swapped := code[:len(code)-1] + string(models.CodeAlphabet[(strings.IndexByte(models.CodeAlphabet, code[len(code)-1])+1)%len(models.CodeAlphabet)])
	for _, mistyped := range []string{code[:len(code)-1], swapped} {
		without := r.Validate("", testsupport.Req{}, mistyped)
		if without.Status != 200 || without.Body["result"] != "not_found" ||
			!strings.Contains(without.Raw, `"coupon_code":"`+mistyped+`","result":"not_found","code":10,"message":"no coupon has the code `+mistyped+`"`) {
			t.Fatalf("%s without a user_id: %v, want 200 not_found with its line", mistyped, without)
		}
		for _, user := range []string{"alice", "bob"} {
			if with := r.Validate(user, testsupport.Req{}, mistyped); with.Status != without.Status || with.Raw != without.Raw {
				t.Fatalf("%s with user_id %s: %d %s\nwithout: %d %s", mistyped, user, with.Status, with.Raw, without.Status, without.Raw)
			}
		}
		if other := r.Validate("alice", testsupport.Req{}, unknown); strings.ReplaceAll(other.Raw, unknown, "<code>") !=
			strings.ReplaceAll(without.Raw, mistyped, "<code>") {
			t.Fatalf("an unknown code: %s\nthe mistyped %s: %s", other.Raw, mistyped, without.Raw)
		}
	}
	// Alice's own code still validates; a code over any code's length is
	// bad input, 400 naming coupon_codes.
	if a := r.Validate("alice", testsupport.Req{}, code); a.Status != 200 || a.Body["result"] != "ok" {
		t.Fatalf("alice's code: %v", a)
	}
	if a := r.Validate("alice", testsupport.Req{}, strings.Repeat("A", models.MaxTypedCodeLen+1)); a.Status != 400 || a.Body["field"] != "coupon_codes" {
		t.Fatalf("a code too long: %v, want 400 naming coupon_codes", a)
	}
}
