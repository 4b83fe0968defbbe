package services_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/couponsvc/couponsvc/models"
	"github.com/couponsvc/couponsvc/services"
	"github.com/couponsvc/couponsvc/services/checkout"
	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/pricing/benchcart"

	"gorm.io/gorm/schema"
)

// CouponColumns names every column of models.Coupon, in the order of its
// fields, so that ScanCoupon fills the whole coupon: a field added to the
// model and not to the read fails here.
func TestCouponColumnsAreTheModels(t *testing.T) {
	checkColumns(t, &models.Coupon{}, core.CouponColumns)
}

// checkColumns fails t unless columns (a list of names, comma-separated)
// are model's columns in the order of its fields.
func checkColumns(t *testing.T, model any, columns string) {
	t.Helper()
	s, err := schema.Parse(model, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range s.Fields {
		if f.DBName != "" {
			want = append(want, f.DBName)
		}
	}
	var got []string
	for _, c := range strings.Split(columns, ",") {
		got = append(got, strings.TrimSpace(c))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("columns %q, the model's %q", got, want)
	}
}

// CouponByCode, scanning the row itself, reads exactly what gorm's First
// reads: an issued coupon (NULL order, hold, use), a held one, a used one,
// and a code no coupon has is not_found.
func TestCouponByCodeReadsWhatGormReads(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	issued, held, used := f.claim(tp, "u1"), f.claim(tp, "u2"), f.claim(tp, "u3")
	if _, err := f.hold("read-held", 10_000, 600, held); err != nil {
		t.Fatal(err)
	}
	if _, err := f.redeem(used, "read-used", 10_000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*models.Coupon{issued, held, used} {
		var want models.Coupon
		if err := f.Backends.DB.Where("code = ?", c.Code).First(&want).Error; err != nil {
			t.Fatal(err)
		}
		got, err := f.Core.CouponByCode(f.Ctx, c.Code)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("coupon %s (%s):\n read %+v\n gorm %+v", c.Code, want.Status, *got, want)
		}
	}
	var statuses []string
	for _, c := range []*models.Coupon{issued, held, used} {
		got, _ := f.Core.CouponByCode(f.Ctx, c.Code)
		statuses = append(statuses, got.Status)
		if got.Status != models.CouponIssued && (got.OrderID == nil || got.UsedAt == nil && got.HoldExpiresAt == nil) {
			t.Errorf("coupon %s %s: order %v, used %v, hold %v", got.Code, got.Status, got.OrderID, got.UsedAt, got.HoldExpiresAt)
		}
	}
	if strings.Join(statuses, ",") != "issued,held,used" {
		t.Errorf("statuses %v, want issued, held, used", statuses)
	}
	if _, err := f.Core.CouponByCode(f.Ctx, models.NewCouponCode()); !models.IsCode(err, models.CodeNotFound) {
		t.Errorf("a code no coupon has: %v, want not_found", err)
	}
}

// OrderColumns names every column of checkout.CheckoutOrder, in the order
// of its fields, so that ReadOrder fills the whole row.
func TestOrderColumnsAreTheModels(t *testing.T) {
	checkColumns(t, &checkout.CheckoutOrder{}, checkout.OrderColumns)
}

// ReadOrder, scanning the row itself, reads exactly what gorm's Find reads:
// an order held with a cart (hash, currency, shipping, hold), one redeemed
// one step with an amount (no hold, no hash), one confirmed; an order
// without a row is not found.
func TestReadOrderReadsWhatGormReads(t *testing.T) {
	f := newHoldFixture(t, services.Config{})
	tp := f.tmpl("", 500, 0, 0)
	cart, _ := benchcart.New(3)
	lined := checkout.Cart{Lines: cart.Lines, ShippingCents: cart.ShippingCents}
	if _, err := f.Checkout.Hold(f.Ctx, checkout.CheckoutRequest{OrderID: "read-lined", Cart: lined,
		CouponCodes: []string{f.claim(tp, "u1").Code}, TTLSeconds: 600, Actor: "shop"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.redeem(f.claim(tp, "u2"), "read-redeemed", 10_000); err != nil {
		t.Fatal(err)
	}
	if _, err := f.hold("read-confirmed", 10_000, 600, f.claim(tp, "u3")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Checkout.Confirm(f.Ctx, checkout.ConfirmRequest{OrderID: "read-confirmed"}); err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, id := range []string{"read-lined", "read-redeemed", "read-confirmed"} {
		var want checkout.CheckoutOrder
		if err := f.Backends.DB.Where("order_id = ?", id).First(&want).Error; err != nil {
			t.Fatal(err)
		}
		got, found, err := f.Checkout.ReadOrder(f.Ctx, id)
		if err != nil || !found {
			t.Fatalf("order %s: found %v, %v", id, found, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("order %s:\n read %+v\n gorm %+v", id, got, want)
		}
		state := "none"
		if got.HoldState != nil {
			state = *got.HoldState
		}
		states = append(states, fmt.Sprintf("%s/%v", state, got.Lined()))
	}
	if strings.Join(states, ",") != "held/true,none/false,confirmed/false" {
		t.Errorf("orders read as %v, want held/true, none/false, confirmed/false", states)
	}
	if o, found, err := f.Checkout.ReadOrder(f.Ctx, "read-none"); err != nil || found || o.OrderID != "" {
		t.Errorf("an order without a row: %+v, found %v, %v", o, found, err)
	}
}
