package api_test

import (
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestValidateMistypedCodeSameWithOrWithoutUser: a mistyped code (a
// coupon's code with a character missing) is answered 400 invalid_request
// naming coupon_codes, word for word the same with a user_id and without;
// it used to be 400 without one and 404 not_found with one.
func TestValidateMistypedCodeSameWithOrWithoutUser(t *testing.T) {
	r := testsupport.NewRig(t, handlers.Options{})
	code := r.Coupon("alice")
	mistyped := code[:len(code)-1]
	without := r.Validate("", testsupport.Req{}, mistyped)
	if without.Status != 400 || without.Body["result"] != "invalid_request" || without.Body["field"] != "coupon_codes" {
		t.Fatalf("without a user_id: %v, want 400 invalid_request naming coupon_codes", without)
	}
	for _, user := range []string{"alice", "bob"} {
		if with := r.Validate(user, testsupport.Req{}, mistyped); with.Status != without.Status || with.Raw != without.Raw {
			t.Fatalf("with user_id %s: %d %s\nwithout: %d %s", user, with.Status, with.Raw, without.Status, without.Raw)
		}
	}
}
