package clienttest_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/internal/testsupport"
)

// lossy serves the real router but loses the answers of the first n
// requests after the service did the work (a timeout on the way back), as
// 503 with no body: the client must retry with the same Idempotency-Key
// and get the first answer.
type lossy struct {
	next http.Handler
	mu   sync.Mutex
	lose int
	keys []string
}

func (l *lossy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
	lose := l.lose > 0
	l.lose--
	l.mu.Unlock()
	if lose {
		l.next.ServeHTTP(httptest.NewRecorder(), r) // done, but the answer is lost
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	l.next.ServeHTTP(w, r)
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

// TestRetryKeepsTheIdempotencyKey: two answers lost after the service
// created the campaign; the third attempt, with the same key, gets the first
// answer (result ok) marked as a replay, and there is one campaign.
func TestRetryKeepsTheIdempotencyKey(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	front := &lossy{next: e.Router, lose: 2}
	c := newClient(t, front, testsupport.AdminToken)
	before := e.Counts(t)["campaigns"]
	replayed := false
	got, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "Retried"}, client.Replayed(&replayed))
	if err != nil {
		t.Fatal(err)
	}
	if got.Result != "ok" || got.Code != 0 || got.Duplicate == nil || !*got.Duplicate || !replayed || got.Campaign.Name != "Retried" {
		t.Fatalf("answer %+v (replayed %v), want the first answer marked as a replay", got, replayed)
	}
	if n := e.Counts(t)["campaigns"]; n != before+1 {
		t.Fatalf("campaigns: %d, want %d", n, before+1)
	}
	if len(front.keys) != 3 || front.keys[0] == "" || front.keys[0] != front.keys[1] || front.keys[1] != front.keys[2] {
		t.Fatalf("keys sent: %q, want one key three times", front.keys)
	}
	// Retries spent: the error says what the last answer was.
	front.lose = 10
	_, err = c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "Lost"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("after the retries: %v, want a 503 *client.Error", err)
	}
	if len(front.keys) != 3+4 {
		t.Fatalf("requests: %d, want 3 then 1+3 retries", len(front.keys))
	}
}

// TestRetriesOff: WithRetries(0) sends each call once: a lost answer comes
// back as the 503 it was, the work done once; a changing call carries no
// Idempotency-Key of the client's own, and the caller's when given.
func TestRetriesOff(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	front := &lossy{next: e.Router, lose: 1}
	c := newClient(t, front, testsupport.AdminToken, client.WithRetries(0))
	before := e.Counts(t)["campaigns"]
	_, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "Once"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("a lost answer: %v, want the 503 as a *client.Error", err)
	}
	if len(front.keys) != 1 || front.keys[0] != "" {
		t.Fatalf("keys sent: %q, want one request without a key", front.keys)
	}
	if n := e.Counts(t)["campaigns"]; n != before+1 {
		t.Fatalf("campaigns: %d, want %d", n, before+1)
	}
	got, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "Keyed"}, client.IdempotencyKey("bench-key-1"))
	if err != nil || got.Result != "ok" {
		t.Fatalf("with a key: %+v, %v", got, err)
	}
	if len(front.keys) != 2 || front.keys[1] != "bench-key-1" {
		t.Fatalf("keys sent: %q, want the caller's key second", front.keys)
	}
	if n := e.Counts(t)["campaigns"]; n != before+2 {
		t.Fatalf("campaigns: %d, want %d", n, before+2)
	}
}

// TestWithoutRetries: WithRetries(0) sends each call once and hands back
// what came: a lost answer is the 503 *client.Error, a network error the
// transport's error, never retried; a later call with the same key gets the
// first answer. Tests that must see each raw outcome build the client so.
func TestWithoutRetries(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	front := &lossy{next: e.Router, lose: 1}
	c := newClient(t, front, testsupport.AdminToken, client.WithRetries(0))
	ctx := context.Background()
	before := e.Counts(t)["campaigns"]
	_, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Once"}, client.IdempotencyKey("once-1"))
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Fatalf("a lost answer without retries: %v, want the 503 *client.Error", err)
	}
	if len(front.keys) != 1 {
		t.Fatalf("requests: %d, want 1", len(front.keys))
	}
	got, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Once"}, client.IdempotencyKey("once-1"))
	if err != nil || got.Result != "ok" || got.Duplicate == nil || !*got.Duplicate || got.Campaign.Name != "Once" {
		t.Fatalf("the same key again: %+v, %v; want the first answer marked as a replay", got, err)
	}
	if n := e.Counts(t)["campaigns"]; n != before+1 || len(front.keys) != 2 {
		t.Fatalf("campaigns %d (want %d), requests %d (want 2)", n, before+1, len(front.keys))
	}
	// A network error: every dial fails, and is counted.
	var dials atomic.Int64
	refuse := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("connection refused by the test")
	}}}
	down, err := client.New("http://127.0.0.1:1", testsupport.AdminToken, client.WithRetries(0),
		client.WithBackoff(time.Millisecond), client.WithHTTPClient(refuse))
	if err != nil {
		t.Fatal(err)
	}
	_, err = down.GetCampaign(ctx, 1)
	if err == nil || errors.As(err, &apiErr) || !strings.Contains(err.Error(), "connection refused by the test") || dials.Load() != 1 {
		t.Fatalf("a network error: %v after %d dials, want the transport's error after 1", err, dials.Load())
	}
}

// TestStatusOption: client.Status reports the HTTP status of the answer:
// 201 for a campaign created ("ok"), 200 for its replay with the same key
// (still "ok", Replayed true), the
// error's status for a refusal, the last attempt's after retries, and 0
// when no answer came.
func TestStatusOption(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	front := &lossy{next: e.Router}
	c := newClient(t, front, testsupport.AdminToken)
	ctx := context.Background()
	status := -1
	got, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Status"}, client.IdempotencyKey("status-1"), client.Status(&status))
	if err != nil || status != 201 || got.Result != "ok" {
		t.Fatalf("created: %+v, %v, status %d; want 201 ok", got, err, status)
	}
	replayed := false
	got, err = c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Status"}, client.IdempotencyKey("status-1"),
		client.Status(&status), client.Replayed(&replayed))
	if err != nil || status != 200 || got.Result != "ok" || !replayed {
		t.Fatalf("replayed: %+v, %v, status %d, replayed %v; want 200 ok replayed", got, err, status, replayed)
	}
	_, err = c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: ""}, client.Status(&status))
	if !client.IsResult(err, "invalid_request") || status != 400 {
		t.Fatalf("refused: %v, status %d; want 400 invalid_request", err, status)
	}
	// One answer lost (503), the retry answered: the status is the last one.
	front.lose = 1
	got, err = c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Retried status"}, client.Status(&status), client.Replayed(&replayed))
	if err != nil || status != 200 || got.Result != "ok" || !replayed || len(front.keys) != 5 {
		t.Fatalf("after a retry: %+v, %v, status %d, replayed %v, %d requests; want 200 ok replayed after 5 requests",
			got, err, status, replayed, len(front.keys))
	}
	down, err := client.New("http://127.0.0.1:1", testsupport.AdminToken, client.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	status = -1
	if _, err := down.GetCampaign(ctx, 1, client.Status(&status)); err == nil || status != 0 {
		t.Fatalf("no answer: %v, status %d; want an error and 0", err, status)
	}
}

// TestErrorAnswer: an error answer is a *client.Error with the result word,
// the field at fault and the request id; it is not retried.
func TestErrorAnswer(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	front := &lossy{next: e.Router}
	c := newClient(t, front, testsupport.AdminToken)
	_, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: ""}, client.RequestID("req-42"))
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Result != "invalid_request" || apiErr.Field != "name" ||
		apiErr.RequestID != "req-42" || !client.IsResult(err, "invalid_request") {
		t.Fatalf("error %#v", err)
	}
	if len(front.keys) != 1 {
		t.Fatalf("a 400 was sent %d times, want once", len(front.keys))
	}
	_, err = c.GetCampaign(context.Background(), 999999)
	if !client.IsResult(err, "not_found") {
		t.Fatalf("an unknown campaign: %v", err)
	}
	anon := newClient(t, e.Router, "")
	if _, err := anon.ListCampaigns(context.Background(), client.ListCampaignsParams{}); !client.IsResult(err, "unauthorized") {
		t.Fatalf("without a token: %v", err)
	}
}

// TestListIterator walks the campaigns three a page: each once, in id order.
func TestListIterator(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	c := newClient(t, e.Router, testsupport.AdminToken)
	ctx := context.Background()
	want := map[int64]bool{}
	for i := range 8 {
		camp, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Walk " + string(rune('A'+i))})
		if err != nil {
			t.Fatal(err)
		}
		want[camp.Campaign.ID] = true
	}
	var got []int64
	for camp, err := range c.ListCampaignsAll(ctx, client.ListCampaignsParams{Limit: client.Ptr[int64](3)}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, camp.ID)
	}
	if len(got) != 8 {
		t.Fatalf("walked %v, want the 8 campaigns", got)
	}
	for i, id := range got {
		if !want[id] || (i > 0 && id <= got[i-1]) {
			t.Fatalf("walked %v: not each once in id order", got)
		}
	}
}

// TestEventsIterator walks the feed across pages and stops where the loop
// breaks.
func TestEventsIterator(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	c := newClient(t, e.Router, testsupport.AdminToken)
	ctx := context.Background()
	camp, err := c.CreateCampaign(ctx, client.CreateCampaignRequest{Name: "Feed"})
	if err != nil {
		t.Fatal(err)
	}
	// Each pause and resume writes one event.
	tpl, err := c.CreateTemplate(ctx, client.CreateTemplateRequest{CampaignID: camp.Campaign.ID, Name: "Feed",
		Kind: client.TemplateKindFixed, FaceValueCents: client.Ptr[int64](100), TotalStock: 5, PerUserLimit: 1, ValidDays: client.Ptr[int64](1)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		status := client.TemplateStatusPaused
		if i%2 == 1 {
			status = client.TemplateStatusActive
		}
		if _, err := c.UpdateTemplate(ctx, tpl.Template.ID, client.UpdateTemplateRequest{Status: &status}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for ev, err := range c.Events(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
		data, err := client.DecodeData(ev)
		if err != nil {
			t.Fatal(err)
		}
		if te, ok := data.(*client.TemplateEvent); !ok || te.TemplateID != tpl.Template.ID {
			t.Fatalf("event %d (%s): data %#v", ev.ID, ev.Type, data)
		}
	}
	if len(ids) != 150 {
		t.Fatalf("%d events, want 150", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids out of order at %d: %v", i, ids[i-1:i+1])
		}
	}
	n := 0
	for range c.Events(ctx, ids[9]) {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("the walk did not stop at the break: %d", n)
	}
}

// TestConcurrentCallsWithOneKey: ten concurrent calls with one
// Idempotency-Key (a caller's retries overlapping a slow first request) all
// succeed with the same campaign: the in_progress answers are waited out,
// and one campaign is created.
func TestConcurrentCallsWithOneKey(t *testing.T) {
	e := testsupport.NewAPIEnv(t)
	c := newClient(t, e.Router, testsupport.AdminToken, client.WithRetries(5))
	before := e.Counts(t)["campaigns"]
	var wg sync.WaitGroup
	ids := make([]int64, 10)
	errs := make([]error, 10)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c.CreateCampaign(context.Background(), client.CreateCampaignRequest{Name: "Flash"}, client.IdempotencyKey("flash-1"))
			errs[i] = err
			if err == nil {
				ids[i] = got.Campaign.ID
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] || ids[0] == 0 {
			t.Fatalf("call %d: campaign %d, %v; want every call to answer campaign %d", i, ids[i], errs[i], ids[0])
		}
	}
	if n := e.Counts(t)["campaigns"]; n != before+1 {
		t.Fatalf("campaigns: %d, want %d", n, before+1)
	}
}
