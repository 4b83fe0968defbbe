package services_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/admin"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/claims"

	dto "github.com/prometheus/client_model/go"
)

// soldOutFixture is a recycle template of stock 2, limit 1, on two instances
// of the service sharing the backends and one stopped clock: svc is the one
// whose memory is watched, other changes the stock behind its back.
type soldOutFixture struct {
	*checkoutFixture
	other *services.App
}

func newSoldOutFixture(t *testing.T) *soldOutFixture {
	t.Helper()
	f := newCheckoutFixture(t, services.Config{}, models.Template{TotalStock: 2, PerUserLimit: 1, RefundPolicy: models.RefundRecycle})
	f.Clock.Set(f.Clock.Now())
	return &soldOutFixture{checkoutFixture: f, other: f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})}
}

// fromMemory is how many claims svc answered from its memory of a sell-out.
func (f *soldOutFixture) fromMemory() int {
	var m dto.Metric
	if err := f.Core.Metrics().SoldOutFromMemory.Write(&m); err != nil {
		f.T.Fatal(err)
	}
	return int(m.GetCounter().GetValue())
}

// waitLearnt waits (bounded) for svc's goroutine that reads who may replay a
// claim of the sold-out template.
func (f *soldOutFixture) waitLearnt() {
	f.T.Helper()
	for range 5000 {
		if f.Core.SoldOutLearnt(f.tmpl.ID) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	f.T.Fatal("the sell-out was never learnt")
}

// expect claims on svc and checks the answer: a result word and, for
// claimed or duplicate, the coupon code (want "" for a new coupon).
func (f *soldOutFixture) expect(svc *services.App, user, key string, word string) *claims.ClaimResult {
	f.T.Helper()
	res, err := svc.Claim(f.Ctx, claims.ClaimRequest{TemplateID: f.tmpl.ID, UserID: user, IdempotencyKey: key})
	got := "claimed"
	switch {
	case err != nil:
		got = models.ErrorCode(err).Word()
	case res.Duplicate:
		got = "duplicate"
	}
	if got != word {
		f.T.Fatalf("claim by %s with %s: %s (%v), want %s", user, key, got, err, word)
	}
	return res
}

// TestSoldOutMemory: once the script said sold_out, a claim of a user who
// cannot be replaying is refused without Redis, with the script's answer;
// replays still get their duplicate, also of a claim made after stock came
// back and went again; the instance learns of stock returned by another
// instance within one second of its clock, and of its own changes at once.
func TestSoldOutMemory(t *testing.T) {
	f := newSoldOutFixture(t)
	first := f.expect(f.Svc, "u1", "k1", "claimed")
	second := f.expect(f.Svc, "u2", "k2", "claimed")
	// u1 uses the coupon (refunded below); a redemption changes no stock.
	f.Clock.Advance(time.Second)
	if _, err := f.other.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: first.Coupon.Code, OrderID: "o1", OrderAmountCents: 10_000, Cashier: "c"}); err != nil {
		t.Fatalf("redeem: %v", err)
	}
	f.expect(f.Svc, "u3", "k3", "sold_out") // from the script
	f.waitLearnt()
	if n := f.fromMemory(); n != 0 {
		t.Fatalf("%d answers from memory before the sell-out was learnt", n)
	}
	before := (&claimFixture{f.Fixture}).redisState()
	f.expect(f.Svc, "u3", "k3", "sold_out")
	f.expect(f.Svc, "u4", "k4", "sold_out")
	if n := f.fromMemory(); n != 2 {
		t.Fatalf("%d answers from memory, want 2", n)
	}
	if after := (&claimFixture{f.Fixture}).redisState(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("answers from memory changed Redis:\n%v\n%v", before, after)
	}
	// Replays of the holders go to the script: duplicates of their coupons.
	if res := f.expect(f.Svc, "u1", "k1", "duplicate"); res.Coupon.Code != first.Coupon.Code {
		t.Fatalf("replay of k1 answered %s, want %s", res.Coupon.Code, first.Coupon.Code)
	}
	if res := f.expect(f.Svc, "u2", "k2", "duplicate"); res.Coupon.Code != second.Coupon.Code {
		t.Fatalf("replay of k2 answered %s, want %s", res.Coupon.Code, second.Coupon.Code)
	}
	// Redis forgot k2 (its TTL ran out): the database still makes the
	// replay a duplicate, through the script's refusal and the database.
	f.Env.Backends.Redis.Del(f.Ctx, f.Key(f.campaign.ID, "idem:k2"))
	if res := f.expect(f.Svc, "u2", "k2", "duplicate"); res.Coupon.Code != second.Coupon.Code {
		t.Fatalf("replay of k2 after its key expired answered %s", res.Coupon.Code)
	}
	// A holder's new claim (a new key) cannot be a replay: from memory.
	f.expect(f.Svc, "u1", "k1b", "sold_out")
	if n := f.fromMemory(); n != 3 {
		t.Fatalf("%d answers from memory, want 3", n)
	}

	// Another instance gives u1's coupon back (refund under recycle) and u5
	// claims it there: sold out again, with u5's claim unknown to svc.
	c1 := f.coupon(first.Coupon.ID)
	if res, err := f.other.Refund(f.Ctx, checkout.RefundRequest{CouponCode: c1.Code, OrderID: "o1", Cashier: "c"}); err != nil || !res.StockReturned {
		t.Fatalf("refund: %+v, %v", res, err)
	}
	fifth := f.expect(f.other, "u5", "k5", "claimed")
	// Within the second svc still answers sold_out from memory; once it has
	// passed, one claim asks the script, which reports the new generation;
	// from then on u5's replay gets its duplicate.
	f.expect(f.Svc, "u6", "k6", "sold_out")
	if n := f.fromMemory(); n != 4 {
		t.Fatalf("%d answers from memory, want 4", n)
	}
	f.Clock.Advance(time.Second)
	f.expect(f.Svc, "u6", "k6", "sold_out") // the probe, from the script
	if n := f.fromMemory(); n != 4 {
		t.Fatalf("%d answers from memory, want 4 (the probe asks the script)", n)
	}
	if res := f.expect(f.Svc, "u5", "k5", "duplicate"); res.Coupon.Code != fifth.Coupon.Code {
		t.Fatalf("replay of k5 answered %s, want %s", res.Coupon.Code, fifth.Coupon.Code)
	}
	f.waitLearnt()
	f.expect(f.Svc, "u7", "k7", "sold_out")
	if n := f.fromMemory(); n != 5 {
		t.Fatalf("%d answers from memory, want 5", n)
	}
	// u1 holds no coupon now but has a key of this template: still a replay.
	if res := f.expect(f.Svc, "u1", "k1", "duplicate"); res.Coupon.Code != first.Coupon.Code {
		t.Fatalf("replay of k1 after the refund answered %s", res.Coupon.Code)
	}

	// Stock added on the other instance: the first claim a second later gets it.
	if _, err := f.other.AddStock(f.Ctx, "admin", f.tmpl.ID, 1, "more"); err != nil {
		t.Fatalf("add stock: %v", err)
	}
	f.expect(f.Svc, "u8", "k8", "sold_out") // from memory, within the second
	f.Clock.Advance(time.Second)
	f.expect(f.Svc, "u8", "k8b", "claimed")
	f.expect(f.Svc, "u9", "k9", "sold_out")
	f.waitLearnt()

	// Stock added on svc itself is known at once.
	if _, err := f.Admin.AddStock(f.Ctx, "admin", f.tmpl.ID, 1, "more"); err != nil {
		t.Fatalf("add stock: %v", err)
	}
	f.expect(f.Svc, "u9", "k9", "claimed")
	if n := f.fromMemory(); n != 6 {
		t.Fatalf("%d answers from memory, want 6", n)
	}
	f.checkStock()
}

// TestSoldOutMemoryPaused: a template paused after its sell-out answers
// not_claimable on the instance that paused it at once, and on another within
// a second.
func TestSoldOutMemoryPaused(t *testing.T) {
	f := newSoldOutFixture(t)
	f.expect(f.Svc, "u1", "k1", "claimed")
	f.expect(f.Svc, "u2", "k2", "claimed")
	f.expect(f.other, "u3", "k3", "sold_out")
	f.expect(f.Svc, "u3", "k3", "sold_out")
	f.waitLearnt()
	paused := models.TemplatePaused
	if _, err := f.other.UpdateTemplate(f.Ctx, "admin", f.tmpl.ID, admin.TemplatePatch{Status: &paused}); err != nil {
		t.Fatalf("pause: %v", err)
	}
	f.expect(f.other, "u4", "k4", "not_claimable")
	f.expect(f.Svc, "u4", "k4", "sold_out") // from memory, within the second
	f.Clock.Advance(time.Second)
	f.expect(f.Svc, "u4", "k4", "not_claimable")
	f.expect(f.Svc, "u4", "k4", "not_claimable")
	if n := f.fromMemory(); n != 1 {
		t.Fatalf("%d answers from memory, want 1", n)
	}
}

// TestSoldOutMemoryRace: 40 users claim a stock of 5 at once through two
// instances, then every claim is sent again at once: exactly 5 claimed, then
// exactly those 5 keys answer duplicate with their coupons and the others
// sold_out.
func TestSoldOutMemoryRace(t *testing.T) {
	f := newSoldOutFixture(t)
	if _, err := f.Admin.AddStock(f.Ctx, "admin", f.tmpl.ID, 3, "race"); err != nil {
		t.Fatal(err)
	}
	const n = 40
	round := func() (codes []string, soldOut int) {
		codes = make([]string, n)
		words := make([]string, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			svc := f.Svc
			if i%2 == 1 {
				svc = f.other
			}
			wg.Go(func() {
				<-start
				res, err := svc.Claim(f.Ctx, claims.ClaimRequest{TemplateID: f.tmpl.ID, UserID: fmt.Sprintf("u%d", i), IdempotencyKey: fmt.Sprintf("k%d", i)})
				switch {
				case err != nil:
					words[i] = models.ErrorCode(err).Word()
				case res.Duplicate:
					words[i], codes[i] = "duplicate", res.Coupon.Code
				default:
					words[i], codes[i] = "claimed", res.Coupon.Code
				}
			})
		}
		close(start)
		wg.Wait()
		for i, w := range words {
			if w == "sold_out" {
				soldOut++
			} else if w != "claimed" && w != "duplicate" {
				t.Fatalf("claim %d: %s", i, w)
			}
		}
		return codes, soldOut
	}
	first, soldOut := round()
	if soldOut != n-5 {
		t.Fatalf("%d sold_out, want %d", soldOut, n-5)
	}
	f.waitLearnt()
	again, soldOut := round()
	if soldOut != n-5 {
		t.Fatalf("replays: %d sold_out, want %d", soldOut, n-5)
	}
	for i := range n {
		if first[i] != again[i] {
			t.Fatalf("claim %d: %q then %q", i, first[i], again[i])
		}
	}
	if f.fromMemory() == 0 {
		t.Fatal("no answer from memory in the second round")
	}
	if got := len(f.Coupons()); got != 5 {
		t.Fatalf("%d coupons, want 5", got)
	}
	f.checkStock()
}
