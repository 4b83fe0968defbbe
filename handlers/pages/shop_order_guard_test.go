package pages_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/handlers"
	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services/reconcile"
)

// TestPagesPlaceOrderCountsAgainstTheBudget: placing an order checks its
// codes from the same budget as the page's check, so guessing codes by
// placing orders stops where checking them does.
func TestPagesPlaceOrderCountsAgainstTheBudget(t *testing.T) {
	e := testsupport.NewPageEnvLimited(t, handlers.Limits{ValidatesPerCaller: 20, ValidatesPerUser: 20})
	shopper := e.Client(t)
	shopper.Login("shopper")
	tried := map[int]int{}
	for i := range 25 {
		form := cartForm(t, shopper, models.NewCouponCode())
		p := shopper.Post("/checkout/order", form)
		tried[p.Status]++
		if i >= 20 && (p.Status != http.StatusTooManyRequests ||
			testsupport.FieldErrorOf(p.Body, "codes") != "Too many codes checked in a short time. Wait a minute, then try again.") {
			t.Fatalf("order %d past the budget: %v", i+1, p)
		}
	}
	if tried[http.StatusNotFound] != 20 || tried[http.StatusTooManyRequests] != 5 {
		t.Fatalf("answers by status %v, want 20 × 404 then 5 × 429", tried)
	}
	// The check shares the budget: spent.
	if p := shopper.Post("/checkout/check", cartForm(t, shopper, models.NewCouponCode())); p.Status != http.StatusTooManyRequests {
		t.Fatalf("check after the orders spent the budget: %v", p)
	}
}

// TestPagesPlaceOrderIsNoOracle: another shopper's coupon and a bearer
// coupon answer Place order, and the check, exactly as a code no coupon
// has (status and words, the code aside), and neither changes.
func TestPagesPlaceOrderIsNoOracle(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	five := e.Template(t, "$5 off")
	others := e.ClaimFor(t, five.ID, "someone-else")
	bearer := bearerCoupon(t, e, five)
	shopper := e.Client(t)
	shopper.Login("shopper")
	unknown := models.NewCouponCode()
	for _, route := range []string{"/checkout/order", "/checkout/check"} {
		answer := func(code string) (int, string) {
			p := shopper.Post(route, cartForm(t, shopper, code))
			msg := testsupport.FieldErrorOf(p.Body, "codes")
			msg = strings.ReplaceAll(msg, codeGroupsOf(strings.ReplaceAll(code, "-", "")), "CODE")
			return p.Status, strings.ReplaceAll(msg, strings.ReplaceAll(code, "-", ""), "CODE")
		}
		// Place order refuses the order (404); the check answers the
		// coupon's line of validate (409, the code first).
		wantStatus, wantMsg := http.StatusNotFound, "No coupon has the code CODE."
		if route == "/checkout/check" {
			wantStatus, wantMsg = http.StatusConflict, "CODE: No coupon has the code CODE."
		}
		ws, wm := answer(unknown)
		if ws != wantStatus || wm != wantMsg {
			t.Fatalf("%s unknown code: %d %q", route, ws, wm)
		}
		for name, code := range map[string]string{"another shopper's": others.Code, "a bearer": bearer.Code} {
			if s, m := answer(code); s != ws || m != wm {
				t.Errorf("%s with %s coupon: %d %q; want %d %q as an unknown code", route, name, s, m, ws, wm)
			}
		}
	}
	if st := e.CouponStatus(t, others.Code); st != models.CouponIssued {
		t.Fatalf("another shopper's coupon is %s", st)
	}
	var now models.Coupon
	if err := e.Backends.DB.Where("code = ?", bearer.Code).First(&now).Error; err != nil || now.UserID != models.BearerUserID ||
		now.Status != models.CouponIssued {
		t.Fatalf("the bearer coupon is now %s of %q, %v", now.Status, now.UserID, err)
	}
}

// TestPagesOrderNumberIsTheServers: the order number of a page checkout is
// one the page issued to this session; a posted till number, another
// session's number or a made-up one is refused and changes nothing, so a
// shopper cannot block the till's order numbers.
func TestPagesOrderNumberIsTheServers(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	five := e.Template(t, "$5 off")
	mine := e.ClaimFor(t, five.ID, "shopper")
	shopper := e.Client(t)
	shopper.Login("shopper")
	other := e.Client(t)
	other.Login("shopper")
	stolen := cartForm(t, other, "")
	for name, edit := range map[string]func(f map[string][]string){
		"a till number":          func(f map[string][]string) { f["order_id"] = []string{"POS-YO6P"} },
		"a made-up shop number":  func(f map[string][]string) { f["order_id"] = []string{"W-0123456789"} },
		"no signature":           func(f map[string][]string) { delete(f, "order_sig") },
		"another session's form": func(f map[string][]string) { f["order_id"], f["order_sig"] = stolen["order_id"], stolen["order_sig"] },
	} {
		form := cartForm(t, shopper, mine.Code)
		edit(form)
		order := form["order_id"][0]
		for _, route := range []string{"/checkout/check", "/checkout/order"} {
			p := shopper.Post(route, form)
			if p.Status != http.StatusBadRequest || !strings.Contains(p.Text(), "This order number was not issued to you") {
				t.Fatalf("%s, %s: %v", name, route, p)
			}
			if strings.Contains(p.Body, fmt.Sprintf(`name="order_id" value="%s"`, order)) {
				t.Fatalf("%s, %s: the form kept the refused number", name, route)
			}
		}
		if st, n := e.CouponStatus(t, mine.Code), useLogRows(t, e, order); st != models.CouponIssued || n != 0 {
			t.Fatalf("%s: the coupon is %s with %d use log rows", name, st, n)
		}
	}
	// The till's redemption on that number is not blocked.
	till, err := e.Service.Redeem(t.Context(), redeemRequest(mine.Code, "POS-YO6P", 5_000))
	if err != nil || till.Duplicate {
		t.Fatalf("the till's order POS-YO6P: %+v %v", till, err)
	}
}

// bearerCoupon writes a bearer coupon of tp (no owner yet, as a code job or
// an import makes one) and loads its slot into Redis.
func bearerCoupon(t *testing.T, e *testsupport.PageEnv, tp *models.Template) models.Coupon {
	t.Helper()
	db := e.Backends.DB
	var top struct{ Max *int64 }
	if err := db.Raw("SELECT MAX(slot) AS max FROM user_coupons WHERE template_id = ?", tp.ID).Scan(&top).Error; err != nil {
		t.Fatal(err)
	}
	slot := int64(1)
	if top.Max != nil {
		slot = *top.Max + 1
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	from, until := tp.ValidityFor(now, time.UTC)
	c := models.Coupon{Code: models.NewCouponCode(), TemplateID: tp.ID, CampaignID: tp.CampaignID,
		UserID: models.BearerUserID, Status: models.CouponIssued, Slot: &slot,
		RequestID: fmt.Sprintf("bearer:%d:%d", tp.ID, slot), ValueCents: tp.ValueCents(),
		ClaimedAt: now, ValidFrom: from, ValidUntil: until, UpdatedAt: now}
	if err := db.Create(&c).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := e.Service.Reconcile(t.Context(), reconcile.ReconcileRequest{TemplateID: tp.ID, Repair: true, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	return c
}
