package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/couponsvc/couponsvc/internal/testsupport"
	"github.com/couponsvc/couponsvc/models"
)

// summerCode makes a shared-code template of the demo campaign: 10% off
// (at most $20), code SUMMER10, 20 in stock, one per shopper.
func summerCode(t *testing.T, e *testsupport.PageEnv) *models.Template {
	t.Helper()
	tp, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: e.Demo.Campaign.ID,
		Name: "Summer sale", Kind: models.KindPercent, PercentOff: 10, MaxDiscountCents: 2000, TotalStock: 20,
		PerUserLimit: 1, ValidDays: 30, CodeMode: models.CodeModeShared, SharedCode: "SUMMER10"})
	if err != nil {
		t.Fatalf("shared template: %v", err)
	}
	return tp
}

// orderIDField finds the order id the checkout page made, orderSigField
// its signature.
var (
	orderIDField  = regexp.MustCompile(`name="order_id" value="(W-[0-9A-F]{10})"`)
	orderSigField = regexp.MustCompile(`name="order_sig" value="([0-9a-f]{64})"`)
)

// cartForm is the example cart (2 × $15.00 clothing, 1 × $8.50 home:
// $38.50) with codes, for the order the page at /checkout made.
func cartForm(t *testing.T, c *testsupport.PageClient, codes string) url.Values {
	t.Helper()
	p := c.Get("/checkout")
	m, sig := orderIDField.FindStringSubmatch(p.Body), orderSigField.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil || sig == nil {
		t.Fatalf("checkout page: %v", p)
	}
	return url.Values{"csrf_token": {c.CSRF("/checkout")}, "order_id": {m[1]}, "order_sig": {sig[1]}, "codes": {codes},
		"sku": {"TSHIRT-M", "MUG-01", ""}, "category": {"clothing", "home", ""},
		"quantity": {"2", "1", ""}, "unit_price": {"15.00", "8.50", ""}}
}

// remaining is a template's stock left, as the shop lists it.
func remaining(t *testing.T, e *testsupport.PageEnv, id int64) int64 {
	t.Helper()
	views, err := e.Service.ListTemplates(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.ID == id && v.Remaining != nil {
			return *v.Remaining
		}
	}
	t.Fatalf("template %d has no stock figure", id)
	return 0
}

// useLogRows counts the use log rows of an order.
func useLogRows(t *testing.T, e *testsupport.PageEnv, orderID string) int64 {
	t.Helper()
	var n int64
	if err := e.Backends.DB.Model(&models.UseLog{}).Where("order_id = ?", orderID).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// cellTexts reads the text of the cells marked attr, in order.
func cellTexts(body, attr string) []string {
	re := regexp.MustCompile(attr + `>([^<]*)<`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestPagesCheckoutSharedCode: the shopper checks SUMMER10 against the
// cart (the discount per item, the total; nothing taken), places the
// order (one coupon claimed and used, one use log row, one off the stock),
// and the same order sent again says it was already placed, nothing used
// twice; the wallet then shows the coupon used on that order.
func TestPagesCheckoutSharedCode(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := summerCode(t, e)
	shopper := e.Client(t)
	shopper.Login("shopper")
	form := cartForm(t, shopper, "summer10")
	order := form.Get("order_id")

	p := shopper.Post("/checkout/check", form)
	if p.Status != http.StatusOK {
		t.Fatalf("check: %v", p)
	}
	if got := cellTexts(p.Body, `data-item-discount`); strings.Join(got, " ") != "−$3.00 −$0.85" {
		t.Errorf("discount per item %q, want −$3.00 −$0.85", got)
	}
	if txt := p.Text(); !strings.Contains(txt, "Code SUMMER10: −$3.85") || !strings.Contains(txt, "To pay $34.65") {
		t.Errorf("check lacks the code's discount or the total: %s", txt)
	}
	if !strings.Contains(p.Body, `name="order_id" value="`+order+`"`) {
		t.Errorf("the check lost the order id %s", order)
	}
	if n := len(e.UserCoupons(t, "shopper")); n != 0 || remaining(t, e, tp.ID) != 20 {
		t.Fatalf("a check took something: %d coupons, %d left", n, remaining(t, e, tp.ID))
	}

	p = shopper.Post("/checkout/order", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "Order "+order+" placed") ||
		!strings.Contains(txt, "You paid $34.65 and saved $3.85") || strings.Contains(txt, "already placed") {
		t.Fatalf("place order: %v\n%s", p, txt)
	}
	mine := e.UserCoupons(t, "shopper")
	if len(mine) != 1 || mine[0].Status != models.CouponUsed || mine[0].TemplateID != tp.ID || mine[0].OrderID == nil || *mine[0].OrderID != order {
		t.Fatalf("after the order the shopper holds %+v, want one used coupon of SUMMER10 on %s", mine, order)
	}
	if n, left := useLogRows(t, e, order), remaining(t, e, tp.ID); n != 1 || left != 19 {
		t.Fatalf("after the order: %d use log rows, %d left; want 1 and 19", n, left)
	}

	// A double submit, or a reload of the answer: the same order again.
	p = shopper.Post("/checkout/order", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "This order was already placed: nothing was used or paid again.") ||
		!strings.Contains(txt, "You paid $34.65 and saved $3.85") {
		t.Fatalf("the order again: %v\n%s", p, txt)
	}
	if mine, n, left := e.UserCoupons(t, "shopper"), useLogRows(t, e, order), remaining(t, e, tp.ID); len(mine) != 1 || n != 1 || left != 19 {
		t.Fatalf("the order again changed something: %d coupons, %d use log rows, %d left", len(mine), n, left)
	}

	w := shopper.Get("/wallet")
	if txt := w.Text(); !strings.Contains(txt, "on order "+order) || !strings.Contains(w.Body, `class="coupon coupon-used"`) {
		t.Fatalf("the wallet does not show the coupon used on %s: %s", order, txt)
	}
}

// TestPagesCheckoutPersonalCodeAndRefusals: a code no coupon has, a coupon
// whose minimum the cart does not meet, and a bad quantity are each said
// beside their field and change nothing; the shopper's own coupon from the
// wallet is then used by the order.
func TestPagesCheckoutPersonalCodeAndRefusals(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	five := e.ClaimFor(t, e.Template(t, "$5 off").ID, "shopper")
	ten := e.ClaimFor(t, e.Template(t, "$10 off orders of $50").ID, "shopper")
	shopper := e.Client(t)
	shopper.Login("shopper")

	form := cartForm(t, shopper, "NOPE-2345")
	p := shopper.Post("/checkout/check", form)
	// Validate answers it on its line, as every refusal of a code: the
	// check's 409, as for the minimum below.
	if msg := testsupport.FieldErrorOf(p.Body, "codes"); p.Status != http.StatusConflict || msg != "NOPE2345: No coupon has the code NOPE2345." ||
		!strings.Contains(p.Body, `aria-describedby="codes-hint codes-error" aria-invalid="true"`) {
		t.Fatalf("unknown code: %q %v", msg, p)
	}

	form = cartForm(t, shopper, ten.Code)
	p = shopper.Post("/checkout/check", form)
	want := "Below the minimum order for this coupon."
	if msg := testsupport.FieldErrorOf(p.Body, "codes"); p.Status != http.StatusConflict || !strings.HasSuffix(msg, want) {
		t.Fatalf("coupon below its minimum: %q %v", msg, p)
	}
	p = shopper.Post("/checkout/order", form)
	if msg := testsupport.FieldErrorOf(p.Body, "codes"); p.Status != http.StatusUnprocessableEntity || msg != want {
		t.Fatalf("order with a coupon below its minimum: %q %v", msg, p)
	}
	if st := e.CouponStatus(t, ten.Code); st != models.CouponIssued || useLogRows(t, e, form.Get("order_id")) != 0 {
		t.Fatalf("a refused order changed the coupon: %s", st)
	}

	form = cartForm(t, shopper, five.Code)
	form["quantity"] = []string{"2", "0", ""}
	p = shopper.Post("/checkout/order", form)
	if msg := testsupport.FieldErrorOf(p.Body, "items"); p.Status != http.StatusBadRequest ||
		msg != "Item 2: the quantity must be a whole number from 1 to 10000." {
		t.Fatalf("bad quantity: %q %v", msg, p)
	}
	if st := e.CouponStatus(t, five.Code); st != models.CouponIssued {
		t.Fatalf("a refused order changed the coupon: %s", st)
	}

	form = cartForm(t, shopper, five.Code)
	p = shopper.Post("/checkout/order", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "You paid $33.50 and saved $5.00") {
		t.Fatalf("order with the shopper's coupon: %v\n%s", p, txt)
	}
	if st, n := e.CouponStatus(t, five.Code), useLogRows(t, e, form.Get("order_id")); st != models.CouponUsed || n != 1 {
		t.Fatalf("after the order the coupon is %s with %d use log rows", st, n)
	}
}

// TestPagesCheckoutOnlyShoppers: the checkout is the shopper's; the shop's
// card of a shared code shows the code and the way to the checkout, with
// no claim button.
func TestPagesCheckoutOnlyShoppers(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp := summerCode(t, e)
	if p := e.Client(t).Get("/checkout"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/login") {
		t.Fatalf("checkout logged out: %v", p)
	}
	cashier := e.Client(t)
	cashier.Login("cashier")
	if p := cashier.Get("/checkout"); p.Status != http.StatusForbidden {
		t.Fatalf("checkout as a cashier: %v", p)
	}
	shopper := e.Client(t)
	shopper.Login("shopper")
	p := shopper.Get("/")
	card := regexp.MustCompile(`(?s)<article[^>]*data-offer="` + strconv.FormatInt(tp.ID, 10) + `".*?</article>`).FindString(p.Body)
	if card == "" || strings.Contains(card, "data-claim") || strings.Contains(card, "data-can-claim") ||
		!strings.Contains(card, `Type <strong class="code">SUMMER10</strong> at checkout`) ||
		!strings.Contains(card, `href="/checkout?code=SUMMER10"`) {
		t.Fatalf("the shared code's card: %s", card)
	}
	if !strings.Contains(p.Body, `<a href="/checkout">Checkout</a>`) {
		t.Errorf("the shop's navigation has no link to the checkout")
	}
	c := shopper.Get("/checkout?code=SUMMER10")
	if !strings.Contains(c.Body, `name="codes" type="text" value="SUMMER10"`) {
		t.Errorf("the checkout from the card does not carry the code: %v", c)
	}
}

// TestShopCheckoutFreeShipping: a free-shipping coupon claimed in the shop
// is usable from the shop's checkout with a shipping typed: the check says
// the discount on the shipping, Place order pays the items alone; without
// shipping the code is refused with its true reason. More rows than the
// form showed are read, and a total over the API's bound is refused
// beside the items, not wrapped.
func TestShopCheckoutFreeShipping(t *testing.T) {
	e := testsupport.NewPageEnv(t)
	tp, err := e.Service.CreateTemplate(context.Background(), "test", models.Template{CampaignID: e.Demo.Campaign.ID,
		Name: "Ship free", Kind: models.KindFreeShipping, AppliesTo: models.AppliesToShipping, MaxDiscountCents: 1000,
		MinOrderCents: 2500, TotalStock: 10, PerUserLimit: 1, ValidDays: 30, Stacking: models.StackingCombinable})
	if err != nil {
		t.Fatal(err)
	}
	shopper := e.Client(t)
	shopper.Login("shopper")
	if p := shopper.Claim(tp.ID, "k-1"); p.Status >= 300 {
		t.Fatalf("claim: %v", p)
	}
	code := e.UserCoupons(t, "shopper")[0].Code

	form := cartForm(t, shopper, code)
	p := shopper.Post("/checkout/check", form)
	if txt := p.Text(); p.Status != http.StatusConflict || !strings.Contains(txt, "Your order has no shipping for this code to take off.") {
		t.Fatalf("no shipping: %v\n%s", p, txt)
	}
	form.Set("shipping", "6.50")
	form["sku"] = append(form["sku"], "A", "B", "C", "D")
	form["category"] = append(form["category"], "", "", "", "")
	form["quantity"] = append(form["quantity"], "1", "1", "1", "1")
	form["unit_price"] = append(form["unit_price"], "1.00", "1.00", "1.00", "1.00")
	p = shopper.Post("/checkout/check", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "Shipping $6.50 (−$6.50)") ||
		!strings.Contains(txt, "Discount −$6.50") || !strings.Contains(txt, "D × 1") {
		t.Fatalf("free shipping checked: %v\n%s", p, txt)
	}
	p = shopper.Post("/checkout/order", form)
	if txt := p.Text(); p.Status != http.StatusOK || !strings.Contains(txt, "You paid $42.50 and saved $6.50") {
		t.Fatalf("free shipping ordered: %v\n%s", p, txt)
	}
	if s := e.CouponStatus(t, code); s != models.CouponUsed {
		t.Fatalf("the free-shipping coupon is %s, want used", s)
	}

	// Ten rows of 10000 × 999,999,999.99: refused beside the items.
	big := cartForm(t, shopper, "")
	for i := range 10 {
		big["sku"] = append(big["sku"], "X"+strconv.Itoa(i))
		big["category"] = append(big["category"], "")
		big["quantity"] = append(big["quantity"], "10000")
		big["unit_price"] = append(big["unit_price"], "999999999.99")
	}
	if p := shopper.Post("/checkout/order", big); p.Status != http.StatusBadRequest ||
		!strings.Contains(p.Text(), "the cart's total would be over the most an order may be") {
		t.Fatalf("a total over the bound: %v\n%s", p, p.Text())
	}
}
