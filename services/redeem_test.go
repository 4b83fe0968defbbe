package services_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/testenv"
)

// checkoutFixture is the shared fixture with a campaign and a template, and
// helpers for the checkout flows and the guarantees of docs/guarantees.md.
type checkoutFixture struct {
	*testenv.Fixture
	campaign *models.Campaign
	tmpl     *models.Template
	claims   atomic.Int64
}

// newCheckoutFixture opens fresh backends with a campaign (budget 1,000,000
// cents) and one template: tmpl's zero fields take a fixed 500-cent coupon,
// stock 10, limit 2, valid 30 days.
func newCheckoutFixture(t *testing.T, cfg services.Config, tmpl models.Template) *checkoutFixture {
	t.Helper()
	f := &checkoutFixture{Fixture: testenv.NewFixture(t, cfg)}
	f.Actor = "admin"
	f.campaign = f.CreateCampaign(models.Campaign{Name: "checkout", BudgetCents: 1_000_000})
	tmpl.CampaignID = f.campaign.ID
	if tmpl.Name == "" {
		tmpl.Name = "five off"
	}
	f.tmpl = f.Template(tmpl)
	return f
}

// claim claims a coupon of the template for user.
func (f *checkoutFixture) claim(user string) *models.Coupon {
	f.T.Helper()
	key := fmt.Sprintf("checkout-%s-%d", user, f.claims.Add(1))
	res, err := f.Claim(f.tmpl.ID, user, key)
	if err != nil {
		f.T.Fatalf("claim for %s: %v", user, err)
	}
	return res.Coupon
}

// coupon reads a coupon from the database.
func (f *checkoutFixture) coupon(id int64) *models.Coupon {
	f.T.Helper()
	var c models.Coupon
	if err := f.Env.Backends.DB.First(&c, id).Error; err != nil {
		f.T.Fatalf("read coupon %d: %v", id, err)
	}
	return &c
}

// logs reads the use log rows of a coupon, oldest first.
func (f *checkoutFixture) logs(couponID int64) []models.UseLog {
	f.T.Helper()
	var out []models.UseLog
	if err := f.Env.Backends.DB.Where("coupon_id = ?", couponID).Order("id").Find(&out).Error; err != nil {
		f.T.Fatalf("read use log: %v", err)
	}
	return out
}

// liveLogs returns the use log rows of a coupon that are not undone.
func (f *checkoutFixture) liveLogs(couponID int64) []models.UseLog {
	f.T.Helper()
	var out []models.UseLog
	for _, l := range f.logs(couponID) {
		if !l.UndoFlag {
			out = append(out, l)
		}
	}
	return out
}

func (f *checkoutFixture) redeem(c *models.Coupon, order string, amount int64) (*checkout.RedeemResult, error) {
	return f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: amount, Cashier: "cashier"})
}

func (f *checkoutFixture) mustRedeem(c *models.Coupon, order string, amount int64) *checkout.RedeemResult {
	f.T.Helper()
	res, err := f.redeem(c, order, amount)
	if err != nil || res.Duplicate {
		f.T.Fatalf("redeem %s for %s: %+v, %v", c.Code, order, res, err)
	}
	return res
}

func (f *checkoutFixture) refund(c *models.Coupon, order string) (*checkout.RefundResult, error) {
	return f.Checkout.Refund(f.Ctx, checkout.RefundRequest{CouponCode: c.Code, OrderID: order, Cashier: "cashier"})
}

func (f *checkoutFixture) mustRefund(c *models.Coupon, order string) *checkout.RefundResult {
	f.T.Helper()
	res, err := f.refund(c, order)
	if err != nil || res.Duplicate {
		f.T.Fatalf("refund %s for %s: %+v, %v", c.Code, order, res, err)
	}
	return res
}

func (f *checkoutFixture) templateKey() string { return f.TemplateKey(f.campaign.ID, f.tmpl.ID) }

func (f *checkoutFixture) lockKey(c *models.Coupon) string {
	return f.Key(f.campaign.ID, "lock:"+strconv.FormatInt(c.ID, 10))
}

// remaining returns the template's stock left as Redis counts it, loading the
// counters from the database when Redis lost them.
func (f *checkoutFixture) remaining() int64 {
	f.T.Helper()
	v, err := f.Core.ViewTemplate(f.Ctx, f.tmpl.ID)
	if err != nil || v.Remaining == nil {
		f.T.Fatalf("view template: %+v, %v", v, err)
	}
	return *v.Remaining
}

// checkStock asserts reconciliation for the template: Redis remaining + coupons
// holding a slot == total_stock, each user's Redis ordinals match the
// database, live coupons never exceed the stock, and the campaign's Redis
// budget equals the budget less the value of the coupons holding a slot.
func (f *checkoutFixture) checkStock() {
	f.T.Helper()
	remaining := f.remaining()
	db := f.Env.Backends.DB
	var held, live int64
	if err := db.Model(&models.Coupon{}).Where("template_id = ? AND slot IS NOT NULL", f.tmpl.ID).Count(&held).Error; err != nil {
		f.T.Fatal(err)
	}
	if err := db.Model(&models.Coupon{}).Where("template_id = ? AND status <> ?", f.tmpl.ID, models.CouponRevoked).Count(&live).Error; err != nil {
		f.T.Fatal(err)
	}
	var tmpl models.Template
	if err := db.First(&tmpl, f.tmpl.ID).Error; err != nil {
		f.T.Fatal(err)
	}
	if remaining+held != tmpl.TotalStock {
		f.T.Errorf("redis remaining %d + coupons holding a slot %d != total_stock %d", remaining, held, tmpl.TotalStock)
	}
	if live > tmpl.TotalStock {
		f.T.Errorf("%d live coupons exceed total_stock %d", live, tmpl.TotalStock)
	}
	var rows []struct {
		UserID string
		N      int64
	}
	if err := db.Model(&models.Coupon{}).Where("template_id = ? AND user_ordinal IS NOT NULL", f.tmpl.ID).
		Select("user_id, COUNT(*) AS n").Group("user_id").Scan(&rows).Error; err != nil {
		f.T.Fatal(err)
	}
	want := map[string]int64{}
	for _, r := range rows {
		want[r.UserID] = r.N
	}
	got := map[string]int64{}
	users, err := f.Env.Backends.Redis.HGetAll(f.Ctx, f.templateKey()+":users").Result()
	if err != nil {
		f.T.Fatal(err)
	}
	for u, ords := range users {
		got[u] = int64(len(strings.Split(ords, ",")))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		f.T.Errorf("users in Redis %v, in the database %v", got, want)
	}
	var value int64
	if err := db.Model(&models.Coupon{}).Where("campaign_id = ? AND slot IS NOT NULL", f.campaign.ID).
		Select("COALESCE(SUM(value_cents), 0)").Scan(&value).Error; err != nil {
		f.T.Fatal(err)
	}
	budget, err := f.Env.Backends.Redis.Get(f.Ctx, f.Key(f.campaign.ID, "budget")).Int64()
	if err != nil {
		f.T.Fatal(err)
	}
	if budget != f.campaign.BudgetCents-value {
		f.T.Errorf("redis budget %d, want %d - %d", budget, f.campaign.BudgetCents, value)
	}
}

// race runs fn(0..n-1) in n goroutines released together.
func race(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// waitUntil polls cond for up to 10 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mistype changes one character of a code into another code character.
func mistype(code string) string {
	b := []byte(code)
	if b[3] == 'A' {
		b[3] = 'B'
	} else {
		b[3] = 'A'
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code models.Code) *models.Error {
	t.Helper()
	if got := models.ErrorCode(err); got != code {
		t.Fatalf("got %s (%v), want %s", got.Word(), err, code.Word())
	}
	e, _ := err.(*models.Error)
	return e
}

func TestRedeem(t *testing.T) {
	t.Run("OK", redeemOK)
	t.Run("OKWithOwner", redeemOKWithOwner)
	t.Run("OKPercent", redeemOKPercent)
	t.Run("Duplicate", redeemDuplicate)
	t.Run("ErrAlreadyUsed", redeemErrAlreadyUsed)
	t.Run("ErrRevoked", redeemErrRevoked)
	t.Run("ErrNotValidNow", redeemErrNotValidNow)
	t.Run("ErrNotYetValid", redeemErrNotYetValid)
	t.Run("ErrBelowMinimum", redeemErrBelowMinimum)
	t.Run("AgainAfterRefundSameOrder", redeemAgainAfterRefundSameOrder)
}

func redeemOK(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	res := f.mustRedeem(c, "order-1", 10_000)
	if res.DiscountCents != 500 || res.PayableCents != 9_500 || res.OrderAmountCents != 10_000 {
		t.Fatalf("amounts %+v", res)
	}
	if res.Coupon.Status != models.CouponUsed || *res.Coupon.OrderID != "order-1" || res.Coupon.Version != 1 {
		t.Fatalf("coupon in the answer %+v", res.Coupon)
	}
	got := f.coupon(c.ID)
	if got.Status != models.CouponUsed || got.OrderID == nil || *got.OrderID != "order-1" || got.UsedAt == nil || got.Version != 1 {
		t.Fatalf("coupon in the database %+v", got)
	}
	if !got.UsedAt.Equal(*res.Coupon.UsedAt) {
		t.Fatalf("used_at %v in the database, %v in the answer", got.UsedAt, res.Coupon.UsedAt)
	}
	logs := f.liveLogs(c.ID)
	if len(logs) != 1 || logs[0].OrderID != "order-1" || logs[0].DiscountCents != 500 ||
		logs[0].OrderAmountCents != 10_000 || logs[0].Cashier != "cashier" || logs[0].UserID != "u1" || logs[0].TemplateID != f.tmpl.ID {
		t.Fatalf("use log %+v", logs)
	}
	f.checkStock()
}

func redeemOKWithOwner(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: strings.ToLower(c.Code[:4]) + "-" + c.Code[4:],
		OrderID: "o1", OrderAmountCents: 300, UserID: "u1", Cashier: "pos-1"})
	if err != nil {
		t.Fatal(err)
	}
	// A fixed coupon worth more than the order pays it all, never below 0.
	if res.DiscountCents != 300 || res.PayableCents != 0 {
		t.Fatalf("amounts %+v", res)
	}
}

func redeemOKPercent(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{Kind: models.KindPercent, PercentOff: 15, MaxDiscountCents: 1_000})
	for _, tc := range []struct{ amount, discount int64 }{{5_000, 750}, {999, 149}, {100_000, 1_000}} {
		c := f.claim(fmt.Sprintf("u%d", tc.amount))
		// One order each: the template is exclusive, the only coupon on its order.
		res := f.mustRedeem(c, fmt.Sprintf("o%d", tc.amount), tc.amount)
		if res.DiscountCents != tc.discount || res.PayableCents != tc.amount-tc.discount {
			t.Errorf("amount %d: %+v, want discount %d", tc.amount, res, tc.discount)
		}
	}
}

func redeemDuplicate(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	first := f.mustRedeem(c, "o1", 10_000)
	// The replay carries another amount: the answer is the first one.
	res, err := f.redeem(c, "o1", 20_000)
	if err != nil || !res.Duplicate {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	if res.DiscountCents != first.DiscountCents || res.PayableCents != first.PayableCents || res.OrderAmountCents != 10_000 {
		t.Fatalf("replay %+v, first %+v", res, first)
	}
	if got := f.coupon(c.ID); got.Version != 1 || len(f.logs(c.ID)) != 1 {
		t.Fatalf("the replay changed something: %+v %+v", got, f.logs(c.ID))
	}
}

func redeemErrAlreadyUsed(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.mustRedeem(c, "o1", 10_000)
	_, err := f.redeem(c, "o2", 10_000)
	e := wantCode(t, err, models.CodeAlreadyUsed)
	if !strings.Contains(e.Message, "order o1") {
		t.Fatalf("message %q does not name the order", e.Message)
	}
	if got := f.coupon(c.ID); *got.OrderID != "o1" || got.Version != 1 || len(f.logs(c.ID)) != 1 {
		t.Fatalf("changed: %+v", got)
	}
}

func redeemErrRevoked(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	if _, err := f.Admin.Revoke(f.Ctx, "admin", c.Code, true, "fraud"); err != nil {
		t.Fatal(err)
	}
	_, err := f.redeem(c, "o1", 10_000)
	wantCode(t, err, models.CodeRevoked)
	if len(f.logs(c.ID)) != 0 {
		t.Fatal("a use log row was written")
	}
}

func redeemErrNotValidNow(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{ValidDays: 1})
	c := f.claim("u1")
	// Valid 1 day: until the end of the day after the claim's, at most 48 hours on.
	f.Clock.Advance(48 * time.Hour)
	_, err := f.redeem(c, "o1", 10_000)
	e := wantCode(t, err, models.CodeNotValidNow)
	if !strings.Contains(e.Message, "expired") {
		t.Fatalf("message %q", e.Message)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.Version != 0 {
		t.Fatalf("changed: %+v", got)
	}
}

func redeemErrNotYetValid(t *testing.T) {
	from := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
	until := from.Add(72 * time.Hour)
	f := newCheckoutFixture(t, services.Config{}, models.Template{ValidFrom: &from, ValidUntil: &until})
	c := f.claim("u1")
	_, err := f.redeem(c, "o1", 10_000)
	e := wantCode(t, err, models.CodeNotValidNow)
	if !strings.Contains(e.Message, "valid from") {
		t.Fatalf("message %q", e.Message)
	}
	f.Clock.Advance(49 * time.Hour)
	f.mustRedeem(c, "o1", 10_000)
}

func redeemErrBelowMinimum(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{MinOrderCents: 5_000})
	c := f.claim("u1")
	_, err := f.redeem(c, "o1", 4_999)
	e := wantCode(t, err, models.CodeBelowMinimum)
	if e.Field != "order_amount_cents" {
		t.Fatalf("field %q", e.Field)
	}
	f.mustRedeem(c, "o1", 5_000)
}

func redeemAgainAfterRefundSameOrder(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.mustRedeem(c, "o1", 10_000)
	f.mustRefund(c, "o1")
	// The order keeps its one amount after the refund (docs/checkout.md).
	_, err := f.redeem(c, "o1", 300)
	if e := wantCode(t, err, models.CodeIdempotencyMismatch); e.Field != "order_amount_cents" {
		t.Fatalf("field %q", e.Field)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.Version != 2 {
		t.Fatalf("the refused redemption changed the coupon: %+v", got)
	}
	res := f.mustRedeem(c, "o1", 10_000)
	if res.DiscountCents != 500 || res.PayableCents != 9_500 {
		t.Fatalf("second redemption %+v", res)
	}
	logs := f.logs(c.ID)
	if len(logs) != 1 || logs[0].UndoFlag || logs[0].UndoneAt != nil || logs[0].OrderAmountCents != 10_000 || logs[0].DiscountCents != 500 {
		t.Fatalf("use log %+v", logs)
	}
	if got := f.coupon(c.ID); got.Status != models.CouponUsed || got.Version != 3 {
		t.Fatalf("coupon %+v", got)
	}
}

// TestRedeemBadInput checks that every malformed request is refused with the
// field at fault before anything changes.
func TestRedeemBadInput(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	unknown := models.NewCouponCode()
	for _, tc := range []struct {
		name      string
		req       checkout.RedeemRequest
		code      models.Code
		field     string
		forbidden bool
	}{
		{"MistypedCode", checkout.RedeemRequest{CouponCode: mistype(c.Code), OrderID: "o1", OrderAmountCents: 1000}, models.CodeInvalidRequest, "coupon_code", false},
		{"ShortCode", checkout.RedeemRequest{CouponCode: c.Code[:3], OrderID: "o1", OrderAmountCents: 1000}, models.CodeInvalidRequest, "coupon_code", false},
		// Eight characters may be an imported code (docs/jobs.md): looked up, not refused.
		{"EightCharacters", checkout.RedeemRequest{CouponCode: c.Code[:8], OrderID: "o1", OrderAmountCents: 1000}, models.CodeNotFound, "", false},
		{"EmptyCode", checkout.RedeemRequest{OrderID: "o1", OrderAmountCents: 1000}, models.CodeInvalidRequest, "coupon_code", false},
		{"CodeWithO", checkout.RedeemRequest{CouponCode: "O" + c.Code[1:], OrderID: "o1", OrderAmountCents: 1000}, models.CodeInvalidRequest, "coupon_code", false},
		{"UnknownCode", checkout.RedeemRequest{CouponCode: unknown, OrderID: "o1", OrderAmountCents: 1000}, models.CodeNotFound, "", false},
		{"SomeoneElses", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o1", OrderAmountCents: 1000, UserID: "u2"}, models.CodeUnauthorized, "user_id", true},
		{"BadUserID", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o1", OrderAmountCents: 1000, UserID: "u 1"}, models.CodeInvalidRequest, "user_id", false},
		{"AmountZero", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o1"}, models.CodeInvalidRequest, "order_amount_cents", false},
		{"AmountNegative", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o1", OrderAmountCents: -5}, models.CodeInvalidRequest, "order_amount_cents", false},
		{"AmountTooLarge", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o1", OrderAmountCents: models.MaxMoneyCents + 1}, models.CodeInvalidRequest, "order_amount_cents", false},
		{"EmptyOrder", checkout.RedeemRequest{CouponCode: c.Code, OrderAmountCents: 1000}, models.CodeInvalidRequest, "order_id", false},
		{"LongOrder", checkout.RedeemRequest{CouponCode: c.Code, OrderID: strings.Repeat("x", 65), OrderAmountCents: 1000}, models.CodeInvalidRequest, "order_id", false},
		{"OrderWithSpace", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "o 1", OrderAmountCents: 1000}, models.CodeInvalidRequest, "order_id", false},
		{"OrderNotASCII", checkout.RedeemRequest{CouponCode: c.Code, OrderID: "ordré", OrderAmountCents: 1000}, models.CodeInvalidRequest, "order_id", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Cashier = "cashier"
			_, err := f.Checkout.Redeem(f.Ctx, tc.req)
			e := wantCode(t, err, tc.code)
			if e.Field != tc.field || e.Forbidden != tc.forbidden {
				t.Fatalf("field %q forbidden %t, want %q %t (%v)", e.Field, e.Forbidden, tc.field, tc.forbidden, err)
			}
		})
	}
	if got := f.coupon(c.ID); got.Status != models.CouponIssued || got.Version != 0 || got.OrderID != nil {
		t.Fatalf("bad input changed the coupon: %+v", got)
	}
	if n := len(f.logs(c.ID)); n != 0 {
		t.Fatalf("bad input wrote %d use log rows", n)
	}
	// A 64-character order id is fine.
	f.mustRedeem(c, strings.Repeat("x", 64), 1000)
}

// TestRedeemRaceManyOrders releases 50 redemptions of one coupon with 50
// orders together, over two instances of the service; then again while the
// coupon's lock key is deleted over and over, so that the racers meet in the
// database.
func TestRedeemRaceManyOrders(t *testing.T) {
	for _, lockless := range []bool{false, true} {
		t.Run(raceName(lockless), func(t *testing.T) { raceManyOrders(t, lockless) })
	}
}

func raceName(lockless bool) string {
	if lockless {
		return "LockKeptDeleted"
	}
	return "Locked"
}

// keepDeletingLock deletes the coupon's lock key until the returned stop is
// called, so that racers do not queue on it.
func (f *checkoutFixture) keepDeletingLock(c *models.Coupon) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
				f.Env.Backends.Redis.Del(f.Ctx, f.lockKey(c))
				time.Sleep(200 * time.Microsecond)
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func raceManyOrders(t *testing.T, lockless bool) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{})
	c := f.claim("u1")
	f.claim("u2")
	svcs := []*services.App{f.Svc, f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})}
	if lockless {
		defer f.keepDeletingLock(c)()
	}
	var mu sync.Mutex
	counts := map[string]int{}
	var winner string
	race(50, func(i int) {
		order := fmt.Sprintf("order-%d", i)
		res, err := svcs[i%2].Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: order, OrderAmountCents: 10_000, Cashier: "cashier"})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil && !res.Duplicate:
			counts["redeemed"]++
			winner = order
		case err == nil:
			counts["duplicate"]++
		default:
			counts[models.ErrorCode(err).Word()]++
			if code := models.ErrorCode(err); code != models.CodeAlreadyUsed && code != models.CodeBusy {
				t.Errorf("%s: %v", order, err)
			}
		}
	})
	t.Logf("%s %s: %v", testenv.BackendName(), raceName(lockless), counts)
	if counts["redeemed"] != 1 || counts["already_used"]+counts["busy"] != 49 {
		t.Fatalf("results %v", counts)
	}
	got := f.coupon(c.ID)
	if got.Status != models.CouponUsed || *got.OrderID != winner || got.Version != 1 {
		t.Fatalf("coupon %+v, winner %s", got, winner)
	}
	if logs := f.logs(c.ID); len(logs) != 1 || logs[0].UndoFlag || logs[0].OrderID != winner {
		t.Fatalf("use log %+v", logs)
	}
	f.checkStock()
}

// TestRedeemRaceSameOrder releases 30 redemptions of one coupon for the same
// order together: one state change, the rest replays; then again while the
// lock key is deleted over and over.
func TestRedeemRaceSameOrder(t *testing.T) {
	for _, lockless := range []bool{false, true} {
		t.Run(raceName(lockless), func(t *testing.T) { raceSameOrder(t, lockless) })
	}
}

func raceSameOrder(t *testing.T, lockless bool) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{Kind: models.KindPercent, PercentOff: 10, MaxDiscountCents: 10_000})
	c := f.claim("u1")
	svcs := []*services.App{f.Svc, f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})}
	if lockless {
		defer f.keepDeletingLock(c)()
	}
	var mu sync.Mutex
	counts := map[string]int{}
	race(30, func(i int) {
		res, err := svcs[i%2].Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "order-1", OrderAmountCents: 12_345, Cashier: "cashier"})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			if res.DiscountCents != 1_234 || res.PayableCents != 11_111 {
				t.Errorf("amounts %+v", res)
			}
			if res.Duplicate {
				counts["duplicate"]++
			} else {
				counts["redeemed"]++
			}
		case models.IsCode(err, models.CodeBusy):
			counts["busy"]++
		default:
			t.Errorf("never %v", err)
		}
	})
	t.Logf("%s %s: %v", testenv.BackendName(), raceName(lockless), counts)
	if counts["redeemed"] != 1 || counts["duplicate"]+counts["busy"] != 29 {
		t.Fatalf("results %v", counts)
	}
	if got := f.coupon(c.ID); got.Version != 1 || *got.OrderID != "order-1" {
		t.Fatalf("coupon %+v", got)
	}
	if logs := f.logs(c.ID); len(logs) != 1 {
		t.Fatalf("use log %+v", logs)
	}
	f.checkStock()
}

// TestRedeemLockLost pauses a redemption inside its transaction while its lock
// expires (or is deleted by hand) and another order redeems the coupon on
// another instance: still exactly one use.
func TestRedeemLockLost(t *testing.T) {
	for _, how := range []string{"Expired", "Deleted"} {
		t.Run(how, func(t *testing.T) {
			f := newCheckoutFixture(t, services.Config{}, models.Template{})
			c := f.claim("u1")
			paused, resume := make(chan struct{}), make(chan struct{})
			var once sync.Once
			const ttl = 300 * time.Millisecond
			slow := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now, CouponLockTTL: ttl}})
			slow.SetRedeemHooks(nil, func(order string) {
				if order == "slow" {
					once.Do(func() {
						close(paused)
						<-resume
					})
				}
			})
			type outcome struct {
				res *checkout.RedeemResult
				err error
			}
			slowDone, fastDone := make(chan outcome, 1), make(chan outcome, 1)
			go func() {
				res, err := slow.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "slow", OrderAmountCents: 1000, Cashier: "a"})
				slowDone <- outcome{res, err}
			}()
			<-paused
			rdb := f.Env.Backends.Redis
			key := f.lockKey(c)
			if n, _ := rdb.Exists(f.Ctx, key).Result(); n != 1 {
				t.Fatalf("the slow redemption does not hold the lock %s", key)
			}
			if how == "Deleted" {
				rdb.Del(f.Ctx, key)
			} else if f.Env.Mini != nil {
				f.Env.Mini.FastForward(ttl + 10*time.Millisecond) // miniredis keeps time only when told
			}
			waitUntil(t, "the lock is gone", func() bool { n, _ := rdb.Exists(f.Ctx, key).Result(); return n == 0 })
			go func() {
				res, err := f.Checkout.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "fast", OrderAmountCents: 1000, Cashier: "b"})
				fastDone <- outcome{res, err}
			}()
			// On MySQL the second redemption reads the coupon, takes the free
			// lock and waits for the coupon's row lock. On SQLite the one
			// writer holds it back before that, at its first read: give it a
			// moment, then let the first one commit.
			if strings.HasPrefix(testenv.BackendName(), "mariadb") {
				waitUntil(t, "the second redemption holds the lock", func() bool { n, _ := rdb.Exists(f.Ctx, key).Result(); return n == 1 })
			} else {
				time.Sleep(100 * time.Millisecond)
			}
			close(resume)
			s, fa := <-slowDone, <-fastDone
			if s.err != nil || s.res.Duplicate {
				t.Fatalf("slow: %+v, %v", s.res, s.err)
			}
			wantCode(t, fa.err, models.CodeAlreadyUsed)
			got := f.coupon(c.ID)
			if got.Status != models.CouponUsed || *got.OrderID != "slow" || got.Version != 1 {
				t.Fatalf("coupon %+v", got)
			}
			if logs := f.logs(c.ID); len(logs) != 1 || logs[0].OrderID != "slow" {
				t.Fatalf("use log %+v", logs)
			}
			f.checkStock()
		})
	}
}

// TestRedeemStaleVersion holds a redemption after it read and decided, while a
// redeem → refund (→ redeem) cycle runs on another instance: its decision is
// refused by the version fence and it decides again on the coupon as it is.
func TestRedeemStaleVersion(t *testing.T) {
	for _, tc := range []struct {
		name          string
		redeemTwo     bool
		wantStale     models.Code
		wantOrder     string
		wantDecisions int32
	}{
		// The cycle ends with the coupon used: the stale write matches no row,
		// the fresh read finds the coupon used by o2, nothing changes.
		{name: "CycleEndsUsed", redeemTwo: true, wantStale: models.CodeAlreadyUsed, wantOrder: "o2", wantDecisions: 1},
		// The cycle ends with the coupon issued again: the status alone would
		// let the stale write through; the version refuses it, and a second,
		// fresh decision redeems the coupon (now free) at the current version.
		{name: "CycleEndsIssued", redeemTwo: false, wantStale: models.CodeOK, wantOrder: "stale", wantDecisions: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCheckoutFixture(t, services.Config{}, models.Template{})
			c := f.claim("u1")
			decided, resume := make(chan struct{}), make(chan struct{})
			var decisions atomic.Int32
			stale := f.Env.NewService(services.Config{CoreConfig: services.CoreConfig{Now: f.Clock.Now}})
			stale.SetRedeemHooks(func(order string) {
				if order == "stale" && decisions.Add(1) == 1 {
					close(decided)
					<-resume
				}
			}, nil)
			done := make(chan error, 1)
			go func() {
				_, err := stale.Redeem(f.Ctx, checkout.RedeemRequest{CouponCode: c.Code, OrderID: "stale", OrderAmountCents: 1000, Cashier: "a"})
				done <- err
			}()
			<-decided
			f.Env.Backends.Redis.Del(f.Ctx, f.lockKey(c)) // as if its lock expired
			f.mustRedeem(c, "o1", 2000)
			f.mustRefund(c, "o1")
			if tc.redeemTwo {
				f.mustRedeem(c, "o2", 3000)
			}
			before := f.coupon(c.ID)
			close(resume)
			err := <-done
			wantCode(t, err, tc.wantStale)
			if n := decisions.Load(); n != tc.wantDecisions {
				t.Fatalf("the stale request decided to write %d times, want %d", n, tc.wantDecisions)
			}
			got := f.coupon(c.ID)
			if *got.OrderID != tc.wantOrder {
				t.Fatalf("coupon %+v, want used by %s", got, tc.wantOrder)
			}
			if tc.redeemTwo && got.Version != before.Version {
				t.Fatalf("the stale request changed the coupon: %+v, before %+v", got, before)
			}
			if !tc.redeemTwo && got.Version != before.Version+1 {
				t.Fatalf("version %d, want %d", got.Version, before.Version+1)
			}
			if live := f.liveLogs(c.ID); len(live) != 1 || live[0].OrderID != tc.wantOrder {
				t.Fatalf("live use log %+v", live)
			}
			f.checkStock()
		})
	}
}

func TestListCouponsAndRedemptions(t *testing.T) {
	f := newCheckoutFixture(t, services.Config{}, models.Template{ValidDays: 1})
	c1 := f.claim("u1")
	c2 := f.claim("u1")
	f.claim("u2")
	f.mustRedeem(c1, "o1", 1000)
	f.Clock.Advance(48 * time.Hour) // past the end of the day after the claim's

	views, err := f.Core.ListUserCoupons(f.Ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	status := map[int64]string{}
	for _, v := range views {
		status[v.ID] = v.Status
	}
	if len(views) != 2 || status[c1.ID] != models.CouponUsed || status[c2.ID] != models.CouponExpired {
		t.Fatalf("views %+v", views)
	}
	d, err := f.Core.GetCoupon(f.Ctx, strings.ToLower(c2.Code))
	if err != nil {
		t.Fatal(err)
	}
	if d.Coupon.ID != c2.ID || d.Coupon.Status != models.CouponExpired || d.Template.ID != f.tmpl.ID {
		t.Fatalf("detail %+v", d)
	}
	_, err = f.Core.GetCoupon(f.Ctx, mistype(c2.Code))
	if e := wantCode(t, err, models.CodeInvalidRequest); e.Field != "code" {
		t.Fatalf("field %q", e.Field)
	}
	_, err = f.Core.GetCoupon(f.Ctx, models.NewCouponCode())
	wantCode(t, err, models.CodeNotFound)
	_, err = f.Core.ListUserCoupons(f.Ctx, "")
	wantCode(t, err, models.CodeInvalidRequest)
	if views, err := f.Core.ListUserCoupons(f.Ctx, "nobody"); err != nil || len(views) != 0 {
		t.Fatalf("nobody: %v %v", views, err)
	}

	uses, err := f.Core.ListCashierRedemptions(f.Ctx, "cashier", 10)
	if err != nil || len(uses) != 1 || uses[0].CouponID != c1.ID {
		t.Fatalf("uses %+v %v", uses, err)
	}
}
