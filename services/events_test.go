package services_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	eventsvc "github.com/couponsvc/couponsvc/services/events"
	"github.com/couponsvc/couponsvc/services/testenv"

	"gorm.io/gorm"
)

// receiver is a webhook endpoint in the test: it checks each delivery's
// signature and that its event is committed (visible to another connection)
// when it arrives, and counts the deliveries of each event id.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	db     *gorm.DB
	secret string
	now    func() time.Time

	mu         sync.Mutex
	deliveries map[int64]int
	events     map[int64]models.Event
	badSig     int
	unseen     []int64 // events that arrived before they were visible in the database
	// answer, when set, picks the status of the n-th request (from 1).
	answer func(n int) int
	delay  func(n int) time.Duration
	n      int
}

func newReceiver(t *testing.T, db *gorm.DB, now func() time.Time) *receiver {
	t.Helper()
	r := &receiver{t: t, db: db, now: now, deliveries: map[int64]int{}, events: map[int64]models.Event{}}
	r.srv = httptest.NewServer(r)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.n++
	n := r.n
	answer, delay := r.answer, r.delay
	secret := r.secret
	r.mu.Unlock()
	if delay != nil {
		time.Sleep(delay(n))
	}
	status := http.StatusNoContent
	if answer != nil {
		status = answer(n)
	}
	var ev models.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		r.t.Errorf("delivery body %q: %v", body, err)
	}
	var visible int64
	if err := r.db.Model(&models.Event{}).Where("id = ? AND type = ?", ev.ID, ev.Type).Count(&visible).Error; err != nil {
		r.t.Errorf("read event %d: %v", ev.ID, err)
	}
	ok := models.VerifyWebhook(secret, req.Header.Get(models.SignatureHeader), body, r.now(), 5*time.Minute)
	r.mu.Lock()
	if !ok {
		r.badSig++
	}
	if visible != 1 {
		r.unseen = append(r.unseen, ev.ID)
	}
	if status/100 == 2 {
		r.deliveries[ev.ID]++
		r.events[ev.ID] = ev
	}
	r.mu.Unlock()
	w.WriteHeader(status)
}

// received returns a copy of the delivery counts by event id.
func (r *receiver) received() map[int64]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int64]int, len(r.deliveries))
	for k, v := range r.deliveries {
		out[k] = v
	}
	return out
}

// eventIDs returns every event id in the outbox, by type.
func eventIDs(t *testing.T, db *gorm.DB) (all []int64, byType map[string]int) {
	t.Helper()
	var evs []models.Event
	if err := db.Order("id").Find(&evs).Error; err != nil {
		t.Fatal(err)
	}
	byType = map[string]int{}
	for _, e := range evs {
		all = append(all, e.ID)
		byType[e.Type]++
	}
	return all, byType
}

// register makes an endpoint for the receiver on svc.
func (r *receiver) register(t *testing.T, svc *services.App, types ...string) *models.WebhookEndpoint {
	t.Helper()
	u := r.srv.URL + "/hook"
	w, err := svc.CreateWebhook(context.Background(), "test", eventsvc.WebhookInput{URL: &u, EventTypes: types})
	if err != nil {
		t.Fatalf("register the receiver: %v", err)
	}
	r.mu.Lock()
	r.secret = w.Secret
	r.mu.Unlock()
	return &w.Endpoint
}

// waitDelivered runs until every event of the outbox reached the receiver.
func (r *receiver) waitDelivered(t *testing.T, db *gorm.DB, within time.Duration) []int64 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		all, _ := eventIDs(t, db)
		got := r.received()
		missing := 0
		for _, id := range all {
			if got[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events not delivered within %s", missing, len(all), within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func webhookConfig() services.Config {
	return services.Config{EventsConfig: services.EventsConfig{WebhookAllowPrivate: true, DispatchInterval: 10 * time.Millisecond}}
}

// runDispatcher runs svc's dispatcher until the test ends.
func runDispatcher(t *testing.T, svc *services.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.RunDispatcher(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestEventsMixedRunDelivered: a mixed run of concurrent claims (batched),
// redemptions, a refund, revokes, holds, a release, an expiry and a confirm
// writes exactly its events, and every one reaches a real HTTP receiver
// with a valid signature, after its commit (the receiver finds it in the
// database when it arrives).
func TestEventsMixedRunDelivered(t *testing.T) {
	f := testenv.NewFixture(t, webhookConfig())
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	rcv.register(t, f.Svc)
	runDispatcher(t, f.Svc)

	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 30, PerUserLimit: 1})
	const claims = 30
	codes := make([]string, claims)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := f.MustClaim(tp.ID, fmt.Sprintf("u%d", i), fmt.Sprintf("k%d", i))
			codes[i] = res.Coupon.Code
		}()
	}
	close(start)
	wg.Wait()
	ctx := f.Ctx
	for i := range 6 {
		if _, err := f.Checkout.Redeem(ctx, checkout.RedeemRequest{CouponCode: codes[i], OrderID: fmt.Sprintf("o%d", i), OrderAmountCents: 2000, Cashier: "till"}); err != nil {
			t.Fatalf("redeem: %v", err)
		}
	}
	if _, err := f.Checkout.Refund(ctx, checkout.RefundRequest{CouponCode: codes[0], OrderID: "o0", Cashier: "till"}); err != nil {
		t.Fatalf("refund: %v", err)
	}
	for i := 6; i < 8; i++ {
		if _, err := f.Admin.Revoke(ctx, "admin", codes[i], i == 7, "test"); err != nil {
			t.Fatalf("revoke: %v", err)
		}
	}
	hold := func(order string, code string, ttl int) {
		if _, err := f.Checkout.Hold(ctx, checkout.CheckoutRequest{OrderID: order, OrderAmountCents: 3000, CouponCodes: []string{code}, TTLSeconds: ttl, Actor: "shop"}); err != nil {
			t.Fatalf("hold %s: %v", order, err)
		}
	}
	hold("h-release", codes[10], 600)
	hold("h-expire", codes[11], 5)
	hold("h-confirm", codes[12], 600)
	if _, err := f.Checkout.Release(ctx, "shop", "h-release"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := f.Checkout.Confirm(ctx, checkout.ConfirmRequest{OrderID: "h-confirm", Cashier: "shop"}); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	f.Clock.Advance(10 * time.Second)
	if n, err := f.Checkout.ExpireHolds(ctx); err != nil || n != 1 {
		t.Fatalf("expire holds = %d, %v; want 1", n, err)
	}
	paused := models.TemplatePaused
	if _, err := f.Admin.UpdateTemplate(ctx, "admin", tp.ID, admin.TemplatePatch{Status: &paused}); err != nil {
		t.Fatal(err)
	}

	all := rcv.waitDelivered(t, f.Backends.DB, 30*time.Second)
	_, byType := eventIDs(t, f.Backends.DB)
	want := map[string]int{
		models.EventCouponClaimed: claims, models.EventTemplateSoldOut: 1,
		models.EventCouponRedeemed: 6 + 1, models.EventCouponRefunded: 1, models.EventCouponRevoked: 2,
		models.EventCouponHeld: 3, models.EventCouponReleased: 1, models.EventCouponHoldExpired: 1,
		models.EventTemplatePaused: 1,
	}
	if fmt.Sprint(byType) != fmt.Sprint(want) {
		t.Fatalf("events by type = %v, want %v", byType, want)
	}
	for i, id := range all {
		if id != all[0]+int64(i) {
			t.Fatalf("event ids %v are not consecutive", all)
		}
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.badSig != 0 || len(rcv.unseen) != 0 {
		t.Fatalf("%d deliveries with a bad signature, %d before their commit (%v)", rcv.badSig, len(rcv.unseen), rcv.unseen)
	}
	for id, n := range rcv.deliveries {
		if n != 1 {
			t.Errorf("event %d delivered %d times, want once (one healthy instance)", id, n)
		}
	}
	// The claimed event names its coupon.
	var claimed models.CouponEvent
	for _, e := range rcv.events {
		if e.Type == models.EventCouponClaimed {
			if err := json.Unmarshal(e.Data, &claimed); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	var cp models.Coupon
	if err := f.Backends.DB.First(&cp, claimed.CouponID).Error; err != nil || cp.Code != claimed.Code || cp.UserID != claimed.UserID {
		t.Fatalf("coupon.claimed %+v names coupon %+v (%v)", claimed, cp, err)
	}
}

// TestEventRolledBackNeverSent: an event written in a transaction that rolls
// back is neither delivered nor listed; the feed waits at its gap for
// FeedGapWait, then lists past it.
func TestEventRolledBackNeverSent(t *testing.T) {
	f := testenv.NewFixture(t, webhookConfig())
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	rcv.register(t, f.Svc)
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID})
	f.MustClaim(tp.ID, "u1", "k1")
	if err := f.Svc.EmitRolledBack(f.Ctx, models.EventCouponRevoked); err == nil {
		t.Fatal("the rolled back transaction reported no error")
	}
	f.MustClaim(tp.ID, "u2", "k2")
	for range 3 {
		if _, err := f.Events.DispatchOnce(f.Ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := rcv.received()
	all, byType := eventIDs(t, f.Backends.DB)
	if len(all) != 2 || byType[models.EventCouponRevoked] != 0 || len(got) != 2 || got[all[0]] != 1 || got[all[1]] != 1 {
		t.Fatalf("outbox %v %v, received %v; want the two claims only, each once", all, byType, got)
	}
}

// TestEventsFeedWaitsAtGap: an id missing below listed ones (its
// transaction still running, or rolled back; here deleted to stand for
// one) stops the feed there until FeedGapWait has passed since the event
// after it, so that a reader going on from next never skips a late commit.
func TestEventsFeedWaitsAtGap(t *testing.T) {
	f := testenv.NewFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 5, PerUserLimit: 1})
	for i := range 3 {
		f.MustClaim(tp.ID, fmt.Sprintf("u%d", i), fmt.Sprintf("k%d", i))
	}
	all, _ := eventIDs(t, f.Backends.DB)
	if err := f.Backends.DB.Delete(&models.Event{}, all[1]).Error; err != nil {
		t.Fatal(err)
	}
	page, err := f.Events.ListEvents(f.Ctx, 0, 10)
	if err != nil || len(page.Events) != 1 || page.Next != all[0] {
		t.Fatalf("feed at a fresh gap = %+v, %v; want the first event only", page, err)
	}
	f.Clock.Advance(eventsvc.FeedGapWait - time.Second)
	if page, err = f.Events.ListEvents(f.Ctx, all[0], 10); err != nil || len(page.Events) != 0 || page.Next != all[0] {
		t.Fatalf("feed just before the gap settles = %+v, %v; want nothing", page, err)
	}
	f.Clock.Advance(time.Second)
	if page, err = f.Events.ListEvents(f.Ctx, all[0], 10); err != nil || len(page.Events) != 1 || page.Events[0].ID != all[2] || page.Next != all[2] {
		t.Fatalf("feed after the gap settled = %+v, %v; want the third event", page, err)
	}
}

// TestEventsFeedPaging: the pull feed pages through every event in id
// order, and refuses a bad after or limit naming it.
func TestEventsFeedPaging(t *testing.T) {
	f := testenv.NewFixture(t, services.Config{})
	c := f.Campaign(0)
	tp := f.Template(models.Template{CampaignID: c.ID, TotalStock: 25, PerUserLimit: 1})
	for i := range 25 {
		f.MustClaim(tp.ID, fmt.Sprintf("u%d", i), fmt.Sprintf("k%d", i))
	}
	all, _ := eventIDs(t, f.Backends.DB)
	if len(all) != 26 { // 25 claims and the sold out
		t.Fatalf("%d events, want 26", len(all))
	}
	var seen []int64
	var sizes []int
	after := int64(0)
	for {
		page, err := f.Events.ListEvents(f.Ctx, after, 10)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Events))
		for _, e := range page.Events {
			seen = append(seen, e.ID)
		}
		if len(page.Events) == 0 {
			if page.Next != after {
				t.Fatalf("an empty page moved next from %d to %d", after, page.Next)
			}
			break
		}
		after = page.Next
	}
	if fmt.Sprint(sizes) != "[10 10 6 0]" || fmt.Sprint(seen) != fmt.Sprint(all) || !sort.SliceIsSorted(seen, func(i, j int) bool { return seen[i] < seen[j] }) {
		t.Fatalf("pages %v listed %v, want %v", sizes, seen, all)
	}
	for _, bad := range []struct {
		after int64
		limit int
		field string
	}{{-1, 10, "after"}, {0, -1, "limit"}, {0, eventsvc.MaxFeedLimit + 1, "limit"}} {
		_, err := f.Events.ListEvents(f.Ctx, bad.after, bad.limit)
		var me *models.Error
		if !models.IsCode(err, models.CodeInvalidRequest) || !errors.As(err, &me) || me.Field != bad.field {
			t.Errorf("ListEvents(%d, %d) = %v, want invalid_request naming %s", bad.after, bad.limit, err, bad.field)
		}
	}
}

// httptestServer is a test server on a chosen address.
type httptestServer = httptest.Server

// newServerAt serves h on addr (a closed test server's), so that an endpoint
// comes back up where it was registered.
func newServerAt(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s again: %v", addr, err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestEventTemplateArchived: archiving a template, from active or paused,
// writes template.archived (never template.paused), and an endpoint may
// take that type alone.
func TestEventTemplateArchived(t *testing.T) {
	f := testenv.NewFixture(t, webhookConfig())
	rcv := newReceiver(t, f.Backends.DB, f.Clock.Now)
	rcv.register(t, f.Svc, models.EventTemplateArchived)
	runDispatcher(t, f.Svc)
	c := f.Campaign(0)
	t1 := f.Template(models.Template{CampaignID: c.ID})
	t2 := f.Template(models.Template{CampaignID: c.ID})
	set := func(tid int64, status string) {
		t.Helper()
		if _, err := f.Admin.UpdateTemplate(f.Ctx, "admin", tid, admin.TemplatePatch{Status: &status}); err != nil {
			t.Fatal(err)
		}
	}
	set(t1.ID, models.TemplatePaused)
	set(t1.ID, models.TemplateArchived)
	set(t2.ID, models.TemplateArchived)
	_, byType := eventIDs(t, f.Backends.DB)
	if want := map[string]int{models.EventTemplatePaused: 1, models.EventTemplateArchived: 2}; fmt.Sprint(byType) != fmt.Sprint(want) {
		t.Fatalf("events by type = %v, want %v", byType, want)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(rcv.received()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var got []string
	for _, e := range rcv.events {
		var data models.TemplateEvent
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %d %s %s", e.Type, data.TemplateID, data.Status, data.Actor))
	}
	sort.Strings(got)
	want := []string{fmt.Sprintf("template.archived %d archived admin", t1.ID), fmt.Sprintf("template.archived %d archived admin", t2.ID)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}
