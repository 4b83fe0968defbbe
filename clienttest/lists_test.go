package clienttest_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/client"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// counting serves the real router and counts the requests by path.
type counting struct {
	next http.Handler
	mu   sync.Mutex
	n    map[string]int
}

func (h *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[r.URL.Path]++
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

// requests is how many requests path had, and starts counting again.
func (h *counting) requests(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.n[path]
	delete(h.n, path)
	return n
}

// collect walks an iterator into the ids of its items.
func collect[T any](t *testing.T, seq func(func(T, error) bool), id func(T) int64) []int64 {
	t.Helper()
	var out []int64
	for it, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id(it))
	}
	return out
}

// TestTemplateCouponsIterator walks a template's 7 coupons 3 a page: each
// once, in increasing id, in 3 requests (3, 3, 1); with status=revoked, the
// one revoked coupon alone, in one request.
func TestTemplateCouponsIterator(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	h := &counting{next: e.Router}
	c := newClient(t, h, testsupport.AdminToken)
	ctx := context.Background()
	tpl := e.Template(t, 100, 0, models.StackingExclusive)
	var codes []string
	for i := range 7 {
		codes = append(codes, e.Claim(t, tpl, fmt.Sprintf("u%d", i)))
	}
	if _, err := c.RevokeCoupon(ctx, codes[4], client.RevokeRequest{Reason: "a test"}); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v1/templates/%d/coupons", tpl)
	h.requests(path)
	var got []string
	ids := collect(t, c.ListTemplateCouponsAll(ctx, tpl, client.ListTemplateCouponsParams{Limit: client.Ptr[int64](3)}),
		func(cv client.CouponView) int64 { got = append(got, cv.Code); return cv.ID })
	if fmt.Sprint(got) != fmt.Sprint(codes) || h.requests(path) != 3 {
		t.Fatalf("walked %v (ids %v), want %v in 3 requests", got, ids, codes)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids %v, want increasing", ids)
		}
	}
	got = nil
	collect(t, c.ListTemplateCouponsAll(ctx, tpl, client.ListTemplateCouponsParams{Status: client.Ptr("revoked"), Limit: client.Ptr[int64](3)}),
		func(cv client.CouponView) int64 { got = append(got, cv.Code+" "+string(cv.Status)); return cv.ID })
	if fmt.Sprint(got) != "["+codes[4]+" revoked]" || h.requests(path) != 1 {
		t.Fatalf("revoked: %v, want %s alone in one request", got, codes[4])
	}
}

// TestNewestFirstIterators: the tokens and a user's coupons, read newest
// first with cursors that go down, are walked whole (each once, newest
// first) across pages of 2.
func TestNewestFirstIterators(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	h := &counting{next: e.Router}
	c := newClient(t, h, testsupport.AdminToken)
	ctx := context.Background()
	for _, name := range []string{"till-2", "till-3", "till-4"} {
		e.MustCall(t, 201, "POST", "/api/v1/tokens", testsupport.AdminToken, `{"role":"cashier","name":"`+name+`"}`)
	}
	tpl := e.Template(t, 100, 0, models.StackingCombinable)
	var codes []string
	for range 5 {
		codes = append([]string{e.Claim(t, tpl, "alice")}, codes...)
	}
	h.requests("/api/v1/tokens")
	tokens := collect(t, c.ListTokensAll(ctx, client.ListTokensParams{Limit: client.Ptr[int64](2)}),
		func(tv client.TokenView) int64 { return tv.ID })
	// The app token, the cashier's and the three above: pages of 2, 2, 1.
	if len(tokens) != 5 || h.requests("/api/v1/tokens") != 3 {
		t.Fatalf("tokens %v, want 5 in 3 requests", tokens)
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] >= tokens[i-1] {
			t.Fatalf("tokens %v, want newest first", tokens)
		}
	}
	var got []string
	collect(t, c.ListUserCouponsAll(ctx, "alice", client.ListUserCouponsParams{Limit: client.Ptr[int64](2)}),
		func(cv client.CouponView) int64 { got = append(got, cv.Code); return cv.ID })
	if fmt.Sprint(got) != fmt.Sprint(codes) || h.requests("/api/v1/users/alice/coupons") != 3 {
		t.Fatalf("alice's coupons %v, want %v (newest first) in 3 requests", got, codes)
	}
}

// TestWebhookAttemptsIterator walks an endpoint's 5 log lines 2 a page:
// newest first, each once, in 3 requests.
func TestWebhookAttemptsIterator(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	h := &counting{next: e.Router}
	c := newClient(t, h, testsupport.AdminToken)
	ctx := context.Background()
	out := e.MustCall(t, 201, "POST", "/api/v1/webhooks", testsupport.AdminToken, `{"url":"https://8.8.8.8/h"}`)
	ep := int64(out["endpoint"].(map[string]any)["id"].(float64))
	var want []int64
	for i := range 5 {
		a := models.WebhookAttempt{DeliveryID: int64(i + 1), EndpointID: ep, EventID: int64(i + 1), EventType: "coupon.claimed",
			AttemptedAt: e.Clock.Now(), OK: true, StatusCode: 200}
		if err := e.Env.Backends.DB.Create(&a).Error; err != nil {
			t.Fatal(err)
		}
		want = append([]int64{a.ID}, want...)
	}
	path := fmt.Sprintf("/api/v1/webhooks/%d/attempts", ep)
	got := collect(t, c.ListWebhookAttemptsAll(ctx, ep, client.ListWebhookAttemptsParams{Limit: client.Ptr[int64](2)}),
		func(a client.WebhookAttempt) int64 { return a.ID })
	if fmt.Sprint(got) != fmt.Sprint(want) || h.requests(path) != 3 {
		t.Fatalf("attempts %v, want %v (newest first) in 3 requests", got, want)
	}
}

// TestEventsFromLatestIterator: from now, the feed yields nothing until an
// event is written; then exactly the one claim made after LatestEventID.
func TestEventsFromLatestIterator(t *testing.T) {
	e := testsupport.NewHoldAPI(t)
	c := newClient(t, e.Router, testsupport.AdminToken)
	ctx := context.Background()
	tpl := e.Template(t, 100, 0, models.StackingExclusive)
	for _, u := range []string{"alice", "bob", "carol"} {
		e.Claim(t, tpl, u)
	}
	if n := len(collect(t, c.Events(ctx, 0), func(ev client.Event) int64 { return ev.ID })); n != 3 {
		t.Fatalf("the whole feed: %d events, want 3", n)
	}
	if got := collect(t, c.EventsFromLatest(ctx), func(ev client.Event) int64 { return ev.ID }); len(got) != 0 {
		t.Fatalf("from latest with nothing new: %v, want none", got)
	}
	latest, err := c.LatestEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code := e.Claim(t, tpl, "dave")
	var got []string
	for ev, err := range c.Events(ctx, latest) {
		if err != nil {
			t.Fatal(err)
		}
		data, err := client.DecodeData(ev)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(ev.Type)+" "+data.(*client.CouponEvent).Code)
	}
	if fmt.Sprint(got) != "[coupon.claimed "+code+"]" {
		t.Fatalf("after latest %d: %v, want the one claim of %s", latest, got, code)
	}
}
