package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestOpenAPICheckoutCodes: the API document lists every checkout route and
// the result words of the checkout (held, not_combinable, hold_expired,
// return_exceeds_order) under the status each answers, on every route that
// may answer them.
func TestOpenAPICheckoutCodes(t *testing.T) {
	doc := testsupport.FetchOpenAPI(t, testsupport.NewAPIEnv(t))
	want := []struct {
		method, path string
		lines        []string
	}{
		{"post", "/api/v1/checkout/validate", nil},
		{"get", "/api/v1/users/{user_id}/coupons/usable", nil},
		{"post", "/api/v1/holds", []string{"409: held, not_combinable", "422: below_minimum, idempotency_mismatch"}},
		{"get", "/api/v1/holds/{order_id}", []string{"404:"}},
		{"post", "/api/v1/holds/{order_id}/confirm", []string{"409: hold_expired, not_combinable", "422: idempotency_mismatch"}},
		{"post", "/api/v1/holds/{order_id}/release", []string{"409: already_used"}},
		{"post", "/api/v1/redemptions", []string{"held, not_combinable"}},
		{"post", "/api/v1/refunds", []string{"422: return_exceeds_order"}},
	}
	for _, w := range want {
		op, ok := doc.Paths[w.path][w.method]
		if !ok {
			t.Errorf("%s %s: not in the document (paths: %d)", w.method, w.path, len(doc.Paths))
			continue
		}
		lines := fmt.Sprint(op["x-error-results"])
		for _, l := range w.lines {
			if !strings.Contains(lines, l) {
				t.Errorf("%s %s: error results %s lack %q", w.method, w.path, lines, l)
			}
		}
	}
}
