package pages_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// TestPagesPOSPreviewWords: the checkout's preview says a coupon is already
// redeemed on this very order (its amounts, no Redeem button, nothing
// changed), and explains a percent discount cut by its cap.
func TestPagesPOSPreviewWords(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	threshold := e.ClaimFor(t, e.Template(t, "$10 off orders").ID, "shopper")
	percent := e.ClaimFor(t, e.Template(t, "15%").ID, "shopper")
	cashier := e.Client(t)
	cashier.Login("cashier")
	preview := func(code, order, amount string) testsupport.Page {
		return cashier.Form("/pos", "/pos/preview", url.Values{"code": {code}, "order_id": {order}, "amount": {amount}})
	}

	t.Run("AlreadyRedeemedOnThisOrder", func(t *testing.T) {
		if p := cashier.Form("/pos", "/pos/redeem", url.Values{"code": {threshold.Code}, "order_id": {"P-1"},
			"amount": {"60"}}); p.Status != http.StatusSeeOther {
			t.Fatalf("redeem: %v", p)
		}
		// Checked again on the same order, with another amount typed: the
		// first redemption's amounts.
		p := preview(threshold.Code, "P-1", "75")
		txt := p.Text()
		if p.Status != http.StatusOK || !strings.Contains(txt, "Already redeemed on this order: nothing more to do.") ||
			!strings.Contains(txt, "Order P-1 $60.00") || !strings.Contains(txt, "Discount −$10.00") ||
			!strings.Contains(txt, "Paid $50.00") {
			t.Fatalf("re-check on the same order: %v\n%s", p, txt)
		}
		if strings.Contains(p.Body, `action="/pos/redeem"`) || !strings.Contains(p.Body, `data-focus="pos-next"`) {
			t.Fatalf("a coupon already redeemed on this order offers a Redeem: %v", p)
		}
		// On another order it is refused beside the code, as before.
		p = preview(threshold.Code, "P-2", "75")
		if p.Status != http.StatusConflict || !strings.Contains(p.Text(), "Already used on order P-1 at") ||
			!strings.Contains(p.Body, `data-focus="code"`) {
			t.Fatalf("re-check on another order: %v", p)
		}
	})

	t.Run("CappedPercent", func(t *testing.T) {
		p := preview(percent.Code, "P-3", "200")
		txt := p.Text()
		if p.Status != http.StatusOK || !strings.Contains(txt, "15% of $200.00 is $30.00, capped at $20.00.") ||
			!strings.Contains(txt, "Discount −$20.00") || !strings.Contains(txt, "To pay $180.00") ||
			!strings.Contains(p.Body, `data-focus="code"`) || !strings.Contains(p.Body, `name="preview_code" value="`+percent.Code+`"`) {
			t.Fatalf("capped percent: %v\n%s", p, txt)
		}
		// Under the cap, no such words.
		p = preview(percent.Code, "P-3", "100")
		if txt := p.Text(); p.Status != http.StatusOK || strings.Contains(txt, "capped at") || !strings.Contains(txt, "Discount −$15.00") {
			t.Fatalf("percent under the cap: %v\n%s", p, txt)
		}
		if s := e.CouponStatus(t, percent.Code); s != models.CouponIssued {
			t.Fatalf("the previews changed the coupon: %s", s)
		}
	})

	t.Run("CancelKeepsTheOrder", func(t *testing.T) {
		p := preview(percent.Code, "P-4", "42.50")
		if !strings.Contains(p.Body, `href="/pos?order_id=P-4&amp;amount=42.50"`) {
			t.Fatalf("the Cancel link does not keep the order: %v", p)
		}
		p = cashier.Get("/pos?order_id=P-4&amount=42.50")
		if p.Status != http.StatusOK || !strings.Contains(p.Body, `id="order_id" name="order_id" type="text" value="P-4"`) ||
			!strings.Contains(p.Body, `value="42.50"`) || !strings.Contains(p.Body, `data-focus="code"`) {
			t.Fatalf("the checkout after Cancel: %v", p)
		}
	})

	t.Run("RefundErrorFocusesTheRefundForm", func(t *testing.T) {
		p := cashier.Form("/pos", "/pos/refund", url.Values{"code": {percent.Code}, "order_id": {"P-9"}})
		if p.Status != http.StatusConflict || !strings.Contains(p.Body, `data-focus="refund-order"`) ||
			!strings.Contains(p.Body, `aria-describedby="refund-order-error"`) {
			t.Fatalf("refund refused: %v", p)
		}
	})
}

// TestPagesWalletCompact: the wallet says how long each coupon has left, in
// order of expiry, and why a revoked coupon was revoked.
func TestPagesWalletCompact(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	flash := e.ClaimFor(t, e.Template(t, "Flash deal").ID, "shopper") // 7 days
	fixed := e.ClaimFor(t, e.Template(t, "$5 off").ID, "shopper")     // 30 days
	gone := e.ClaimFor(t, e.Template(t, "15%").ID, "shopper")
	if _, err := e.Service.Revoke(context.Background(), "admin", gone.Code, false, "issued by mistake"); err != nil {
		t.Fatal(err)
	}
	shopper := e.Client(t)
	shopper.Login("shopper")
	p := shopper.Get("/wallet")
	txt := p.Text()
	if p.Status != http.StatusOK || !strings.Contains(txt, "Expires in 7 days.") || !strings.Contains(txt, "Expires in 30 days.") ||
		!strings.Contains(txt, "Revoked: it can no longer be used") || strings.Contains(txt, "issued by mistake") {
		t.Fatalf("wallet: %v\n%s", p, txt)
	}
	if i, j := strings.Index(p.Body, `data-coupon="`+flash.Code+`"`), strings.Index(p.Body, `data-coupon="`+fixed.Code+`"`); i < 0 || j < 0 || i > j {
		t.Fatalf("the 7-day coupon is not listed before the 30-day one (%d, %d)", i, j)
	}
	if strings.Contains(p.Body, `data-copy="`+gone.Code+`"`) || strings.Contains(p.Body, `id="qr-`+gone.Code+`"`) {
		t.Fatalf("a revoked coupon offers its code to copy or its QR code")
	}
}

// TestPagesCouponQR: a shopper gets the QR code of their own coupon as an
// SVG image, and nobody else's.
func TestPagesCouponQR(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	mine := e.ClaimFor(t, e.Template(t, "$5 off").ID, "shopper")
	e.AddUser(t, "other", models.RoleShopper)
	theirs := e.ClaimFor(t, e.Template(t, "$5 off").ID, "other")
	shopper := e.Client(t)
	shopper.Login("shopper")
	p := shopper.Get("/wallet/qr/" + mine.Code)
	if p.Status != http.StatusOK || p.Header.Get("Content-Type") != "image/svg+xml" ||
		!strings.HasPrefix(p.Body, `<svg xmlns="http://www.w3.org/2000/svg" class="qr"`) ||
		p.Header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("my QR code: %v %v", p, p.Header)
	}
	for _, code := range []string{theirs.Code, models.NewCouponCode(), "nonsense"} {
		if p := shopper.Get("/wallet/qr/" + code); p.Status != http.StatusNotFound || strings.Contains(p.Body, "<svg xmlns") {
			t.Fatalf("the QR code of %s: %v", code, p)
		}
	}
}

// TestPagesNotFoundLoggedIn: the page for an unknown address keeps the
// logged-in user's header, with a log-out form that carries a CSRF token.
func TestPagesNotFoundLoggedIn(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	shopper := e.Client(t)
	if p := shopper.Get("/nope"); p.Status != http.StatusNotFound || strings.Contains(p.Body, `class="who-name"`) ||
		!strings.Contains(p.Body, `href="/login"`) {
		t.Fatalf("404 for a visitor: %v", p)
	}
	shopper.Login("shopper")
	p := shopper.Get("/nope")
	if p.Status != http.StatusNotFound || !strings.Contains(p.Body, `<span class="who-name">shopper</span>`) ||
		!strings.Contains(p.Body, `href="/wallet"`) || strings.Contains(p.Body, `name="csrf_token" value=""`) {
		t.Fatalf("404 for a shopper: %v", p)
	}
	m := testsupport.CSRFMeta.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("the 404 page has no CSRF token")
	}
	if p := shopper.Post("/logout", url.Values{"csrf_token": {html.UnescapeString(m[1])}}); p.Status != http.StatusSeeOther {
		t.Fatalf("log out from the 404 page: %v", p)
	}
	if p := shopper.Get("/wallet"); p.Status != http.StatusSeeOther {
		t.Fatalf("still logged in: %v", p)
	}
}

// TestPagesShopUpcomingLast: an offer whose claims open later is listed
// last, in a section of its own, with the time it opens.
func TestPagesShopUpcomingLast(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	opens := e.Service.Now().Add(3 * time.Hour).Truncate(time.Minute)
	later, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: e.Demo.Campaign.ID,
		Name: "Evening treat", Kind: models.KindFixed, FaceValueCents: 300, TotalStock: 10, PerUserLimit: 1, ValidDays: 7,
		ClaimStartsAt: opens})
	if err != nil {
		t.Fatal(err)
	}
	shopper := e.Client(t)
	shopper.Login("shopper")
	p := shopper.Get("/")
	i := strings.Index(p.Body, `data-upcoming`)
	if p.Status != http.StatusOK || i < 0 || strings.Count(p.Body[i:], "data-offer=") != 1 ||
		!strings.Contains(p.Body[i:], `data-offer="`+strconv.FormatInt(later.ID, 10)+`"`) ||
		!strings.Contains(p.Text(), "Opening soon") || !strings.Contains(p.Text(), "Opens "+opens.Format("2 Jan 2006, 15:04:05 UTC")) {
		t.Fatalf("the shop: %v\n%s", p, p.Text())
	}
}
