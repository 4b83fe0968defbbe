package pages_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// saleTemplates makes the till's targeted coupons: $5 off shoes and buy 2
// socks, get 1 free, both combinable, and returns a coupon of each.
func saleTemplates(t *testing.T, e *testsupport.PageEnv) (shoes, socks *models.Coupon) {
	t.Helper()
	mk := func(tp models.Template) *models.Template {
		tp.CampaignID, tp.TotalStock, tp.PerUserLimit, tp.ValidDays = e.Demo.Campaign.ID, 50, 5, 30
		tp.Stacking, tp.AppliesTo = models.StackingCombinable, models.AppliesToItems
		out, err := e.Service.CreateTemplate(context.Background(), "test", tp)
		if err != nil {
			t.Fatalf("template %s: %v", tp.Name, err)
		}
		return out
	}
	s := mk(models.Template{Name: "Shoe money", Kind: models.KindFixed, FaceValueCents: 500,
		Target: models.TemplateTarget{CategoryIDs: []string{"shoes"}}})
	b := mk(models.Template{Name: "Sock deal", Kind: models.KindBuyXGetY, BuyQuantity: 2, GetQuantity: 1, GetPercent: 100,
		MaxDiscountCents: 8000, Target: models.TemplateTarget{CategoryIDs: []string{"socks"}}})
	return e.ClaimFor(t, s.ID, "shopper"), e.ClaimFor(t, b.ID, "shopper2")
}

// saleForm is a till sale's form: rows "sku,quantity,price,category".
func saleForm(order, code, shipping string, rows ...string) url.Values {
	form := url.Values{"code": {code}, "order_id": {order}, "amount": {""}, "shipping": {shipping}}
	for _, r := range rows {
		f := strings.Split(r, ",")
		form["sku"], form["quantity"] = append(form["sku"], f[0]), append(form["quantity"], f[1])
		form["unit_price"], form["category"] = append(form["unit_price"], f[2]), append(form["category"], f[3])
	}
	return form
}

// hidden reads a hidden field's value from a page.
func hidden(p testsupport.Page, name string) string {
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestPagesTillSale: a sale of three items and shipping with a targeted
// coupon and a buy-2-get-1 together is previewed per item through the
// service and redeemed as previewed by Enter on the empty code field; the
// sale keeps its number and items, a further code goes on it and prices
// on what the first ones left; a sale changed since its preview is priced
// again, not redeemed; a refusal says its true reason.
func TestPagesTillSale(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	shoes, socks := saleTemplates(t, e)
	ten := e.ClaimFor(t, e.Combinable(t, "Ten off", 1000, 0).ID, "shopper3")
	cashier := e.Client(t)
	cashier.Login("cashier")
	rows := []string{"BOOT-42,1,80.00,shoes", "SOCK-1,3,4.00,socks", "HAT-1,1,20.00,"}
	form := saleForm("T-100", shoes.Code+", "+socks.Code, "5.00", rows...)
	p := cashier.Form("/pos", "/pos/preview", form)
	txt := p.Text()
	for _, want := range []string{"· $5 off shoes: −$5.00", "· Buy 2, get 1 free on socks, up to $80 off: −$4.00",
		"BOOT-42 × 1 (shoes) $80.00 −$5.00 $75.00", "SOCK-1 × 3 (socks) $12.00 −$4.00 $8.00", "HAT-1 × 1 $20.00 — $20.00",
		"Shipping $5.00", "Sale T-100 $117.00", "Discount −$9.00", "To pay $108.00", "Enter redeems the coupons above"} {
		if p.Status != http.StatusOK || !strings.Contains(txt, want) {
			t.Fatalf("sale preview: %v lacks %q\n%s", p, want, txt)
		}
	}
	if s := e.CouponStatus(t, shoes.Code); s != models.CouponIssued {
		t.Fatalf("a preview changed the coupon: %s", s)
	}

	// A row changed since the preview: priced again, nothing redeemed.
	enter := saleForm("T-100", "", "5.00", rows...)
	enter.Set("preview_code", hidden(p, "preview_code"))
	enter.Set("preview_sale", hidden(p, "preview_sale"))
	changed := saleForm("T-100", "", "5.00", "BOOT-42,2,80.00,shoes", rows[1], rows[2])
	changed.Set("preview_code", enter.Get("preview_code"))
	changed.Set("preview_sale", enter.Get("preview_sale"))
	if q := cashier.Form("/pos", "/pos/preview", changed); q.Status != http.StatusOK || !strings.Contains(q.Text(), "To pay $188.00") ||
		e.CouponStatus(t, shoes.Code) != models.CouponIssued {
		t.Fatalf("a changed sale: %v\n%s", q, q.Text())
	}

	// Enter on the empty code field: both redeemed, as previewed.
	r := cashier.Form("/pos", "/pos/preview", enter)
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location(), "/pos?") {
		t.Fatalf("redeem the sale: %v\n%s", r, r.Text())
	}
	for _, c := range []*models.Coupon{shoes, socks} {
		if s := e.CouponStatus(t, c.Code); s != models.CouponUsed {
			t.Fatalf("coupon %s is %s after the sale, want used", c.Code, s)
		}
	}
	kept := cashier.Get(r.Location())
	if txt := kept.Text(); !strings.Contains(txt, "Redeemed on sale T-100: $9.00 off, the customer pays $108.00.") ||
		hidden(kept, "order_id") != "T-100" || !strings.Contains(kept.Body, `value="SOCK-1"`) {
		t.Fatalf("the sale after its redemption: %v\n%s", kept, txt)
	}
	// Enter again (a double submit): the same answer, nothing more used.
	if again := cashier.Form("/pos", "/pos/preview", enter); again.Status != http.StatusSeeOther {
		t.Fatalf("the sale again: %v\n%s", again, again.Text())
	}
	if txt := cashier.Get(r.Location()).Text(); !strings.Contains(txt, "Already redeemed on sale T-100: $9.00 off") {
		t.Fatalf("the repeat: %s", txt)
	}

	// A further code on the same sale: priced on what is left ($108.00).
	more := saleForm("T-100", ten.Code, "5.00", rows...)
	p = cashier.Form("/pos", "/pos/preview", more)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "· $10 off your order: −$10.00") {
		t.Fatalf("a further code: %v\n%s", p, txt)
	}
	enter = saleForm("T-100", "", "5.00", rows...)
	enter.Set("preview_code", hidden(p, "preview_code"))
	enter.Set("preview_sale", hidden(p, "preview_sale"))
	if r := cashier.Form("/pos", "/pos/preview", enter); r.Status != http.StatusSeeOther || e.CouponStatus(t, ten.Code) != models.CouponUsed {
		t.Fatalf("the further code: %v\n%s", r, r.Text())
	}

	// The true reason of a refusal: not for these items; no shipping.
	other := e.ClaimFor(t, shoes.TemplateID, "shopper4")
	p = cashier.Form("/pos", "/pos/preview", saleForm("T-101", other.Code, "", "HAT-1,1,20.00,"))
	if txt := p.Text(); p.Status != http.StatusConflict || !strings.Contains(txt, "Not for these items: none of them is one this coupon applies to.") {
		t.Fatalf("not for these items: %v\n%s", p, txt)
	}
}
