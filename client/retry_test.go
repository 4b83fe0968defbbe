package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
)

// script answers the requests of a test in turn: a status, a Retry-After
// and a body per request; past its end, the last one again. It records the
// Idempotency-Key of each request.
type script struct {
	mu      sync.Mutex
	answers []scripted
	keys    []string
}

type scripted struct {
	status     int
	retryAfter int
	body       string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
	a := s.answers[min(len(s.keys), len(s.answers))-1]
	s.mu.Unlock()
	if a.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter))
	}
	w.Header().Set("X-Request-ID", "req-"+strconv.Itoa(len(s.keys)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}

func (s *script) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

const (
	inProgress  = `{"code":18,"result":"in_progress","error":"the first request with this Idempotency-Key is still running; retry shortly"}`
	rateLimited = `{"code":16,"result":"rate_limited","error":"too many requests"}`
	soldOut     = `{"code":2,"result":"sold_out","error":"sold out"}`
	created     = `{"code":0,"result":"ok","error":"","campaign":{"id":7,"name":"Spring","budget_cents":0,"status":"active","currency":"USD","created_at":"2026-12-06T00:00:00Z"}}`
)

// TestInProgressIsRetried: a 409 in_progress (the first request with the
// key still runs) is retried after its Retry-After with the same key, like
// a 429 or a 503, and the call returns the answer that followed.
func TestInProgressIsRetried(t *testing.T) {
	s := &script{answers: []scripted{{409, 1, inProgress}, {201, 0, created}}}
	c := newClient(t, s, "token")
	start := time.Now()
	got, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "Spring"})
	if err != nil || got.Result != "ok" || got.Campaign.ID != 7 {
		t.Fatalf("%+v, %v; want the campaign after the in_progress", got, err)
	}
	keys := s.sent()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("keys sent: %q, want one key twice", keys)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("waited %v, want at least the Retry-After (1s)", waited)
	}
}

// TestDeadlineKeepsTheError: a Retry-After that would pass the context's
// deadline is not waited for: the *client.Error comes back at once with its
// status, result, Retry-After and request id, where it used to wait out the
// deadline and return a bare context error.
func TestDeadlineKeepsTheError(t *testing.T) {
	s := &script{answers: []scripted{{429, 30, rateLimited}}}
	c := newClient(t, s, "token")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Spring"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 429 || apiErr.Result != "rate_limited" ||
		apiErr.RetryAfter != 30*time.Second || apiErr.RequestID != "req-1" || !apiErr.Retryable() {
		t.Fatalf("%#v, want the 429 *client.Error with Retry-After 30s and request id req-1", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Fatalf("returned after %v, want at once", waited)
	}
	if n := len(s.sent()); n != 1 {
		t.Fatalf("requests: %d, want 1", n)
	}
}

// TestRetriesPerCall: Retries(n) overrides the client's retries for one
// call: Retries(0) sends once and without a key of the client's own,
// Retries(1) sends twice.
func TestRetriesPerCall(t *testing.T) {
	s := &script{answers: []scripted{{503, 0, ""}}}
	c := newClient(t, s, "token")
	ctx := context.Background()
	_, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Once"}, client.Retries(0))
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("Retries(0): %v, want the 503", err)
	}
	if keys := s.sent(); len(keys) != 1 || keys[0] != "" {
		t.Fatalf("Retries(0) sent %q, want one request without a key", keys)
	}
	_, err = c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Twice"}, client.Retries(1))
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("Retries(1): %v, want the 503", err)
	}
	if keys := s.sent(); len(keys) != 3 || keys[1] == "" || keys[1] != keys[2] {
		t.Fatalf("Retries(1) sent %q, want two requests with one key", keys[1:])
	}
}

// TestErrorRetryable: Retryable is true for 429, 503 and 409 in_progress,
// false for every other refusal (a 409 sold_out is an answer, not a fault);
// a refusal is not retried.
func TestErrorRetryable(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{429, rateLimited, true},
		{503, `{"code":15,"result":"unavailable","error":"Redis is unavailable"}`, true},
		{409, inProgress, true},
		{409, soldOut, false},
		{400, `{"code":3,"result":"invalid_request","error":"name: required","field":"name"}`, false},
	} {
		s := &script{answers: []scripted{{tc.status, 0, tc.body}}}
		c := newClient(t, s, "token", client.WithRetries(0))
		_, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "X"})
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Status != tc.status || apiErr.Retryable() != tc.want {
			t.Errorf("%d %s: %v, want Retryable %v", tc.status, tc.body, err, tc.want)
		}
	}
	s := &script{answers: []scripted{{409, 0, soldOut}}}
	c := newClient(t, s, "token")
	if _, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "X"}); !client.IsResult(err, "sold_out") || len(s.sent()) != 1 {
		t.Fatalf("sold_out: %v after %d requests, want it at once", err, len(s.sent()))
	}
}

func newClient(t *testing.T, h http.Handler, token string, opts ...client.Option) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, token, append([]client.Option{client.WithBackoff(time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
