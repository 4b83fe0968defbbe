package services_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/pricing"
	"github.com/couponsvc/couponsvc/services/testenv"

	"pgregory.net/rapid"
)

// The model-based property test of money over sequences of checkout
// operations (docs/guarantees.md, "Money over any sequence"). rapid draws a
// sequence of operations from moneyOps on the real Checkout and Claims of
// the wired App; a small model (moneyModel) keeps what each order was
// charged and refunded and what state each coupon is in, and after every
// step checkMoney holds the database and the answers to the invariants.
// A failure prints the shrunk sequence (one log line per step) and the
// seed; `-rapid.seed=N` replays it, the clock being the fixture's own.

// moneyChecks is how many sequences run, of about moneySteps steps each,
// when -rapid.checks and -rapid.steps are not given: thousands of steps on
// the embedded default (36 sequences: about 2,300 steps), fewer on
// MariaDB + Redis (about 1,700), where each statement is a round trip.
const (
	moneyChecksEmbedded = 36
	moneyChecksReal     = 24
	moneySteps          = 60
	// moneySeed is the first seed of the sequences CI runs.
	moneySeed = 1
)

// moneyFirstClaims is how many coupons each sequence claims before its
// first step.
const moneyFirstClaims = 4

// moneyHoldTTL is the TTL of every hold of the model; lapse moves the clock
// past it.
const moneyHoldTTL = 60

func TestCheckoutMoneyModel(t *testing.T) {
	checks := moneyChecksEmbedded
	if os.Getenv("COUPON_TEST_MYSQL_DSN") != "" {
		checks = moneyChecksReal
	}
	setRapidFlag(t, "rapid.checks", checks)
	setRapidFlag(t, "rapid.steps", moneySteps)
	// CI runs the same sequences every time, so that a red run is this
	// code's and not a new draw's. -rapid.seed=0 explores new ones;
	// -rapid.seed=N replays one.
	setRapidFlag(t, "rapid.seed", moneySeed)
	f := &holdFixture{Fixture: testenv.NewFixtureAt(t, services.Config{}, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))}
	usd := f.CreateCampaign(models.Campaign{Name: "usd", Currency: "USD"})
	jpy := f.CreateCampaign(models.Campaign{Name: "jpy", Currency: "JPY"})
	run, steps := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		m := newMoneyModel(rt, f, fmt.Sprintf("r%d", run), usd, jpy)
		actions := map[string]func(*rapid.T){"": func(rt *rapid.T) { m.checkMoney(rt) }}
		for name, op := range moneyOps {
			actions[name] = func(rt *rapid.T) {
				op(m, rt)
				steps++
			}
		}
		rt.Repeat(actions)
	})
	t.Logf("%d sequences, %d steps done on %s", run, steps, testenv.BackendName())
}

// setRapidFlag sets rapid's flag name to n for this test unless the
// command line gave it.
func setRapidFlag(t *testing.T, name string, n int) {
	t.Helper()
	given := false
	flag.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	fl := flag.Lookup(name)
	if given || fl == nil {
		return
	}
	before := fl.Value.String()
	if err := flag.Set(name, strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set(name, before) })
}

// moneyOps are the operations of the model, one entry per kind; an
// operation that does not apply to the drawn state skips (rapid then draws
// another). Leaving a kind out means deleting its row, with a comment why.
var moneyOps = map[string]func(*moneyModel, *rapid.T){
	"claim":         (*moneyModel).opClaim,
	"validate":      (*moneyModel).opValidate,
	"hold":          (*moneyModel).opHold,
	"confirm":       (*moneyModel).opConfirm,
	"release":       (*moneyModel).opRelease,
	"lapse":         (*moneyModel).opLapse,
	"redeem":        (*moneyModel).opRedeem,
	"refund":        (*moneyModel).opRefund,
	"reredeem":      (*moneyModel).opReredeem,
	"return_lines":  (*moneyModel).opReturnLines,
	"return_amount": (*moneyModel).opReturnAmount,
	"replay":        (*moneyModel).opReplay,
}

// Coupon states of the model.
const (
	mIssued  = "issued"
	mHeld    = "held"
	mUsed    = "used"
	mRevoked = "revoked"
)

// moneyCoupon is one coupon as the model knows it.
type moneyCoupon struct {
	// name (c1, c2, ...) is the same in every run of one sequence: failure
	// messages use it, so that rapid can shrink (its id and code are not).
	name     string
	id       int64
	code     string
	tp       *models.Template
	status   string
	order    string // the order holding or using it
	discount int64  // its discount on that order, as answered
	// refundedFrom is the order it was last refunded from (re-redemption).
	refundedFrom string
	// keptFrom is, per line, the first unit not returned when the coupon
	// was priced: its allocation covers no unit before it.
	keptFrom map[int]int64
	// carried is what it keeps, taken again by the order it was refunded
	// off, of its earlier part there on the units returned before: paid,
	// and settled by those returns (docs/returns.md, "A refund").
	carried int64
	stamp   int
}

// moneyOrder is one order as the model knows it: its one cart and what it
// was charged and refunded.
type moneyOrder struct {
	// name (o1, o2, ...) is the id without the run's prefix, for messages.
	name  string
	id    string
	lined bool
	cart  checkout.Cart
	total int64 // the lines' total (lined) or the amount
	// returned is per line the units returned (lined), returnedCents the
	// amount returned (amount-only).
	returned      []int64
	returnedCents int64
	// discounted is what every redemption and confirm took off the lines
	// (or the amount): the order was charged total − discounted for them;
	// refunds is what its returns gave back for them.
	discounted, refunds int64
	// parts is, per coupon code, its part of discounted (lines or amount,
	// not shipping): a coupon refunded and then redeemed again on the same
	// order supersedes its earlier discount there, so the order counts it
	// once (docs/checkout.md, "The order state and the plan"); a refunded
	// coupon's part stays in discounted, it was paid.
	parts map[string]int64
	// refundedOff is the codes of the coupons refunded off the order and
	// not redeemed on it again: their part stays in discounted, paid.
	refundedOff map[string]bool
	settled     bool
	// hold is the codes of the order's hold while held, holdUntil its end.
	hold      []string
	holdState string
	holdUntil time.Time
	holdDisc  int64
	started   bool // the order has its row (a hold or redemption went through)
	returns   int
	stamp     int
}

// paid is what the shopper paid for the lines (or the amount).
func (o *moneyOrder) paid() int64 { return o.total - o.discounted }

// discountedBy counts cents as coupon code's part of what the order was
// discounted, in place of the part an earlier redemption of it on the
// order left there.
func (o *moneyOrder) discountedBy(code string, cents int64) {
	if o.parts == nil {
		o.parts = map[string]int64{}
	}
	o.discounted += cents - o.parts[code]
	o.parts[code] = cents
}

// allReturned says every unit (or the whole amount) came back.
func (o *moneyOrder) allReturned() bool {
	if !o.lined {
		return o.returnedCents == o.total
	}
	for i, l := range o.cart.Lines {
		if o.returned[i] != l.Quantity {
			return false
		}
	}
	return true
}

// moneyReplay is a request already answered, to send again: valid says
// whether the state still makes it a replay (nothing touched its order or
// coupon since), run sends it and checks the answer.
type moneyReplay struct {
	name  string
	valid func() bool
	run   func(rt *rapid.T)
}

// moneyModel is the reference model of one sequence.
type moneyModel struct {
	f        *holdFixture
	run      string
	user     string
	usd, jpy *models.Campaign
	tps      []*models.Template
	coupons  []*moneyCoupon
	orders   []*moneyOrder
	replays  []moneyReplay
	n        int
}

func newMoneyModel(rt *rapid.T, f *holdFixture, run string, usd, jpy *models.Campaign) *moneyModel {
	m := &moneyModel{f: f, run: run, user: "u-" + run, usd: usd, jpy: jpy}
	m.makeTemplates(rt)
	for range moneyFirstClaims {
		m.opClaim(rt)
	}
	return m
}

// next is a fresh number for ids of this sequence.
func (m *moneyModel) next() int { m.n++; return m.n }

// makeTemplates draws the sequence's templates: every kind, targeted and
// not, in USD and JPY.
func (m *moneyModel) makeTemplates(rt *rapid.T) {
	mk := func(c *models.Campaign, edit func(*models.Template)) {
		tp := m.f.Template(models.Template{CampaignID: c.ID}, func(tp *models.Template) {
			tp.Name = fmt.Sprintf("%s-%d", m.run, len(m.tps))
			tp.TotalStock, tp.PerUserLimit, tp.Stacking = 1000, 100, models.StackingCombinable
			tp.Currency = c.Currency
			edit(tp)
		})
		m.tps = append(m.tps, tp)
	}
	policy := func(name string) string {
		return rapid.SampledFrom([]string{models.RefundRestore, models.RefundRecycle}).Draw(rt, name)
	}
	mk(m.usd, func(tp *models.Template) {
		tp.FaceValueCents = rapid.Int64Range(1, 3000).Draw(rt, "fixed")
		tp.RefundPolicy = policy("fixedPolicy")
	})
	mk(m.usd, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents = models.KindPercent, 0
		tp.PercentOff = rapid.Int64Range(1, 99).Draw(rt, "percent")
		tp.MaxDiscountCents = rapid.Int64Range(1, 5000).Draw(rt, "percentCap")
		tp.RefundPolicy = policy("percentPolicy")
	})
	mk(m.usd, func(tp *models.Template) {
		tp.FaceValueCents = rapid.Int64Range(1, 1500).Draw(rt, "shipping")
		tp.AppliesTo = models.AppliesToShipping
	})
	mk(m.usd, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents = models.KindBuyXGetY, 0
		tp.BuyQuantity = rapid.Int64Range(1, 3).Draw(rt, "buy")
		tp.GetQuantity = rapid.Int64Range(1, 2).Draw(rt, "get")
		tp.GetPercent = rapid.Int64Range(1, 100).Draw(rt, "getPercent")
		tp.MaxDiscountCents = 100_000
	})
	mk(m.usd, func(tp *models.Template) {
		tp.Kind = models.KindFixedPerItem
		tp.FaceValueCents = rapid.Int64Range(1, 800).Draw(rt, "perItem")
		tp.MaxDiscountCents = rapid.Int64Range(1, 5000).Draw(rt, "perItemCap")
	})
	mk(m.usd, func(tp *models.Template) {
		tp.AppliesTo, tp.Target = models.AppliesToItems, models.TemplateTarget{CategoryIDs: []string{"shoes"}}
		tp.FaceValueCents = rapid.Int64Range(1, 2000).Draw(rt, "targeted")
		tp.MinOrderCents = rapid.SampledFrom([]int64{0, 1000}).Draw(rt, "targetedMin")
	})
	mk(m.usd, func(tp *models.Template) {
		tp.Stacking = models.StackingExclusive
		tp.FaceValueCents = rapid.Int64Range(1, 2000).Draw(rt, "exclusive")
	})
	mk(m.jpy, func(tp *models.Template) {
		tp.FaceValueCents = rapid.Int64Range(1, 3000).Draw(rt, "yen")
	})
	mk(m.jpy, func(tp *models.Template) {
		tp.Kind, tp.FaceValueCents = models.KindPercent, 0
		tp.PercentOff = rapid.Int64Range(1, 99).Draw(rt, "yenPercent")
		tp.MaxDiscountCents = 10_000
	})
}

// drawOrder draws one of the sequence's orders, or a new one with a cart
// of its own: lines (some at 0, some shoes) with or without shipping, or
// an amount; in USD or JPY.
func (m *moneyModel) drawOrder(rt *rapid.T) *moneyOrder {
	if len(m.orders) > 0 && (len(m.orders) >= 3 || rapid.IntRange(0, 3).Draw(rt, "newOrder") > 0) {
		return m.orders[rapid.IntRange(0, len(m.orders)-1).Draw(rt, "order")]
	}
	name := fmt.Sprintf("o%d", m.next())
	o := &moneyOrder{name: name, id: m.run + "-" + name, lined: rapid.IntRange(0, 3).Draw(rt, "lined") > 0}
	o.cart.Currency = rapid.SampledFrom([]string{"USD", "USD", "JPY"}).Draw(rt, "currency")
	if !o.lined {
		o.total = rapid.Int64Range(1, 6000).Draw(rt, "amount")
	} else {
		for i := range rapid.IntRange(1, 3).Draw(rt, "lines") {
			l := pricing.Line{ID: fmt.Sprintf("l%d", i), SKU: fmt.Sprintf("sku%d", i),
				Quantity:       rapid.SampledFrom([]int64{1, 1, 2, 3}).Draw(rt, "qty"),
				UnitPriceCents: rapid.SampledFrom([]int64{0, 1, 99, 500, 1000, 1999, 3000}).Draw(rt, "price")}
			if rapid.IntRange(0, 2).Draw(rt, "shoes") == 0 {
				l.CategoryIDs = []string{"shoes"}
			}
			o.cart.Lines = append(o.cart.Lines, l)
			o.total += l.AmountCents()
		}
		o.cart.ShippingCents = rapid.SampledFrom([]int64{0, 0, 499, 1000}).Draw(rt, "shippingCents")
		o.returned = make([]int64, len(o.cart.Lines))
		if o.total+o.cart.ShippingCents == 0 {
			o.cart.ShippingCents = 1
		}
	}
	m.orders = append(m.orders, o)
	rt.Logf("order %s (%s): lined=%v currency=%s total=%d lines=%+v shipping=%d", o.name, o.id, o.lined, o.cart.Currency, o.total, o.cart.Lines, o.cart.ShippingCents)
	return o
}

// amount is the order amount a request carries: the amount of an
// amount-only order, 0 (the lines' total) for a cart.
func (o *moneyOrder) amount() int64 {
	if o.lined {
		return 0
	}
	return o.total
}

// request is the order's checkout request with codes.
func (m *moneyModel) request(o *moneyOrder, codes []string) checkout.CheckoutRequest {
	req := checkout.CheckoutRequest{OrderID: o.id, OrderAmountCents: o.amount(), CouponCodes: codes, UserID: m.user,
		TTLSeconds: moneyHoldTTL, Actor: "shop"}
	if o.lined {
		req.Cart = o.cart
	} else {
		req.Cart = checkout.Cart{Currency: o.cart.Currency}
	}
	return req
}

// live says whether the order's hold still holds (not past its time).
func (m *moneyModel) live(o *moneyOrder) bool {
	return o.hold != nil && m.f.Clock.Now().Before(o.holdUntil)
}

// free is whether a coupon may be taken by an order now: issued, or held
// by a hold past its time.
func (m *moneyModel) free(c *moneyCoupon) bool {
	if c.status == mIssued {
		return true
	}
	return c.status == mHeld && !m.live(m.order(c.order))
}

func (m *moneyModel) order(id string) *moneyOrder {
	for _, o := range m.orders {
		if o.id == id {
			return o
		}
	}
	return nil
}

// drawCoupons draws 1..max distinct coupons that pass keep.
func (m *moneyModel) drawCoupons(rt *rapid.T, max int, keep func(*moneyCoupon) bool) []*moneyCoupon {
	var pool []*moneyCoupon
	for _, c := range m.coupons {
		if keep(c) {
			pool = append(pool, c)
		}
	}
	if len(pool) == 0 {
		rt.Skip("no coupon fits")
	}
	idx := rapid.SliceOfNDistinct(rapid.IntRange(0, len(pool)-1), 1, min(max, len(pool)), rapid.ID[int]).Draw(rt, "coupons")
	slices.Sort(idx)
	out := make([]*moneyCoupon, len(idx))
	for i, j := range idx {
		out[i] = pool[j]
	}
	return out
}

func codesOf(cs []*moneyCoupon) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.code
	}
	return out
}

// fault fails the step on an answer no sequence may give: a fault, an
// internal error or a refusal of the request's shape.
func fault(rt *rapid.T, what string, err error) {
	rt.Helper()
	switch models.ErrorCode(err) {
	case models.CodeInternal, models.CodeUnavailable, models.CodeBusy, models.CodeInvalidRequest:
		rt.Logf("%s: %v", what, err)
		rt.Fatalf("%s: %s", what, models.ErrorCode(err).Word())
	}
}
