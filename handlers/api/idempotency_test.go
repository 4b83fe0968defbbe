package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
)

// TestIdempotencyKeyOnChangingRequests: a creating POST retried with its
// Idempotency-Key creates once and answers the first answer's fields and
// result word as 200 marked duplicate (field and header), on another
// instance too; the key with another body is refused
// 422 naming the header; a refusal is replayed as it was; another caller's
// same key is its own.
func TestIdempotencyKeyOnChangingRequests(t *testing.T) {
	a := testsupport.NewAPIEnv(t)
	svcB := a.Env.NewService(services.Config{AdminConfig: services.AdminConfig{BootstrapToken: testsupport.AdminToken}})
	b := &testsupport.APIEnv{Fixture: &testsupport.Fixture{Env: a.Env,
		Router: handlers.NewRouter(svcB, handlers.Options{Logger: a.Env.Config.Logger})}}
	key := map[string]string{"Idempotency-Key": "create-spring-1"}
	campaigns := func() int64 { return a.Counts(t)["campaigns"] }
	before := campaigns()

	status, first := a.Call(t, "POST", "/api/v1/campaigns", testsupport.AdminToken, key, `{"name":"Spring"}`)
	if status != 201 || first["result"] != "ok" || first["code"] != 0.0 {
		t.Fatalf("first: %d %v", status, first)
	}
	id := first["campaign"].(map[string]any)["id"]
	for _, env := range []*testsupport.APIEnv{a, b} { // the retry reaches either instance
		status, again := env.Call(t, "POST", "/api/v1/campaigns", testsupport.AdminToken, key, `{"name":"Spring"}`)
		if status != 200 || again["result"] != "ok" || again["code"] != float64(models.CodeOK) || again["duplicate"] != true ||
			again["campaign"].(map[string]any)["id"] != id {
			t.Fatalf("retry: %d %v, want 200 ok marked duplicate, of campaign %v", status, again, id)
		}
	}
	if got := campaigns(); got != before+1 {
		t.Fatalf("campaigns: %d, want %d: the retries created more", got, before+1)
	}

	status, out := b.Call(t, "POST", "/api/v1/campaigns", testsupport.AdminToken, key, `{"name":"Summer"}`)
	if status != 422 || out["result"] != "idempotency_mismatch" || out["field"] != "Idempotency-Key" {
		t.Fatalf("the key with another body: %d %v, want 422 idempotency_mismatch naming Idempotency-Key", status, out)
	}
	status, out = a.Call(t, "PATCH", fmt.Sprintf("/api/v1/campaigns/%v", id), testsupport.AdminToken, key, `{"name":"Spring"}`)
	if status != 422 || out["result"] != "idempotency_mismatch" {
		t.Fatalf("the key on another path: %d %v, want 422 idempotency_mismatch", status, out)
	}

	// A refusal is the answer too: replayed as it was.
	bad := map[string]string{"Idempotency-Key": "bad-1"}
	for range 2 {
		status, out = a.Call(t, "POST", "/api/v1/campaigns", testsupport.AdminToken, bad, `{"name":""}`)
		if status != 400 || out["field"] != "name" {
			t.Fatalf("a bad campaign: %d %v, want 400 naming name", status, out)
		}
	}

	// Another caller's key is its own: the same key and body create again.
	app := a.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"admin","name":"second admin"}`)["token"].(string)
	if status, out = a.Call(t, "POST", "/api/v1/campaigns", app, key, `{"name":"Spring"}`); status != 201 || out["campaign"].(map[string]any)["id"] == id {
		t.Fatalf("another caller's same key: %d %v, want a new campaign", status, out)
	}
	if got := campaigns(); got != before+2 {
		t.Fatalf("campaigns: %d, want %d", got, before+2)
	}

	for _, k := range []string{strings.Repeat("k", 129), "two words", "naïve"} {
		status, out = a.Call(t, "POST", "/api/v1/campaigns", testsupport.AdminToken, map[string]string{"Idempotency-Key": k}, `{"name":"Autumn"}`)
		if status != 400 || out["field"] != "Idempotency-Key" {
			t.Fatalf("key %q: %d %v, want 400 naming Idempotency-Key", k, status, out)
		}
	}
	if got := campaigns(); got != before+2 {
		t.Fatalf("campaigns after bad keys: %d, want %d", got, before+2)
	}
}

// TestIdempotencyKeyConcurrentRetries: the same request sent 20 times at
// once with one key creates one template; every other answer is the
// duplicate or in_progress (409, Retry-After), never a second template.
func TestIdempotencyKeyConcurrentRetries(t *testing.T) {
	a := testsupport.NewAPIEnv(t)
	cid := a.MustCall(t, 201, "POST", "/api/v1/campaigns", testsupport.AdminToken, `{"name":"Flash"}`)["campaign"].(map[string]any)["id"]
	body := fmt.Sprintf(`{"campaign_id":%v,"name":"Ten off","kind":"fixed","face_value_cents":1000,"total_stock":5,"per_user_limit":1,"valid_days":3}`, cid)
	before := a.Counts(t)["templates"]
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", "/api/v1/templates", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testsupport.AdminToken)
			req.Header.Set("Idempotency-Key", "tpl-once")
			rec := httptest.NewRecorder()
			a.Router.ServeHTTP(rec, req)
			statuses[i] = rec.Code
			if rec.Code == http.StatusConflict && rec.Header().Get("Retry-After") != "1" {
				t.Errorf("in_progress without Retry-After: %s", rec.Body)
			}
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 200, 409:
		default:
			t.Errorf("status %d among the retries", s)
		}
	}
	if created != 1 {
		t.Fatalf("statuses %v: %d created, want 1", statuses, created)
	}
	if got := a.Counts(t)["templates"]; got != before+1 {
		t.Fatalf("templates: %d, want %d", got, before+1)
	}
}
