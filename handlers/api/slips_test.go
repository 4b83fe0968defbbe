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

// TestListsAreOldestFirst: the tokens and a user's coupons come oldest
// first (by id, the cursor's order), as their operations now say; they
// said "newest first".
func TestListsAreOldestFirst(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	for _, name := range []string{"till-2", "till-3"} {
		e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"`+name+`"}`)
	}
	tpl := e.Template(t, 100, 0, models.StackingExclusive)
	codes := []string{e.Claim(t, tpl, "alice"), e.Claim(t, tpl, "alice"), e.Claim(t, tpl, "alice")}
	ids := func(items []any) []float64 {
		var out []float64
		for _, it := range items {
			out = append(out, it.(map[string]any)["id"].(float64))
		}
		return out
	}
	ascending := func(what string, xs []float64, n int) {
		t.Helper()
		if len(xs) != n {
			t.Fatalf("%s: %v, want %d", what, xs, n)
		}
		for i := 1; i < len(xs); i++ {
			if xs[i] <= xs[i-1] {
				t.Fatalf("%s: ids %v, want oldest first", what, xs)
			}
		}
	}
	// The app token, the cashier's and the two above.
	ascending("tokens", ids(e.MustCall(t, 200, "GET", "/api/v1/tokens", testsupport.AdminToken, "")["tokens"].([]any)), 4)
	coupons := e.MustCall(t, 200, "GET", "/api/v1/users/alice/coupons", testsupport.AdminToken, "")["coupons"].([]any)
	ascending("coupons", ids(coupons), 3)
	for i, c := range coupons {
		if c.(map[string]any)["code"] != codes[i] {
			t.Fatalf("coupon %d: %v, want %s (claimed %d-th)", i, c, codes[i], i+1)
		}
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Summary     string `json:"summary"`
			Description string `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(handlers.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{doc.Paths["/api/v1/tokens"]["get"].Summary, doc.Paths["/api/v1/users/{user_id}/coupons"]["get"].Description} {
		if !strings.Contains(op, "Oldest first") && !strings.Contains(op, "oldest first") || strings.Contains(strings.ToLower(op), "newest") {
			t.Fatalf("the document says %q, want oldest first", op)
		}
	}
}

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
