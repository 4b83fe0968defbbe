package web_test

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// A request's id is the caller's X-Request-ID when it sent one of at most
// 64 bytes, else a new one of 16 hex digits; the answer carries it once.
func TestRequestIDEchoedOrMade(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	long := strings.Repeat("x", 65)
	for _, tc := range []struct {
		name, key, sent, want string
	}{
		{"sent", "X-Request-ID", "abc-123", "abc-123"},
		{"sent in lower case", "x-request-id", "lower-1", "lower-1"},
		{"none", "", "", ""},
		{"too long", "X-Request-ID", long, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/healthz", nil)
			if tc.key != "" {
				req.Header.Set(tc.key, tc.sent) // net/http's server canonicalises the name so
			}
			rec := httptest.NewRecorder()
			e.Router.ServeHTTP(rec, req)
			got := rec.Header().Values("X-Request-ID")
			if len(got) != 1 {
				t.Fatalf("X-Request-ID %q, want one value", got)
			}
			if tc.want != "" && got[0] != tc.want {
				t.Errorf("X-Request-ID %q, want %q", got[0], tc.want)
			}
			if tc.want == "" && !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(got[0]) {
				t.Errorf("X-Request-ID %q, want 16 new hex digits", got[0])
			}
		})
	}
}
