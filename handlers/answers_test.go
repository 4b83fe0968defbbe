package handlers_test

import (
	"net/http/httptest"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// TestOperationalAnswers: the health and readiness checks answer their
// result alone.
func TestOperationalAnswers(t *testing.T) {
	f := testsupport.NewFixture(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		rec := httptest.NewRecorder()
		f.Router.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || rec.Body.String() != `{"code":0,"result":"ok","error":""}` {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
