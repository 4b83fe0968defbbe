package services_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	adminsvc "github.com/couponsvc/couponsvc/services/admin"
	claimsvc "github.com/couponsvc/couponsvc/services/claims"
	eventsvc "github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// attempts returns an endpoint's delivery log, oldest first.
func attempts(t *testing.T, svc *services.App, id int64) []models.WebhookAttempt {
	t.Helper()
	log, _, err := svc.ListWebhookAttempts(context.Background(), id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(log)-1; i < j; i, j = i+1, j-1 {
		log[i], log[j] = log[j], log[i]
	}
	return log
}

func delivery(t *testing.T, f *testenv.Fixture, endpointID int64) models.WebhookDelivery {
	t.Helper()
	var d models.WebhookDelivery
	if err := f.Backends.DB.Where("endpoint_id = ?", endpointID).First(&d).Error; err != nil {
		t.Fatal(err)
	}
	return d
}

// pauseTemplate writes one event (template.paused).
func pauseTemplate(t *testing.T, f *testenv.Fixture) {
	t.Helper()
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID})
	paused := models.TemplatePaused
	if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", tp.ID, adminsvc.TemplatePatch{Status: &paused}); err != nil {
		t.Fatal(err)
	}
}

// TestWebhookRetriedThenDelivered: a receiver that is down, answers 500, or
// answers after the delivery timeout gets the delivery again after the
// backoff, with the same event id, until it answers 2xx in time.
func TestWebhookRetriedThenDelivered(t *testing.T) {
	cfg := webhookConfig()
	cfg.WebhookTimeout = 300 * time.Millisecond // stands for the 10 s
	cfg.Jitter = func() float64 { return 0 }
	f := testenv.NewFixtureAt(t, cfg, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	ep := rcv.register(t, f.Svc)
	pauseTemplate(t, f)

	// Down: nothing listens at the endpoint's address.
	url := rcv.srv.URL
	rcv.srv.Close()
	if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
		t.Fatalf("dispatch while down = %d, %v", n, err)
	}
	d := delivery(t, f, ep.ID)
	if d.State != models.DeliveryPending || d.Attempts != 1 || !d.NextAttemptAt.Equal(f.Clock.Now().Add(eventsvc.WebhookBackoff(1, 0))) {
		t.Fatalf("after the first failure: %+v", d)
	}
	// Not due yet: nothing is sent.
	if n, _ := f.Events.DispatchOnce(f.Ctx); n != 0 {
		t.Fatalf("dispatch before the backoff sent %d", n)
	}
	// Up again on the same address, answering 500, then too slowly, then
	// 204.
	rcv.srv = restartAt(t, url, rcv)
	rcv.mu.Lock()
	rcv.answer = func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	}
	rcv.delay = func(n int) time.Duration {
		if n == 2 {
			return time.Second
		}
		return 0
	}
	rcv.mu.Unlock()
	for i := 1; i <= 3; i++ {
		f.Clock.Set(delivery(t, f, ep.ID).NextAttemptAt)
		if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
			t.Fatalf("retry %d = %d, %v", i, n, err)
		}
	}
	d = delivery(t, f, ep.ID)
	if d.State != models.DeliveryDelivered || d.Attempts != 4 || d.LastStatusCode != 204 {
		t.Fatalf("after the retries: %+v, want delivered on the 4th try", d)
	}
	log := attempts(t, f.Svc, ep.ID)
	var codes []string
	for _, a := range log {
		codes = append(codes, fmt.Sprintf("%d/%t", a.StatusCode, a.OK))
		if a.EventID != d.EventID {
			t.Fatalf("attempt %+v carries another event than %d", a, d.EventID)
		}
	}
	if got := strings.Join(codes, " "); got != "0/false 500/false 0/false 204/true" {
		t.Fatalf("delivery log = %s, want down, 500, timeout, 204", got)
	}
	if !strings.Contains(log[2].Error, "Timeout") && !strings.Contains(log[2].Error, "deadline") {
		t.Fatalf("the slow answer's error = %q, want a timeout", log[2].Error)
	}
	if got := rcv.received(); len(got) != 1 || got[d.EventID] != 1 {
		t.Fatalf("receiver got %v, want event %d once with 2xx", got, d.EventID)
	}
	ep2, _ := f.Events.GetWebhook(f.Ctx, ep.ID)
	if ep2.FailingSince != nil || !ep2.Enabled {
		t.Fatalf("endpoint after a success: %+v, want enabled, not failing", ep2)
	}
}

// restartAt serves h again on the address of a closed test server.
func restartAt(t *testing.T, url string, h http.Handler) *httptestServer {
	t.Helper()
	return newServerAt(t, strings.TrimPrefix(url, "http://"), h)
}

// TestWebhookBackoffSchedule: a delivery that always fails is retried with
// exponential backoff (jitter taken from Rand) for at least 3 days, then
// given up; its endpoint, failing that long, is disabled with an audit
// entry, and no more is sent to it.
func TestWebhookBackoffSchedule(t *testing.T) {
	cfg := webhookConfig()
	jitter := 0.5
	cfg.Jitter = func() float64 { return jitter }
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := testenv.NewFixtureAt(t, cfg, start)
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	rcv.answer = func(int) int { return http.StatusServiceUnavailable }
	ep := rcv.register(t, f.Svc)
	pauseTemplate(t, f)

	var waits []time.Duration
	for try := 1; ; try++ {
		if try > 100 {
			t.Fatal("still retrying after 100 tries")
		}
		if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
			t.Fatalf("try %d: dispatch = %d, %v", try, n, err)
		}
		d := delivery(t, f, ep.ID)
		if d.State == models.DeliveryFailed {
			if f.Clock.Now().Sub(start) < 72*time.Hour {
				t.Fatalf("given up after %s, want at least 3 days", f.Clock.Now().Sub(start))
			}
			break
		}
		wait := d.NextAttemptAt.Sub(f.Clock.Now())
		if want := eventsvc.WebhookBackoff(try, jitter); wait != want {
			t.Fatalf("try %d: waits %s, want %s", try, wait, want)
		}
		waits = append(waits, wait)
		f.Clock.Set(d.NextAttemptAt)
	}
	// 30s·2^(n-1), capped at 6h, of which 3/4 with jitter 0.5.
	if waits[0] != 22500*time.Millisecond || waits[1] != 45*time.Second || waits[len(waits)-1] != 270*time.Minute {
		t.Fatalf("waits %v: want 22.5s, 45s, ... 4h30m", waits)
	}
	log := attempts(t, f.Svc, ep.ID)
	if len(log) != len(waits)+1 || rcv.n != len(log) {
		t.Fatalf("%d tries logged, %d received, %d waits", len(log), rcv.n, len(waits))
	}
	last := log[len(log)-1].AttemptedAt.Sub(log[0].AttemptedAt)
	if last < 72*time.Hour || last > 72*time.Hour+6*time.Hour {
		t.Fatalf("tried for %s, want 3 days (at most one wait more)", last)
	}
	got, _ := f.Events.GetWebhook(f.Ctx, ep.ID)
	if got.Enabled || got.DisabledAt == nil {
		t.Fatalf("endpoint after 3 days of failures: %+v, want disabled", got)
	}
	entries, err := f.Admin.ListAudit(f.Ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	disables := 0
	for _, e := range entries {
		if e.Action == "webhook.disable" && e.Target == fmt.Sprintf("webhook:%d", ep.ID) {
			disables++
		}
	}
	if disables != 1 {
		t.Fatalf("%d webhook.disable audit entries, want 1", disables)
	}
	// Disabled: a new event is not sent to it.
	pauseTemplate(t, f)
	f.Clock.Advance(time.Hour)
	if n, _ := f.Events.DispatchOnce(f.Ctx); n != 0 {
		t.Fatalf("a disabled endpoint got %d deliveries", n)
	}
}

// TestWebhookTwoInstances: two instances dispatching at once over one
// database send each event exactly once while both are healthy.
func TestWebhookTwoInstances(t *testing.T) {
	f := testenv.NewFixture(t, webhookConfig())
	other := f.Env.NewService(webhookConfig())
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	rcv.register(t, f.Svc)
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 200, PerUserLimit: 1})
	runDispatcher(t, f.Svc)
	runDispatcher(t, other)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc := f.Svc
			if i%2 == 1 {
				svc = other
			}
			if _, err := svc.Claim(f.Ctx, claimsvc.ClaimRequest{TemplateID: tp.ID, UserID: fmt.Sprintf("u%d", i), IdempotencyKey: fmt.Sprintf("k%d", i)}); err != nil {
				t.Errorf("claim: %v", err)
			}
		}()
	}
	wg.Wait()
	all := rcv.waitDelivered(t, f.Backends.DB, 60*time.Second)
	time.Sleep(200 * time.Millisecond) // a second sending would arrive now
	got := rcv.received()
	if len(all) != 201 || len(got) != 201 {
		t.Fatalf("%d events, %d received, want 201 (200 claims and the sold out)", len(all), len(got))
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("event %d sent %d times, want once", id, n)
		}
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.n != 201 || rcv.badSig != 0 || len(rcv.unseen) != 0 {
		t.Fatalf("%d requests, %d bad signatures, %d before commit; want 201, 0, 0", rcv.n, rcv.badSig, len(rcv.unseen))
	}
}

// TestWebhookPrivateAddresses: loopback, private, link-local and shared
// addresses (and names resolving to them) are refused at registration
// unless allowed; and at dial time, so an endpoint whose address turned
// private is never reached.
func TestWebhookPrivateAddresses(t *testing.T) {
	f := testenv.NewFixture(t, services.Config{EventsConfig: services.EventsConfig{DispatchInterval: 10 * time.Millisecond}})
	for _, u := range []string{"http://127.0.0.1/x", "http://10.1.2.3/x", "http://172.16.0.1/x", "http://192.168.1.1/x",
		"http://169.254.169.254/latest", "http://[::1]/x", "http://[fe80::1]/x", "http://[::ffff:127.0.0.1]/x",
		"http://100.64.0.1/x", "http://0.0.0.0/x", "http://localhost:8080/x", "ftp://203.0.113.1/x", "http:///x",
		"http://user:pw@203.0.113.1/x"} {
		_, err := f.Events.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &u})
		if !models.IsCode(err, models.CodeInvalidRequest) || !strings.Contains(err.Error(), "url") {
			t.Errorf("register %s: %v, want invalid_request naming url", u, err)
		}
	}
	// A public address is taken (and removed again: no delivery leaves
	// the test).
	public := "https://8.8.8.8/hook"
	pub, err := f.Events.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &public})
	if err != nil {
		t.Fatalf("register a public address: %v", err)
	}
	if err := f.Events.DeleteWebhook(f.Ctx, "admin", pub.Endpoint.ID); err != nil {
		t.Fatal(err)
	}
	// An endpoint registered where private addresses are allowed, sent from
	// an instance where they are not: the dialer refuses the address.
	allowing := f.Env.NewService(webhookConfig())
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	u := strings.Replace(rcv.srv.URL, "127.0.0.1", "localhost", 1) + "/hook"
	w, err := allowing.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &u})
	if err != nil {
		t.Fatalf("register with private addresses allowed: %v", err)
	}
	pauseTemplate(t, f)
	if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
		t.Fatalf("dispatch = %d, %v; want the endpoint tried", n, err)
	}
	log := attempts(t, f.Svc, w.Endpoint.ID)
	if len(log) != 1 || log[0].OK || !strings.Contains(log[0].Error, "private") {
		t.Fatalf("delivery log = %+v, want one refusal of the private address", log)
	}
	if rcv.n != 0 {
		t.Fatalf("the private receiver got %d requests, want none", rcv.n)
	}
}

// TestWebhookResend: a delivered event sent again by the resend carries
// the same event id.
func TestWebhookResend(t *testing.T) {
	f := testenv.NewFixture(t, webhookConfig())
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	ep := rcv.register(t, f.Svc)
	pauseTemplate(t, f)
	if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
		t.Fatalf("dispatch = %d, %v", n, err)
	}
	d := delivery(t, f, ep.ID)
	if _, err := f.Events.ResendDelivery(f.Ctx, "admin", ep.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Events.ResendDelivery(f.Ctx, "admin", ep.ID+1, d.ID); !models.IsCode(err, models.CodeNotFound) {
		t.Fatalf("resend under another endpoint: %v, want not_found", err)
	}
	if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
		t.Fatalf("dispatch after resend = %d, %v", n, err)
	}
	if got := rcv.received(); len(got) != 1 || got[d.EventID] != 2 {
		t.Fatalf("received %v, want event %d twice", got, d.EventID)
	}
}

// TestPrune: events, deliveries and the delivery log older than the
// retention are deleted, except an event still on its way.
func TestPrune(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f := testenv.NewFixtureAt(t, webhookConfig(), start)
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	ep := rcv.register(t, f.Svc)
	pauseTemplate(t, f) // delivered below
	if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
		t.Fatalf("dispatch = %d, %v", n, err)
	}
	rcv.mu.Lock()
	rcv.answer = func(int) int { return 500 }
	rcv.mu.Unlock()
	pauseTemplate(t, f) // still pending below
	if _, err := f.Events.DispatchOnce(f.Ctx); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(24 * time.Hour)
	if _, err := f.Events.UpdateWebhook(f.Ctx, "admin", ep.ID, eventsvc.WebhookInput{EventTypes: []string{models.EventCouponClaimed}}); err != nil {
		t.Fatal(err)
	}
	pauseTemplate(t, f) // no delivery: the endpoint no longer takes it; recent
	p, err := f.Events.Prune(f.Ctx, start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if p != (eventsvc.Pruned{Attempts: 2, Deliveries: 1, Events: 1}) {
		t.Fatalf("pruned %+v, want 2 attempts, the delivered delivery and its event", p)
	}
	all, _ := eventIDs(t, f.Backends.DB)
	if len(all) != 2 {
		t.Fatalf("%d events kept, want 2 (the one on its way, the recent one)", len(all))
	}
}

// fakeResolver answers A and AAAA queries for the names of hosts from
// memory (NXDOMAIN for any other name), over an in-process stream
// connection: a host name can resolve to any address in a test.
func fakeResolver(hosts map[string][]netip.Addr) *net.Resolver {
	serve := func(c net.Conn) {
		defer c.Close()
		for {
			var n [2]byte
			if _, err := io.ReadFull(c, n[:]); err != nil {
				return
			}
			q := make([]byte, int(n[0])<<8|int(n[1]))
			if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
				return
			}
			// The question: labels up to the empty one, then type and class.
			i, name := 12, ""
			for i < len(q) && q[i] != 0 {
				l := int(q[i])
				if i+1+l > len(q) {
					return
				}
				name += string(q[i+1:i+1+l]) + "."
				i += 1 + l
			}
			if i+5 > len(q) {
				return
			}
			qtype := int(q[i+1])<<8 | int(q[i+2])
			question := q[12 : i+5]
			addrs, known := hosts[strings.TrimSuffix(strings.ToLower(name), ".")]
			var answers []byte
			count := 0
			for _, a := range addrs {
				if a.Is4() && qtype == 1 || a.Is6() && qtype == 28 {
					rdata := a.AsSlice()
					answers = append(answers, 0xc0, 0x0c, 0, byte(qtype), 0, 1, 0, 0, 0, 60, 0, byte(len(rdata)))
					answers = append(answers, rdata...)
					count++
				}
			}
			flags := byte(0x80) // no error
			if !known {
				flags = 0x83 // NXDOMAIN
			}
			resp := append([]byte{q[0], q[1], 0x81, flags, 0, 1, 0, byte(count), 0, 0, 0, 0}, question...)
			resp = append(resp, answers...)
			if _, err := c.Write(append([]byte{byte(len(resp) >> 8), byte(len(resp))}, resp...)); err != nil {
				return
			}
		}
	}
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go serve(server)
		return client, nil
	}}
}

// TestWebhookSpecialPurposeAfterDNS: a host name that resolves to a NAT64
// address carrying a private IPv4 address is refused at registration, and
// an endpoint registered where such addresses are allowed is refused at
// the connection, after resolution, by an instance where they are not.
func TestWebhookSpecialPurposeAfterDNS(t *testing.T) {
	res := fakeResolver(map[string][]netip.Addr{
		"nat64.example": {netip.MustParseAddr("64:ff9b::a00:5")},
		"bench.example": {netip.MustParseAddr("198.18.0.7")},
	})
	cfg := services.Config{EventsConfig: services.EventsConfig{DispatchInterval: 10 * time.Millisecond, Resolver: res}}
	f := testenv.NewFixture(t, cfg)
	for _, u := range []string{"http://nat64.example/hook", "https://bench.example/hook"} {
		_, err := f.Events.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &u})
		if !models.IsCode(err, models.CodeInvalidRequest) || !strings.Contains(err.Error(), "url") ||
			!strings.Contains(err.Error(), "resolves to") {
			t.Errorf("register %s: %v, want invalid_request naming url (resolves to a special-purpose address)", u, err)
		}
	}
	allowCfg := cfg
	allowCfg.WebhookAllowPrivate = true
	allowing := f.Env.NewService(allowCfg)
	u := "http://nat64.example:9/hook"
	w, err := allowing.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &u})
	if err != nil {
		t.Fatalf("register with private addresses allowed: %v", err)
	}
	pauseTemplate(t, f)
	if n, err := f.Events.DispatchOnce(f.Ctx); n != 1 || err != nil {
		t.Fatalf("dispatch = %d, %v; want the endpoint tried", n, err)
	}
	log := attempts(t, f.Svc, w.Endpoint.ID)
	if len(log) != 1 || log[0].OK || !strings.Contains(log[0].Error, "special-purpose: 64:ff9b::a00:5") {
		t.Fatalf("delivery log = %+v, want one refusal of 64:ff9b::a00:5 at the connection", log)
	}
}

// TestWebhookSecret: a secret of whitespace, or with too little besides
// whitespace, or with whitespace at an end, is 400 naming secret, at
// creation and on a change, and changes nothing.
func TestWebhookSecret(t *testing.T) {
	f := testenv.NewFixture(t, services.Config{})
	u := "https://8.8.8.8/hook"
	for _, s := range []string{strings.Repeat(" ", 20), strings.Repeat("\t", 20), "a" + strings.Repeat(" ", 19),
		"abcd efgh ijkl mno", " abcdefghijklmnopq", "abcdefghijklmnopq ", "abcdefghijklmnop\n", strings.Repeat("x", 201)} {
		_, err := f.Events.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &u, Secret: &s})
		if !models.IsCode(err, models.CodeInvalidRequest) || !strings.Contains(err.Error(), "secret") {
			t.Errorf("create with secret %q: %v, want invalid_request naming secret", s, err)
		}
	}
	if eps, err := f.Events.ListWebhooks(f.Ctx); err != nil || len(eps) != 0 {
		t.Fatalf("endpoints after refusals: %d %v, want none", len(eps), err)
	}
	good := "abcd efgh ijkl mnop"
	w, err := f.Events.CreateWebhook(f.Ctx, "admin", eventsvc.WebhookInput{URL: &u, Secret: &good})
	if err != nil || w.Secret != good {
		t.Fatalf("create with 16 characters besides spaces: %+v %v", w, err)
	}
	spaces := strings.Repeat(" ", 20)
	_, err = f.Events.UpdateWebhook(f.Ctx, "admin", w.Endpoint.ID, eventsvc.WebhookInput{Secret: &spaces})
	if !models.IsCode(err, models.CodeInvalidRequest) || !strings.Contains(err.Error(), "secret") {
		t.Fatalf("change to a secret of spaces: %v, want invalid_request naming secret", err)
	}
	if ep, err := f.Events.GetWebhook(f.Ctx, w.Endpoint.ID); err != nil || ep.Secret != good {
		t.Fatalf("secret after the refused change: %+v %v", ep, err)
	}
}
