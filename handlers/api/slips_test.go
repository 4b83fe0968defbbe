package api_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestConfirmBodyOptionalUsableKeepsNoAnswer: confirm's body is not marked
// required (none is needed); usable, a read, takes no Idempotency-Key: the
// same key twice runs twice and nothing is replayed.
func TestConfirmBodyOptionalUsableKeepsNoAnswer(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Required bool `json:"required"`
			} `json:"requestBody"`
			Parameters []struct {
				Name string `json:"name"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	if rb := doc.Paths["/api/v1/holds/{order_id}/confirm"]["post"].RequestBody; rb == nil || rb.Required {
		t.Fatalf("confirm's body: %+v, want declared and not required", rb)
	}
	for _, p := range doc.Paths["/api/v1/users/{user_id}/coupons/usable"]["post"].Parameters {
		if p.Name == "Idempotency-Key" {
			t.Fatal("usable (POST) declares Idempotency-Key: a read keeps no answer")
		}
	}
	e := testsupport.NewHoldAPI(t)
	e.Claim(t, e.Template(t, 100, 0, models.StackingExclusive), "alice")
	for i := range 2 {
		req := httptest.NewRequest("POST", "/api/v1/users/alice/coupons/usable", strings.NewReader(`{"order_amount_cents":1000}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.App)
		req.Header.Set("Idempotency-Key", "usable-1")
		rec := httptest.NewRecorder()
		e.Router.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("Idempotent-Replayed") != "" || strings.Contains(rec.Body.String(), `"duplicate"`) {
			t.Fatalf("usable %d with a key: %d %s (replayed %q), want 200 run again", i+1, rec.Code, rec.Body, rec.Header().Get("Idempotent-Replayed"))
		}
	}
}
