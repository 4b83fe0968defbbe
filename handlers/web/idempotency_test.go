package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/handlers/web"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/core"

	"github.com/gin-gonic/gin"
)

// memoryStore is an IdempotencyStore in a map, for the middleware's rules
// alone (the Redis store has its own tests in services).
type memoryStore struct {
	mu      sync.Mutex
	answers map[string]core.IdempotentAnswer
	kept    int
}

func (m *memoryStore) BeginIdempotent(_ context.Context, scope, hash string) (*core.IdempotentAnswer, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a, ok := m.answers[scope]; ok {
		return &a, false, nil
	}
	m.answers[scope] = core.IdempotentAnswer{Hash: hash}
	return nil, true, nil
}

func (m *memoryStore) KeepIdempotent(context.Context, string) func() {
	m.mu.Lock()
	m.kept++
	m.mu.Unlock()
	return func() {}
}

func (m *memoryStore) FinishIdempotent(_ context.Context, scope string, a core.IdempotentAnswer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a.Done = true
	m.answers[scope] = a
	return nil
}

func (m *memoryStore) AbortIdempotent(_ context.Context, scope string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.answers, scope)
	return nil
}

// TestIdempotencyNeverKeepsRetryAnswers: an answer that asks to retry (a
// service's own 409 in_progress with Retry-After) is not kept as the key's
// answer, so the retry runs again; the success that follows is replayed
// with its own result word, marked duplicate by field and header.
func TestIdempotencyNeverKeepsRetryAnswers(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	row := web.Route{Method: "POST", Path: "/api/v1/holds", Answer: web.TypeOf[thingAnswer]()}
	store := &memoryStore{answers: map[string]core.IdempotentAnswer{}}
	runs := 0
	r := gin.New()
	r.POST(row.Path, web.Idempotency(store), web.ExpectAnswer(row), func(c *gin.Context) {
		runs++
		if runs == 1 {
			web.RespondError(c, &models.Error{Code: models.CodeInProgress, RetryAfterSeconds: 1, Message: "the order is being held"})
			return
		}
		web.Respond(c, http.StatusCreated, "held", thingAnswer{Name: "order-1"})
	})
	send := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", row.Path, strings.NewReader(`{"order_id":"order-1"}`))
		req.Header.Set("Idempotency-Key", "hold-1")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec
	}
	for i, want := range []struct {
		status   int
		body     string
		replayed string
		runs     int
	}{
		{409, `{"code":18,"result":"in_progress","error":"the order is being held"}`, "", 1},
		{201, `{"code":0,"result":"held","error":"","name":"order-1","parts":null}`, "", 2},
		{200, `{"code":0,"duplicate":true,"error":"","name":"order-1","parts":null,"result":"held"}`, "true", 2},
	} {
		rec := send()
		if rec.Code != want.status || rec.Body.String() != want.body || rec.Header().Get(web.ReplayedHeader) != want.replayed || runs != want.runs {
			t.Fatalf("send %d: %d %s (replayed %q, runs %d), want %d %s (replayed %q, runs %d)", i+1, rec.Code, rec.Body,
				rec.Header().Get(web.ReplayedHeader), runs, want.status, want.body, want.replayed, want.runs)
		}
	}
	if store.kept != 2 {
		t.Fatalf("leases kept: %d, want 2 (one a run)", store.kept)
	}
}

// TestHungUpCallerIsNotAFault: a request whose caller hung up, ending in
// the database's error for its cancelled context, is logged at INFO as a
// hang-up, never as a 503 "database is unavailable" warning.
func TestHungUpCallerIsNotAFault(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	var logs strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	r := gin.New()
	r.GET("/api/v1/coupons", func(c *gin.Context) {
		cause := c.Request.Context().Err()
		if cause == nil {
			cause = errors.New("dial tcp 127.0.0.1:3306: connection refused")
		}
		web.RespondError(c, models.Unavailable("the database", cause))
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/coupons", nil).WithContext(ctx))
	if got := logs.String(); strings.Contains(got, "WARN") || strings.Contains(got, "unavailable") ||
		!strings.Contains(got, "level=INFO msg=\"the caller hung up\"") {
		t.Fatalf("log of a hang-up: %q, want one INFO line", got)
	}
	logs.Reset()
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/coupons", nil))
	if got := logs.String(); !strings.Contains(got, "level=WARN msg=\"request failed\"") {
		t.Fatalf("log of a fault with the caller still there: %q, want the WARN", got)
	}
}
